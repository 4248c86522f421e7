"""Tokenizers from files: our own tokenizer file, a Hugging Face `tokenizer.json`, a `.tiktoken`
file. The format modules read a file into a `TokenizerSpec`; this module builds the `Tokenizer`
and names the file when its ids do not fit together. It writes nothing (`Tokenizer.save`,
`to_hf` and `to_tiktoken` do).
"""

import os
from functools import partial
from typing import Any

from bpe_core.errors import BpeError
from bpe_core.files import read_file
from bpe_core.formats import native
from bpe_core.spec import TokenizerSpec
from bpe_core.spec_cache import kept_tokenizer
from bpe_core.tokenizer import Tokenizer


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Read a tokenizer file written by `Tokenizer.save`.

    >>> tok = bpe_core.load("gpt2-32k.json")
    """
    path = os.fspath(path)
    content = read_file(path, native.DESCRIPTION)
    read = partial(native.spec_from_content, content, path)
    return kept_tokenizer(content, "native", (), read, partial(_built_from_file, where=path), Tokenizer.table_image)


def from_dict(data: Any, where: str) -> Tokenizer:
    """A tokenizer from the content of a tokenizer file (`where` names it in errors)."""
    return _built_from_file(native.spec_from_dict(data, where), where=where)


def from_hf(path: str | os.PathLike[str]) -> Tokenizer:
    """A tokenizer from a Hugging Face `tokenizer.json` (byte-level BPE, or the DNA tokenizers
    bpe-core exports); ids stay Hugging Face's.

    >>> tok = bpe_core.from_hf("tokenizer.json")
    """
    from bpe_core.formats import hf  # only this reader needs it

    path = os.fspath(path)
    content = read_file(path, "tokenizer.json")
    read = partial(hf.spec_from_content, content, path)
    return kept_tokenizer(content, "hf", path, read, partial(_built, where=path), Tokenizer.table_image)


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
    from bpe_core.formats import tiktoken  # only this reader needs it

    path = os.fspath(path)
    content = read_file(path, "tiktoken file")
    options = (path, pattern, sorted((special_tokens or {}).items()))  # the path: the spec names it
    read = partial(tiktoken.spec_from_content, content, path, pattern, special_tokens)
    return kept_tokenizer(content, "tiktoken", options, read, _tokenizer, Tokenizer.table_image)


def _tokenizer(spec: TokenizerSpec, table_image: bytes) -> Tokenizer:
    return Tokenizer(spec, table_image=table_image)


def _built(spec: TokenizerSpec, table_image: bytes = b"", *, where: str) -> Tokenizer:
    try:
        return Tokenizer(spec, table_image=table_image)
    except BpeError as error:  # the ids do not fit together
        raise BpeError(f"{where}: {error}") from None


def _built_from_file(spec: TokenizerSpec, table_image: bytes = b"", *, where: str) -> Tokenizer:
    """Our own file: a field of the wrong shape that the field checks let through is reported as
    a malformed file, never a traceback."""
    try:
        return _built(spec, table_image, where=where)
    except (KeyError, TypeError, ValueError) as error:
        raise BpeError(f"{where}: malformed tokenizer file ({type(error).__name__}: {error})") from error
