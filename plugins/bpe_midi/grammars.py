"""The compiled event tokenizer: a song's notes, tempos and time signatures to chunks of event ids,
in one of three grammars (REMI, TSD, MIDILike), as `bpe_midi.events` describes them.

Everything is integers: ticks, grid steps, bin indexes and symbol ids, with the alphabet's
layout handed in as a `Layout`; notes are sorted by one packed integer key. The caller
(`bpe_midi.events`) builds the Layout from the options, bins tempos, maps time signatures to
the ones allowed and makes the report's dictionary. This is a mypyc kernel: no options, no
labels, no I/O, no pluggy.
"""

from typing import Final

from mypy_extensions import i64

REMI: Final = 0
TSD: Final = 1
MIDILIKE: Final = 2

SPLIT_BAR: Final = 0
SPLIT_BEAT: Final = 1
SPLIT_NONE: Final = 2

# report counts, in this order (bpe_midi.events names them)
NOTES: Final = 0
NOTES_KEPT: Final = 1
DROPPED_PITCH: Final = 2
DROPPED_PROGRAM: Final = 3
ONSETS_MOVED: Final = 4
DURATIONS_BINNED: Final = 5
DURATIONS_CLIPPED: Final = 6
VELOCITIES_BINNED: Final = 7
REPORT_COUNTS: Final = 8

# a note's sort key: onset, program rank, pitch, then two 9-bit bin indexes (velocity and
# duration for REMI and TSD; duration first for MIDILike, so that notes of one pitch starting
# together end in the order they start, which is how NoteOffs pair)
PITCH_SHIFT: Final = 18
RANK_SHIFT: Final = 25
ONSET_SHIFT: Final = 33
BIN_MASK: Final = 511
NO_SYMBOL: Final = -1


class Layout:
    """The grid and where each kind of event starts in the alphabet (NO_SYMBOL: not in it)."""

    grammar: i64
    split: i64
    resolution: i64
    pitch_low: i64
    pitch_high: i64
    velocities: list[int]  # the value each velocity bin decodes to
    durations: list[int]  # duration bins in grid steps, ascending
    program_ranks: list[int]  # per program 0..127: its rank among allowed programs, or NO_SYMBOL
    drum_rank: i64
    bar_id: i64
    signature_base: i64
    position_base: i64
    tempo_base: i64
    program_base: i64  # Program_<program of rank r> is program_base + r; drums are rank drum_rank
    pitch_base: i64  # Pitch_<low> (REMI, TSD) or NoteOn_<low> (MIDILike)
    note_off_base: i64
    velocity_base: i64
    duration_base: i64
    shift_base: i64  # TimeShift_1
    max_shift: i64

    def __init__(
        self,
        grammar: i64,
        split: i64,
        resolution: i64,
        pitch_low: i64,
        pitch_high: i64,
        velocities: list[int],
        durations: list[int],
        program_ranks: list[int],
        drum_rank: i64,
        bases: list[int],
    ) -> None:
        self.grammar = grammar
        self.split = split
        self.resolution = resolution
        self.pitch_low = pitch_low
        self.pitch_high = pitch_high
        self.velocities = velocities
        self.durations = durations
        self.program_ranks = program_ranks
        self.drum_rank = drum_rank
        self.bar_id = bases[0]
        self.signature_base = bases[1]
        self.position_base = bases[2]
        self.tempo_base = bases[3]
        self.program_base = bases[4]
        self.pitch_base = bases[5]
        self.note_off_base = bases[6]
        self.velocity_base = bases[7]
        self.duration_base = bases[8]
        self.shift_base = bases[9]
        self.max_shift = bases[10]


def step_of(tick: i64, ticks_per_beat: i64, resolution: i64) -> i64:
    """The nearest grid step, halves rounding up: floor(tick * resolution / ticks_per_beat + 1/2), exactly."""
    return (2 * tick * resolution + ticks_per_beat) // (2 * ticks_per_beat)


def duration_index(durations: list[int], steps: i64) -> i64:
    """The nearest duration bin (the shorter one on a tie; the longest for longer notes)."""
    low: i64 = 0
    high: i64 = len(durations)
    while low < high:  # bisect_left
        middle = (low + high) // 2
        if durations[middle] < steps:
            low = middle + 1
        else:
            high = middle
    if low == len(durations):
        return low - 1
    if low > 0 and steps - durations[low - 1] <= durations[low] - steps:
        return low - 1
    return low


