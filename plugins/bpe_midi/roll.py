"""The piano roll of `bpe inspect --html` for MIDI events: which token made each note.

`roll_notes` walks shown tokens' events as the decoder does (`decoding.MidiDecoder.music`) and
gives every note with the token that holds its Pitch (REMI, TSD) or NoteOn (MIDILike) event,
and the bar lines; `draw` makes the SVG, each note filled in its token's color and each token's
notes outlined. It decodes nothing to a file and knows nothing of HTML beyond one SVG.
"""

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from bpe_core.contract import TokenDrawing
from bpe_core.visual.charts import escape

STEP_WIDTH = 3  # pixels per grid step
PITCH_HEIGHT = 5  # pixels per semitone
MAX_WIDTH = 30_000  # pixels: the roll stops there (a long sample is already capped in tokens)


@dataclass(frozen=True)
class RollNote:
    program: str
    pitch: int
    start: int  # grid steps
    steps: int
    token: int  # index of the shown token that starts the note


def roll_notes(
    labels: Sequence[str], tokens: Sequence[Sequence[int]], grammar: str, resolution: int
) -> tuple[list[RollNote], list[int]]:
    """The notes of the shown tokens' events, each with its token, and the bar lines (steps)."""
    notes: list[RollNote] = []
    bar_lines: list[int] = []
    signatures: list[tuple[int, int]] = [(0, 4 * resolution)]  # (step, bar steps), for TSD and MIDILike
    bar_start = -1
    bar_steps = 4 * resolution
    step = 0
    program: str | None = None
    pitch: int | None = None
    velocity = False
    started = -1  # the token of the pending note's Pitch/NoteOn
    sounding: dict[tuple[str, int], deque[tuple[int, int]]] = {}  # MIDILike: (start, token) of open notes
    opened: tuple[str, int] | None = None

    for index, symbols in enumerate(tokens):
        for symbol in symbols:
            kind, _, value = labels[symbol].partition("_")
            if kind != "Duration":
                opened = None
            if kind == "Bar":
                bar_start = 0 if bar_start < 0 else bar_start + bar_steps
                step = bar_start
                bar_lines.append(bar_start)
            elif kind == "TimeSig":
                numerator, denominator = (int(part) for part in value.split("/"))
                bar_steps = numerator * resolution * 4 // denominator
                signatures.append((step, bar_steps))
            elif kind == "Position":
                step = max(bar_start, 0) + int(value)
            elif kind == "TimeShift":
                step += int(value)
            elif kind == "Program":
                program = value
                pitch = None
                velocity = False
            elif kind in ("Pitch", "NoteOn") and program is not None:
                pitch = int(value)
                velocity = False
                started = index
            elif kind == "Velocity" and program is not None and pitch is not None:
                velocity = True
                if grammar == "midilike":
                    sounding.setdefault((program, pitch), deque()).append((step, started))
                    opened = (program, pitch)
                    pitch = None
                    velocity = False
            elif kind == "Duration" and opened is not None:
                start, token = sounding[opened].pop()
                notes.append(RollNote(opened[0], opened[1], start, int(value), token))
                opened = None
            elif kind == "Duration" and program is not None and pitch is not None and velocity:
                notes.append(RollNote(program, pitch, step, int(value), started))
                pitch = None
                velocity = False
            elif kind == "NoteOff" and program is not None:
                waiting = sounding.get((program, int(value)))
                if waiting:
                    start, token = waiting.popleft()
                    if step > start:
                        notes.append(RollNote(program, int(value), start, step - start, token))
                pitch = None
                velocity = False

    if grammar != "remi":  # bar lines from the time signatures: time shifts stop at every one
        end = max([step] + [note.start + note.steps for note in notes])
        line = 0
        current = 0
        while line <= end:
            while current + 1 < len(signatures) and signatures[current + 1][0] <= line:
                current += 1
            bar_lines.append(line)
            line += signatures[current][1]
    return notes, bar_lines


