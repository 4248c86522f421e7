"""bpe_core.data.TokenShards on real shard directories (text, DNA, MIDI windows): fixed-length
windows that are the shards' own ids (read back here with the array module, not numpy), seeded,
picklable, padded where a document is short, and taken as they are by a PyTorch DataLoader (torch
is in the test extra; bpe_core never imports it, nor numpy until a TokenShards is made)."""

import json
import pickle
import subprocess
import sys
from array import array
from pathlib import Path

import numpy
import pytest
import torch
from helpers.cli_runner import assert_ok, run_bpe
from helpers.midi import pop909_paths
from helpers.paths import LAMBDA_PATH, READS_PATH, require

import bpe_core
from bpe_core.data import TokenShards
from bpe_core.errors import BpeError
from bpe_core.idfiles import read_shards

TEXT_SAMPLE = Path(bpe_core.__file__).with_name("samples") / "us-founding-texts.txt"


def stream_of(directory: Path) -> list[int]:
    """Every id of a shard set, in index order, read with the array module."""
    index = json.loads((directory / "index.json").read_text())
    ids = array("H" if index["dtype"] == "uint16" else "I")
    for entry in index["shards"]:
        ids.frombytes((directory / entry["shard"]).read_bytes())
    if sys.byteorder == "big":
        ids.byteswap()
    return ids.tolist()


@pytest.fixture(scope="module")
def text_shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bpe_core.Tokenizer]:
    """The founding texts and the Python docs' first lines as two shards, each document ended by <|endoftext|>."""
    directory = tmp_path_factory.mktemp("text")
    config = {
        "name": "text",
        "input": {"reader": "text"},
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 500},
        "special_tokens": {"tokens": ["<|endoftext|>"]},
    }
    bpe_core.train(config, [str(TEXT_SAMPLE)], progress=False).save(directory / "text.json")
    second = directory / "second.txt"
    second.write_text(TEXT_SAMPLE.read_text(encoding="utf-8")[:1500], encoding="utf-8")
    command = ("encode", "-t", "text.json", TEXT_SAMPLE, second, "--eos", "<|endoftext|>", "-q", "-o", "shards/")
    assert_ok(run_bpe(*command, cwd=directory))
    return directory / "shards", bpe_core.load(directory / "text.json")


def test_random_windows_are_slices_of_the_stream_across_shards(text_shards: tuple[Path, bpe_core.Tokenizer]) -> None:
    directory, _ = text_shards
    stream = stream_of(directory)
    shards = TokenShards(directory, length=64)
    assert len(shards) == len(stream) // 64
    for item in range(len(shards)):
        window = shards[item]
        assert window.dtype == numpy.int64 and window.shape == (64,)
        start = shards.starts[item]
        assert window.tolist() == stream[start : start + 64]
    assert shards[-1].tolist() == shards[len(shards) - 1].tolist()
    with pytest.raises(IndexError):
        shards[len(shards)]
    # one window of the whole stream: the end of the first shard, then the second
    assert TokenShards(directory, length=len(stream))[0].tolist() == stream


def test_windows_are_the_same_for_a_seed_and_differ_between_seeds(
    text_shards: tuple[Path, bpe_core.Tokenizer],
) -> None:
    directory, _ = text_shards
    first = [TokenShards(directory, length=32, samples=50, seed=7)[item].tolist() for item in range(50)]
    again = [TokenShards(directory, length=32, samples=50, seed=7)[item].tolist() for item in range(50)]
    other = [TokenShards(directory, length=32, samples=50, seed=8)[item].tolist() for item in range(50)]
    assert first == again and first != other
    shards = TokenShards(directory, length=32, samples=50, seed=7)
    shards[0]  # the memmaps are open: pickling leaves them out and the copy opens its own
    copy = pickle.loads(pickle.dumps(shards))
    assert [copy[item].tolist() for item in range(50)] == first


def test_a_stream_shorter_than_the_length_is_padded_and_needs_a_pad_id(
    text_shards: tuple[Path, bpe_core.Tokenizer],
) -> None:
    directory, tokenizer = text_shards
    stream = stream_of(directory)
    with pytest.raises(BpeError, match="give pad_id"):
        TokenShards(directory, length=len(stream) + 10)
    pad = tokenizer.special_ids["<|endoftext|>"]
    shards = TokenShards(directory, length=len(stream) + 10, pad_id=pad)
    assert len(shards) == 1
    assert shards[0].tolist() == stream + [pad] * 10
    assert shards.mask(0).tolist() == [True] * len(stream) + [False] * 10


