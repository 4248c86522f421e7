"""The `midi` decoder: event symbols back to a `mido.MidiFile`, and writing .mid files.

The file has a conductor track (tempo and time signatures) and one track per program (drums on
channel 10), at `beat_resolution * 60` ticks per beat so every grid step is a whole number of
ticks. Notes of the same pitch that would overlap within a track go to separate tracks, so that
reading the file back pairs every note_on with its own note_off (encoding the decoded file gives
the same ids). Malformed event sequences (a model may generate any) decode what is complete:
a REMI or TSD note needs Program, Pitch, Velocity and Duration in that order; a MIDILike note
needs Program, NoteOn, Velocity, then a Duration or, later, Program and NoteOff of its pitch.
"""

from collections import deque
from collections.abc import Sequence
from typing import Any

from bpe_core.contract import check_options
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output

TICKS_PER_STEP = 60
DRUM_CHANNEL = 9  # General MIDI's percussion channel (10, counted from 1)
# tempo changes, time signatures and notes (program, pitch, velocity, start step, steps)
Music = tuple[list[tuple[int, int]], list[tuple[int, int, int]], list[tuple[str, int, int, int, int]]]


class MidiDecoder:
    name = "midi"
    file_suffix = ".mid"  # `bpe decode -o DIR/`: DIR/000000.mid, ...

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("decoder", self.name, options, ("beat_resolution", "grammar"))
        self.resolution = int(options.get("beat_resolution", 8))
        self.grammar = options.get("grammar", "remi")
        if self.grammar not in ("remi", "tsd", "midilike"):
            raise BpeError(f"decoder.grammar: {self.grammar!r} is not allowed; allowed: remi, tsd, midilike")
        self.alphabet: list[str] = []
        self.events: list[tuple[str, str, int]] = []

    def decode(self, symbols: Sequence[int], alphabet: list[str]) -> Any:
        return self._midi_file(*self.music(symbols, alphabet))

    def music(self, symbols: Sequence[int], alphabet: list[str]) -> Music:
        """What `decode` writes to the file: tempo changes (grid step, microseconds per beat), time
        signatures (step, numerator, denominator) and notes (program, pitch, velocity, start step,
        steps); the same for every grammar's events of one song, in their grammar's order."""
        if self.grammar == "remi":
            return self._remi_music(symbols, alphabet)
        return self._timed_music(symbols, alphabet)

    def _events(self, alphabet: list[str]) -> list[tuple[str, str, int]]:
        """Each symbol's event, parsed once per alphabet: its kind, its value, and the value as
        a number (0 when it is not one: a time signature's 3/4, a program's drums)."""
        if alphabet is not self.alphabet:
            parts = [label.partition("_") for label in alphabet]
            self.events = [(kind, value, int(value) if value.isdigit() else 0) for kind, _, value in parts]
            self.alphabet = alphabet
        return self.events

    def _timed_music(self, symbols: Sequence[int], alphabet: list[str]) -> Music:
        """TSD and MIDILike: time moves only by TimeShift; a NoteOff ends the oldest sounding
        note of its program and pitch (first in, first out)."""
        step = 0
        tempos: list[tuple[int, int]] = []
        signatures: list[tuple[int, int, int]] = []
        notes: list[tuple[str, int, int, int, int]] = []  # program, pitch, velocity, start, steps
        sounding: dict[tuple[str, int], deque[tuple[int, int]]] = {}  # (program, pitch) -> (start, velocity)
        program: str | None = None
        pitch: int | None = None
        velocity: int | None = None
        opened: tuple[str, int] | None = None  # the MIDILike note just opened, which a Duration ends
        events = self._events(alphabet)
        for symbol in symbols:
            kind, value, number = events[symbol]
            if kind != "Duration":
                opened = None
            if kind == "TimeShift":
                step += number
            elif kind == "TimeSig":
                numerator, denominator = (int(part) for part in value.split("/"))
                signatures.append((step, numerator, denominator))
            elif kind == "Tempo":
                tempos.append((step, round(60_000_000 / number)))
            elif kind == "Program":
                program = value
                pitch = None
                velocity = None
            elif kind in ("Pitch", "NoteOn") and program is not None:
                pitch = number
                velocity = None
            elif kind == "Velocity" and program is not None and pitch is not None:
                velocity = number
                if self.grammar == "midilike":
                    sounding.setdefault((program, pitch), deque()).append((step, velocity))
                    opened = (program, pitch)
                    pitch = velocity = None
            elif kind == "Duration" and opened is not None:
                start, opened_velocity = sounding[opened].pop()
                notes.append((opened[0], opened[1], opened_velocity, start, number))
                opened = None
            elif kind == "Duration" and program is not None and pitch is not None and velocity is not None:
                notes.append((program, pitch, velocity, step, number))
                pitch = velocity = None
            elif kind == "NoteOff" and program is not None:
                waiting = sounding.get((program, number))
                if waiting:
                    start, opened_velocity = waiting.popleft()
                    if step > start:  # a note of no length is not a note
                        notes.append((program, number, opened_velocity, start, step - start))
                pitch = velocity = None
        return tempos, signatures, notes

    def _remi_music(self, symbols: Sequence[int], alphabet: list[str]) -> Music:
        resolution = self.resolution
        bar_start = -1
        bar_steps = 4 * resolution
        step = 0
        tempos: list[tuple[int, int]] = []
        signatures: list[tuple[int, int, int]] = []
        notes: list[tuple[str, int, int, int, int]] = []  # program, pitch, velocity, start, steps
        program: str | None = None
        pitch: int | None = None
        velocity: int | None = None
        events = self._events(alphabet)
        for symbol in symbols:
            kind, value, number = events[symbol]
            if kind == "Bar":
                bar_start = 0 if bar_start < 0 else bar_start + bar_steps
                step = bar_start
            elif kind == "TimeSig":
                numerator, denominator = (int(part) for part in value.split("/"))
                bar_steps = numerator * resolution * 4 // denominator
                signatures.append((max(bar_start, 0), numerator, denominator))
            elif kind == "Position":
                step = max(bar_start, 0) + number
            elif kind == "Tempo":
                tempos.append((step, round(60_000_000 / number)))
            elif kind == "Program":
                program = value
                pitch = None
                velocity = None
            elif kind == "Pitch" and program is not None:
                pitch = number
            elif kind == "Velocity" and pitch is not None:
                velocity = number
            elif kind == "Duration" and program is not None and pitch is not None and velocity is not None:
                notes.append((program, pitch, velocity, step, number))
                pitch = velocity = None
        return tempos, signatures, notes

    def _midi_file(
        self,
        tempos: list[tuple[int, int]],
        signatures: list[tuple[int, int, int]],
        notes: list[tuple[str, int, int, int, int]],
    ) -> Any:
        import mido  # imported on use: mido is only needed when MIDI is decoded

        midi = mido.MidiFile(type=1, ticks_per_beat=self.resolution * TICKS_PER_STEP)
        conductor: list[tuple[int, int, Any]] = []
        for step, tempo in tempos:
            conductor.append((step * TICKS_PER_STEP, 0, mido.MetaMessage("set_tempo", tempo=tempo, time=0)))
        for step, numerator, denominator in signatures:
            conductor.append(
                (
                    step * TICKS_PER_STEP,
                    0,
                    mido.MetaMessage("time_signature", numerator=numerator, denominator=denominator, time=0),
                )
            )
        midi.tracks.append(_track(conductor))
        # one track per program (and more where same-pitch notes would overlap)
        lanes: dict[str, list[dict[int, int]]] = {}  # program -> per lane: pitch -> end tick
        lane_notes: dict[tuple[str, int], list[tuple[int, int, int, int]]] = {}
        for program, pitch, velocity, start_step, steps in sorted(notes, key=lambda note: (note[3], note[3] + note[4])):
            start = start_step * TICKS_PER_STEP
            end = (start_step + steps) * TICKS_PER_STEP
            program_lanes = lanes.setdefault(program, [])
            lane = next(
                (index for index, ends in enumerate(program_lanes) if ends.get(pitch, -1) <= start), len(program_lanes)
            )
            if lane == len(program_lanes):
                program_lanes.append({})
            program_lanes[lane][pitch] = end
            lane_notes.setdefault((program, lane), []).append((start, end, pitch, velocity))
        channels: dict[str, int] = {}
        for program, lane in sorted(lane_notes, key=lambda key: (key[0] == "drums", key)):
            if program == "drums":
                channels.setdefault(program, DRUM_CHANNEL)
            elif program not in channels:
                melodic = [channel for channel in range(16) if channel != DRUM_CHANNEL]
                taken = len([other for other in channels if other != "drums"])
                channels[program] = melodic[taken % len(melodic)]
            channel = channels[program]
            events: list[tuple[int, int, Any]] = []
            if program != "drums":
                events.append((0, 0, mido.Message("program_change", channel=channel, program=int(program))))
            # skip_checks: channels, pitches and velocities come from the alphabet, all in MIDI's range,
            # and mido's checks cost more than the rest of decoding
            for start, end, pitch, velocity in lane_notes[(program, lane)]:
                events.append(
                    (
                        start,
                        2,
                        mido.Message("note_on", skip_checks=True, channel=channel, note=pitch, velocity=velocity),
                    )
                )
                events.append(
                    (end, 1, mido.Message("note_off", skip_checks=True, channel=channel, note=pitch, velocity=0))
                )
            midi.tracks.append(_track(events))
        return midi

    def write(self, document: Any, path: str) -> None:
        if type(document).__name__ != "MidiFile":
            raise BpeError(f"the midi decoder writes MIDI files, not {type(document).__name__}")
        # never a half-written file; the usual permissions; a bad path is a BpeError naming it
        with atomic_output(path, binary=True) as handle:
            document.save(file=handle)


def _track(events: list[tuple[int, int, Any]]) -> Any:
    """Messages at absolute ticks (sorted: offs before ons at one tick) as a track with deltas."""
    import mido

    track = mido.MidiTrack()
    now = 0
    for tick, _, message in sorted(events, key=lambda event: (event[0], event[1])):
        # each message is new and in one track: it is changed in place, not copied
        message.time = tick - now
        track.append(message)
        now = tick
    track.append(mido.MetaMessage("end_of_track", time=0))
    return track
