"""Decoding many ids at once: each id's piece from one table, laid end to end (`bpe_core.pieces`).

- o200k_base decodes the Python docs, special tokens between the paragraphs, to tiktoken's bytes
  and text, whether the ids come as a list, a tuple or an array.
- Text that ends mid-character before a special token decodes as the runs around it decode alone.
- A shard directory decodes with `bpe decode` to its documents, each decoded alone, end to end:
  the input files back, exactly, with or without an end token.
- An id with no piece is an error naming it, however the ids come.
"""

from array import array
from pathlib import Path

import pytest
from helpers.cli_runner import assert_ok, run_bpe
from helpers.interop import PUBLISHED_SPECIAL_TOKENS, published_vocabulary_path, read_ranks, tiktoken_encoding
from helpers.modes import PURE
from helpers.patterns import PUBLISHED_PATTERNS
from helpers.text import EOT, paragraphs
from hypothesis import given
from hypothesis import strategies as st

import bpe_core
from bpe_core import BpeError
from bpe_core.idfiles import read_shards

# Pure mode: the first part of the docs (the whole 11 MB when compiled).
DOCS_CHARS = 1_000_000 if PURE else None
SHARD_TEXT_CHARS = 60_000


@pytest.fixture(scope="module")
def o200k() -> tuple[bpe_core.Tokenizer, object]:
    """(ours, tiktoken's) o200k_base, from the same file, with the published special tokens."""
    path = published_vocabulary_path("o200k")
    specials = PUBLISHED_SPECIAL_TOKENS["o200k"]
    theirs = tiktoken_encoding("o200k", read_ranks(path), PUBLISHED_PATTERNS["o200k"], specials)
    return bpe_core.from_tiktoken(path, pattern="o200k", special_tokens=specials), theirs


@pytest.fixture(scope="module")
def docs_with_ends(docs_text: str) -> str:
    """The docs with <|endoftext|> between the paragraphs."""
    return EOT.join(paragraphs(docs_text if DOCS_CHARS is None else docs_text[:DOCS_CHARS]))


@pytest.mark.both_modes
def test_o200k_decodes_the_docs_with_special_tokens_to_tiktokens_bytes_and_text(o200k, docs_with_ends) -> None:
    ours, theirs = o200k
    ids = theirs.encode(docs_with_ends, allowed_special="all")
    assert ours.special_ids[EOT] in ids
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids) == docs_with_ends.encode("utf-8")
    assert ours.decode(ids) == theirs.decode(ids) == docs_with_ends
    assert ours.decode(tuple(ids)) == ours.decode(array("I", ids)) == docs_with_ends
    assert ours.decode(ids, errors="strict") == ours.decode(ids, errors="replace") == docs_with_ends


@pytest.mark.both_modes
@given(
    runs=st.lists(st.lists(st.integers(0, 255), max_size=6), min_size=1, max_size=6),
    errors=st.sampled_from(["roundtrip", "replace"]),
)
def test_bytes_cut_mid_character_by_a_special_token_decode_as_each_run_alone(o200k, runs, errors) -> None:
    """Byte ids (any bytes, most not UTF-8) between special tokens: one pass over all of them
    gives what decoding each run alone and joining with the special tokens' text gives."""
    ours, _ = o200k
    end = ours.special_ids[EOT]
    ids = [token for run in runs for token in [*run, end]]
    assert ours.decode(ids, errors=errors) == "".join(ours.decode(run, errors=errors) + EOT for run in runs)


def test_a_shard_directory_decodes_to_its_documents_end_to_end(docs_text: str, tmp_path: Path) -> None:
    """Windows ending in an end token, and whole files without one: `bpe decode DIR/` writes each
    document's text, decoded alone, one after another; without the end token, the inputs."""
    texts = [docs_text[:SHARD_TEXT_CHARS], docs_text[SHARD_TEXT_CHARS : 2 * SHARD_TEXT_CHARS]]
    for number, text in enumerate(texts):
        (tmp_path / f"part{number}.txt").write_text(text, encoding="utf-8", newline="")
    config = {
        "name": "docs-shards",
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 500},
        "special_tokens": {"tokens": [EOT]},
    }
    bpe_core.train(config, [str(tmp_path / "part0.txt")], progress=False).save(tmp_path / "text.json")
    tokenizer = bpe_core.load(tmp_path / "text.json")
    parts = ["part0.txt", "part1.txt"]
    windows = ["--max-length", "64", "--eos", EOT]
    assert_ok(run_bpe("encode", "-t", "text.json", *parts, *windows, "-q", "-o", "windows/", cwd=tmp_path))
    assert_ok(run_bpe("encode", "-t", "text.json", *parts, "-q", "-o", "whole/", cwd=tmp_path))
    assert_ok(run_bpe("decode", "-t", "text.json", "windows/", "-o", "windows.txt", cwd=tmp_path))
    assert_ok(run_bpe("decode", "-t", "text.json", "whole/", "-o", "whole.txt", cwd=tmp_path))
    documents = list(read_shards(str(tmp_path / "windows"), tokenizer.vocab_size))
    assert len(documents) > 2 * SHARD_TEXT_CHARS // 400
    decoded = (tmp_path / "windows.txt").read_text(encoding="utf-8")
    assert decoded == "".join(tokenizer.decode(ids.tolist()) for _, _, ids in documents)
    assert decoded.replace(EOT, "") == "".join(texts)
    assert (tmp_path / "whole.txt").read_text(encoding="utf-8") == "".join(texts)


@pytest.mark.parametrize("bad", [-1, 1 << 20])
def test_an_id_with_no_piece_is_an_error_naming_it_from_a_list_a_tuple_or_an_array(o200k, bad: int) -> None:
    ours, _ = o200k
    for ids in ([72, bad, 105], (72, bad, 105)):
        with pytest.raises(BpeError, match=f"token id {bad} is not in this tokenizer"):
            ours.decode(ids)
    if bad >= 0:
        with pytest.raises(BpeError, match=f"token id {bad} is not in this tokenizer"):
            ours.decode_bytes(array("I", [72, bad, 105]))


def test_numpy_ids_decode_as_python_ints_do(o200k) -> None:
    numpy = pytest.importorskip("numpy")
    ours, theirs = o200k
    ids = theirs.encode("Decoding numpy ids: héllo wörld", allowed_special="all")
    text = ours.decode(ids)
    assert ours.decode(numpy.array(ids)) == ours.decode(list(numpy.array(ids, dtype=numpy.uint32))) == text


def test_decode_bytes_is_for_byte_level_tokenizers(tmp_path: Path) -> None:
    (tmp_path / "genome.fa").write_text(">one\nACGTACGTTTGACANNACGT\n", encoding="ascii")
    config = {
        "name": "dna",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 20},
    }
    dna = bpe_core.train(config, [str(tmp_path / "genome.fa")], progress=False)
    assert dna.decode(dna.encode("ACGTTTGANA")) == "ACGTTTGANA"
    with pytest.raises(BpeError, match="byte-level"):
        dna.decode_bytes([0, 1])
