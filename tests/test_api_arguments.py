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
    }


@pytest.mark.parametrize("case", list(calls(None)))
def test_a_wrong_argument_is_one_error_naming_it(tok: bpe_core.Tokenizer, case: str) -> None:
    call, message = calls(tok)[case]
    with pytest.raises(ArgumentError) as raised:
        call()
    assert str(raised.value).startswith(message), str(raised.value)
    assert isinstance(raised.value, bpe_core.BpeError) and isinstance(raised.value, TypeError)
