"""MIDI training data the way MidiTok users prepare it, through the real `bpe encode`: notes that
encoding drops are a warning with the count per file (`--strict`: an error), `--augment` writes
named augmented copies (drums never transposed), `--bos` starts every document and window, and
`TokenShards(..., dicts=True)` feeds a transformers model as it is. On POP909 songs."""

import json
from pathlib import Path

import mido
import numpy
import pytest
import torch
import transformers
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.midi import pop909_paths
from helpers.paths import CONFIGS_DIR

import bpe_core
from bpe_core.data import TokenShards

LOW, HIGH = 48, 84  # a narrow pitch range, so that real songs have notes outside it
SONGS = 3
AUGMENT = "pitch=2,velocity=10,duration=0.5"
COPIES = 4 + 2 + 2  # transpositions -2, -1, +1, +2; velocity -10, +10; duration -0.5, +0.5


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MIDI tokenizer with pitches 48..84 trained on 40 songs, three songs to encode, and one of
    them with its second track moved to the drum channel (POP909 has no drums)."""
    folder = tmp_path_factory.mktemp("midi-data")
    songs = pop909_paths()
    assert_ok(
        run_bpe(
            "train", CONFIGS_DIR / "midi-remi-bpe.yaml", *songs[:40], "-o", "tok.json", "-q",
            "--set", "trainer.vocab_size=800", "--set", f"pretokenizer.pitch_range=[{LOW},{HIGH}]",
            cwd=folder,
        )
    )  # fmt: skip
    for path in songs[:SONGS]:
        (folder / path.name).write_bytes(path.read_bytes())
    midi = mido.MidiFile(songs[0])
    for message in midi.tracks[2]:
        if hasattr(message, "channel"):
            message.channel = 9
    midi.save(folder / "drums.mid")
    return folder


def outside(path: Path) -> tuple[int, int]:
    """(notes outside LOW..HIGH, notes) of a song, read with mido: note_on with a velocity."""
    notes = [
        message.note
        for track in mido.MidiFile(path).tracks
        for message in track
        if message.type == "note_on" and message.velocity > 0
    ]
    return sum(not LOW <= note <= HIGH for note in notes), len(notes)


def test_dropped_notes_are_a_warning_per_file_and_strict_makes_them_an_error(folder: Path) -> None:
    names = [path.name for path in pop909_paths()[:SONGS]]
    result = run_bpe("encode", "-t", "tok.json", *names, "-o", "songs.ids", cwd=folder)
    assert_ok(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    expected = []
    for name in names:
        dropped, notes = outside(folder / name)
        assert dropped > 0
        expected.append(
            f"warning: {name}: {dropped:,} of {notes:,} notes dropped ({dropped:,} with a pitch outside 48..84)"
        )
    assert warnings == expected
    strict = run_bpe("encode", "-t", "tok.json", *names, "--strict", "-o", "strict.ids", cwd=folder)
    assert_clean_error(strict, names[0], "notes dropped", "--strict")
    assert not (folder / "strict.ids").exists()


def test_augment_writes_named_copies_and_never_transposes_drums(folder: Path) -> None:
    names = [path.name for path in pop909_paths()[:SONGS]]
    result = run_bpe(
        "encode", "-t", "tok.json", *names, "drums.mid", "--augment", AUGMENT, "-o", "aug/", "-q", cwd=folder
    )
    assert_ok(result)
    index = json.loads((folder / "aug" / "index.json").read_text())
    assert index["augment"] == {"pitch": 2, "velocity": 10, "duration": 0.5}
    assert index["documents"] == (SONGS + 1) * (1 + COPIES)
    labels = ["pitch-2", "pitch-1", "pitch+1", "pitch+2", "velocity-10", "velocity+10", "duration-0.5", "duration+0.5"]
    for shard, name in zip(index["shards"], [*names, "drums.mid"]):
        assert shard["names"] == [name] + [f"{name}#{label}" for label in labels]
    # each copy's ids are the encoding of that copy; drums keep their pitches in every transposition
    tokenizer = bpe_core.load(folder / "tok.json")
    song = bpe_core.load(folder / "tok.json").pretokenizer
    copies = list(song.augmented(str(folder / "drums.mid"), {"pitch": 2, "velocity": 10, "duration": 0.5}))
    stored = numpy.fromfile(folder / "aug" / index["shards"][-1]["shard"], dtype="<u2").tolist()
    starts = numpy.cumsum([0, *index["shards"][-1]["lengths"]]).tolist()
    for number, copy in enumerate(copies):
        assert stored[starts[number] : starts[number + 1]] == tokenizer.encode(copy), copy.id
    original = copies[0]
    drums = sorted(note for note in original.notes if note.drum)
    assert drums, "the drum channel holds notes"
    for copy, shift in zip(copies[1:5], (-2, -1, 1, 2)):
        assert sorted(note for note in copy.notes if note.drum) == drums
        pitched = sorted(note.pitch + shift for note in original.notes if not note.drum)
        kept = sorted(note.pitch for note in copy.notes if not note.drum)
        assert len(kept) <= len(pitched) and set(kept) <= set(pitched)
    bad = run_bpe("encode", "-t", "tok.json", names[0], "--augment", "tempo=3", "-o", "bad/", cwd=folder)
    assert_clean_error(bad, "--augment has no key 'tempo'")


def test_bos_starts_every_document_and_window(folder: Path) -> None:
    tokenizer = bpe_core.load(folder / "tok.json")
    bos = tokenizer.special_ids["BOS"]
    eos = tokenizer.special_ids["EOS"]
    names = [path.name for path in pop909_paths()[:SONGS]]
    for extra, directory in (([], "bos"), (["--max-length", "300"], "windows")):
        args = ["encode", "-t", "tok.json", *names, "--bos", "BOS", "--eos", "EOS", "-o", f"{directory}/", "-q"]
        assert_ok(run_bpe(*args, *extra, cwd=folder))
        index = json.loads((folder / directory / "index.json").read_text())
        assert index["bos_id"] == bos
        for shard, name in zip(index["shards"], names):
            ids = numpy.fromfile(folder / directory / shard["shard"], dtype="<u2").tolist()
            lengths = shard.get("lengths") or [len(ids)]
            starts = numpy.cumsum([0, *lengths]).tolist()
            documents = [ids[start:end] for start, end in zip(starts, starts[1:])]
            assert all(document[0] == bos and document[-1] == eos for document in documents)
            if extra:
                assert len(documents) > 1 and max(map(len, documents)) <= 300
            else:
                assert documents == [[bos, *tokenizer.encode(str(folder / name)), eos]]


def test_token_shards_give_dicts_a_transformers_model_trains_on(folder: Path) -> None:
    names = [path.name for path in pop909_paths()[:SONGS]]
    assert_ok(run_bpe("encode", "-t", "tok.json", *names, "--eos", "EOS", "-o", "train/", "-q", cwd=folder))
    tokenizer = bpe_core.load(folder / "tok.json")
    pad = tokenizer.special_ids["PAD"]
    shards = TokenShards(folder / "train", 2048, pad, documents=True, dicts=True)
    item = shards[0]
    assert sorted(item) == ["attention_mask", "input_ids", "labels"]
    assert (item["labels"][item["attention_mask"] == 0] == -100).all()
    assert (item["labels"][item["attention_mask"] == 1] == item["input_ids"][item["attention_mask"] == 1]).all()
    assert item["attention_mask"].sum() == min(
        2048, json.loads((folder / "train" / "index.json").read_text())["shards"][0]["tokens"]
    )
    batch = next(iter(torch.utils.data.DataLoader(shards, batch_size=2)))
    config = transformers.GPT2Config(vocab_size=tokenizer.vocab_size, n_positions=2048, n_embd=32, n_layer=1, n_head=2)
    torch.manual_seed(0)
    loss = transformers.GPT2LMHeadModel(config)(**batch).loss
    assert torch.isfinite(loss) and 0 < loss.item() < 2 * numpy.log(tokenizer.vocab_size)
