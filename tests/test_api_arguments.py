"""Errors from the API, not from Python: every public function checks its arguments' types at the
door, and a wrong one is an `ArgumentError` (a BpeError and a TypeError) that names the argument
and says what it takes, never a TypeError or AttributeError from inside."""

from collections.abc import Callable
from typing import Any

import pytest
from helpers.text import GPT2_CONFIG, training_text

import bpe_core
from bpe_core.data import TokenShards
from bpe_core.errors import ArgumentError


@pytest.fixture(scope="module")
def tok() -> bpe_core.Tokenizer:
    return bpe_core.train(
        GPT2_CONFIG, overrides={"trainer.vocab_size": 400}, documents=[training_text()], progress=False
    )


def calls(tok: Any) -> dict[str, tuple[Callable[[], Any], str]]:
    """Each wrong call (of `tok`'s methods too), and the start of the message it must give."""
    return {
        "load(123)": (lambda: bpe_core.load(123), "load(path): expected a path (str or os.PathLike), got int 123"),
        "from_hf(None)": (lambda: bpe_core.from_hf(None), "from_hf(path): expected a path"),
        "from_tiktoken pattern": (
            lambda: bpe_core.from_tiktoken("x.tiktoken", 3),
            "from_tiktoken(pattern): expected gpt2, cl100k, o200k or a regex (str), got int 3",
        ),
        "from_tiktoken specials": (
            lambda: bpe_core.from_tiktoken("x.tiktoken", "cl100k", [1]),
            "from_tiktoken(special_tokens): expected a dict of token strings to ids, got list",
        ),
        "train config": (lambda: bpe_core.train(3, ["x"]), "config: expected a path (str or os.PathLike), got int 3"),
        "train overrides": (
            lambda: bpe_core.train(GPT2_CONFIG, ["x"], [1]),
            "overrides: expected a dict of dotted keys to values, got list",
        ),
        "train workers": (
            lambda: bpe_core.train(GPT2_CONFIG, documents=["a"], workers="2"),
            "workers: expected a number of processes (int), 1 or more, got str '2'",
        ),
        "train base": (
            lambda: bpe_core.train(GPT2_CONFIG, documents=["a"], base="tok.json"),
            "base: expected a Tokenizer (bpe_core.load(path) reads one), got str 'tok.json'",
        ),
        "count progress": (
            lambda: bpe_core.count(GPT2_CONFIG, documents=["a"], progress="yes"),
            "progress: expected True, False or None",
        ),
        "train counts": (
            lambda: bpe_core.train(GPT2_CONFIG, counts="a.counts"),
            "counts: expected a list of counts files or Counts, got one str",
        ),
        "load_counts": (lambda: bpe_core.load_counts(3), "load_counts(path): expected a path"),
        "sum_counts": (
            lambda: bpe_core.sum_counts([3]),
            "sum_counts(items[0]): expected a pair (name, Counts), got int",
        ),
        "trim tokenizer": (lambda: bpe_core.trim("tok.json", vocab_size=300), "trim(tokenizer): expected a Tokenizer"),
        "trim drop": (
            lambda: bpe_core.trim(tok, drop=5),
            "trim(drop): expected a list of ids or token texts, got one int",
        ),
        "trim on": (
            lambda: bpe_core.trim(tok, on="docs.txt", min_count=2),
            "trim(on): expected a list of paths, got one str",
        ),
        "TokenShards": (lambda: TokenShards(None, 8), "TokenShards(directory): expected a path"),
        "encode bytes": (
            lambda: tok.encode(b"abc"),
            "encode(document): expected text (str), got bytes b'abc' (bytes go through encode_bytes)",
        ),
        "encode None": (lambda: tok.encode(None), "encode(document): expected text (str), got NoneType"),
        "encode_ordinary int": (lambda: tok.encode_ordinary(3), "encode_ordinary(document): expected text (str)"),
        "encode_batch str": (
            lambda: tok.encode_batch("abc"),
            "encode_batch(documents): expected a list of documents, got str 'abc'",
        ),
        "encode_batch ints": (
            lambda: tok.encode_batch(["a", 1]),
            "encode_batch(documents): expected text (str), got int 1",
        ),
        "decode strs": (
            lambda: tok.decode(["a"]),
            "decode(ids): expected a sequence of token ids (int), got str 'a' at position 0",
        ),
        "decode str": (lambda: tok.decode("abc"), "decode(ids): expected a sequence of token ids (int), got str 'abc'"),
        "decode float": (
            lambda: tok.decode((1, 1.5)),
            "decode(ids): expected a sequence of token ids (int), got float",
        ),
        "decode int": (lambda: tok.decode(5), "decode(ids): expected a sequence of token ids (int), got int 5"),
        "decode_bytes strs": (
            lambda: tok.decode_bytes([1, "2"]),
            "decode_bytes(ids): expected a sequence of token ids",
        ),
        "save": (lambda: tok.save(3), "save(path): expected a path"),
        "to_hf": (lambda: tok.to_hf(None), "to_hf(path): expected a path"),
        "to_tiktoken": (lambda: tok.to_tiktoken(b"x"), "to_tiktoken(path): expected a path"),
    }


@pytest.mark.parametrize("case", list(calls(None)))
def test_a_wrong_argument_is_one_error_naming_it(tok: bpe_core.Tokenizer, case: str) -> None:
    call, message = calls(tok)[case]
    with pytest.raises(ArgumentError) as raised:
        call()
    assert str(raised.value).startswith(message), str(raised.value)
    assert isinstance(raised.value, bpe_core.BpeError) and isinstance(raised.value, TypeError)


def test_ids_of_other_integer_types_decode_as_a_list_does(tok: bpe_core.Tokenizer) -> None:
    import numpy

    ids = tok.encode(training_text()[:2000])
    for given in (tuple(ids), numpy.array(ids, dtype=numpy.int64), numpy.array(ids, dtype=numpy.uint16), iter(ids)):
        assert tok.decode(given) == tok.decode(ids), type(given).__name__
        assert tok.decode_bytes(numpy.array(ids)) == tok.decode_bytes(ids)
