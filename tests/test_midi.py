"""MIDI on real data: the `midi` reader and its compiled parser, the `midi-events` pretokenizer,
the `midi` decoder, the loss report, the configs and the command line (issue 6).

Data: ../shared/data/midi/pop909 (909 songs, type 1, 480 ticks per beat, six at 960). What a song
holds is read independently in tests/helpers/midi.py with mido under MIDI's rules, never through
bpe_midi.song, and the round trip is checked against that.

The requirements over all 909 songs (parser == mido, decode(encode) keeps every note, encode of
the decoded file gives the same ids) share one pass over the songs (`pop909_cases`), done in
forked worker processes; everything else uses a few songs or small files built with mido.
"""

import gzip
import hashlib
import importlib.util
import io
import multiprocessing
import os
import re
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mido
import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.midi import (
    REMI_BPE_CONFIG,
    REMI_CONFIG,
    PackedSong,
    Quantization,
    RefSong,
    absolute_messages,
    bar_lines,
    last_event_step,
    midi_file,
    note,
    note_multiset,
    program_change,
    quantization_of,
    reference_song,
    retimed,
    round_trip_problems,
    signature_problems,
    tempo,
    tempo_problems,
    time_signature,
    track_of,
    type0,
)
from helpers.paths import DOCS_PATH, require
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe_core
import bpe_midi.events as events_module
from bpe_core import BpeError
from bpe_midi import grammars, smf
from bpe_midi.song import Song, events_from_mido, read_song, song_from_events

PARSERS = ("fast", "mido")
TRAINING_SONGS = 50
WORKERS = max(1, min(4, len(os.sched_getaffinity(0))))


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def remi_bpe(songs: list[Path]) -> bpe_core.Tokenizer:
    """configs/midi-remi-bpe.yaml (vocab 2000) trained on the first 50 songs, without its special
    tokens: decoding with special tokens has its own test, and ids with none are plain events."""
    return bpe_core.train(REMI_BPE_CONFIG, songs[:TRAINING_SONGS], {"special_tokens.tokens": []}, progress=False)


@pytest.fixture(scope="module")
def grid(remi_bpe: bpe_core.Tokenizer) -> Quantization:
    return quantization_of(remi_bpe)


def small_tokenizer(songs: list[Path], **pretokenizer: Any) -> bpe_core.Tokenizer:
    """midi-events with the given options, a few merges learned on five songs."""
    config = {
        "name": "midi-test",
        "input": {"reader": "midi"},
        "pretokenizer": {"name": "midi-events", **pretokenizer},
        "trainer": {"vocab_size": 800},
    }
    return bpe_core.train(config, songs[:5], progress=False)


@pytest.fixture(scope="module")
def mido_tokenizer(songs: list[Path]) -> bpe_core.Tokenizer:
    """A midi-events tokenizer that reads files with mido (`parser: mido`)."""
    return small_tokenizer(songs, parser="mido")


def events(tokenizer: bpe_core.Tokenizer, ids: list[int]) -> list[str]:
    """The base events (labels) a sequence of ids stands for."""
    return [label for token in ids for label in tokenizer.token_symbols(token)]


def digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


def saved(midi: mido.MidiFile, path: Path) -> Path:
    midi.save(str(path))
    return path


# ---------------------------------------------------------------------------------------------
# one pass over all 909 songs


@dataclass
class SongCase:
    """What one song gives: the mido facts, the plugin's reading, and the round trip."""

    path: str
    midi_type: int = 0
    ticks_per_beat: int = 0
    mido_events: str = ""  # digest of events_from_mido(mido.MidiFile(path))
    fast_song_is_mido_song: bool = False  # read_song(path, "fast") == the Song parser "mido" builds from mido's events
    original: PackedSong | None = None  # read independently (helpers.midi.reference_song)
    ids: "array[int] | None" = None  # remi_bpe.encode(song)
    decoded: PackedSong | None = None  # reference_song(remi_bpe.decode(ids))
    reencoded: "array[int] | None" = None  # remi_bpe.encode(remi_bpe.decode(ids))
    reading_error: str | None = None  # an exception while reading the file (mido, the reference, read_song)
    round_trip_error: str | None = None  # an exception while encoding, decoding or encoding again


_CASE_TOKENIZER: list[bpe_core.Tokenizer] = []  # set before the worker processes fork


def song_case(path: str) -> SongCase:
    case = SongCase(path)
    tokenizer = _CASE_TOKENIZER[0]
    # one song's exception is that song's finding, not the whole run's
    try:
        midi = mido.MidiFile(path)
        case.midi_type, case.ticks_per_beat = midi.type, midi.ticks_per_beat
        mido_events = events_from_mido(midi)
        case.mido_events = digest(mido_events)
        case.original = PackedSong.of(reference_song(midi))
        song = read_song(path, "fast")
        case.fast_song_is_mido_song = song == song_from_events(path, midi.ticks_per_beat, mido_events)
        del midi, mido_events
    except Exception as error:  # noqa: BLE001
        case.reading_error = f"{type(error).__name__}: {error}"
        return case
    try:
        ids = tokenizer.encode(song)
        case.ids = array("q", ids)
        decoded = tokenizer.decode(ids)
        case.decoded = PackedSong.of(reference_song(decoded))
        case.reencoded = array("q", tokenizer.encode(decoded))
    except Exception as error:  # noqa: BLE001
        case.round_trip_error = f"{type(error).__name__}: {error}"
    return case


@pytest.fixture(scope="module")
def pop909_cases(songs: list[Path], remi_bpe: bpe_core.Tokenizer) -> list[SongCase]:
    _CASE_TOKENIZER[:] = [remi_bpe]
    paths = [str(path) for path in songs]
    if WORKERS == 1:
        return [song_case(path) for path in paths]
    with multiprocessing.get_context("fork").Pool(WORKERS) as pool:
        return list(pool.imap(song_case, paths, chunksize=8))


def failures(cases: list[SongCase], check: Any, limit: int = 5, round_trip: bool = True) -> list[str]:
    """Songs where `check` finds problems (or an exception was raised), the first few named."""
    found = []
    for case in cases:
        error = case.reading_error or (case.round_trip_error if round_trip else None)
        problems = [error] if error else check(case)
        if problems:
            found.append(f"{Path(case.path).name}: " + "; ".join(problems))
    return [f"{len(found)} of {len(cases)} songs"] + found[:limit] if found else []


# ---------------------------------------------------------------------------------------------
# the parser: exactly mido's events, on every song


@pytest.mark.both_modes
def test_compiled_parser_gives_exactly_the_events_mido_gives_on_every_song(pop909_cases: list[SongCase]) -> None:
    """bpe_midi.smf.parse (compiled; its Python source with BPE_CORE_PURE=1) against mido."""

    def check(case: SongCase) -> list[str]:
        midi_format, ticks_per_beat, tracks = smf.parse(Path(case.path).read_bytes())
        if (midi_format, ticks_per_beat) != (case.midi_type, case.ticks_per_beat):
            return [
                f"format/ticks per beat {(midi_format, ticks_per_beat)}, mido {(case.midi_type, case.ticks_per_beat)}"
            ]
        if digest(tracks) != case.mido_events:
            expected = events_from_mido(mido.MidiFile(case.path))
            for index, (ours, theirs) in enumerate(zip(tracks, expected)):
                if ours != theirs:
                    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
                    at -= at % smf.FIELDS
                    return [
                        f"track {index} differs at event {at // smf.FIELDS}: {ours[at : at + 5]} vs mido "
                        f"{theirs[at : at + 5]}"
                    ]
            return [f"{len(tracks)} tracks, mido {len(expected)}"]
        return []

    assert not failures(pop909_cases, check, round_trip=False)


