"""MIDI facts for tests/test_midi.py, stated without bpe_core: an independent note reader over
mido, the quantization rules the issue specifies and small MIDI files built with mido. The MIDI
tests run the `bpe` command with helpers.cli_runner.

The reader here is the test's own account of MIDI semantics (note_on velocity 0 ends a note,
first-in first-out pairing of overlapping notes of one pitch and channel within a track, notes
never ended close at the end of their track, channel index 9 is drums, program_change per
channel); it never imports bpe_midi, so the tests compare the plugin against it.
"""

import bisect
import math
from array import array
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import mido

from helpers.paths import CONFIGS_DIR, POP909_DIR, require

REMI_BPE_CONFIG = CONFIGS_DIR / "midi-remi-bpe.yaml"
REMI_CONFIG = CONFIGS_DIR / "midi-remi.yaml"
DRUM_CHANNEL = 9
SONG_COUNT = 909


def pop909_paths() -> list[Path]:
    paths = sorted(require(POP909_DIR).glob("*.mid"))
    assert len(paths) == SONG_COUNT, f"expected {SONG_COUNT} POP909 songs in {POP909_DIR}, found {len(paths)}"
    return paths


# ---------------------------------------------------------------------------------------------
# the independent reader


class RefNote(NamedTuple):
    start: int  # ticks
    end: int
    pitch: int
    velocity: int
    program: int  # -1 for drums: drums have no program
    drum: bool


@dataclass
class RefSong:
    ticks_per_beat: int
    notes: list[RefNote] = field(default_factory=list)
    tempos: list[tuple[int, int]] = field(
        default_factory=list
    )  # (tick, microseconds per beat), file order within a tick
    time_signatures: list[tuple[int, int, int]] = field(default_factory=list)  # (tick, numerator, denominator)


def reference_song(midi: mido.MidiFile) -> RefSong:
    """The notes, tempos and time signatures of a MIDI file under MIDI's rules, read with mido."""
    song = RefSong(midi.ticks_per_beat)
    tempos: list[tuple[int, int, int]] = []  # (tick, track, tempo): stable order for one tick
    signatures: list[tuple[int, int, int, int]] = []
    for track_index, track in enumerate(midi.tracks):
        programs = [0] * 16
        sounding: dict[tuple[int, int], deque[tuple[int, int, int]]] = defaultdict(deque)
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "program_change":
                programs[message.channel] = message.program
            elif message.type == "note_on" and message.velocity > 0:
                sounding[(message.channel, message.note)].append((tick, message.velocity, programs[message.channel]))
            elif message.type in ("note_on", "note_off"):
                waiting = sounding[(message.channel, message.note)]
                if waiting:  # a note_off with nothing sounding ends nothing
                    start, velocity, program = waiting.popleft()
                    song.notes.append(_note(start, tick, message.note, velocity, program, message.channel))
            elif message.type == "set_tempo":
                tempos.append((tick, track_index, message.tempo))
            elif message.type == "time_signature":
                signatures.append((tick, track_index, message.numerator, message.denominator))
        for (channel, pitch), waiting in sounding.items():
            for start, velocity, program in waiting:  # never ended: closed at the end of the track
                song.notes.append(_note(start, tick, pitch, velocity, program, channel))
    song.tempos = [(tick, tempo) for tick, _, tempo in sorted(tempos, key=lambda item: item[0])]
    song.time_signatures = [(tick, n, d) for tick, _, n, d in sorted(signatures, key=lambda item: item[0])]
    return song


def _note(start: int, end: int, pitch: int, velocity: int, program: int, channel: int) -> RefNote:
    drum = channel == DRUM_CHANNEL
    return RefNote(start, end, pitch, velocity, -1 if drum else program, drum)


def note_multiset(notes: Iterable[Any]) -> Counter[tuple[int, int, int, int, int, bool]]:
    """(start, end, pitch, velocity, program, drum) of RefNotes or bpe_midi Notes, as a multiset.
    Drum notes count with program -1, whatever program their channel had."""
    return Counter(
        (note.start, note.end, note.pitch, note.velocity, -1 if note.drum else note.program, bool(note.drum))
        for note in notes
    )


# ---------------------------------------------------------------------------------------------
# quantization as the issue specifies it


