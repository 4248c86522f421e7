"""The `midi-events` pretokenizer: a REMI-style event grammar over a fixed alphabet.

A song is a sequence of bars: `Bar`, `TimeSig_n/d` (first bar and changes), then for each grid
position that holds something `Position_i`, `Tempo_t` (first position and changes) and, per note,
`Program_p` (or `Program_drums`), `Pitch_n`, `Velocity_v`, `Duration_d`. Onsets are rounded to the
grid (`beat_resolution` steps per beat), durations to bins of grid steps that grow coarser for
long notes, velocities and tempos to bins. A time signature change takes effect at the next bar
line, so bars are the same when decoding. `report` says what quantization changed.
"""

import bisect
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bpe_core.contract import check_options
from bpe_core.errors import BpeError
from bpe_midi.song import Song, song_of

# the time signatures of most music; others are read as 4/4 (and reported), or listed in options
COMMON_SIGNATURES = tuple(
    [(numerator, 2) for numerator in range(1, 5)]
    + [(numerator, 4) for numerator in range(1, 9)]
    + [(numerator, 8) for numerator in range(1, 13)]
    + [(numerator, 16) for numerator in range(1, 17)]
)
REPORT_KEYS = (
    "notes",
    "notes_kept",
    "dropped_pitch_out_of_range",
    "dropped_program_not_allowed",
    "onsets_moved",
    "durations_binned",
    "durations_clipped",
    "velocities_binned",
    "tempos_binned",
    "time_signatures_unsupported",
)
DEFAULT_TEMPO = 500000  # microseconds per beat: 120 BPM, MIDI's default
MAX_DURATION_BEATS = 16


