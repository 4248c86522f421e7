"""The `midi-events` pretokenizer: a song as events over a fixed alphabet, in one of three grammars.

`grammar: remi` (the default) is a sequence of bars: `Bar`, `TimeSig_n/d` (first bar and
changes), then for each grid position that holds something `Position_i`, `Tempo_t` (first
position and changes) and, per note, `Program_p` (or `Program_drums`), `Pitch_n`, `Velocity_v`,
`Duration_d`. `tsd` has no Bar or Position: `TimeShift_k` moves time on by k grid steps, then
the same tempo and note events. `midilike` has `TimeShift_k`, `Program_p NoteOn_n Velocity_v` where a
note starts and `Program_p NoteOff_n` where it ends (the NoteOff ends the oldest sounding note
of that program and pitch; a note that ends inside an earlier one of the same program and pitch,
which no NoteOff can end, gets a `Duration_d` after its Velocity instead). In TSD and MIDILike
time shifts stop at every bar line (an empty bar is one `TimeShift` of its length), so each bar's
events begin at its bar line and `split: bar | beat` cut there, as in REMI.

Onsets are rounded to the grid (`beat_resolution` steps per beat), durations to bins of grid
steps that grow coarser for long notes (a MIDILike NoteOff comes that binned duration after its
NoteOn, so every grammar keeps the same notes), velocities and tempos to bins. A time signature
change takes effect at the next bar line, so bars are the same when decoding. `report` says what
quantization changed. The work is done by the compiled kernel `bpe_midi.grammars`; this module
reads the options, builds the alphabet and the kernel's `Layout`, and names the report's counts.
"""

import bisect
import math
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from bpe_core.contract import TokenDrawing, check_options
from bpe_core.errors import BpeError
from bpe_midi import grammars, roll
from bpe_midi.augment import augmentation_of, labelled_variants, parsed_augmentation, variants
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
    step = 1
    limit = 2 * resolution
    value = 1
    while value <= MAX_DURATION_BEATS * resolution:
        durations.append(value)
        if value >= limit:
            step = step * 2
            limit = limit * 2
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


GRAMMARS = ("remi", "tsd", "midilike")
GRAMMAR_CODES = {"remi": grammars.REMI, "tsd": grammars.TSD, "midilike": grammars.MIDILIKE}
SPLIT_CODES = {"bar": grammars.SPLIT_BAR, "beat": grammars.SPLIT_BEAT, "none": grammars.SPLIT_NONE}


def alphabet_of(grid: Grid, with_signatures: bool, grammar: str = "remi") -> list[str]:
    """The event labels of a grammar, in id order (REMI's order is what saved tokenizers hold)."""
    longest_bar = max(grid.bar_steps(*signature) for signature in grid.signatures)
    labels = ["Bar"] if grammar == "remi" else []
    if with_signatures:
        labels += [f"TimeSig_{numerator}/{denominator}" for numerator, denominator in grid.signatures]
    if grammar == "remi":
        labels += [f"Position_{index}" for index in range(longest_bar)]
    labels += [f"Tempo_{bpm}" for bpm in grid.tempos]
    labels += [f"Program_{program}" for program in grid.programs] + ["Program_drums"]
    if grammar == "midilike":
        labels += [f"NoteOn_{pitch}" for pitch in range(grid.pitch_low, grid.pitch_high + 1)]
        labels += [f"NoteOff_{pitch}" for pitch in range(grid.pitch_low, grid.pitch_high + 1)]
    else:
        labels += [f"Pitch_{pitch}" for pitch in range(grid.pitch_low, grid.pitch_high + 1)]
    labels += [f"Velocity_{velocity}" for velocity in grid.velocities]
    labels += [f"Duration_{steps}" for steps in grid.durations]
    if grammar != "remi":
        labels += [f"TimeShift_{steps}" for steps in range(1, longest_bar + 1)]
    return labels