class Emitter:
    """The ids of a song, cut into chunks; a chunk ends only where `cut` is called."""

    ids: list[int]
    chunk_ends: list[int]
    bar_chunks: list[int]
    bar_starts: list[int]  # where each bar begins among the ids (whatever the split)
    beat_starts: list[int]  # where each beat line after a bar's first holding an event begins
    split: i64

    def __init__(self, split: i64) -> None:
        self.ids = []
        self.chunk_ends = []
        self.bar_chunks = []
        self.bar_starts = []
        self.beat_starts = []
        self.split = split

    def cut(self) -> None:
        if self.split != SPLIT_NONE and (not self.chunk_ends or self.chunk_ends[-1] != len(self.ids)):
            if self.ids:
                self.chunk_ends.append(len(self.ids))

    def begin_bar(self) -> None:
        self.cut()
        self.bar_starts.append(len(self.ids))
        if self.split != SPLIT_NONE:
            self.bar_chunks.append(len(self.chunk_ends))
        elif not self.bar_chunks:
            self.bar_chunks.append(0)

    def begin_beat(self) -> None:
        if self.split == SPLIT_BEAT:
            self.cut()
        self.beat_starts.append(len(self.ids))

    def shift(self, layout: Layout, steps: i64) -> None:
        while steps > 0:
            part = steps if steps < layout.max_shift else layout.max_shift
            self.ids.append(layout.shift_base + part - 1)
            steps -= part

    def chunks(self) -> list[tuple[int, ...]]:
        self.cut()
        if self.split == SPLIT_NONE:
            return [tuple(self.ids)]
        result: list[tuple[int, ...]] = []
        start: i64 = 0
        for end in self.chunk_ends:
            result.append(tuple(self.ids[start:end]))
            start = end
        return result


def tokenize(
    layout: Layout,
    ticks_per_beat: i64,
    notes: list[tuple[int, int, int, int, int, bool, int]],
    tempos: list[int],
    signatures: list[int],
) -> tuple[list[tuple[int, ...]], list[int], list[int], int, list[int], list[int]]:
    """(chunks, the chunk each bar begins with, report counts, the largest onset shift as a
    numerator over ticks_per_beat * resolution, where each bar and each beat line begins among
    the chunks' ids laid end to end) of a song. `notes` are bpe_midi.song.Note
    (start, end, pitch, velocity, program, drum, track) in ticks, in any order; `tempos` flat
    (grid step, tempo bin) pairs and `signatures` flat (grid step, index of the TimeSig event
    or NO_SYMBOL, bar steps) triples, both sorted by step and each with one at step 0."""
    resolution = layout.resolution
    report = [0] * REPORT_COUNTS
    largest_shift: i64 = 0
    keys: list[int] = []
    durations = layout.durations
    velocity_bins: i64 = len(layout.velocities)
    midilike = layout.grammar == MIDILIKE
    for note in notes:
        report[NOTES] += 1
        start: i64 = note[0]
        pitch: i64 = note[2]
        if pitch < layout.pitch_low or pitch > layout.pitch_high:
            report[DROPPED_PITCH] += 1
            continue
        rank: i64 = layout.drum_rank
        if not note[5]:
            rank = layout.program_ranks[note[4]]
            if rank == NO_SYMBOL:
                report[DROPPED_PROGRAM] += 1
                continue
        onset = step_of(start, ticks_per_beat, resolution)
        moved = onset * ticks_per_beat - start * resolution
        if moved != 0:
            report[ONSETS_MOVED] += 1
            moved = moved if moved > 0 else -moved
            if moved > largest_shift:
                largest_shift = moved
        steps = step_of(note[1], ticks_per_beat, resolution) - onset
        if steps < 1:
            steps = 1
        duration = duration_index(durations, steps)
        if steps > durations[len(durations) - 1]:
            report[DURATIONS_CLIPPED] += 1
        elif durations[duration] != steps:
            report[DURATIONS_BINNED] += 1
        velocity: i64 = note[3]
        bin_index = (velocity - 1) * velocity_bins // 127
        bin_index = min(velocity_bins - 1, max(0, bin_index))
        if layout.velocities[bin_index] != velocity:
            report[VELOCITIES_BINNED] += 1
        first, second = (duration, bin_index) if midilike else (bin_index, duration)
        sound = (rank << RANK_SHIFT) | ((pitch - layout.pitch_low) << PITCH_SHIFT)
        keys.append((onset << ONSET_SHIFT) | sound | (first << 9) | second)
    keys.sort()
    report[NOTES_KEPT] = len(keys)
    emitter = Emitter(layout.split)
    if midilike:
        _midilike(layout, keys, tempos, signatures, emitter)
    else:
        _remi_or_tsd(layout, keys, tempos, signatures, emitter)
    chunks = emitter.chunks()
    return chunks, emitter.bar_chunks, report, largest_shift, emitter.bar_starts, emitter.beat_starts