@dataclass(frozen=True)
class Quantization:
    """The pretokenizer options the round trip is checked against, and the duration bins (in grid
    steps) read from the tokenizer's `Duration_d` labels."""

    beat_resolution: int
    velocity_bins: int
    pitch_low: int
    pitch_high: int
    duration_bins: tuple[int, ...]
    tempo_bins_bpm: tuple[int, ...]

    @property
    def velocity_width(self) -> float:
        return 127 / self.velocity_bins

    def step(self, tick: int, ticks_per_beat: int) -> int:
        """The nearest grid step (halves round up, to the later step)."""
        return math.floor(tick * self.beat_resolution / ticks_per_beat + 0.5)

    def quantized_steps(self, note: RefNote, ticks_per_beat: int) -> int:
        """A note's length on the grid: rounded end minus rounded onset, at least one step."""
        return max(1, self.step(note.end, ticks_per_beat) - self.step(note.start, ticks_per_beat))

    def nearest_durations(self, steps: int) -> set[int]:
        """The duration bins nearest to `steps` (two on a tie; the longest bin for longer notes)."""
        bins = self.duration_bins
        index = bisect.bisect_left(bins, steps)
        neighbours = bins[max(0, index - 1) : index + 1]
        best = min(abs(candidate - steps) for candidate in neighbours)
        return {candidate for candidate in neighbours if abs(candidate - steps) == best}

    @property
    def tempo_tolerance(self) -> float:
        """Half the widest (logarithmic) spacing of the tempo bins, as a ratio of BPMs."""
        bins = self.tempo_bins_bpm
        spacing = max(bins[index + 1] / bins[index] for index in range(len(bins) - 1))
        return math.sqrt(spacing) * 1.001  # bins are whole BPMs: a hair of rounding

    def clamp_bpm(self, bpm: float) -> float:
        return min(max(bpm, self.tempo_bins_bpm[0]), self.tempo_bins_bpm[-1])


def quantization_of(tokenizer: Any) -> Quantization:
    """The round-trip tolerances for a midi-events tokenizer, from its options and its alphabet."""
    options = tokenizer.pretokenizer.options()
    low, high = options.get("pitch_range", [21, 108])
    labels = tokenizer.alphabet
    durations = tuple(sorted(int(label.split("_")[1]) for label in labels if label.startswith("Duration_")))
    tempos = tuple(sorted(int(label.split("_")[1]) for label in labels if label.startswith("Tempo_")))
    return Quantization(
        options.get("beat_resolution", 8), options.get("velocity_bins", 32), low, high, durations, tempos
    )


def round_trip_problems(original: RefSong, decoded: RefSong, grid: Quantization, limit: int = 5) -> list[str]:
    """Where `decoded` breaks the issue's promise about `original` (empty when it keeps it).

    Every note with a pitch in range comes back, and no other: same pitch, same program or drum
    flag; onset on the nearest grid step (so within half a step, compared in beats); duration the
    nearest duration bin to the quantized duration (`Quantization.quantized_steps`); velocity
    within one bin width (127 / velocity_bins). Notes are matched by (pitch, program, drum,
    onset step), and within such a group by (duration, velocity) in sorted order: both sides are
    sorted by those keys and compared pairwise.
    """
    problems: list[str] = []
    half_step_beats = 1 / grid.beat_resolution / 2 + 1e-9
    source_ticks, decoded_ticks, resolution = original.ticks_per_beat, decoded.ticks_per_beat, grid.beat_resolution
    expected = []
    for note in original.notes:
        if grid.pitch_low <= note.pitch <= grid.pitch_high:
            steps = grid.quantized_steps(note, source_ticks)
            bin_steps = min(grid.nearest_durations(steps))
            expected.append(
                (
                    note.pitch,
                    note.program,
                    note.drum,
                    grid.step(note.start, source_ticks),
                    bin_steps,
                    note.velocity,
                    steps,
                    note,
                )
            )
    actual = []
    for note in decoded.notes:
        onset = note.start * resolution / decoded_ticks
        length = (note.end - note.start) * resolution / decoded_ticks
        if onset != round(onset) or length != round(length):
            problems.append(f"decoded note {note} is off the grid (onset step {onset}, {length} steps)")
        actual.append((note.pitch, note.program, note.drum, round(onset), round(length), note.velocity, note))
    if len(actual) != len(expected):
        problems.append(f"{len(expected)} notes in range in the original, {len(actual)} decoded")
    expected.sort(key=lambda row: row[:6])
    actual.sort(key=lambda row: row[:6])
    for (*source_key, bin_steps, velocity, steps, source), (*result_key, length, decoded_velocity, result) in zip(
        expected, actual
    ):
        if source_key != result_key:
            problems.append(
                f"notes do not match from (pitch, program, drum, onset step) {tuple(source_key)}: "
                f"original {source}, decoded {result}"
            )
            break
        start_beats, decoded_beats = source.start / source_ticks, result.start / decoded_ticks
        if abs(decoded_beats - start_beats) > half_step_beats:
            problems.append(f"{source}: onset {start_beats:.4f} beats decoded at {decoded_beats:.4f}")
        if length != bin_steps and length not in grid.nearest_durations(steps):
            problems.append(
                f"{source}: {steps} steps on the grid, nearest bins {sorted(grid.nearest_durations(steps))}, decoded "
                f"{length}"
            )
        if abs(decoded_velocity - velocity) >= grid.velocity_width:
            problems.append(f"{source}: velocity {velocity} decoded as {decoded_velocity}")
        if len(problems) >= limit:
            break
    return problems[:limit]