def test_documents_of_dna_records_are_padded_or_cropped(tmp_path: Path) -> None:
    """FASTQ reads (named records: the index has their lengths) and a genome cut into windows."""
    config = {
        "name": "dna",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 260},
        "special_tokens": {"tokens": ["[PAD]"]},
    }
    genome, reads = require(LAMBDA_PATH), require(READS_PATH)
    bpe_core.train(config, [str(genome)], progress=False).save(tmp_path / "dna.json")
    tokenizer = bpe_core.load(tmp_path / "dna.json")
    assert_ok(run_bpe("encode", "-t", "dna.json", reads, genome, "--max-length", 300, "-q", "-o", "s/", cwd=tmp_path))
    pad = tokenizer.special_ids["[PAD]"]
    documents = [ids.tolist() for _, _, ids in read_shards(str(tmp_path / "s"), tokenizer.vocab_size)]
    shards = TokenShards(tmp_path / "s", length=40, pad_id=pad, documents=True, seed=3)
    assert len(shards) == len(documents) > 100
    for item, ids in enumerate(documents):
        window = shards[item].tolist()
        if len(ids) <= 40:
            assert window == ids + [pad] * (40 - len(ids))
        else:
            start = next(start for start in range(len(ids) - 39) if ids[start : start + 40] == window)
            assert 0 <= start <= len(ids) - 40
        assert shards.mask(item).sum() == min(40, len(ids))


def test_midi_windows_through_a_torch_dataloader(tmp_path: Path) -> None:
    """Windows of at most 128 tokens of 20 POP909 songs, one item each, padded to 128, batched by
    a DataLoader in two worker processes: the batches are the windows."""
    songs = pop909_paths()[:20]
    config = {
        "name": "midi",
        "input": {"reader": "midi"},
        "pretokenizer": {"name": "midi-events"},
        "trainer": {"vocab_size": 800},
        "special_tokens": {"tokens": ["PAD"], "position": "start"},
    }
    bpe_core.train(config, songs, progress=False).save(tmp_path / "midi.json")
    tokenizer = bpe_core.load(tmp_path / "midi.json")
    assert_ok(run_bpe("encode", "-t", "midi.json", *songs, "--max-length", 128, "-q", "-o", "s/", cwd=tmp_path))
    windows = [ids.tolist() for _, _, ids in read_shards(str(tmp_path / "s"), tokenizer.vocab_size)]
    pad = tokenizer.special_ids["PAD"]
    shards = TokenShards(tmp_path / "s", length=128, pad_id=pad, documents=True)
    loader = torch.utils.data.DataLoader(shards, batch_size=16, shuffle=False, num_workers=2)
    batches = list(loader)
    assert all(isinstance(batch, torch.Tensor) and batch.dtype == torch.int64 for batch in batches)
    assert sum(batch.shape[0] for batch in batches) == len(windows) and batches[0].shape == (16, 128)
    rows = [row.tolist() for batch in batches for row in batch]
    assert rows == [ids + [pad] * (128 - len(ids)) for ids in windows]
    shuffled = torch.utils.data.DataLoader(
        shards, batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    assert sorted(row.tolist() for batch in shuffled for row in batch) == sorted(rows)


def test_bpe_core_imports_neither_numpy_nor_torch() -> None:
    code = "import sys, bpe_core, bpe_core.data, bpe_core.cli; print('numpy' in sys.modules, 'torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_a_directory_that_is_no_shard_set_is_refused(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text('{"format": "something else"}')
    with pytest.raises(BpeError, match="is not a bpe-core shards index"):
        TokenShards(tmp_path, length=8)
    with pytest.raises(BpeError, match="length"):
        TokenShards(tmp_path, length=0)


def test_documents_of_a_set_without_lengths_are_cut_after_each_end_token(
    text_shards: tuple[Path, bpe_core.Tokenizer],
) -> None:
    """Two text files with --eos: two documents, as decoding the directory reads them."""
    directory, tokenizer = text_shards
    end = tokenizer.special_ids["<|endoftext|>"]
    documents = [ids.tolist() for _, _, ids in read_shards(str(directory), tokenizer.vocab_size)]
    assert len(documents) == 2 and all(ids[-1] == end for ids in documents)
    longest = max(map(len, documents))
    shards = TokenShards(directory, length=longest + 5, pad_id=end, documents=True)
    assert [shards[item].tolist() for item in range(2)] == [ids + [end] * (longest + 5 - len(ids)) for ids in documents]
    cropped = TokenShards(directory, length=100, pad_id=end, documents=True, seed=4)
    for item, ids in enumerate(documents):
        window = cropped[item].tolist()
        assert any(ids[start : start + 100] == window for start in range(len(ids) - 99))
    with pytest.raises(BpeError, match="one item per document"):
        TokenShards(directory, length=100, pad_id=end, documents=True, samples=3)
