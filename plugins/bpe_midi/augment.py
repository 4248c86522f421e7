"""Augmentation at training time (`midi-events` option `augment: {pitch: K, velocity: V, duration: D}`):
the variants of a song that training counts beside it, as MidiTok's data augmentation makes them.

Each offset makes copies of its own (offsets are not combined, MidiTok's default): a copy per
transposition by every shift from -K to +K semitones but 0 (drums untouched; a note that the
shift pushes out of the pitch range is dropped, and counted); two copies with every velocity
moved by -V and +V (drums too), kept within 1..127; two copies with every duration moved by -D
and +D beats (not drums), no shorter than 1/32 beat. Copies are made in a fixed order and nothing
is random, so counting is deterministic. Counting sees them (`MidiEventPretokenizer.
count_reported`), and `bpe encode --augment` writes them as documents of their own, each named
after its song and its offset (`labelled_variants`). This module makes Songs; it does not tokenize.
"""

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from bpe_core.errors import BpeError
from bpe_midi.song import NOTE_FROM_TUPLE, Note, Song

AUGMENT_KEYS = ("pitch", "velocity", "duration")
MIN_DURATION_BEATS = 1 / 32  # MidiTok's floor for shortened notes


@dataclass(frozen=True)
class Augmentation:
    """The offsets to count each song with: shifts -pitch..+pitch, velocities and durations +-."""

    pitch: int = 0
    velocity: int = 0
    duration: float = 0.0  # beats

    @property
    def active(self) -> bool:
        return bool(self.pitch or self.velocity or self.duration)


def augmentation_of(options: dict[str, Any]) -> Augmentation:
    """The `augment` option, checked: a mapping of pitch (semitones, 0..127), velocity (0..126)
    and duration (beats, 0 or more), each optional."""
    value = options.get("augment")
    if value is None:
        return Augmentation()
    return parsed_augmentation(value, "pretokenizer.augment")


def parsed_augmentation(value: Any, where: str) -> Augmentation:
    """An augmentation from its mapping, checked; errors name `where` (a config key, an option)."""
    if not isinstance(value, dict):
        raise BpeError(f"{where}: expected {{pitch: K, velocity: V, duration: D}}, got {value!r}")
    unknown = sorted(set(value) - set(AUGMENT_KEYS), key=str)
    if unknown:
        raise BpeError(f"{where} has no key {unknown[0]!r}; allowed: {', '.join(AUGMENT_KEYS)}")
    pitch = value.get("pitch", 0)
    velocity = value.get("velocity", 0)
    duration = value.get("duration", 0)
    for key, number, high in (("pitch", pitch, 127), ("velocity", velocity, 126)):
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= high:
            raise BpeError(f"{where}.{key}: expected an integer from 0 to {high}, got {number!r}")
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 <= duration <= 64:
        raise BpeError(f"{where}.duration: expected beats from 0 to 64, got {duration!r}")
    return Augmentation(pitch, velocity, float(duration))


def variants(song: Song, augmentation: Augmentation, low: int, high: int) -> Iterator[tuple[Song, int]]:
    """(copy, notes the copy dropped) for every augmented copy of `song`, in a fixed order:
    transpositions -K..-1, +1..+K, then velocity -V, +V, then duration -D, +D. `low` and `high`
    are the pitch range a transposed note must stay in."""
    for _, copy, dropped in labelled_variants(song, augmentation, low, high):
        yield copy, dropped


def labelled_variants(song: Song, augmentation: Augmentation, low: int, high: int) -> Iterator[tuple[str, Song, int]]:
    """`variants`, each with its label: `pitch-2`, `velocity+10`, `duration-0.5`."""
    for shift in [*range(-augmentation.pitch, 0), *range(1, augmentation.pitch + 1)]:
        yield (f"pitch{shift:+d}", *transposed(song, shift, low, high))
    if augmentation.velocity:
        for offset in (-augmentation.velocity, augmentation.velocity):
            yield f"velocity{offset:+d}", with_notes(song, [_velocity_moved(note, offset) for note in song.notes]), 0
    if augmentation.duration:
        ticks = round(augmentation.duration * song.ticks_per_beat)
        shortest = max(1, round(MIN_DURATION_BEATS * song.ticks_per_beat))
        for sign, offset in ((-1, -ticks), (1, ticks)):
            label = f"duration{sign * augmentation.duration:+g}"
            yield label, with_notes(song, [_duration_moved(note, offset, shortest) for note in song.notes]), 0


def transposed(song: Song, shift: int, low: int, high: int) -> tuple[Song, int]:
    """The song with every pitched note moved by `shift` semitones, and how many notes inside
    low..high it pushed out (dropped)."""
    notes: list[Note] = []
    dropped = 0
    for note in song.notes:
        if note.drum:
            notes.append(note)
            continue
        pitch = note.pitch + shift
        if low <= note.pitch <= high and not low <= pitch <= high:
            dropped += 1
            continue
        if 0 <= pitch <= 127:  # a note outside the range before may come into it; never outside MIDI's
            notes.append(NOTE_FROM_TUPLE((note.start, note.end, pitch, *note[3:])))
        else:
            dropped += 1
    return with_notes(song, notes), dropped


def _velocity_moved(note: Note, offset: int) -> Note:
    velocity = min(127, max(1, note.velocity + offset))
    return NOTE_FROM_TUPLE((note.start, note.end, note.pitch, velocity, *note[4:]))


def _duration_moved(note: Note, offset: int, shortest: int) -> Note:
    if note.drum:
        return note
    length = note.end - note.start + offset
    if offset < 0:
        length = max(length, shortest)  # also lengthens a note that was shorter than the floor (MidiTok)
    return NOTE_FROM_TUPLE((note.start, note.start + length, *note[2:]))


def with_notes(song: Song, notes: list[Note]) -> Song:
    return replace(song, notes=notes)