def test_fast_and_mido_parsers_read_the_same_song_from_every_file(
    pop909_cases: list[SongCase], songs: list[Path]
) -> None:
    """read_song(path, "fast") == read_song(path, "mido"): on every song against the Song the mido
    parser builds from the fixture's one mido reading, and on a sample through read_song itself."""
    assert not failures(
        pop909_cases, lambda case: [] if case.fast_song_is_mido_song else ["read_song differs"], round_trip=False
    )
    for path in songs[::90] + [songs[470]]:  # songs[470] has 960 ticks per beat
        assert read_song(str(path), "fast") == read_song(str(path), "mido"), path.name


def test_the_mido_parser_option_gives_the_same_tokenizer_and_ids(
    songs: list[Path], mido_tokenizer: bpe_core.Tokenizer
) -> None:
    fast = small_tokenizer(songs, parser="fast")
    assert mido_tokenizer.merges == fast.merges
    assert mido_tokenizer.encode(songs[100]) == fast.encode(songs[100])


def test_every_song_is_a_type_1_file_at_480_or_960_ticks_per_beat(pop909_cases: list[SongCase]) -> None:
    """The data is what the tests assume (and what the shared README says)."""
    assert not failures(pop909_cases, lambda case: [], round_trip=False)
    assert Counter((case.midi_type, case.ticks_per_beat) for case in pop909_cases) == {(1, 480): 903, (1, 960): 6}


# messages mido can write; deltas below 2**28 (the standard's 4-byte limit on variable-length numbers)
channels = st.integers(0, 15)
data_bytes = st.integers(0, 127)
channel_messages = st.one_of(
    st.builds(lambda c, n, v: mido.Message("note_on", channel=c, note=n, velocity=v), channels, data_bytes, data_bytes),
    st.builds(
        lambda c, n, v: mido.Message("note_off", channel=c, note=n, velocity=v), channels, data_bytes, data_bytes
    ),
    st.builds(lambda c, p: mido.Message("program_change", channel=c, program=p), channels, data_bytes),
    st.builds(
        lambda c, n, v: mido.Message("control_change", channel=c, control=n, value=v), channels, data_bytes, data_bytes
    ),
    st.builds(lambda c, p: mido.Message("pitchwheel", channel=c, pitch=p), channels, st.integers(-8192, 8191)),
    st.builds(lambda c, v: mido.Message("aftertouch", channel=c, value=v), channels, data_bytes),
    st.builds(lambda c, n, v: mido.Message("polytouch", channel=c, note=n, value=v), channels, data_bytes, data_bytes),
)
other_messages = st.one_of(
    st.builds(lambda data: mido.Message("sysex", data=data), st.lists(data_bytes, max_size=12)),
    st.builds(lambda t: mido.MetaMessage("set_tempo", tempo=t), st.integers(0, 2**24 - 1)),
    st.builds(
        lambda n, d: mido.MetaMessage("time_signature", numerator=n, denominator=2**d),
        st.integers(1, 255),
        st.integers(0, 6),
    ),
    st.builds(
        lambda text: mido.MetaMessage("track_name", name=text), st.text(st.characters(max_codepoint=255), max_size=8)
    ),
    st.builds(lambda key: mido.MetaMessage("key_signature", key=key), st.sampled_from(["C", "Am", "F#", "Eb", "Bbm"])),
    st.just(mido.MetaMessage("marker", text="verse")),
)
deltas = st.one_of(st.integers(0, 3), st.integers(0, 2000), st.integers(0, 2**28 - 1))
tracks = st.lists(
    st.lists(st.tuples(deltas, st.one_of(channel_messages, channel_messages, other_messages)), max_size=40),
    min_size=1,
    max_size=4,
)


@pytest.mark.both_modes
@settings(max_examples=150)
@given(tracks, st.integers(1, 32767), st.sampled_from([0, 1, 2]))
def test_compiled_parser_matches_mido_on_files_mido_writes(
    messages: list[list[tuple[int, Any]]], ticks_per_beat: int, midi_type: int
) -> None:
    """Any file mido writes (running status, sysex, meta messages, long deltas) parses to mido's events."""
    if midi_type == 0:
        messages = messages[:1]
    midi = mido.MidiFile(type=midi_type, ticks_per_beat=ticks_per_beat)
    for track_messages in messages:
        midi.tracks.append(mido.MidiTrack(message.copy(time=delta) for delta, message in track_messages))
    buffer = io.BytesIO()
    midi.save(file=buffer)
    data = buffer.getvalue()
    expected = mido.MidiFile(file=io.BytesIO(data))
    assert smf.parse(data) == (midi_type, ticks_per_beat, events_from_mido(expected))


# ---------------------------------------------------------------------------------------------
# the reader's MIDI semantics


def read_built(midi: mido.MidiFile, parser: str) -> Song:
    with tempfile.TemporaryDirectory() as directory:
        return read_song(str(saved(midi, Path(directory) / "song.mid")), parser)


@pytest.mark.parametrize("parser", PARSERS)
def test_reader_pairs_notes_first_in_first_out_and_closes_them_at_track_end(parser: str) -> None:
    midi = midi_file(
        [
            [
                (0, mido.Message("note_on", note=60, velocity=90)),
                (100, mido.Message("note_on", note=60, velocity=70)),  # overlaps the first: same pitch and channel
                (200, mido.Message("note_on", note=60, velocity=0)),  # ends the first (FIFO)
                (300, mido.Message("note_off", note=60, velocity=64)),  # ends the second
                (400, mido.Message("note_off", note=61, velocity=64)),  # ends nothing
                (500, mido.Message("note_on", note=62, velocity=50)),  # never ended: closed at the track's end
                (500, mido.Message("note_on", channel=1, note=60, velocity=40)),  # another channel: its own note
                (600, mido.Message("note_off", channel=1, note=60)),
                (900, mido.MetaMessage("marker", text="end")),
            ]
        ]
    )
    song = read_built(midi, parser)
    assert note_multiset(song.notes) == Counter(
        {
            (0, 200, 60, 90, 0, False): 1,
            (100, 300, 60, 70, 0, False): 1,
            (500, 900, 62, 50, 0, False): 1,
            (500, 600, 60, 40, 0, False): 1,
        }
    )


@pytest.mark.parametrize("parser", PARSERS)
def test_program_changes_apply_per_channel_from_where_they_occur(parser: str) -> None:
    midi = midi_file(
        [
            [program_change(0, 40), *note(0, 480, 60), program_change(960, 73), *note(960, 1440, 62)]
            + [program_change(0, 25, channel=3), *note(480, 960, 64, channel=3)],
            note(0, 480, 67, channel=5),  # no program change: program 0
        ]
    )
    song = read_built(midi, parser)
    assert sorted((item.pitch, item.program, item.drum) for item in song.notes) == [
        (60, 40, False),
        (62, 73, False),
        (64, 25, False),
        (67, 0, False),
    ]


@pytest.mark.parametrize("parser", PARSERS)
def test_channel_10_is_drums_whatever_its_program(parser: str) -> None:
    midi = midi_file([[program_change(0, 5, channel=9), *note(0, 120, 36, channel=9), *note(0, 480, 36, channel=8)]])
    drums = {(item.pitch, item.drum) for item in read_built(midi, parser).notes}
    assert drums == {(36, True), (36, False)}


note_messages = st.lists(
    st.tuples(
        st.integers(0, 120),  # delta
        st.sampled_from(["on", "off", "on0", "program"]),
        st.sampled_from([0, 1, 9]),  # channel
        st.integers(60, 62),  # few pitches: overlaps are common
        st.integers(1, 127),
    ),
    max_size=60,
)