def _bars(last_step: i64, signatures: list[int]) -> list[int]:
    """Flat (start step, signature index, bar steps) of every bar up to `last_step`: a time
    signature takes effect at the first bar line at or after it."""
    bars: list[int] = []
    pending: i64 = 0
    count: i64 = len(signatures) // 3
    start: i64 = 0
    while True:
        while pending + 1 < count and signatures[3 * (pending + 1)] <= start:
            pending += 1
        steps: i64 = signatures[3 * pending + 2]
        bars.append(start)
        bars.append(signatures[3 * pending + 1])
        bars.append(steps)
        start += steps
        if start > last_step:
            return bars


def _note_fields(layout: Layout, key: i64) -> tuple[i64, i64, i64, i64]:
    """(onset step, program id, pitch offset, the packed bins) of a sort key."""
    rank = (key >> RANK_SHIFT) & 255
    return key >> ONSET_SHIFT, layout.program_base + rank, (key >> PITCH_SHIFT) & 127, key & ((1 << 18) - 1)


def _remi_or_tsd(layout: Layout, keys: list[int], tempos: list[int], signatures: list[int], out: Emitter) -> None:
    tsd = layout.grammar == TSD
    resolution = layout.resolution
    last_step = _last_tempo_step(tempos)
    if keys:
        last_onset: i64 = keys[len(keys) - 1] >> ONSET_SHIFT
        last_step = max(last_step, last_onset)
    bars = _bars(last_step, signatures)
    bar_count: i64 = len(bars) // 3
    ids = out.ids
    note_index: i64 = 0
    tempo_index: i64 = 0
    tempo_count: i64 = len(tempos) // 2
    previous_signature: i64 = -2
    for bar in range(bar_count):
        bar_start: i64 = bars[3 * bar]
        signature: i64 = bars[3 * bar + 1]
        bar_length: i64 = bars[3 * bar + 2]
        bar_end = bar_start + bar_length if bar + 1 < bar_count else last_step + 1
        out.begin_bar()
        if not tsd:
            ids.append(layout.bar_id)
        if signature != previous_signature and signature != NO_SYMBOL and layout.signature_base != NO_SYMBOL:
            ids.append(layout.signature_base + signature)
        previous_signature = signature
        beat: i64 = 0
        at: i64 = 0  # TSD: the step (within the bar) time has reached
        while True:
            # the next position holding something: a tempo change or a note onset
            step: i64 = bar_end
            if tempo_index < tempo_count:
                step = min(step, tempos[2 * tempo_index])
            if note_index < len(keys):
                onset: i64 = keys[note_index] >> ONSET_SHIFT
                step = min(step, onset)
            if step >= bar_end:
                break
            position = step - bar_start
            if position // resolution != beat:
                beat = position // resolution
                out.begin_beat()
            if tsd:
                out.shift(layout, position - at)
                at = position
            else:
                ids.append(layout.position_base + position)
            tempo: i64 = -1
            while tempo_index < tempo_count and tempos[2 * tempo_index] == step:
                tempo = tempos[2 * tempo_index + 1]  # the last change at a step wins
                tempo_index += 1
            if tempo >= 0:
                ids.append(layout.tempo_base + tempo)
            while note_index < len(keys):
                key: i64 = keys[note_index]
                if key >> ONSET_SHIFT != step:
                    break
                _, program, pitch, bins = _note_fields(layout, key)
                ids.append(program)
                ids.append(layout.pitch_base + pitch)
                ids.append(layout.velocity_base + (bins >> 9))
                ids.append(layout.duration_base + (bins & BIN_MASK))
                note_index += 1
        if tsd and bar + 1 < bar_count:
            out.shift(layout, bar_length - at)


def _last_tempo_step(tempos: list[int]) -> i64:
    last: i64 = 0
    for index in range(0, len(tempos), 2):
        last = max(last, tempos[index])
    return last