def tempo_problems(original: RefSong, decoded: RefSong, grid: Quantization, limit: int = 5) -> list[str]:
    """Where the decoded tempo map breaks the promise: a tempo at (the step of) every original
    change, within half a tempo bin of the original (clamped to the bins), and changes only there
    (and at step 0, where a song without a tempo gets MIDI's 120 BPM)."""
    problems: list[str] = []
    expected: dict[int, int] = {0: 500000}
    for tick, microseconds in original.tempos:  # the last change at a step wins
        expected[grid.step(tick, original.ticks_per_beat)] = microseconds
    actual: dict[int, int] = {}
    for tick, microseconds in decoded.tempos:
        step = tick * grid.beat_resolution / decoded.ticks_per_beat
        if step != round(step) or round(step) not in expected:
            problems.append(
                f"decoded tempo {60_000_000 / microseconds:.1f} BPM at step {step}, where the original has no change"
            )
        actual[round(step)] = microseconds
    decoded_map = sorted(actual.items())
    for step, microseconds in sorted(expected.items()):
        bpm = grid.clamp_bpm(60_000_000 / microseconds)
        decoded_bpm = 60_000_000 / tempo_map_at(decoded_map, step)
        if max(bpm / decoded_bpm, decoded_bpm / bpm) > grid.tempo_tolerance:
            problems.append(f"step {step}: original {60_000_000 / microseconds:.2f} BPM, decoded {decoded_bpm:.2f} BPM")
    return problems[:limit]


def last_event_step(song: RefSong, grid: Quantization) -> int:
    """The step of the last note onset (in range) or tempo change: where the bars end."""
    steps = [
        grid.step(note.start, song.ticks_per_beat)
        for note in song.notes
        if grid.pitch_low <= note.pitch <= grid.pitch_high
    ]
    steps += [grid.step(tick, song.ticks_per_beat) for tick, _ in song.tempos]
    return max(steps, default=0)


