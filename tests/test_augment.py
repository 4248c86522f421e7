"""Augmentation at training time (`midi-events` `augment: {pitch, velocity, duration}`): counting
with it gives exactly the counts of the songs plus their transposed (velocity-moved,
duration-moved) copies written with mido; notes pushed out of the pitch range are dropped and
counted in the training report; it is deterministic, the same on the Dask runner, and encoding
never sees it."""

import json
import logging
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import distributed
import mido
import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.midi import DRUM_CHANNEL, absolute_messages, reference_song, track_of

import bpe_core
from bpe_core.errors import BpeError

SONGS = 4
RANGE = [40, 90]  # narrower than the piano's, so that transposing by 4 pushes notes out


def config(augment: dict[str, Any] | None = None) -> dict[str, Any]:
    pretokenizer: dict[str, Any] = {"name": "midi-events", "pitch_range": RANGE}
    if augment is not None:
        pretokenizer["augment"] = augment
    return {
        "name": "augment",
        "input": {"reader": "midi"},
        "pretokenizer": pretokenizer,
        "trainer": {"vocab_size": 900},
    }


@pytest.fixture(scope="module")
def sample(songs: list[Path]) -> list[Path]:
    """POP909 songs 101 to 100 + SONGS."""
    return songs[100 : 100 + SONGS]


def rewritten(midi: mido.MidiFile, change: Any) -> mido.MidiFile:
    """A copy whose tracks are `change(track's (tick, message) list)`."""
    result = mido.MidiFile(type=midi.type, ticks_per_beat=midi.ticks_per_beat)
    for track in midi.tracks:
        result.tracks.append(track_of(sorted(change(absolute_messages(track)), key=lambda item: item[0])))
    return result