def _midilike(layout: Layout, keys: list[int], tempos: list[int], signatures: list[int], out: Emitter) -> None:
    """NoteOn/NoteOff/TimeShift. A NoteOff ends the oldest sounding note of its program and
    pitch (first in, first out, as MIDI files pair notes); a note that ends before an earlier
    one of the same program and pitch that is still sounding cannot be ended that way, so its
    NoteOn is followed by a Duration and it has no NoteOff."""
    durations = layout.durations
    resolution = layout.resolution
    # which notes get a NoteOff: per (program, pitch), the end of the latest note ended by NoteOff
    latest_end: dict[int, int] = {}
    offs: list[int] = []  # sort keys of NoteOffs: end step, then program rank and pitch
    with_duration: list[bool] = []
    last_event = _last_tempo_step(tempos)
    for index in range(len(keys)):
        key: i64 = keys[index]
        onset: i64 = key >> ONSET_SHIFT
        last_event = max(last_event, onset)
        end: i64 = onset + durations[(key >> 9) & BIN_MASK]
        sound = (key >> PITCH_SHIFT) & ((1 << (ONSET_SHIFT - PITCH_SHIFT)) - 1)
        previous = latest_end.get(sound, -1)
        if previous > onset and end < previous:
            with_duration.append(True)
        else:
            with_duration.append(False)
            latest_end[sound] = end
            offs.append((end << ONSET_SHIFT) | (sound << PITCH_SHIFT))
    offs.sort()
    # bars (for the time signatures and the chunks) reach the last onset or tempo change, as in
    # REMI; NoteOffs after it are in bars that keep the last signature
    bars = _bars(last_event, signatures)
    if offs:
        last_off: i64 = offs[len(offs) - 1] >> ONSET_SHIFT
        while bars[len(bars) - 3] + bars[len(bars) - 1] <= last_off:
            bars.append(bars[len(bars) - 3] + bars[len(bars) - 1])
            bars.append(bars[len(bars) - 3])
            bars.append(bars[len(bars) - 3])
        last_event = max(last_event, last_off)
    bar_count: i64 = len(bars) // 3
    ids = out.ids
    note_index: i64 = 0
    off_index: i64 = 0
    tempo_index: i64 = 0
    tempo_count: i64 = len(tempos) // 2
    previous_signature: i64 = -2
    for bar in range(bar_count):
        bar_start: i64 = bars[3 * bar]
        signature: i64 = bars[3 * bar + 1]
        bar_length: i64 = bars[3 * bar + 2]
        bar_end = bar_start + bar_length if bar + 1 < bar_count else last_event + 1
        out.begin_bar()
        if signature != previous_signature and signature != NO_SYMBOL and layout.signature_base != NO_SYMBOL:
            ids.append(layout.signature_base + signature)
        previous_signature = signature
        beat: i64 = 0
        at: i64 = 0
        while True:
            step: i64 = bar_end
            if tempo_index < tempo_count:
                step = min(step, tempos[2 * tempo_index])
            if note_index < len(keys):
                onset = keys[note_index] >> ONSET_SHIFT
                step = min(step, onset)
            if off_index < len(offs):
                off_step: i64 = offs[off_index] >> ONSET_SHIFT
                step = min(step, off_step)
            if step >= bar_end:
                break
            position = step - bar_start
            if position // resolution != beat:
                beat = position // resolution
                out.begin_beat()
            out.shift(layout, position - at)
            at = position
            tempo: i64 = -1
            while tempo_index < tempo_count and tempos[2 * tempo_index] == step:
                tempo = tempos[2 * tempo_index + 1]
                tempo_index += 1
            if tempo >= 0:
                ids.append(layout.tempo_base + tempo)
            while off_index < len(offs):
                off: i64 = offs[off_index]
                if off >> ONSET_SHIFT != step:
                    break
                ids.append(layout.program_base + ((off >> RANK_SHIFT) & 255))
                ids.append(layout.note_off_base + ((off >> PITCH_SHIFT) & 127))
                off_index += 1
            while note_index < len(keys):
                key = keys[note_index]
                if key >> ONSET_SHIFT != step:
                    break
                _, program, pitch, bins = _note_fields(layout, key)
                ids.append(program)
                ids.append(layout.pitch_base + pitch)
                ids.append(layout.velocity_base + (bins & BIN_MASK))
                if with_duration[note_index]:
                    ids.append(layout.duration_base + (bins >> 9))
                note_index += 1
        if bar + 1 < bar_count:
            out.shift(layout, bar_length - at)
