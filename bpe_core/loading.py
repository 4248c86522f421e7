"""Tokenizers from files: our own tokenizer file, a Hugging Face `tokenizer.json`, a `.tiktoken`
file. The format modules read a file into a `TokenizerSpec`; this module builds the `Tokenizer`
and names the file when its ids do not fit together. It writes nothing (`Tokenizer.save`,
`to_hf` and `to_tiktoken` do).
"""

import os
from typing import Any

from bpe_core.errors import BpeError
from bpe_core.formats import hf, native, tiktoken
from bpe_core.spec import TokenizerSpec
from bpe_core.tokenizer import Tokenizer


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Read a tokenizer file written by `Tokenizer.save`.

    >>> tok = bpe_core.load("gpt2-32k.json")
    """
    path = os.fspath(path)
    return _built_from_file(native.read_spec(path), path)


def from_dict(data: Any, where: str) -> Tokenizer:
    """A tokenizer from the content of a tokenizer file (`where` names it in errors)."""
    return _built_from_file(native.spec_from_dict(data, where), where)


def from_hf(path: str | os.PathLike[str]) -> Tokenizer:
    """A tokenizer from a Hugging Face `tokenizer.json` (byte-level BPE, or the DNA tokenizers
    bpe-core exports); ids stay Hugging Face's.

    >>> tok = bpe_core.from_hf("tokenizer.json")
    """
    path = os.fspath(path)
    return _built(hf.read_spec(path), path)


def from_tiktoken(
    path: str | os.PathLike[str], pattern: str | None = None, special_tokens: dict[str, int] | None = None
) -> Tokenizer:
    """A tokenizer from a `.tiktoken` file; `pattern` is gpt2, cl100k, o200k or a regex.

    A published vocabulary (r50k_base, p50k_base, cl100k_base, o200k_base, recognised by its
    content) gets tiktoken's pattern and special tokens; `pattern` replaces the pattern and
    `special_tokens` add to (or renumber) the special tokens. Any other file needs `pattern`.

    >>> tok = bpe_core.from_tiktoken("cl100k_base.tiktoken")
    >>> tok = bpe_core.from_tiktoken("mine.tiktoken", "cl100k", {"<|endoftext|>": 100257})
    """
    return Tokenizer(tiktoken.read_spec(os.fspath(path), pattern, special_tokens))


def _built(spec: TokenizerSpec, where: str) -> Tokenizer:
    try:
        return Tokenizer(spec)
    except BpeError as error:  # the ids do not fit together
        raise BpeError(f"{where}: {error}") from None


def _built_from_file(spec: TokenizerSpec, where: str) -> Tokenizer:
    """Our own file: a field of the wrong shape that the field checks let through is reported as
    a malformed file, never a traceback."""
    try:
        return _built(spec, where)
    except (KeyError, TypeError, ValueError) as error:
        raise BpeError(f"{where}: malformed tokenizer file ({type(error).__name__}: {error})") from error
