"""Songs: the notes, tempos and time signatures of a MIDI file, with MIDI's semantics.

A note starts at note_on with velocity > 0 and ends at the matching note_off or note_on with
velocity 0; overlapping notes of the same pitch on the same channel of a track pair first in,
first out; a note never ended is closed at the end of its track. Programs are per channel of a
track (program_change), channel 10 (index 9) is drums. Files are parsed by the compiled `smf`
parser or, with `parser: mido`, by mido; both give the same events.
"""

import functools
import importlib
import io
import operator
import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bpe_core.errors import BpeError
from bpe_midi import smf

# Limits on one song, far above real music (POP909's longest song lasts 785 beats and has 4,233
# notes): tokens are built per bar and per note, so these bound a song's tokens and memory. The
# shortest bar allowed (1/16) is a quarter beat, so a song has at most 4 * MAX_SONG_BEATS bars.
MAX_SONG_BEATS = 100_000
MAX_SONG_NOTES = 10_000_000


class Note(NamedTuple):
    start: int
    end: int
    pitch: int
    velocity: int
    program: int
    drum: bool
    track: int


NOTE_FROM_TUPLE = functools.partial(tuple.__new__, Note)
NOTE_ORDER = operator.itemgetter(0, 6, 2, 1)  # start, track, pitch, end


@dataclass(frozen=True)
class Song:
    """A parsed MIDI file; times are in ticks of `ticks_per_beat`."""

    source: str
    ticks_per_beat: int
    notes: list[Note] = field(default_factory=list)
    tempos: list[tuple[int, int]] = field(default_factory=list)  # (tick, microseconds per beat)
    time_signatures: list[tuple[int, int, int]] = field(default_factory=list)  # (tick, numerator, denominator)
    end: int = 0
    id: str | None = None  # a name of its own: an augmented copy's (`bpe encode --augment`)


def events_from_mido(midi: Any) -> list[list[int]]:
    """mido's messages as the flat (tick, kind, channel, a, b) events the smf parser gives."""
    tracks = []
    for track in midi.tracks:
        events: list[int] = []
        tick = 0
        for message in track:
            tick += message.time
            kind = message.type
            if kind == "note_on":
                events.extend(
                    (
                        tick,
                        smf.NOTE_ON if message.velocity > 0 else smf.NOTE_OFF,
                        message.channel,
                        message.note,
                        message.velocity,
                    )
                )
            elif kind == "note_off":
                events.extend((tick, smf.NOTE_OFF, message.channel, message.note, message.velocity))
            elif kind == "program_change":
                events.extend((tick, smf.PROGRAM, message.channel, message.program, 0))
            elif kind == "set_tempo":
                events.extend((tick, smf.TEMPO, 0, message.tempo, 0))
            elif kind == "time_signature":
                events.extend((tick, smf.TIME_SIGNATURE, 0, message.numerator, message.denominator))
            elif kind == "end_of_track":
                events.extend((tick, smf.END_OF_TRACK, 0, 0, 0))
        tracks.append(events)
    return tracks


def song_from_events(source: str, ticks_per_beat: int, tracks: list[list[int]]) -> Song:
    flat, track_ends, meta = smf.pair_notes(tracks)
    # Notes from the kernel's plain tuples without calling Note() per note (three times the cost)
    notes = list(map(NOTE_FROM_TUPLE, smf.note_tuples(flat)))
    notes.sort(key=NOTE_ORDER)
    tempos: list[tuple[int, int]] = []
    signatures: list[tuple[int, int, int]] = []
    for index in range(0, len(meta), 4):
        if meta[index + 1] == smf.TEMPO:
            tempos.append((meta[index], meta[index + 2]))
        else:
            signatures.append((meta[index], meta[index + 2], meta[index + 3]))
    tempos.sort(key=lambda item: item[0])
    signatures.sort(key=lambda item: item[0])
    song = Song(source, ticks_per_beat, notes, tempos, signatures, max(track_ends, default=0))
    check_length(song)
    return song


