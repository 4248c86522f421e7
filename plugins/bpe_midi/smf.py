"""A compiled Standard MIDI File parser that reads only what the MIDI plugin needs (notes,
program changes, tempo and time signatures) and reads it exactly as mido does,
without a Python object per message.

Each track becomes a flat list of five integers per event: tick (absolute), kind, channel, a, b.
Malformed input raises ValueError with what is wrong; the reader adds the file name. Tests
compare it with mido on every shared song. This is a mypyc kernel: no mido, no I/O.
"""

from typing import Final

from mypy_extensions import i64

NOTE_ON: Final = 1
NOTE_OFF: Final = 2
PROGRAM: Final = 3
TEMPO: Final = 4
TIME_SIGNATURE: Final = 5
END_OF_TRACK: Final = 6
FIELDS: Final = 5

# data bytes after a status byte, for 0x80..0xEF by high nibble, and system common messages
CHANNEL_LENGTHS: Final = (2, 2, 2, 2, 1, 1, 2)


def _system_length(status: i64) -> i64:
    if status == 0xF2:
        return 2
    if status == 0xF1 or status == 0xF3:
        return 1
    return 0


class Reader:
    """A cursor over the file's bytes."""

    data: bytes
    position: i64
    end: i64

    def __init__(self, data: bytes, position: i64, end: i64) -> None:
        self.data = data
        self.position = position
        self.end = end

    def byte(self) -> i64:
        if self.position >= self.end:
            raise ValueError(f"the data ends early (at byte {self.position})")
        value: i64 = self.data[self.position]
        self.position += 1
        return value

    def variable(self) -> i64:
        """A variable-length quantity (at most 4 bytes, as mido reads it)."""
        value: i64 = 0
        for _ in range(4):
            byte = self.byte()
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                return value
        return value

    def data_byte(self) -> i64:
        value = self.byte()
        if value > 127:
            raise ValueError(f"data byte {value} out of range 0..127 at byte {self.position - 1}")
        return value

    def skip(self, count: i64) -> None:
        if self.position + count > self.end:
            raise ValueError(f"the data ends early (a message of {count} bytes at byte {self.position})")
        self.position += count


def parse(data: bytes) -> tuple[int, int, list[list[int]]]:
    """(format, ticks per beat, tracks) of a Standard MIDI File."""
    size: i64 = len(data)
    if size < 14 or data[0:4] != b"MThd":
        raise ValueError("MThd not found: not a MIDI file")
    header_length = _u32(data, 4)
    midi_format = _u16(data, 8)
    track_count = _u16(data, 10)
    division = _u16(data, 12)
    if division & 0x8000:
        raise ValueError("SMPTE time division is not supported (only ticks per beat)")
    position: i64 = 8 + header_length
    tracks: list[list[int]] = []
    while len(tracks) < track_count and position + 8 <= size:
        name = data[position : position + 4]
        length = _u32(data, position + 4)
        position += 8
        if position + length > size:
            raise ValueError(f"track {len(tracks)} is truncated ({length} bytes announced, {size - position} there)")
        if name == b"MTrk":
            tracks.append(_track(Reader(data, position, position + length)))
        position += length
    if len(tracks) < track_count:
        raise ValueError(f"{track_count} tracks announced, {len(tracks)} found")
    return midi_format, division, tracks


def _u16(data: bytes, at: i64) -> i64:
    high: i64 = data[at]
    low: i64 = data[at + 1]
    return (high << 8) | low


def _u32(data: bytes, at: i64) -> i64:
    return (_u16(data, at) << 16) | _u16(data, at + 2)