@pytest.mark.both_modes
@settings(max_examples=150)
@given(st.lists(note_messages, min_size=1, max_size=3), st.booleans())
def test_reader_notes_equal_the_independent_reading(
    streams: list[list[tuple[int, str, int, int, int]]], as_type0: bool
) -> None:
    """Random note streams (overlaps, velocity-0 offs, unmatched offs, unclosed notes, program
    changes, drums) read to the same notes by both parsers and by the test's own reader."""
    midi = mido.MidiFile(type=1, ticks_per_beat=96)
    for stream in streams:
        track = mido.MidiTrack()
        for delta, kind, channel, pitch, value in stream:
            if kind == "program":
                track.append(mido.Message("program_change", channel=channel, program=value, time=delta))
            else:
                velocity = 0 if kind == "on0" else value
                message_type = "note_off" if kind == "off" else "note_on"
                track.append(mido.Message(message_type, channel=channel, note=pitch, velocity=velocity, time=delta))
        midi.tracks.append(track)
    if as_type0:
        midi = type0(midi)
    expected = note_multiset(reference_song(midi).notes)
    buffer = io.BytesIO()
    midi.save(file=buffer)
    _, ticks_per_beat, parsed = smf.parse(buffer.getvalue())
    assert note_multiset(song_from_events("generated", ticks_per_beat, parsed).notes) == expected
    assert note_multiset(song_from_events("generated", ticks_per_beat, events_from_mido(midi)).notes) == expected


# ---------------------------------------------------------------------------------------------
# decode(encode(song)) on every song


def test_decoding_keeps_every_in_range_note_of_every_song(pop909_cases: list[SongCase], grid: Quantization) -> None:
    """Same pitch, program or drum flag; onset within half a grid step; duration the nearest bin of
    its quantized length; velocity within a bin width (see helpers.midi.round_trip_problems)."""

    def check(case: SongCase) -> list[str]:
        assert case.original is not None and case.decoded is not None
        return round_trip_problems(case.original.unpack(), case.decoded.unpack(), grid)

    assert not failures(pop909_cases, check)


def test_decoding_keeps_tempos_and_time_signatures_of_every_song(
    pop909_cases: list[SongCase], grid: Quantization
) -> None:
    def check(case: SongCase) -> list[str]:
        assert case.original is not None and case.decoded is not None
        original, decoded = case.original.unpack(), case.decoded.unpack()
        return tempo_problems(original, decoded, grid) + signature_problems(original, decoded, grid)

    assert not failures(pop909_cases, check)


@pytest.mark.both_modes
def test_encoding_the_decoded_song_gives_the_same_ids_on_every_song(pop909_cases: list[SongCase]) -> None:
    def check(case: SongCase) -> list[str]:
        assert case.ids is not None and case.reencoded is not None
        if case.ids == case.reencoded:
            return []
        at = next(
            (i for i, (a, b) in enumerate(zip(case.ids, case.reencoded)) if a != b),
            min(len(case.ids), len(case.reencoded)),
        )
        return [f"{len(case.ids)} ids, {len(case.reencoded)} after the round trip; first difference at {at}"]

    assert not failures(pop909_cases, check)


# ---------------------------------------------------------------------------------------------
# grammars: TSD and MIDILike on every song (the REMI pass's mido reading reused), and the kernel

GRAMMARS = ("tsd", "midilike")


def grammar_tokenizer(songs: list[Path], grammar: str, **options: Any) -> bpe_core.Tokenizer:
    """configs/midi-remi-bpe.yaml with another grammar, trained on the first 50 songs, no special tokens."""
    overrides: dict[str, Any] = {"special_tokens.tokens": [], "pretokenizer.grammar": grammar}
    overrides.update({f"pretokenizer.{key}": value for key, value in options.items()})
    return bpe_core.train(REMI_BPE_CONFIG, songs[:TRAINING_SONGS], overrides, progress=False)


@pytest.fixture(scope="module")
def grammar_tokenizers(songs: list[Path]) -> dict[str, bpe_core.Tokenizer]:
    return {grammar: grammar_tokenizer(songs, grammar) for grammar in GRAMMARS}


@dataclass
class GrammarCase:
    """One song through one grammar: what breaks the round trip (empty: nothing), and its ids' count."""

    path: str
    problems: list[str]
    tokens: int = 0


_GRAMMAR_STATE: list[Any] = []  # (tokenizers, REMI's, REMI cases) set before the worker processes fork
FILE_ROUND_TRIP_EVERY = 4  # songs whose decoded file is read back with mido and encoded again


def same_music(song: RefSong, packed: PackedSong) -> bool:
    """The same notes (as a multiset), tempo changes and time signatures, at the same ticks."""
    other = packed.unpack()
    return (song.ticks_per_beat, note_multiset(song.notes), song.tempos, song.time_signatures) == (
        other.ticks_per_beat,
        note_multiset(other.notes),
        other.tempos,
        other.time_signatures,
    )


def decoded_music(tokenizer: bpe_core.Tokenizer, ids: Sequence[int]) -> tuple[Any, ...]:
    """What the decoder writes to the MIDI file for these ids (bpe_midi.decoding.MidiDecoder.music),
    with the notes sorted: their order in the file is the grammar's."""
    index = {label: symbol for symbol, label in enumerate(tokenizer.alphabet)}
    symbols = [index[label] for label in events(tokenizer, list(ids))]
    tempos, signatures, notes = tokenizer.decoder.music(symbols, tokenizer.alphabet)
    return tempos, signatures, sorted(notes)


def grammar_case(index: int) -> list[GrammarCase]:
    """Each grammar's ids of one song decode to the music REMI's ids decode to (whose file the REMI
    tests check against the original); every few songs, through the MIDI file and back as well."""
    tokenizers, remi, cases = _GRAMMAR_STATE
    case = cases[index]
    found = []
    for grammar in GRAMMARS:
        tokenizer = tokenizers[grammar]
        if case.reading_error or case.round_trip_error or case.ids is None or case.decoded is None:
            found.append(GrammarCase(case.path, [case.reading_error or case.round_trip_error or "not read"]))
            continue
        try:
            ids = tokenizer.encode(case.path)
            problems = []
            if decoded_music(tokenizer, ids) != decoded_music(remi, case.ids):
                problems.append("decodes to other music than REMI's ids")
            if index % FILE_ROUND_TRIP_EVERY == 0:
                decoded = tokenizer.decode(ids)
                reading = reference_song(decoded)
                if not same_music(reading, case.decoded):
                    assert case.original is not None
                    original, grid = case.original.unpack(), quantization_of(tokenizer)
                    problems += round_trip_problems(original, reading, grid)
                    problems += tempo_problems(original, reading, grid) + signature_problems(original, reading, grid)
                    problems.append("the decoded file holds other music than REMI's")
                if tokenizer.encode(decoded) != ids:
                    problems.append("encoding the decoded song gives other ids")
            found.append(GrammarCase(case.path, problems, len(ids)))
        except Exception as error:  # noqa: BLE001
            found.append(GrammarCase(case.path, [f"{type(error).__name__}: {error}"]))
    return found


@pytest.fixture(scope="module")
def grammar_cases(
    pop909_cases: list[SongCase], grammar_tokenizers: dict[str, bpe_core.Tokenizer], remi_bpe: bpe_core.Tokenizer
) -> dict[str, list[GrammarCase]]:
    _GRAMMAR_STATE[:] = [grammar_tokenizers, remi_bpe, pop909_cases]
    indexes = list(range(len(pop909_cases)))
    if WORKERS == 1:
        per_song = [grammar_case(index) for index in indexes]
    else:
        with multiprocessing.get_context("fork").Pool(WORKERS) as pool:
            per_song = list(pool.imap(grammar_case, indexes, chunksize=8))
    return {grammar: [song[position] for song in per_song] for position, grammar in enumerate(GRAMMARS)}