def transpose(shift: int) -> Any:
    def change(messages: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        return [
            (tick, message.copy(note=message.note + shift))
            if message.type in ("note_on", "note_off") and message.channel != DRUM_CHANNEL
            else (tick, message)
            for tick, message in messages
        ]

    return change


def move_velocity(offset: int) -> Any:
    def change(messages: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        return [
            (tick, message.copy(velocity=min(127, max(1, message.velocity + offset))))
            if message.type == "note_on" and message.velocity > 0
            else (tick, message)
            for tick, message in messages
        ]

    return change


def move_duration(offset: int, shortest: int) -> Any:
    """Each note's end moved by `offset` ticks (no shorter than `shortest` when shortening), drums
    untouched: note-offs pair with note-ons first in, first out per channel and pitch, as MIDI's."""

    def change(messages: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        sounding: dict[tuple[int, int], deque[int]] = defaultdict(deque)
        result = []
        for tick, message in messages:
            is_on = message.type == "note_on" and message.velocity > 0
            is_off = message.type == "note_off" or (message.type == "note_on" and message.velocity == 0)
            if message.type.startswith("note") and message.channel != DRUM_CHANNEL:
                key = (message.channel, message.note)
                if is_on:
                    sounding[key].append(tick)
                elif is_off and sounding[key]:
                    start = sounding[key].popleft()
                    length = tick - start + offset
                    tick = start + (max(length, shortest) if offset < 0 else length)
            if message.type == "end_of_track":
                tick = max([tick, *(item[0] for item in result)])
            result.append((tick, message))
        return result

    return change


def written(songs: list[Path], directory: Path, changes: list[Any]) -> list[str]:
    """Each song, and each song changed by each change, as files in `directory`."""
    directory.mkdir(exist_ok=True)
    paths = []
    for song in songs:
        midi = mido.MidiFile(song)
        paths.append(str(song))
        for number, change in enumerate(changes):
            path = directory / f"{song.stem}-{number}.mid"
            rewritten(midi, change).save(path)
            paths.append(str(path))
    return paths


def pushed_out(songs: list[Path], shifts: list[int]) -> int:
    """Pitched notes inside RANGE that a shift moves out of it, read with mido."""
    dropped = 0
    for song in songs:
        notes = [note for note in reference_song(mido.MidiFile(song)).notes if not note.drum]
        for shift in shifts:
            dropped += sum(
                RANGE[0] <= note.pitch <= RANGE[1] and not RANGE[0] <= note.pitch + shift <= RANGE[1] for note in notes
            )
    return dropped


@pytest.mark.both_modes
def test_augmented_counts_are_the_counts_of_transposed_songs_written_with_mido(
    sample: list[Path], tmp_path: Path
) -> None:
    shifts = [-4, -3, -2, -1, 1, 2, 3, 4]
    augmented = bpe_core.count(config({"pitch": 4}), [str(song) for song in sample], progress=False)
    explicit = bpe_core.count(config(), written(sample, tmp_path, [transpose(s) for s in shifts]), progress=False)
    assert augmented.chunks == explicit.chunks
    report = augmented.measures["counting"]
    assert report["augmented_copies"] == len(shifts) * SONGS
    assert report["augment_notes_dropped"] == pushed_out(sample, shifts) > 0
    assert "counting" not in explicit.measures


@pytest.mark.both_modes
def test_velocity_and_duration_offsets_count_like_songs_moved_with_mido(sample: list[Path], tmp_path: Path) -> None:
    """velocity V: copies at -V and +V (kept in 1..127); duration D beats: at -D and +D (no note
    shorter than 1/32 beat), each offset alone, as MidiTok's augmentation without combinations."""
    augment = {"velocity": 20, "duration": 0.5}
    augmented = bpe_core.count(config(augment), [str(song) for song in sample], progress=False)
    ticks = {mido.MidiFile(song).ticks_per_beat for song in sample}
    assert len(ticks) == 1
    beat = ticks.pop()
    changes = [
        move_velocity(-20),
        move_velocity(20),
        move_duration(-beat // 2, max(1, round(beat / 32))),
        move_duration(beat // 2, 1),
    ]
    explicit = bpe_core.count(config(), written(sample, tmp_path, changes), progress=False)
    assert augmented.chunks == explicit.chunks
    assert augmented.measures["counting"] == {"augment_notes_dropped": 0, "augmented_copies": 4 * SONGS}


def test_augmentation_is_deterministic_and_the_same_on_dask(sample: list[Path]) -> None:
    files = [str(song) for song in sample]
    augment = {"pitch": 2, "velocity": 8, "duration": 0.25}
    once = bpe_core.count(config(augment), files, workers=1, progress=False)
    again = bpe_core.count(config(augment), files, workers=2, progress=False)
    assert once.chunks == again.chunks and once.measures == again.measures
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as cluster:
        runner = {"kind": "dask", "address": cluster.scheduler_address}
        remote = bpe_core.count(config(augment), files, runner=runner, progress=False)
    assert remote.chunks == once.chunks
    assert remote.measures["counting"] == once.measures["counting"]
    first = bpe_core.train(config(augment), files, progress=False)
    second = bpe_core.train(config(augment), files, progress=False)
    assert first.merges == second.merges and first.provenance["counting"] == once.measures["counting"]


def test_encoding_is_never_augmented_and_train_reports_the_counting(sample: list[Path], tmp_path: Path) -> None:
    (tmp_path / "augment.json").write_text(json.dumps(config({"pitch": 3})))
    result = run_bpe("train", "augment.json", *sample, "-o", "tok.json", cwd=tmp_path)
    assert_ok(result)
    tokenizer = bpe_core.load(tmp_path / "tok.json")
    dropped = pushed_out(sample, [-3, -2, -1, 1, 2, 3])
    assert f"counting: augment notes dropped {dropped:,}, augmented copies {6 * SONGS:,}" in result.stderr
    data = json.loads((tmp_path / "tok.json").read_text())
    assert data["pretokenizer"]["options"]["augment"] == {"pitch": 3}
    del data["pretokenizer"]["options"]["augment"]
    (tmp_path / "plain.json").write_text(json.dumps(data))
    plain = bpe_core.load(tmp_path / "plain.json")  # the same merges, no augment
    for song in sample:
        assert tokenizer.encode(song) == plain.encode(song)


@pytest.mark.parametrize(
    ("augment", "fragment"),
    [
        ({"pitch": -1}, "pretokenizer.augment.pitch: expected an integer from 0 to 127"),
        ({"pitch": 2, "tempo": 1}, "pretokenizer.augment has no key 'tempo'; allowed: pitch, velocity, duration"),
        ("yes", "pretokenizer.augment: expected {pitch: K, velocity: V, duration: D}"),
        ({"duration": "long"}, "pretokenizer.augment.duration: expected beats from 0 to 64"),
    ],
)
def test_bad_augment_options_are_errors_naming_the_key(
    augment: Any, fragment: str, sample: list[Path], tmp_path: Path
) -> None:
    with pytest.raises(BpeError, match=fragment.replace("{", r"\{").replace("}", r"\}")):
        bpe_core.count(config(augment), [str(sample[0])], progress=False)
    (tmp_path / "bad.json").write_text(json.dumps(config(augment)))
    assert_clean_error(run_bpe("train", "bad.json", sample[0], cwd=tmp_path), fragment)


def test_inspect_shows_what_counting_added(sample: list[Path], tmp_path: Path) -> None:
    bpe_core.train(config({"velocity": 10}), [str(song) for song in sample], progress=False).save(tmp_path / "t.json")
    shown = assert_ok(run_bpe("inspect", "t.json", cwd=tmp_path))
    assert f"counting:      augment notes dropped 0, augmented copies {2 * SONGS}" in shown
    assert "tokens per beat on the training data" not in shown