def draw(labels: Sequence[str], tokens: Sequence[Sequence[int]], grammar: str, resolution: int) -> TokenDrawing:
    """The piano roll of the shown tokens, and per token how many notes it starts."""
    notes, bar_lines = roll_notes(labels, tokens, grammar, resolution)
    started = [0] * len(tokens)
    for note in notes:
        started[note.token] += 1
    facts = [f"starts {count} note{'s' if count != 1 else ''}" if count else "" for count in started]
    if not notes:
        return TokenDrawing(facts, [""] * len(tokens), "", "no notes in the shown tokens")

    low = min(note.pitch for note in notes) - 2
    high = max(note.pitch for note in notes) + 2
    end = max(note.start + note.steps for note in notes)
    width = min(MAX_WIDTH, (end + 1) * STEP_WIDTH + 40)
    height = (high - low + 1) * PITCH_HEIGHT + 20
    body = [
        "<style>.note{stroke:#222;stroke-width:.5}.n0{fill:#3b6fb6}.n1{fill:#d9822b}"
        ".box{fill:none;stroke:#222;stroke-width:1;stroke-dasharray:3 2}"
        ".bar{stroke:#999}.beat{stroke:#eee}</style>"
    ]

    # the grid: beats, numbered bars, and each C named
    for beat in range(0, end + 1, resolution):
        x = 30 + beat * STEP_WIDTH
        body.append(f'<line class="beat" x1="{x}" y1="0" x2="{x}" y2="{height - 20}"/>')
    for number, line in enumerate(bar_lines, start=1):
        x = 30 + line * STEP_WIDTH
        body.append(
            f'<line class="bar" x1="{x}" y1="0" x2="{x}" y2="{height - 20}"/>'
            f'<text x="{x + 2}" y="{height - 6}" font-size="10">{number}</text>'
        )
    for pitch in range(low, high + 1):
        if pitch % 12 == 0:
            y = (high - pitch) * PITCH_HEIGHT
            body.append(f'<text x="2" y="{y + PITCH_HEIGHT}" font-size="9">C{pitch // 12 - 1}</text>')

    # the notes, filled in their token's color, and a dashed box around a token's several notes
    boxes: dict[int, list[int]] = {}  # token -> x0, y0, x1, y1 of its notes
    for note in notes:
        x = 30 + note.start * STEP_WIDTH
        y = (high - note.pitch) * PITCH_HEIGHT
        note_width = max(note.steps * STEP_WIDTH - 1, 1)
        title = escape(f"token {note.token + 1}: program {note.program}, pitch {note.pitch}")
        body.append(
            f'<rect class="note n{note.token % 2}" data-k="{note.token}" x="{x}" y="{y}" width="{note_width}" '
            f'height="{PITCH_HEIGHT - 1}"><title>{title}</title></rect>'
        )
        right = x + note_width
        bottom = y + PITCH_HEIGHT - 1
        box = boxes.setdefault(note.token, [x, y, right, bottom])
        box[:] = [min(box[0], x), min(box[1], y), max(box[2], right), max(box[3], bottom)]
    for token, (x0, y0, x1, y1) in boxes.items():
        if started[token] < 2:  # a lone note's own outline is its token's
            continue
        body.append(
            f'<rect class="box" data-k="{token}" x="{x0 - 1}" y="{y0 - 1}" width="{x1 - x0 + 2}" '
            f'height="{y1 - y0 + 2}"/>'
        )

    svg = (
        f'<svg class="roll" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title>piano roll</title>{"".join(body)}</svg>'
    )
    legend = (
        f"Piano roll of the shown tokens: {len(notes):,} notes in {len(bar_lines):,} bars; each note is filled in "
        "the color of the token that starts it and outlined, a token's notes together in a dashed box when it starts "
        "several; bars are numbered."
    )
    return TokenDrawing(facts, [""] * len(tokens), svg, legend)