def grammar_failures(cases: list[GrammarCase], limit: int = 5) -> list[str]:
    found = [f"{Path(case.path).name}: " + "; ".join(case.problems) for case in cases if case.problems]
    return [f"{len(found)} of {len(cases)} songs"] + found[:limit] if found else []


@pytest.mark.parametrize("grammar", GRAMMARS)
def test_every_grammar_decodes_every_song_with_remis_guarantees(
    grammar_cases: dict[str, list[GrammarCase]], grammar: str
) -> None:
    """Pitch, program or drum, onset within half a step, duration and velocity in their bins,
    tempos and time signatures: the music REMI decodes to, which the REMI tests hold to these
    promises against the independent reading; every fourth song also through the decoded file,
    which encodes to the same ids."""
    assert len(grammar_cases[grammar]) == 909
    assert not grammar_failures(grammar_cases[grammar])


def kernel_source() -> Any:
    """bpe_midi.grammars loaded from its Python source, whichever mode the installed module runs in."""
    path = Path(grammars.__file__).with_name("grammars.py")
    spec = importlib.util.spec_from_file_location("grammars_from_source", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def source_layout(source: Any, layout: Any) -> Any:
    bases = [
        layout.bar_id,
        layout.signature_base,
        layout.position_base,
        layout.tempo_base,
        layout.program_base,
        layout.pitch_base,
        layout.note_off_base,
        layout.velocity_base,
        layout.duration_base,
        layout.shift_base,
        layout.max_shift,
    ]
    return source.Layout(
        layout.grammar,
        layout.split,
        layout.resolution,
        layout.pitch_low,
        layout.pitch_high,
        list(layout.velocities),
        list(layout.durations),
        list(layout.program_ranks),
        layout.drum_rank,
        bases,
    )


@pytest.mark.both_modes
@pytest.mark.parametrize("grammar", ("remi", *GRAMMARS))
def test_the_compiled_tokenizer_gives_the_ids_of_its_source_and_round_trips(
    songs: list[Path], grammar: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a few songs in every split, bpe_midi.grammars (compiled, or its source with BPE_CORE_PURE=1)
    gives exactly the chunks, bars and report of its Python source; what it gives decodes with REMI's
    guarantees (the pure run checks this for the source itself)."""
    source = kernel_source()
    sample = [songs[index] for index in (0, 208, 470, 777)]  # 470 has 960 ticks per beat
    for split in ("bar", "beat", "none"):
        tokenizer = small_tokenizer(songs, grammar=grammar, split=split)
        pretokenizer = tokenizer.pretokenizer
        for path in sample:
            song = read_song(str(path))
            ours = pretokenizer.tokenize_song(song)
            with monkeypatch.context() as patch:
                patch.setattr(pretokenizer, "layout", source_layout(source, pretokenizer.layout))
                patch.setattr(events_module, "grammars", source)
                assert pretokenizer.tokenize_song(song) == ours, (grammar, split, path.name)
        if split == "bar":
            grid = quantization_of(tokenizer)
            for path in sample[:2]:
                original = reference_song(mido.MidiFile(str(path)))
                decoded = reference_song(tokenizer.decode(tokenizer.encode(path)))
                assert not round_trip_problems(original, decoded, grid), (grammar, path.name)


def test_grammars_other_than_remi_have_no_bar_or_position_events(
    grammar_tokenizers: dict[str, bpe_core.Tokenizer],
) -> None:
    for grammar, tokenizer in grammar_tokenizers.items():
        kinds = {label.split("_")[0] for label in tokenizer.alphabet}
        assert "Bar" not in kinds and "Position" not in kinds and "TimeShift" in kinds, grammar
    assert {label.split("_")[0] for label in grammar_tokenizers["midilike"].alphabet} >= {"NoteOn", "NoteOff"}


def time_shifts(labels: Iterable[str]) -> int:
    return sum(int(label.split("_")[1]) for label in labels if label.startswith("TimeShift_"))


@pytest.mark.parametrize("grammar", GRAMMARS)
def test_chunks_of_time_shift_grammars_begin_at_bar_lines(songs: list[Path], grammar: str) -> None:
    """With split: bar, each chunk is one bar: its time shifts add up to the bar's length (2/4 at
    8 steps per beat: 16), but the last bar's, which stops at the last event; with split: beat,
    chunks within a bar add up to it and tokenize_bars names the first chunk of each bar."""
    tokenizer = small_tokenizer(songs, grammar=grammar, split="bar")
    song = read_song(str(songs[0]))
    assert song.time_signatures == [(0, 2, 4)]
    chunks, bars, _ = tokenizer.pretokenizer.tokenize_bars(song)
    labels = tokenizer.alphabet
    assert bars == list(range(len(chunks)))
    assert [time_shifts(labels[symbol] for symbol in chunk) for chunk in chunks[:-1]] == [16] * (len(chunks) - 1)
    assert time_shifts(labels[symbol] for symbol in chunks[-1]) < 16
    by_beat = small_tokenizer(songs, grammar=grammar, split="beat")
    beat_chunks, beat_bars, _ = by_beat.pretokenizer.tokenize_bars(song)
    assert len(beat_bars) == len(chunks) and len(beat_chunks) > len(chunks)
    for bar, (start, end) in enumerate(zip(beat_bars, beat_bars[1:] + [len(beat_chunks)])):
        in_bar = [labels[symbol] for chunk in beat_chunks[start:end] for symbol in chunk]
        assert in_bar == [labels[symbol] for symbol in chunks[bar]]


def test_midilike_ends_a_note_inside_another_of_its_pitch_with_a_duration(songs: list[Path]) -> None:
    """First-in first-out NoteOffs cannot end a note that starts and ends while an earlier note of
    the same program and pitch sounds: that one note gets a Duration, and both come back."""
    tokenizer = small_tokenizer(songs, grammar="midilike")
    song = midi_file([note(0, 1920, 60, 90) + note(480, 960, 60, 40, channel=1) + note(960, 1440, 64)])
    labels = events(tokenizer, tokenizer.encode(song))
    assert labels.count("NoteOn_60") == 2 and labels.count("NoteOff_60") == 1
    assert [label for label in labels if label.startswith("Duration_")] == ["Duration_8"]
    decoded = reference_song(tokenizer.decode(tokenizer.encode(song)))
    assert not round_trip_problems(reference_song(song), decoded, quantization_of(tokenizer))
    assert sorted((item.start, item.end) for item in decoded.notes if item.pitch == 60) == [(0, 1920), (480, 960)]


def test_the_symusic_parser_reads_the_same_music_and_gives_the_same_ids(
    songs: list[Path], remi_bpe: bpe_core.Tokenizer
) -> None:
    """`parser: symusic` (the optional extra): the notes, tempos and time signatures of the compiled
    parser (which is mido's reading) on every ninth song; notes keep symusic's track numbers."""
    for path in songs[::9] + [songs[470]]:
        fast, other = read_song(str(path)), read_song(str(path), "symusic")
        assert (other.ticks_per_beat, other.tempos, other.time_signatures) == (
            fast.ticks_per_beat,
            fast.tempos,
            fast.time_signatures,
        ), path.name
        assert note_multiset(other.notes) == note_multiset(fast.notes), path.name
    assert remi_bpe.pretokenizer.split(read_song(str(songs[3]), "symusic")) == remi_bpe.pretokenizer.split(songs[3])
    with pytest.raises(BpeError, match=re.escape(str(songs[0])) + ".*not a valid MIDI file"):
        read_song(str(songs[0]), "symusic", songs[0].read_bytes()[:100])


def test_an_unknown_grammar_is_an_error_naming_the_allowed_ones(songs: list[Path]) -> None:
    with pytest.raises(BpeError, match=r"pretokenizer\.grammar.*remi, tsd, midilike"):
        small_tokenizer(songs, grammar="cpword")


@pytest.mark.parametrize("split", ["phrase", ["bar"], {"bar": 50}, 4])
def test_a_split_that_is_not_one_of_the_names_is_an_error_naming_them(split: Any) -> None:
    # a list or a mapping (a fuzzed config nested the value) was a TypeError from the lookup
    with pytest.raises(BpeError, match=r"pretokenizer\.split: .* is not allowed; allowed: bar, beat, none"):
        events_module.MidiEventPretokenizer({"split": split})


EVENT_KINDS = ("Bar", "TimeSig", "Position", "Tempo", "note", "note", "note", "any")


@pytest.mark.both_modes
@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(st.sampled_from(EVENT_KINDS), st.lists(st.integers(0, 10**6), min_size=4, max_size=4)), max_size=40
    )
)
def test_any_event_sequence_decodes_to_a_midi_file_that_encoding_keeps(
    remi_bpe: bpe_core.Tokenizer, sequence: list[tuple[str, list[int]]]
) -> None:
    """A model may generate any ids: what decodes is a MIDI file whose notes, re-encoded and
    decoded again, are the same notes, and whose ids are then a fixed point."""
    by_kind: dict[str, list[int]] = {}
    for symbol, label in enumerate(remi_bpe.alphabet):
        by_kind.setdefault(label.split("_")[0], []).append(symbol)
    ids: list[int] = []
    for kind, picks in sequence:
        if kind == "note":  # a complete note: Program, Pitch, Velocity, Duration
            for part, pick in zip(("Program", "Pitch", "Velocity", "Duration"), picks):
                ids.append(by_kind[part][pick % len(by_kind[part])])
        elif kind == "any":
            ids.append(picks[0] % remi_bpe.alphabet_size)
        else:
            ids.append(by_kind[kind][picks[0] % len(by_kind[kind])])
    decoded = remi_bpe.decode(ids)
    assert isinstance(decoded, mido.MidiFile)
    again = remi_bpe.encode(decoded)
    assert note_multiset(reference_song(remi_bpe.decode(again)).notes) == note_multiset(reference_song(decoded).notes)
    assert remi_bpe.encode(remi_bpe.decode(again)) == again


def test_the_decoded_song_is_a_type_1_midi_file_that_mido_reads_back(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path], tmp_path: Path
) -> None:
    decoded = remi_bpe.decode(remi_bpe.encode(songs[0]))
    assert isinstance(decoded, mido.MidiFile) and decoded.type == 1
    written = saved(decoded, tmp_path / "decoded.mid")
    assert note_multiset(reference_song(mido.MidiFile(str(written))).notes) == note_multiset(
        reference_song(decoded).notes
    )
    assert remi_bpe.encode(written) == remi_bpe.encode(songs[0])


def test_encode_takes_a_path_a_midi_file_or_a_song(remi_bpe: bpe_core.Tokenizer, songs: list[Path]) -> None:
    path = songs[1]
    ids = remi_bpe.encode(path)
    assert remi_bpe.encode(str(path)) == ids
    assert remi_bpe.encode(mido.MidiFile(str(path))) == ids
    assert remi_bpe.encode(read_song(str(path))) == ids
    assert remi_bpe.encode_batch([path, str(songs[2])], workers=2) == [ids, remi_bpe.encode(songs[2])]


def test_decode_returns_a_midi_file_when_the_tokenizer_has_special_tokens(songs: list[Path]) -> None:
    """configs/midi-remi-bpe.yaml has PAD, BOS, EOS and MASK: its ids still decode to one MIDI file,
    and special tokens around (or among) the music change nothing in it."""
    tokenizer = bpe_core.train(REMI_BPE_CONFIG, songs[:5], {"trainer.vocab_size": 700}, progress=False)
    assert tokenizer.special_tokens == ["PAD", "BOS", "EOS", "MASK"]
    ids = tokenizer.encode(songs[0])
    decoded = tokenizer.decode(ids)
    assert isinstance(decoded, mido.MidiFile), f"decode gave a {type(decoded).__name__}"
    special = tokenizer.special_ids
    framed = [special["BOS"], *ids[:100], special["PAD"], *ids[100:], special["EOS"]]
    assert note_multiset(reference_song(tokenizer.decode(framed)).notes) == note_multiset(reference_song(decoded).notes)


# ---------------------------------------------------------------------------------------------
# file layouts: type 0, drums, programs, ticks per beat, time signatures, tempos


def test_type0_files_give_the_same_notes_and_ids_as_type1(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path], tmp_path: Path
) -> None:
    for path in (songs[0], songs[470], songs[908]):
        original = mido.MidiFile(str(path))
        merged = saved(type0(original), tmp_path / f"type0-{path.name}")
        assert mido.MidiFile(str(merged)).type == 0 and len(mido.MidiFile(str(merged)).tracks) == 1
        expected = note_multiset(reference_song(original).notes)
        for parser in PARSERS:
            assert note_multiset(read_song(str(merged), parser).notes) == expected, (path.name, parser)
        assert remi_bpe.encode(merged) == remi_bpe.encode(path), path.name


def drum_song() -> mido.MidiFile:
    return midi_file(
        [
            [tempo(0, 100), time_signature(0, 4, 4)],
            [program_change(0, 33, channel=1), *note(0, 960, 40, 100, channel=1)],
            [
                *note(0, 120, 36, 110, channel=9),
                *note(480, 600, 38, 100, channel=9),
                *note(960, 1080, 42, 60, channel=9),
            ],
        ]
    )


def test_drums_become_program_drums_and_decode_to_channel_10(remi_bpe: bpe_core.Tokenizer) -> None:
    ids = remi_bpe.encode(drum_song())
    labels = events(remi_bpe, ids)
    assert labels.count("Program_drums") == 3 and labels.count("Program_33") == 1
    decoded = remi_bpe.decode(ids)
    channels = {
        (message.note, message.channel) for track in decoded.tracks for message in track if message.type == "note_on"
    }
    assert {channel for pitch, channel in channels if pitch != 40} == {9}
    assert {channel for pitch, channel in channels if pitch == 40} != {9}
    assert 33 in {message.program for track in decoded.tracks for message in track if message.type == "program_change"}
    assert not round_trip_problems(reference_song(drum_song()), reference_song(decoded), quantization_of(remi_bpe))


def test_program_changes_mid_track_change_the_program_tokens(remi_bpe: bpe_core.Tokenizer, grid: Quantization) -> None:
    song = midi_file(
        [
            [
                program_change(0, 40),
                *note(0, 480, 60),
                program_change(960, 73),
                *note(960, 1440, 64),
                program_change(1920, 40),
                *note(1920, 2400, 67),
            ]
        ]
    )
    labels = events(remi_bpe, remi_bpe.encode(song))
    assert [label for label in labels if label.startswith("Program_")] == ["Program_40", "Program_73", "Program_40"]
    decoded = remi_bpe.decode(remi_bpe.encode(song))
    assert not round_trip_problems(reference_song(song), reference_song(decoded), grid)


def test_ticks_per_beat_do_not_change_the_ids_when_rescaling_is_exact(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path], tmp_path: Path
) -> None:
    song = mido.MidiFile(str(songs[3]))
    ids = remi_bpe.encode(song)
    assert remi_bpe.encode(saved(retimed(song, 1920), tmp_path / "1920.mid")) == ids  # 4x: exact
    hi_res = mido.MidiFile(str(songs[470]))
    assert hi_res.ticks_per_beat == 960
    assert remi_bpe.encode(saved(retimed(hi_res, 3840), tmp_path / "3840.mid")) == remi_bpe.encode(hi_res)
    # 96 ticks per beat is 480 / 5: exact for a song whose ticks are multiples of 5 (here: snapped to the 32nd grid)
    snapped = retimed(song, 480, lambda tick: round(tick / 60) * 60)
    for ticks_per_beat in (96, 384, 24):
        rescaled = saved(retimed(snapped, ticks_per_beat), tmp_path / f"{ticks_per_beat}.mid")
        assert remi_bpe.encode(rescaled) == remi_bpe.encode(snapped), ticks_per_beat


def test_songs_at_96_ticks_per_beat_round_trip_within_quantization(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path], tmp_path: Path, grid: Quantization
) -> None:
    for path in (songs[3], songs[470]):
        coarse = mido.MidiFile(str(saved(retimed(mido.MidiFile(str(path)), 96), tmp_path / f"96-{path.name}")))
        decoded = remi_bpe.decode(remi_bpe.encode(coarse))
        original = reference_song(coarse)
        assert not round_trip_problems(original, reference_song(decoded), grid), path.name
        assert not signature_problems(original, reference_song(decoded), grid)
        assert remi_bpe.encode(decoded) == remi_bpe.encode(coarse)


def bars_of(labels: list[str]) -> list[list[str]]:
    """The events of each bar (each starts with `Bar`)."""
    bars: list[list[str]] = []
    for label in labels:
        if label == "Bar":
            bars.append([])
        bars[-1].append(label)
    return bars


def test_bars_follow_a_change_from_four_four_to_three_four(remi_bpe: bpe_core.Tokenizer, grid: Quantization) -> None:
    four = 4 * 480
    three = 3 * 480
    beats_in_three_four = [2 * four + bar * three + beat * 480 for bar in range(3) for beat in range(3)]
    song = midi_file(
        [
            [time_signature(0, 4, 4), time_signature(2 * four, 3, 4)],
            [*note(0, 480, 60), *note(four, four + 480, 62)]
            + [message for start in beats_in_three_four for message in note(start, start + 240, 64)],
        ]
    )
    bars = bars_of(events(remi_bpe, remi_bpe.encode(song)))
    assert len(bars) == 2 + 3
    assert bars[0][:2] == ["Bar", "TimeSig_4/4"] and bars[2][:2] == ["Bar", "TimeSig_3/4"]
    assert [sum(label.startswith("TimeSig_") for label in bar) for bar in bars] == [1, 0, 1, 0, 0]
    for bar in bars[2:]:
        assert [label for label in bar if label.startswith("Position_")] == ["Position_0", "Position_8", "Position_16"]
    decoded = remi_bpe.decode(remi_bpe.encode(song))
    signatures = [
        (tick, message.numerator, message.denominator)
        for tick, message in absolute_messages(decoded.tracks[0])
        if message.type == "time_signature"
    ]
    assert signatures == [(0, 4, 4), (2 * four, 3, 4)]
    assert not round_trip_problems(reference_song(song), reference_song(decoded), grid)


def test_a_time_signature_change_mid_bar_takes_effect_at_the_next_bar_line(
    remi_bpe: bpe_core.Tokenizer, grid: Quantization
) -> None:
    song = midi_file(
        [
            [time_signature(0, 4, 4), time_signature(480, 3, 4)],
            [message for beat in range(10) for message in note(beat * 480, beat * 480 + 240, 60)],
        ]
    )
    bars = bars_of(events(remi_bpe, remi_bpe.encode(song)))
    expected = bar_lines([(0, 4, 4), (480, 3, 4)], last_event_step(reference_song(song), grid), grid, 480)
    assert [(start, n, d) for start, n, d in expected] == [(0, 4, 4), (32, 3, 4), (56, 3, 4)]
    assert len(bars) == 3 and bars[1][1] == "TimeSig_3/4"
    assert [label for label in bars[0] if label.startswith("Position_")] == [
        "Position_0",
        "Position_8",
        "Position_16",
        "Position_24",
    ]


def test_tempo_changes_appear_as_tempo_tokens(remi_bpe: bpe_core.Tokenizer, grid: Quantization) -> None:
    song = midi_file(
        [
            [tempo(0, 60), tempo(1920, 120), tempo(3840 + 960, 200)],
            [message for beat in range(12) for message in note(beat * 480, beat * 480 + 480, 60)],
        ]
    )
    labels = events(remi_bpe, remi_bpe.encode(song))
    tempos = [int(label.split("_")[1]) for label in labels if label.startswith("Tempo_")]
    assert len(tempos) == 3
    for bpm, expected in zip(tempos, (60, 120, 200)):
        assert max(bpm / expected, expected / bpm) <= grid.tempo_tolerance
    bars = bars_of(labels)
    assert any(label.startswith("Tempo_") for label in bars[1]) and any(label.startswith("Tempo_") for label in bars[2])
    decoded = reference_song(remi_bpe.decode(remi_bpe.encode(song)))
    assert not tempo_problems(reference_song(song), decoded, grid)
    assert [tick for tick, _ in decoded.tempos] == [0, 1920, 3840 + 960]


def test_a_song_without_tempo_or_time_signature_gets_midi_defaults(
    remi_bpe: bpe_core.Tokenizer, grid: Quantization
) -> None:
    song = midi_file([note(0, 480, 60) + note(1920, 2400, 62)])
    labels = events(remi_bpe, remi_bpe.encode(song))
    assert labels[:2] == ["Bar", "TimeSig_4/4"]
    decoded = reference_song(remi_bpe.decode(remi_bpe.encode(song)))
    assert not tempo_problems(reference_song(song), decoded, grid)
    assert decoded.time_signatures == [(0, 4, 4)]


# ---------------------------------------------------------------------------------------------
# errors


@pytest.fixture(scope="module")
def broken_files(songs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("broken")
    data = songs[0].read_bytes()
    truncated = folder / "truncated.mid"
    truncated.write_bytes(data[: len(data) // 2])
    text = folder / "notes.mid"
    text.write_text("these are my notes, not a MIDI file\n")
    empty = folder / "empty.mid"
    empty.write_bytes(b"")
    header_only = folder / "header.mid"
    header_only.write_bytes(data[:14])
    return {"truncated": truncated, "not MIDI": text, "empty": empty, "header only": header_only}


BROKEN_KINDS = ["truncated", "not MIDI", "empty", "header only"]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("kind", BROKEN_KINDS)
def test_a_broken_file_is_a_bpe_error_naming_the_file(
    broken_files: dict[str, Path],
    kind: str,
    parser: str,
    remi_bpe: bpe_core.Tokenizer,
    mido_tokenizer: bpe_core.Tokenizer,
) -> None:
    path = broken_files[kind]
    with pytest.raises(BpeError, match=re.escape(str(path))):
        read_song(str(path), parser)
    tokenizer = mido_tokenizer if parser == "mido" else remi_bpe
    with pytest.raises(BpeError, match=re.escape(str(path))):
        tokenizer.encode(path)


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("kind", BROKEN_KINDS)
def test_a_broken_file_error_says_what_is_wrong(broken_files: dict[str, Path], kind: str, parser: str) -> None:
    """Not only an exception's name: "EOFError: " alone does not tell a user the file ends early."""
    with pytest.raises(BpeError) as raised:
        read_song(str(broken_files[kind]), parser)
    message = str(raised.value)
    assert not message.rstrip().endswith(":"), f"the message does not say what is wrong: {message!r}"


@pytest.mark.parametrize("kind", ["truncated", "not MIDI"])
def test_encoding_a_broken_file_from_the_cli_exits_2_with_one_error_line(
    broken_files: dict[str, Path], kind: str, remi_bpe: bpe_core.Tokenizer, tmp_path: Path
) -> None:
    remi_bpe.save(tmp_path / "tok.json")
    assert_clean_error(run_bpe("encode", "-t", "tok.json", broken_files[kind], cwd=tmp_path), str(broken_files[kind]))


@pytest.fixture(scope="module")
def folder_with_a_corrupt_file(
    songs: list[Path], broken_files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for path in songs[:8]:
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "999.mid").write_bytes(broken_files["truncated"].read_bytes())
    return folder


def test_training_skips_a_corrupt_file_naming_it_and_counting_skipped_files(
    folder_with_a_corrupt_file: Path, tmp_path: Path
) -> None:
    result = run_bpe(
        "train",
        REMI_BPE_CONFIG,
        folder_with_a_corrupt_file,
        "--set",
        "trainer.vocab_size=700",
        "-o",
        "tok.json",
        cwd=tmp_path,
    )
    assert_ok(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert any("999.mid" in line for line in warnings), result.stderr
    assert any(re.search(r"\b1 of 9\b", line) for line in warnings), result.stderr
    trained = bpe_core.load(tmp_path / "tok.json")
    assert sorted(Path(source["path"]).name for source in trained.provenance["inputs"]) == sorted(
        path.name for path in folder_with_a_corrupt_file.glob("0*.mid")
    )


def test_training_with_strict_makes_a_corrupt_file_an_error(folder_with_a_corrupt_file: Path, tmp_path: Path) -> None:
    result = run_bpe(
        "train",
        REMI_BPE_CONFIG,
        folder_with_a_corrupt_file,
        "--set",
        "trainer.vocab_size=700",
        "--strict",
        "-o",
        "tok.json",
        cwd=tmp_path,
    )
    assert_clean_error(result, "999.mid")
    assert not (tmp_path / "tok.json").exists()


def test_training_through_the_api_skips_a_corrupt_file(
    folder_with_a_corrupt_file: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    tokenizer = bpe_core.train(
        REMI_BPE_CONFIG, [folder_with_a_corrupt_file], {"trainer.vocab_size": 700}, progress=False
    )
    assert len(tokenizer.provenance["inputs"]) == 8
    assert "999.mid" in capfd.readouterr().err
    with pytest.raises(BpeError, match="999.mid"):
        bpe_core.train(
            REMI_BPE_CONFIG,
            [folder_with_a_corrupt_file],
            {"trainer.vocab_size": 700, "input.on_error": "error"},
            progress=False,
        )


# ---------------------------------------------------------------------------------------------
# the loss report


def test_encoding_report_agrees_with_an_independent_count(
    remi_bpe: bpe_core.Tokenizer, grid: Quantization, songs: list[Path], tmp_path: Path
) -> None:
    # a real song, with notes added outside the pitch range, off the grid and longer than the longest bin
    song = mido.MidiFile(str(songs[10]))
    extra = [
        *note(7, 487, 12, 64, channel=0),
        *note(1000, 1480, 115, 64, channel=0),
        *note(1925, 1925 + 40 * 480, 70, 127, channel=0),
    ]
    song.tracks.append(track_of(extra))
    path = saved(song, tmp_path / "with-extras.mid")
    reference = reference_song(mido.MidiFile(str(path)))
    report = remi_bpe.encoding_report(path)
    ticks_per_beat = reference.ticks_per_beat
    kept = [item for item in reference.notes if grid.pitch_low <= item.pitch <= grid.pitch_high]
    off_grid = [item for item in kept if item.start * grid.beat_resolution % ticks_per_beat]
    assert report.get("notes", 0) == len(reference.notes)
    assert report.get("dropped_pitch_out_of_range", 0) == len(reference.notes) - len(kept) == 2
    assert (
        report.get("notes_kept", 0)
        + report.get("dropped_pitch_out_of_range", 0)
        + report.get("dropped_program_not_allowed", 0)
        == report["notes"]
    )
    assert report.get("onsets_moved", 0) == len(off_grid)
    shift = max(
        abs(item.start / ticks_per_beat - grid.step(item.start, ticks_per_beat) / grid.beat_resolution) for item in kept
    )
    assert report.get("max_onset_shift_beats", 0) == pytest.approx(shift, abs=1e-6)
    longest = grid.duration_bins[-1]
    assert (
        report.get("durations_clipped", 0)
        == sum(grid.quantized_steps(item, ticks_per_beat) > longest for item in kept)
        >= 1
    )
    # binned: changed by quantization (a velocity that is no bin's value comes back as another)
    decoded = reference_song(remi_bpe.decode(remi_bpe.encode(path)))
    representatives = set(remi_velocities(remi_bpe))
    assert report.get("velocities_binned", 0) == sum(item.velocity not in representatives for item in kept)
    assert sum(item.velocity not in representatives for item in decoded.notes) == 0
    binned = sum(
        1
        for item in kept
        if grid.quantized_steps(item, ticks_per_beat) not in grid.duration_bins
        and grid.quantized_steps(item, ticks_per_beat) <= longest
    )
    assert report.get("durations_binned", 0) == binned


def remi_velocities(tokenizer: bpe_core.Tokenizer) -> list[int]:
    return [int(label.split("_")[1]) for label in tokenizer.alphabet if label.startswith("Velocity_")]


def test_encoding_report_names_every_count_even_when_it_is_zero(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path]
) -> None:
    """As Tokenizer.encoding_report's docstring shows: report["dropped_pitch_out_of_range"] is 0."""
    report = remi_bpe.encoding_report(songs[0])
    for key in (
        "notes",
        "notes_kept",
        "dropped_pitch_out_of_range",
        "onsets_moved",
        "durations_clipped",
        "velocities_binned",
    ):
        assert key in report, f"{key} missing from {report}"


# ---------------------------------------------------------------------------------------------
# what BPE may merge: split


def test_split_bar_never_merges_across_a_bar_line(songs: list[Path]) -> None:
    tokenizer = small_tokenizer(songs, split="bar")
    merged = [tokenizer.token_symbols(token) for token in tokenizer.merged_ids()]
    assert merged
    assert not [symbols for symbols in merged if "Bar" in symbols[1:]]


def test_split_none_lets_merges_cross_bar_lines(songs: list[Path]) -> None:
    tokenizer = small_tokenizer(songs, split="none")
    assert any("Bar" in tokenizer.token_symbols(token)[1:] for token in tokenizer.merged_ids())


def test_split_beat_never_merges_across_a_beat(songs: list[Path]) -> None:
    tokenizer = small_tokenizer(songs, split="beat")
    for token in tokenizer.merged_ids():
        symbols = tokenizer.token_symbols(token)
        beats = {int(label.split("_")[1]) // 8 for label in symbols if label.startswith("Position_")}
        assert len(beats) <= 1 and "Bar" not in symbols[1:], symbols


# ---------------------------------------------------------------------------------------------
# configs and the command line


def test_cli_trains_inspects_encodes_and_decodes_to_a_midi_file(
    songs: list[Path], grid: Quantization, tmp_path: Path
) -> None:
    corpus = tmp_path / "songs"
    corpus.mkdir()
    for path in songs[:TRAINING_SONGS]:
        (corpus / path.name).write_bytes(path.read_bytes())
    assert_ok(
        run_bpe(
            "train",
            REMI_BPE_CONFIG,
            corpus,
            "--set",
            "trainer.vocab_size=700",
            "-o",
            "tok.json",
            "--quiet",
            cwd=tmp_path,
        )
    )
    shown = assert_ok(run_bpe("inspect", "tok.json", cwd=tmp_path))
    assert "base symbols (events) per token" in shown
    alphabet = set(bpe_core.load(tmp_path / "tok.json").alphabet)
    assert "most used merged tokens" in shown, shown
    most_used = shown.split("most used merged tokens")[1].splitlines()[1:11]
    shown_events = [re.search(r"'(.*)'", line) for line in most_used]
    assert len(most_used) == 10 and all(shown_events), shown
    for found in shown_events:
        assert (
            found is not None and len(found.group(1).split("+")) >= 2 and set(found.group(1).split("+")) <= alphabet
        ), found
    assert_ok(run_bpe("encode", "-t", "tok.json", corpus / "001.mid", "-o", "ids.txt", cwd=tmp_path))
    result = run_bpe("decode", "-t", "tok.json", "ids.txt", "-o", "out.mid", cwd=tmp_path)
    assert_ok(result)
    decoded = mido.MidiFile(str(tmp_path / "out.mid"))
    assert not round_trip_problems(reference_song(mido.MidiFile(str(songs[0]))), reference_song(decoded), grid)
    ids = [int(token) for token in (tmp_path / "ids.txt").read_text().split()]
    assert bpe_core.load(tmp_path / "tok.json").encode(tmp_path / "out.mid") == ids


def test_cli_decode_writes_a_midi_file_that_encodes_to_the_same_ids(songs: list[Path], tmp_path: Path) -> None:
    """The same round trip through files, for a tokenizer without special tokens."""
    assert_ok(
        run_bpe(
            "train",
            REMI_BPE_CONFIG,
            *songs[:5],
            "--set",
            "trainer.vocab_size=700",
            "--set",
            "special_tokens.tokens=[]",
            "-o",
            "tok.json",
            "--quiet",
            cwd=tmp_path,
        )
    )
    assert_ok(run_bpe("encode", "-t", "tok.json", songs[5], "-o", "ids.txt", cwd=tmp_path))
    assert_ok(run_bpe("decode", "-t", "tok.json", "ids.txt", "-o", "out.mid", cwd=tmp_path))
    assert_ok(run_bpe("encode", "-t", "tok.json", "out.mid", "-o", "again.txt", cwd=tmp_path))
    assert (tmp_path / "again.txt").read_text() == (tmp_path / "ids.txt").read_text()
    assert_clean_error(run_bpe("decode", "-t", "tok.json", "ids.txt", cwd=tmp_path), "-o")


def test_inspect_reports_tokens_per_beat(songs: list[Path], tmp_path: Path) -> None:
    """Issue 6's metrics: base events per BPE token, tokens per beat, most used merged tokens."""
    small_tokenizer(songs).save(tmp_path / "tok.json")
    shown = assert_ok(run_bpe("inspect", "tok.json", cwd=tmp_path))
    assert re.search(r"per token", shown) and re.search(r"per beat", shown), shown


def test_most_used_tokens_are_merged_tokens_shown_as_events(remi_bpe: bpe_core.Tokenizer) -> None:
    top = remi_bpe.most_used_tokens(20)
    assert len(top) == 20 and [uses for _, uses in top] == sorted((uses for _, uses in top), reverse=True)
    merged = set(remi_bpe.merged_ids())
    for token, uses in top:
        assert token in merged and uses > 0
        assert len(remi_bpe.token_symbols(token)) >= 2
        assert all(label in remi_bpe.alphabet for label in remi_bpe.token_symbols(token))


def test_metrics_count_events_tokens_beats_and_the_most_used_merged_tokens(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path]
) -> None:
    """bpe_midi.metrics (issue 6's metrics as a function), against counts made here."""
    from bpe_midi import metrics

    sample = songs[200:203]
    measured = metrics(remi_bpe, sample, top=5)
    encoded = [remi_bpe.encode(path) for path in sample]
    tokens = sum(len(ids) for ids in encoded)
    events_count = sum(len(events(remi_bpe, ids)) for ids in encoded)
    beats = 0.0
    for path in sample:  # a song lasts until its last message (end of track) or the last note's end
        midi = mido.MidiFile(str(path))
        last = max(max((tick for tick, _ in absolute_messages(track)), default=0) for track in midi.tracks)
        last = max([last] + [item.end for item in reference_song(midi).notes])
        beats += last / midi.ticks_per_beat
    assert (measured["events"], measured["tokens"]) == (events_count, tokens)
    assert measured["beats"] == pytest.approx(beats, abs=1e-3)
    assert measured["events_per_token"] == pytest.approx(events_count / tokens, abs=1e-4)
    assert measured["tokens_per_beat"] == pytest.approx(tokens / beats, abs=1e-4)
    merged = set(remi_bpe.merged_ids())
    usage = Counter(token for ids in encoded for token in ids if token in merged)
    assert [(token, count) for token, count, _ in measured["most_used"]] == sorted(
        usage.items(), key=lambda item: -item[1]
    )[:5]
    assert all(shown == remi_bpe.token_symbols(token) for token, _, shown in measured["most_used"])


def test_remi_config_trains_events_only_with_no_merges(songs: list[Path]) -> None:
    """configs/midi-remi.yaml: "vocab_size is the event alphabet plus the special tokens, so no merges"."""
    tokenizer = bpe_core.train(REMI_CONFIG, songs[:5], progress=False)
    assert tokenizer.merges == []
    assert tokenizer.vocab_size == tokenizer.alphabet_size + len(tokenizer.special_tokens)


def test_remi_bpe_config_learns_its_vocabulary_on_the_training_songs(remi_bpe: bpe_core.Tokenizer) -> None:
    assert remi_bpe.vocab_size == 2000 and len(remi_bpe.merges) == 2000 - remi_bpe.alphabet_size
    assert remi_bpe.provenance["symbols"] > remi_bpe.provenance["tokens"]


def test_a_saved_tokenizer_encodes_and_decodes_the_same(
    remi_bpe: bpe_core.Tokenizer, songs: list[Path], tmp_path: Path
) -> None:
    remi_bpe.save(tmp_path / "tok.json")
    loaded = bpe_core.load(tmp_path / "tok.json")
    ids = remi_bpe.encode(songs[7])
    assert loaded.encode(songs[7]) == ids
    assert note_multiset(reference_song(loaded.decode(ids)).notes) == note_multiset(
        reference_song(remi_bpe.decode(ids)).notes
    )


def test_text_read_for_a_midi_pretokenizer_is_one_error_line_not_the_text(tmp_path: Path) -> None:
    # a MIDI config whose input reader is the default (text): the pretokenizer gets text, which
    # is no path; the error says so in one line instead of quoting the corpus as a file name
    (tmp_path / "corpus.txt").write_text(gzip.decompress(require(DOCS_PATH).read_bytes()).decode()[:200_000])
    config = tmp_path / "config.yaml"
    lines = REMI_BPE_CONFIG.read_text().replace("reader: midi", "reader: text").splitlines()
    config.write_text("\n".join(line for line in lines if "on_error:" not in line))
    result = run_bpe("train", "config.yaml", "corpus.txt", "-o", "out.json", "-q", cwd=tmp_path)
    assert_clean_error(result, "not text", "input.reader: midi")
    assert not (tmp_path / "out.json").exists()