def _track(reader: Reader) -> list[int]:
    events: list[int] = []
    tick: i64 = 0
    last_status: i64 = -1
    while reader.position < reader.end:
        tick += reader.variable()
        status = reader.byte()
        first: i64 = -1
        if status < 0x80:
            if last_status < 0:
                raise ValueError(f"running status without a previous status at byte {reader.position - 1}")
            first = status
            status = last_status
        elif status != 0xFF:
            last_status = status  # meta messages do not set running status (as in mido)
        if status == 0xFF:
            if first >= 0:
                raise ValueError(f"running status on a meta message at byte {reader.position - 1}")
            kind = reader.byte()
            length = reader.variable()
            start = reader.position
            reader.skip(length)
            if kind == 0x51 and length >= 3:
                tempo = (reader.data[start] << 16) | (reader.data[start + 1] << 8) | reader.data[start + 2]
                events.extend((tick, TEMPO, 0, tempo, 0))
            elif kind == 0x58 and length >= 2:
                events.extend((tick, TIME_SIGNATURE, 0, reader.data[start], 1 << reader.data[start + 1]))
            elif kind == 0x2F:
                events.extend((tick, END_OF_TRACK, 0, 0, 0))
        elif status == 0xF0 or status == 0xF7:
            if first >= 0:
                raise ValueError(f"running status on a sysex message at byte {reader.position - 1}")
            reader.skip(reader.variable())
        elif status >= 0xF0:
            for _ in range(_system_length(status)):
                reader.data_byte()
        else:
            high = (status >> 4) - 8
            channel = status & 0x0F
            a = first if first >= 0 else reader.data_byte()
            b: i64 = 0
            if CHANNEL_LENGTHS[high] == 2:
                b = reader.data_byte()
            if high == 1:
                events.extend((tick, NOTE_ON if b > 0 else NOTE_OFF, channel, a, b))
            elif high == 0:
                events.extend((tick, NOTE_OFF, channel, a, b))
            elif high == 4:
                events.extend((tick, PROGRAM, channel, a, 0))
    return events


NOTE_FIELDS: Final = 7


def pair_notes(tracks: list[list[int]]) -> tuple[list[int], list[int], list[int]]:
    """Notes of all tracks as flat (start, end, pitch, velocity, program, drum, track) sevens,
    and each track's end tick. A note_on (velocity > 0) opens a note; a note_off or note_on with
    velocity 0 closes the oldest open note of that channel and pitch in the track (first in, first
    out); programs are per channel of a track; channel index 9 is drums; notes still open at the
    end of a track end there. Notes are in the order they close, then the unclosed ones. Also the
    tempo and time signature events as flat (tick, kind, a, b) fours."""
    notes: list[int] = []
    track_ends: list[int] = []
    meta: list[int] = []
    for track_index in range(len(tracks)):
        events = tracks[track_index]
        programs = [0] * 16
        # open notes in the order they started (few at a time, so a scan is cheap)
        open_keys: list[int] = []
        open_starts: list[int] = []
        open_velocities: list[int] = []
        open_programs: list[int] = []
        track_end: i64 = 0
        for index in range(0, len(events), FIELDS):
            tick: i64 = events[index]
            kind: i64 = events[index + 1]
            channel: i64 = events[index + 2]
            a: i64 = events[index + 3]
            track_end = tick
            if kind == NOTE_ON:
                open_keys.append(channel * 128 + a)
                open_starts.append(tick)
                open_velocities.append(events[index + 4])
                open_programs.append(programs[channel])
            elif kind == NOTE_OFF:
                key = channel * 128 + a
                for slot in range(len(open_keys)):
                    if open_keys[slot] == key:
                        notes.extend(
                            (
                                open_starts[slot],
                                tick,
                                a,
                                open_velocities[slot],
                                open_programs[slot],
                                1 if channel == 9 else 0,
                                track_index,
                            )
                        )
                        del open_keys[slot]
                        del open_starts[slot]
                        del open_velocities[slot]
                        del open_programs[slot]
                        break
            elif kind == PROGRAM:
                programs[channel] = a
            elif kind == TEMPO or kind == TIME_SIGNATURE:
                meta.extend((tick, kind, a, events[index + 4]))
        for slot in range(len(open_keys)):
            key = open_keys[slot]
            notes.extend(
                (
                    open_starts[slot],
                    track_end,
                    key % 128,
                    open_velocities[slot],
                    open_programs[slot],
                    1 if key // 128 == 9 else 0,
                    track_index,
                )
            )
        track_ends.append(track_end)
    return notes, track_ends, meta


def note_tuples(notes: list[int]) -> list[tuple[int, int, int, int, int, bool, int]]:
    """pair_notes' flat sevens as (start, end, pitch, velocity, program, drum, track) tuples:
    built here because a tuple made in compiled code costs a fraction of a Python call."""
    result: list[tuple[int, int, int, int, int, bool, int]] = []
    for index in range(0, len(notes), NOTE_FIELDS):
        result.append(
            (
                notes[index],
                notes[index + 1],
                notes[index + 2],
                notes[index + 3],
                notes[index + 4],
                notes[index + 5] == 1,
                notes[index + 6],
            )
        )
    return result