def layout_of(grid: Grid, labels: list[str], grammar: str, split: str) -> grammars.Layout:
    """Where each kind of event starts among `labels`, for the compiled tokenizer."""
    ids = {label: index for index, label in enumerate(labels)}

    def base(label: str) -> int:
        return ids.get(label, grammars.NO_SYMBOL)

    low = grid.pitch_low
    first_signature = f"TimeSig_{grid.signatures[0][0]}/{grid.signatures[0][1]}"
    ranks = [grammars.NO_SYMBOL] * 128
    for rank, program in enumerate(grid.programs):
        ranks[program] = rank
    bases = [
        base("Bar"),
        base(first_signature),
        base("Position_0"),
        base(f"Tempo_{grid.tempos[0]}"),
        base(f"Program_{grid.programs[0]}") if grid.programs else base("Program_drums"),
        base(f"NoteOn_{low}") if grammar == "midilike" else base(f"Pitch_{low}"),
        base(f"NoteOff_{low}"),
        base(f"Velocity_{grid.velocities[0]}"),
        base(f"Duration_{grid.durations[0]}"),
        base("TimeShift_1"),
        sum(label.startswith("TimeShift_") for label in labels),
    ]
    return grammars.Layout(
        GRAMMAR_CODES[grammar],
        SPLIT_CODES[split],
        grid.resolution,
        low,
        grid.pitch_high,
        list(grid.velocities),
        list(grid.durations),
        ranks,
        len(grid.programs),
        bases,
    )