def _integer(options: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BpeError(f"pretokenizer.{key}: expected an integer from {low} to {high}, got {value!r}")
    return value


@dataclass(frozen=True)
class Grid:
    """Everything quantization needs, from the options."""

    resolution: int
    velocities: tuple[int, ...]
    durations: tuple[int, ...]
    tempos: tuple[int, ...]
    pitch_low: int
    pitch_high: int
    programs: tuple[int, ...]
    signatures: tuple[tuple[int, int], ...]

    def bar_steps(self, numerator: int, denominator: int) -> int:
        return numerator * self.resolution * 4 // denominator

    def velocity_index(self, velocity: int) -> int:
        return min(len(self.velocities) - 1, max(0, (velocity - 1) * len(self.velocities) // 127))

    def duration_index(self, steps: int) -> int:
        index = bisect.bisect_left(self.durations, steps)
        if index == len(self.durations):
            return index - 1
        if index > 0 and steps - self.durations[index - 1] <= self.durations[index] - steps:
            return index - 1
        return index

    def tempo_index(self, microseconds: int) -> int:
        bpm = 60_000_000 / max(1, microseconds)
        return min(range(len(self.tempos)), key=lambda index: abs(math.log(self.tempos[index] / bpm)))


def grid_from_options(options: dict[str, Any]) -> Grid:
    resolution = _integer(options, "beat_resolution", 8, 1, 64)
    bins = _integer(options, "velocity_bins", 32, 1, 127)
    velocities = tuple(1 + (2 * index + 1) * 127 // (2 * bins) for index in range(bins))
    pitch_range = options.get("pitch_range", [21, 108])
    if (
        not isinstance(pitch_range, list)
        or len(pitch_range) != 2
        or not all(isinstance(value, int) and 0 <= value <= 127 for value in pitch_range)
        or pitch_range[0] > pitch_range[1]
    ):
        raise BpeError(f"pretokenizer.pitch_range: expected [low, high] within 0..127, got {pitch_range!r}")
    programs = options.get("programs")
    if programs is None:
        programs = list(range(128))
    if not isinstance(programs, list) or not all(isinstance(value, int) and 0 <= value <= 127 for value in programs):
        raise BpeError(f"pretokenizer.programs: expected null (all) or a list of programs 0..127, got {programs!r}")
    tempo_options = options.get("tempos", {"min": 40, "max": 250, "bins": 32})
    if not isinstance(tempo_options, dict) or set(tempo_options) - {"min", "max", "bins"}:
        raise BpeError(f"pretokenizer.tempos: expected {{min, max, bins}} in BPM, got {tempo_options!r}")
    low = _integer(tempo_options, "min", 40, 1, 1000)
    high = _integer(tempo_options, "max", 250, low, 1000)
    count = _integer(tempo_options, "bins", 32, 1, 256)
    tempos = sorted({round(low * (high / low) ** (index / max(1, count - 1))) for index in range(count)})
    durations: list[int] = []
    step, limit = 1, 2 * resolution
    value = 1
    while value <= MAX_DURATION_BEATS * resolution:
        durations.append(value)
        if value >= limit:
            step, limit = step * 2, limit * 2
        value += step
    choice = options.get("time_signatures", True)
    signatures: tuple[tuple[int, int], ...]
    if choice is True:
        signatures = COMMON_SIGNATURES
    elif choice is False:
        signatures = ((4, 4),)
    else:
        signatures = _signatures(choice, resolution)
    return Grid(
        resolution,
        velocities,
        tuple(durations),
        tuple(tempos),
        pitch_range[0],
        pitch_range[1],
        tuple(sorted(set(programs))),
        signatures,
    )


def _signatures(choice: Any, resolution: int) -> tuple[tuple[int, int], ...]:
    """`time_signatures` as a list of "n/d" strings."""
    if not isinstance(choice, list) or not choice:
        raise BpeError(
            f'pretokenizer.time_signatures: expected true, false or a list like ["4/4", "3/4"], got {choice!r}'
        )
    signatures = []
    for item in choice:
        numerator, _, denominator = str(item).partition("/")
        if not (numerator.isdigit() and denominator.isdigit() and int(denominator) in (1, 2, 4, 8, 16, 32)):
            raise BpeError(f'pretokenizer.time_signatures: {item!r} is not a time signature like "3/4"')
        if int(numerator) * resolution * 4 % int(denominator) or int(numerator) == 0:
            raise BpeError(
                f"pretokenizer.time_signatures: {item!r} is not a whole number of grid steps at beat_resolution "
                f"{resolution}"
            )
        signatures.append((int(numerator), int(denominator)))
    return tuple(dict.fromkeys(signatures))


def alphabet_of(grid: Grid, with_signatures: bool) -> list[str]:
    labels = ["Bar"]
    if with_signatures:
        labels += [f"TimeSig_{numerator}/{denominator}" for numerator, denominator in grid.signatures]
    labels += [f"Position_{index}" for index in range(max(grid.bar_steps(*signature) for signature in grid.signatures))]
    labels += [f"Tempo_{bpm}" for bpm in grid.tempos]
    labels += [f"Program_{program}" for program in grid.programs] + ["Program_drums"]
    labels += [f"Pitch_{pitch}" for pitch in range(grid.pitch_low, grid.pitch_high + 1)]
    labels += [f"Velocity_{velocity}" for velocity in grid.velocities]
    labels += [f"Duration_{steps}" for steps in grid.durations]
    return labels


class MidiEventPretokenizer:
    """REMI-style events; chunks are bars (`split: bar`), beats, or whole songs (`none`)."""

    name = "midi-events"
    byte_level = False
    decoder = "midi"
    symbol_unit = "events"
    OPTIONS = (
        "beat_resolution",
        "velocity_bins",
        "pitch_range",
        "programs",
        "tempos",
        "time_signatures",
        "split",
        "parser",
    )

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("pretokenizer", self.name, options, self.OPTIONS)
        self.raw_options = dict(options)
        self.grid = grid_from_options(options)
        self.with_signatures = options.get("time_signatures", True) is not False
        self.split_mode = options.get("split", "bar")
        if self.split_mode not in ("bar", "beat", "none"):
            raise BpeError(f"pretokenizer.split: {self.split_mode!r} is not allowed; allowed: bar, beat, none")
        self.parser = options.get("parser", "fast")
        if self.parser not in ("fast", "mido"):
            raise BpeError(f"pretokenizer.parser: {self.parser!r} is not allowed; allowed: fast, mido")
        self.labels = alphabet_of(self.grid, self.with_signatures)
        self.ids = {label: index for index, label in enumerate(self.labels)}

    def options(self) -> dict[str, Any]:
        return dict(self.raw_options)

    def alphabet(self) -> list[str]:
        return list(self.labels)

    def decoder_options(self) -> dict[str, Any]:
        return {"beat_resolution": self.grid.resolution}

    def safe_cut(self, text: str) -> int:
        return 0

    def symbols(self, chunk: Any) -> list[int]:
        return list(chunk)

    def split(self, document: Any) -> list[tuple[int, ...]]:
        chunks, _ = self.tokenize(song_of(document, self.parser))
        return chunks

    def report(self, document: Any) -> dict[str, Any]:
        """What quantization changed for this song (see `tokenize`)."""
        _, report = self.tokenize(song_of(document, self.parser))
        return report

    def tokenize(self, song: Song) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
        """A song's chunks (each a tuple of symbol ids) and what quantization changed."""
        chunks, _, report = self.tokenize_bars(song)
        return chunks, report

    def tokenize_bars(self, song: Song) -> tuple[list[tuple[int, ...]], list[int], dict[str, Any]]:
        """`tokenize`, with the index of the chunk where each bar begins: every bar, even an empty
        one, begins a chunk with `split: bar` or `beat` (so a song can be cut at bar lines between
        chunks); with `split: none` the song is one chunk and the list is [0]."""
        grid, ids = self.grid, self.ids
        ticks_per_step = song.ticks_per_beat / grid.resolution
        report: Counter[str] = Counter({key: 0 for key in REPORT_KEYS})
        max_shift = 0.0

        def step_of(tick: int) -> int:
            return math.floor(tick / ticks_per_step + 0.5)

        signatures = []
        for tick, numerator, denominator in song.time_signatures:
            if (numerator, denominator) not in grid.signatures:
                report["time_signatures_unsupported"] += 1
                numerator, denominator = 4, 4
            signatures.append((step_of(tick), numerator, denominator))
        if not signatures or signatures[0][0] > 0:
            signatures.insert(0, (0, 4, 4))
        tempos = [(step_of(tick), grid.tempo_index(tempo)) for tick, tempo in song.tempos]
        if not tempos or tempos[0][0] > 0:
            tempos.insert(0, (0, grid.tempo_index(DEFAULT_TEMPO)))
        report["tempos_binned"] = sum(
            1
            for _, tempo in song.tempos
            if abs(60_000_000 / max(1, tempo) - grid.tempos[grid.tempo_index(tempo)]) > 0.5
        )

        notes: list[tuple[int, int, int, int, int]] = []  # onset step, program id, pitch, velocity id, duration id
        for note in song.notes:
            report["notes"] += 1
            if not grid.pitch_low <= note.pitch <= grid.pitch_high:
                report["dropped_pitch_out_of_range"] += 1
                continue
            if note.drum:
                program = ids["Program_drums"]
            elif note.program in grid.programs:
                program = ids[f"Program_{note.program}"]
            else:
                report["dropped_program_not_allowed"] += 1
                continue
            exact = note.start / ticks_per_step
            onset = step_of(note.start)
            if onset != exact:
                report["onsets_moved"] += 1
                max_shift = max(max_shift, abs(onset - exact) / grid.resolution)
            steps = max(1, step_of(note.end) - onset)
            duration = grid.duration_index(steps)
            if steps > grid.durations[-1]:
                report["durations_clipped"] += 1
            elif grid.durations[duration] != steps:
                report["durations_binned"] += 1
            velocity = grid.velocity_index(note.velocity)
            if grid.velocities[velocity] != note.velocity:
                report["velocities_binned"] += 1
            notes.append((onset, program, note.pitch, velocity, duration))
        notes.sort()
        report["notes_kept"] = len(notes)

        # bars: a time signature change takes effect at the first bar line at or after it
        last_step = max([notes[-1][0] if notes else 0, tempos[-1][0]])
        bar_starts: list[int] = []
        bar_signatures: list[tuple[int, int]] = []
        pending = 0
        start = 0
        while True:
            while pending + 1 < len(signatures) and signatures[pending + 1][0] <= start:
                pending += 1
            bar_starts.append(start)
            bar_signatures.append(signatures[pending][1:])
            start += grid.bar_steps(*signatures[pending][1:])
            if start > last_step:
                break

        # events per bar: {position: (tempo or None, [notes])}
        per_bar: list[dict[int, list[Any]]] = [{} for _ in bar_starts]
        for step, tempo in tempos:
            bar = bisect.bisect_right(bar_starts, step) - 1
            per_bar[bar].setdefault(step - bar_starts[bar], [None, []])[0] = tempo
        for quantized in notes:
            bar = bisect.bisect_right(bar_starts, quantized[0]) - 1
            per_bar[bar].setdefault(quantized[0] - bar_starts[bar], [None, []])[1].append(quantized)

        position_base = ids["Position_0"]
        tempo_base = ids[f"Tempo_{grid.tempos[0]}"]
        pitch_base = ids[f"Pitch_{grid.pitch_low}"]
        velocity_base = ids[f"Velocity_{grid.velocities[0]}"]
        duration_base = ids[f"Duration_{grid.durations[0]}"]
        chunks: list[tuple[int, ...]] = []
        bar_chunks: list[int] = []
        song_tokens: list[int] = []
        previous_signature: tuple[int, int] | None = None
        for bar, events in enumerate(per_bar):
            bar_tokens = [ids["Bar"]]
            if self.with_signatures and bar_signatures[bar] != previous_signature:
                numerator, denominator = bar_signatures[bar]
                bar_tokens.append(ids[f"TimeSig_{numerator}/{denominator}"])
            previous_signature = bar_signatures[bar]
            current: list[int] = bar_tokens
            bar_chunks.append(len(chunks))
            beat = 0
            for position in sorted(events):
                tempo, position_notes = events[position]
                if self.split_mode == "beat" and position // grid.resolution != beat:
                    beat = position // grid.resolution
                    chunks.append(tuple(current))
                    current = []
                current.append(position_base + position)
                if tempo is not None:
                    current.append(tempo_base + tempo)
                for _, program, pitch, velocity, duration in position_notes:
                    current.extend(
                        (
                            program,
                            pitch_base + pitch - grid.pitch_low,
                            velocity_base + velocity,
                            duration_base + duration,
                        )
                    )
            if self.split_mode == "none":
                song_tokens.extend(current)
            else:
                chunks.append(tuple(current))
        if self.split_mode == "none":
            chunks, bar_chunks = [tuple(song_tokens)], [0]
        result: dict[str, Any] = {key: report[key] for key in REPORT_KEYS}
        result["max_onset_shift_beats"] = round(max_shift, 6)
        return chunks, bar_chunks, result