def song_from_symusic(source: str, data: bytes) -> Song:
    """A Song read by symusic (`parser: symusic`, the optional `symusic` extra): the same notes,
    tempos and time signatures as mido on all of POP909, but a note's `track` is symusic's track
    (it splits MIDI tracks by channel) and `end` is the last event's tick (not end_of_track)."""
    # imported on use and untyped: an optional dependency, absent where bpe-core is type-checked
    symusic: Any = importlib.import_module("symusic")
    score = symusic.Score.from_midi(data, ttype="tick")
    notes: list[Note] = []
    for index, track in enumerate(score.tracks):
        arrays = track.notes.numpy()
        starts = arrays["time"].tolist()
        ends = (arrays["time"] + arrays["duration"]).tolist()
        program = track.program
        drum = bool(track.is_drum)
        rows = zip(starts, ends, arrays["pitch"].tolist(), arrays["velocity"].tolist())
        notes.extend(NOTE_FROM_TUPLE((*row, program, drum, index)) for row in rows)
    notes.sort(key=NOTE_ORDER)
    tempos = sorted(((tempo.time, tempo.mspq) for tempo in score.tempos), key=lambda item: item[0])
    signatures = sorted(
        ((signature.time, signature.numerator, signature.denominator) for signature in score.time_signatures),
        key=lambda item: item[0],
    )
    song = Song(source, score.ticks_per_quarter, notes, tempos, signatures, score.end())
    check_length(song)
    return song


def check_length(song: Song) -> None:
    """Refuse a song longer than MAX_SONG_BEATS or with more than MAX_SONG_NOTES notes, before
    anything is built per bar or per beat (a 45-byte file can claim a billion bars)."""
    beats = max([note.end for note in song.notes] + [song.end]) / max(song.ticks_per_beat, 1)
    if beats > MAX_SONG_BEATS:
        raise BpeError(
            f"{song.source}: the song lasts {beats:.0f} beats; the limit is {MAX_SONG_BEATS} "
            f"(about {MAX_SONG_BEATS / 7200:.0f} hours at 120 BPM): a damaged or hostile file?"
        )
    if len(song.notes) > MAX_SONG_NOTES:
        raise BpeError(f"{song.source}: the song has {len(song.notes)} notes; the limit is {MAX_SONG_NOTES}")


def read_song(path: str, parser: str = "fast", data: bytes | None = None) -> Song:
    """Parse a MIDI file (or its bytes, already read); any problem is a BpeError naming the file."""
    try:
        if data is None:
            with open(path, "rb") as handle:
                data = handle.read()
        if parser == "symusic":
            return song_from_symusic(path, data)
        if parser == "mido":
            import mido  # imported on use, like every use of mido in this plugin

            midi = mido.MidiFile(file=io.BytesIO(data))
            return song_from_events(path, midi.ticks_per_beat, events_from_mido(midi))
        _, ticks_per_beat, tracks = smf.parse(data)
        if ticks_per_beat <= 0:
            raise ValueError(f"ticks per beat is {ticks_per_beat}")
        return song_from_events(path, ticks_per_beat, tracks)
    except BpeError:
        raise
    except OSError as error:
        raise BpeError(f"cannot read {path}: {error.strerror or error}") from None
    except Exception as error:  # mido raises many kinds (EOFError, KeyError, ValueError, ...)
        raise BpeError(f"{path} is not a valid MIDI file: {_what(error)}") from None


def _what(error: Exception) -> str:
    """A readable reason: mido's EOFError carries no message."""
    if isinstance(error, EOFError):
        return f"the file ends early{': ' + str(error) if str(error) else ''}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def song_of(document: Any, parser: str = "fast") -> Song:
    """A Song from a Song, a mido.MidiFile or a path."""
    if isinstance(document, Song):
        return document
    if type(document).__name__ == "MidiFile" and hasattr(document, "tracks"):  # a mido.MidiFile
        ticks = document.ticks_per_beat
        return song_from_events(document.filename or "<MidiFile>", ticks, events_from_mido(document))
    if isinstance(document, str) and ("\n" in document or len(document) > 4096):
        # text, not a path: a text reader's documents handed to a MIDI pretokenizer
        raise BpeError(
            f"a MIDI pretokenizer takes a path, a mido.MidiFile or a Song, not text ({document[:40]!r}...): "
            "read MIDI files with input.reader: midi"
        )
    if isinstance(document, (str, os.PathLike)):
        return read_song(os.fspath(document), parser)
    raise BpeError(f"a MIDI pretokenizer takes a path, a mido.MidiFile or a Song, not {type(document).__name__}")