def signature_problems(original: RefSong, decoded: RefSong, grid: Quantization) -> list[str]:
    """The decoded file's time signatures must be the original's, each at the bar line where it
    takes effect (see `bar_lines`), listed only where the signature changes."""
    bars = bar_lines(original.time_signatures, last_event_step(original, grid), grid, original.ticks_per_beat)
    expected = signature_changes(bars)
    actual = [(tick * grid.beat_resolution // decoded.ticks_per_beat, n, d) for tick, n, d in decoded.time_signatures]
    if actual != expected:
        return [f"time signatures (step, n, d): expected {expected[:6]}, decoded {actual[:6]}"]
    return []


def bar_lines(
    signatures: Sequence[tuple[int, int, int]], last_step: int, grid: Quantization, ticks_per_beat: int
) -> list[tuple[int, int, int]]:
    """(start step, numerator, denominator) of every bar up to `last_step`: 4/4 until the first
    signature; a signature takes effect at the first bar line at or after its (rounded) position,
    the last one at a position winning."""
    changes = [(grid.step(tick, ticks_per_beat), n, d) for tick, n, d in signatures]
    bars: list[tuple[int, int, int]] = []
    current = (4, 4)
    start = 0
    pending = 0
    while True:
        while pending < len(changes) and changes[pending][0] <= start:
            current = changes[pending][1:]
            pending += 1
        bars.append((start, *current))
        start += current[0] * grid.beat_resolution * 4 // current[1]
        if start > last_step:
            return bars


def signature_changes(bars: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The bars where the signature differs from the bar before (the first bar always)."""
    return [bar for index, bar in enumerate(bars) if index == 0 or bar[1:] != bars[index - 1][1:]]


def tempo_map_at(tempos: Sequence[tuple[int, int]], tick: int) -> int:
    """The tempo (microseconds per beat) in force at `tick`: the last change at or before it."""
    index = bisect.bisect_right(tempos, (tick, math.inf)) - 1
    return tempos[index][1] if index >= 0 else 500000


# ---------------------------------------------------------------------------------------------
# MIDI files built with mido


def absolute_messages(track: mido.MidiTrack) -> list[tuple[int, Any]]:
    tick = 0
    messages = []
    for message in track:
        tick += message.time
        messages.append((tick, message))
    return messages


def track_of(messages: Iterable[tuple[int, Any]]) -> mido.MidiTrack:
    """A track from (absolute tick, message) pairs, in the given order (sorted by tick, stable)."""
    track = mido.MidiTrack()
    now = 0
    for tick, message in sorted(messages, key=lambda item: item[0]):
        track.append(message.copy(time=tick - now))
        now = tick
    return track


def retimed(midi: mido.MidiFile, ticks_per_beat: int, tick_of: Any = None) -> mido.MidiFile:
    """A copy at another resolution: every absolute tick t becomes tick_of(t) (by default
    t * new / old rounded to the nearest tick); tempos in microseconds per beat stay."""
    if tick_of is None:

        def tick_of(tick: int) -> int:
            return round(tick * ticks_per_beat / midi.ticks_per_beat)

    result = mido.MidiFile(type=midi.type, ticks_per_beat=ticks_per_beat)
    for track in midi.tracks:
        result.tracks.append(track_of((tick_of(tick), message) for tick, message in absolute_messages(track)))
    return result


def type0(midi: mido.MidiFile) -> mido.MidiFile:
    """The same song as a type 0 file: every track merged into one (mido.merge_tracks)."""
    result = mido.MidiFile(type=0, ticks_per_beat=midi.ticks_per_beat)
    result.tracks.append(mido.merge_tracks(midi.tracks))
    return result


def midi_file(tracks: Sequence[Sequence[tuple[int, Any]]], ticks_per_beat: int = 480) -> mido.MidiFile:
    """A type 1 file from tracks of (absolute tick, message), each ended with end_of_track."""
    midi = mido.MidiFile(type=1, ticks_per_beat=ticks_per_beat)
    for messages in tracks:
        track = track_of(messages)
        end = max((tick for tick, _ in messages), default=0)
        track.append(mido.MetaMessage("end_of_track", time=end - sum(message.time for message in track)))
        midi.tracks.append(track)
    return midi


def note(start: int, end: int, pitch: int, velocity: int = 80, channel: int = 0) -> list[tuple[int, Any]]:
    """A note as its note_on and note_off (a note_on with velocity 0, as most files do)."""
    return [
        (start, mido.Message("note_on", channel=channel, note=pitch, velocity=velocity)),
        (end, mido.Message("note_on", channel=channel, note=pitch, velocity=0)),
    ]


def tempo(tick: int, bpm: float) -> tuple[int, Any]:
    return (tick, mido.MetaMessage("set_tempo", tempo=round(60_000_000 / bpm)))


def time_signature(tick: int, numerator: int, denominator: int) -> tuple[int, Any]:
    return (tick, mido.MetaMessage("time_signature", numerator=numerator, denominator=denominator))


def program_change(tick: int, program: int, channel: int = 0) -> tuple[int, Any]:
    return (tick, mido.Message("program_change", channel=channel, program=program))


# ---------------------------------------------------------------------------------------------
# the command line


# ---------------------------------------------------------------------------------------------
# compact storage for per-song facts kept across tests (arrays, not a million small objects)

NOTE_FIELDS = 6


@dataclass
class PackedSong:
    ticks_per_beat: int
    notes: "array[int]"
    tempos: list[tuple[int, int]]
    time_signatures: list[tuple[int, int, int]]

    @classmethod
    def of(cls, song: RefSong) -> "PackedSong":
        flat = array("q")
        for item in song.notes:
            flat.extend((item.start, item.end, item.pitch, item.velocity, item.program, int(item.drum)))
        return cls(song.ticks_per_beat, flat, list(song.tempos), list(song.time_signatures))

    def unpack(self) -> RefSong:
        flat = self.notes
        notes = [
            RefNote(flat[i], flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4], bool(flat[i + 5]))
            for i in range(0, len(flat), NOTE_FIELDS)
        ]
        return RefSong(self.ticks_per_beat, notes, list(self.tempos), list(self.time_signatures))