class MidiEventPretokenizer:
    """Events in one of three grammars (`grammar: remi | tsd | midilike`); chunks are bars
    (`split: bar`), beats, or whole songs (`none`)."""

    name = "midi-events"
    byte_level = False
    decoder = "midi"
    symbol_unit = "events"
    OPTIONS = (
        "grammar",
        "beat_resolution",
        "velocity_bins",
        "pitch_range",
        "programs",
        "tempos",
        "time_signatures",
        "split",
        "parser",
        "augment",
    )

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("pretokenizer", self.name, options, self.OPTIONS)
        self.raw_options = dict(options)
        self.grammar = options.get("grammar", "remi")
        if self.grammar not in GRAMMARS:
            raise BpeError(f"pretokenizer.grammar: {self.grammar!r} is not allowed; allowed: {', '.join(GRAMMARS)}")
        self.grid = grid_from_options(options)
        self.with_signatures = options.get("time_signatures", True) is not False
        self.split_mode = options.get("split", "bar")
        if not isinstance(self.split_mode, str) or self.split_mode not in SPLIT_CODES:
            raise BpeError(f"pretokenizer.split: {self.split_mode!r} is not allowed; allowed: bar, beat, none")
        self.parser = options.get("parser", "fast")
        if self.parser not in ("fast", "mido", "symusic"):
            raise BpeError(f"pretokenizer.parser: {self.parser!r} is not allowed; allowed: fast, mido, symusic")
        self.labels = alphabet_of(self.grid, self.with_signatures, self.grammar)
        self.ids = {label: index for index, label in enumerate(self.labels)}
        self.layout = layout_of(self.grid, self.labels, self.grammar, self.split_mode)
        self.signature_index = {signature: index for index, signature in enumerate(self.grid.signatures)}
        if not self.with_signatures:
            self.signature_index = {}
        self.tempo_bins: dict[int, int] = {}  # microseconds per beat -> tempo bin
        self.augmentation = augmentation_of(options)

    def options(self) -> dict[str, Any]:
        return dict(self.raw_options)

    def alphabet(self) -> list[str]:
        return list(self.labels)

    def decoder_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"beat_resolution": self.grid.resolution}
        if self.grammar != "remi":
            options["grammar"] = self.grammar
        return options

    def safe_cut(self, text: str) -> int:
        return 0

    def symbols(self, chunk: Any) -> list[int]:
        return list(chunk)

    def draw_tokens(self, tokens: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]] | None) -> TokenDrawing:
        """A piano roll of the shown tokens, for `bpe inspect --html` (see `roll`)."""
        return roll.draw(self.labels, tokens, self.grammar, self.grid.resolution)

    def split(self, document: Any) -> list[tuple[int, ...]]:
        chunks, _, _ = self.tokenize_bars(song_of(document, self.parser))
        return chunks

    def count_reported(self, document: Any) -> tuple[Counter[tuple[int, ...]], dict[str, int]]:
        """Training's count of a song's chunks (the `ReportsCounting` ability): with `augment`,
        the song's and every augmented copy's (`bpe_midi.augment`), and how many copies were
        counted and how many notes transposing pushed out of the pitch range."""
        song = song_of(document, self.parser)
        counts = Counter(self.tokenize_bars(song)[0])
        if not self.augmentation.active:
            return counts, {}
        copies = dropped = 0
        for copy, copy_dropped in variants(song, self.augmentation, self.grid.pitch_low, self.grid.pitch_high):
            counts.update(self.tokenize_bars(copy)[0])
            copies += 1
            dropped += copy_dropped
        return counts, {"augmented_copies": copies, "augment_notes_dropped": dropped}

    def losses(self, document: Any) -> str:
        """The notes encoding drops (the `ReportsLosses` ability), as `grammars.tokenize` drops
        them: outside the pitch range, then (not drums) of a program not allowed."""
        notes = song_of(document, self.parser).notes
        low = self.grid.pitch_low
        high = self.grid.pitch_high
        ranks = self.layout.program_ranks
        inside = [note for note in notes if low <= note.pitch <= high]
        outside = len(notes) - len(inside)
        programs = sum(1 for note in inside if not note.drum and ranks[note.program] == grammars.NO_SYMBOL)
        said = [f"{outside:,} with a pitch outside {low}..{high}"] if outside else []
        said += [f"{programs:,} of a program not allowed"] if programs else []
        return f"{outside + programs:,} of {len(notes):,} notes dropped ({', '.join(said)})" if said else ""

    def check_augment(self, options: Mapping[str, float]) -> None:
        parsed_augmentation(dict(options), "--augment")

    def augmented(self, document: Any, options: Mapping[str, float]) -> Iterator[Song]:
        """The song, then its copies (the `AugmentsDocuments` ability), named after the song's
        file and the copy's offset (`001.mid`, `001.mid#pitch-2`); drums are never transposed."""
        song = song_of(document, self.parser)
        name = song.id or os.path.basename(song.source)
        yield replace(song, id=name)
        augmentation = parsed_augmentation(dict(options), "--augment")
        for label, copy, _ in labelled_variants(song, augmentation, self.grid.pitch_low, self.grid.pitch_high):
            yield replace(copy, id=f"{name}#{label}")

    boundary_names = ("bar", "beat")

    def split_with_boundaries(self, document: Any) -> tuple[list[tuple[int, ...]], list[list[int]]]:
        """The chunks `split` gives, and where the bar lines and the beat lines begin among their
        symbols laid end to end (the `MarksBoundaries` ability: training windows start there)."""
        chunks, _, _, bars, beats = self.tokenize_song(song_of(document, self.parser))
        return chunks, [bars, beats]

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
        chunks, bar_chunks, report, _, _ = self.tokenize_song(song)
        return chunks, bar_chunks, report

    def tokenize_song(
        self, song: Song
    ) -> tuple[list[tuple[int, ...]], list[int], dict[str, Any], list[int], list[int]]:
        """`tokenize_bars`, with where each bar line and each beat line begins among the chunks'
        symbols laid end to end (in every split)."""
        grid = self.grid
        ticks_per_beat = song.ticks_per_beat
        resolution = grid.resolution
        unsupported = 0
        signatures: list[int] = []
        for tick, numerator, denominator in song.time_signatures:
            if (numerator, denominator) not in grid.signatures:
                unsupported += 1
                numerator = 4
                denominator = 4
            step = grammars.step_of(tick, ticks_per_beat, resolution)
            index = self.signature_index.get((numerator, denominator), grammars.NO_SYMBOL)
            signatures.extend((step, index, grid.bar_steps(numerator, denominator)))
        if not signatures or signatures[0] > 0:
            signatures[:0] = [0, self.signature_index.get((4, 4), grammars.NO_SYMBOL), grid.bar_steps(4, 4)]
        tempos: list[int] = []
        binned = 0
        for tick, microseconds in song.tempos:
            index = self.tempo_bin(microseconds)
            binned += abs(60_000_000 / max(1, microseconds) - grid.tempos[index]) > 0.5
            tempos.extend((grammars.step_of(tick, ticks_per_beat, resolution), index))
        if not tempos or tempos[0] > 0:
            tempos[:0] = [0, self.tempo_bin(DEFAULT_TEMPO)]
        chunks, bar_chunks, counts, largest_shift, bar_starts, beat_starts = grammars.tokenize(
            self.layout,
            ticks_per_beat,
            # a Note is such a tuple; a list type (not Sequence) keeps the compiled loop's fast path
            cast(list[tuple[int, int, int, int, int, bool, int]], song.notes),
            tempos,
            signatures,
        )
        report: dict[str, Any] = dict(zip(REPORT_KEYS, counts))
        report["tempos_binned"] = binned
        report["time_signatures_unsupported"] = unsupported
        report["max_onset_shift_beats"] = round(largest_shift / (ticks_per_beat * resolution), 6)
        return chunks, bar_chunks, report, bar_starts, beat_starts

    def tempo_bin(self, microseconds: int) -> int:
        index = self.tempo_bins.get(microseconds)
        if index is None:
            index = self.tempo_bins[microseconds] = self.grid.tempo_index(microseconds)
        return index
