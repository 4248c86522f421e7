"""Tokenizers from files: our own tokenizer file, a Hugging Face `tokenizer.json`, a `.tiktoken`
file. The format modules read a file into a `TokenizerSpec`; this module builds the `Tokenizer`
and names the file when its ids do not fit together. It writes nothing (`Tokenizer.save`,
`to_hf` and `to_tiktoken` do).
"""

import os
from functools import partial
from typing import Any

from bpe_core.errors import BpeError, check_argument, path_argument
from bpe_core.files import parse_json, read_file
from bpe_core.formats import native
from bpe_core.spec import TokenizerSpec
from bpe_core.spec_cache import found_tokenizer, kept_tokenizer, spec_entry
from bpe_core.tokenizer import Tokenizer

TIKTOKEN_SUFFIXES = (".tiktoken", ".tiktoken.gz")  # as formats.suffixes, which this path does not import
HF_FILE = "tokenizer.json"
BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Read any tokenizer file: one `Tokenizer.save` wrote, a Hugging Face `tokenizer.json` (or a
    folder holding one), or a published `.tiktoken` vocabulary (r50k_base, p50k_base,
    cl100k_base, o200k_base), each told from its content as `bpe import` tells them. Another
    `.tiktoken` file needs its pattern: `from_tiktoken(path, pattern)`, or `bpe import`.

    >>> tok = bpe_core.load("gpt2-32k.json")
    >>> tok = bpe_core.load("o200k_base.tiktoken")
    """
    path = path_argument(path, "load(path)")
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, HF_FILE)):
        return from_hf(os.path.join(path, HF_FILE))
    content = read_file(path, native.DESCRIPTION)
    if path.endswith(TIKTOKEN_SUFFIXES) or _tiktoken_lines(content):
        no_pattern = (
            f"give its pattern once, with `bpe import {path} --pattern gpt2|cl100k|o200k|REGEX -o tok.json` "
            "or bpe_core.from_tiktoken(path, pattern)"
        )
        return _from_tiktoken(content, path, None, None, no_pattern)
    if not _native_head(content) and content[:1] == b"{":
        entry = spec_entry(content, "hf", path)
        kept = found_tokenizer(entry, partial(_built, where=path))  # a tokenizer.json read before
        if kept is not None:
            return kept
        data = parse_json(content, path, native.DESCRIPTION)
        if isinstance(data, dict) and data.get("format") != native.FORMAT and isinstance(data.get("model"), dict):
            from bpe_core.formats import hf  # only this reader needs it

            read = partial(hf.spec_from_data, data, path)
            return kept_tokenizer(entry, read, partial(_built, where=path))
    # our own file is not kept: its packed merges read about as fast as a kept spec would
    return _built_from_file(native.spec_from_content(content, path), where=path)


def _native_head(content: bytes) -> bool:
    """Whether a file starts as `Tokenizer.save` writes one: its format first."""
    return content.startswith((b'{"format":"bpe-core"', b'{"format": "bpe-core"', b'{\n  "format": "bpe-core"'))


def _tiktoken_lines(content: bytes) -> bool:
    """Whether a file starts as a `.tiktoken` file does: a base64 token, a space, a rank."""
    token, space, rank = content[:1024].partition(b"\n")[0].partition(b" ")
    return bool(space and token and rank.isdigit() and BASE64.issuperset(token))


def from_dict(data: Any, where: str) -> Tokenizer:
    """A tokenizer from the content of a tokenizer file (`where` names it in errors)."""
    return _built_from_file(native.spec_from_dict(data, where), where=where)


def from_hf(path: str | os.PathLike[str]) -> Tokenizer:
    """A tokenizer from a Hugging Face `tokenizer.json` (byte-level BPE, or the DNA tokenizers
    bpe-core exports); ids stay Hugging Face's.

    >>> tok = bpe_core.from_hf("tokenizer.json")
    """
    from bpe_core.formats import hf  # only this reader needs it

    path = path_argument(path, "from_hf(path)")
    content = read_file(path, "tokenizer.json")
    read = partial(hf.spec_from_content, content, path)
    return kept_tokenizer(spec_entry(content, "hf", path), read, partial(_built, where=path))


def from_tiktoken(
    path: str | os.PathLike[str], pattern: str | None = None, special_tokens: dict[str, int] | None = None
) -> Tokenizer:
    """A tokenizer from a `.tiktoken` file; `pattern` is gpt2, cl100k, o200k, a published
    vocabulary's name (cl100k_base: its pattern) or a regex.

    A published vocabulary (r50k_base, p50k_base, cl100k_base, o200k_base, recognised by its
    content) gets tiktoken's pattern and special tokens; `pattern` replaces the pattern and
    `special_tokens` add to (or renumber) the special tokens. Any other file needs `pattern`.

    >>> tok = bpe_core.from_tiktoken("cl100k_base.tiktoken")
    >>> tok = bpe_core.from_tiktoken("mine.tiktoken", "cl100k", {"<|endoftext|>": 100257})
    """
    path = path_argument(path, "from_tiktoken(path)")
    if pattern is not None:
        check_argument(pattern, str, "from_tiktoken(pattern)", "gpt2, cl100k, o200k or a regex (str)")
    if special_tokens is not None:
        check_argument(special_tokens, dict, "from_tiktoken(special_tokens)", "a dict of token strings to ids")
        for token, token_id in special_tokens.items():
            check_argument(token, str, "from_tiktoken(special_tokens)", "token strings (str) as keys")
            check_argument(token_id, int, f"from_tiktoken(special_tokens[{token!r}])", "an id (int)")
    return _from_tiktoken(read_file(path, "tiktoken file"), path, pattern, special_tokens)


def _from_tiktoken(
    content: bytes, path: str, pattern: str | None, special_tokens: dict[str, int] | None, no_pattern: str = ""
) -> Tokenizer:
    from bpe_core.formats import published as published_merges  # only this reader needs them
    from bpe_core.formats import tiktoken

    options = (path, pattern, sorted((special_tokens or {}).items()))  # the path: the spec names it
    unpacked, digest, published = tiktoken.recognised(content, path)
    read = partial(tiktoken.spec_from_content, unpacked, path, published, pattern, special_tokens, no_pattern)
    if published is not None and published_merges.ships(published.name):  # nothing to recover, nothing to keep
        # the shipped ids and the published special tokens are known to fit (tests/test_published.py)
        return _tokenizer(read(), not special_tokens)
    return kept_tokenizer(spec_entry(unpacked, "tiktoken", options, digest), read, _tokenizer)


def _tokenizer(spec: TokenizerSpec, checked: bool) -> Tokenizer:
    return Tokenizer(spec, checked=checked)


def _built(spec: TokenizerSpec, checked: bool = False, *, where: str) -> Tokenizer:
    try:
        return Tokenizer(spec, checked=checked)
    except BpeError as error:  # the ids do not fit together
        raise BpeError(f"{where}: {error}") from None


def _built_from_file(spec: TokenizerSpec, *, where: str) -> Tokenizer:
    """Our own file: a field of the wrong shape that the field checks let through is reported as
    a malformed file, never a traceback."""
    try:
        return _built(spec, where=where)
    except (KeyError, TypeError, ValueError) as error:
        raise BpeError(f"{where}: malformed tokenizer file ({type(error).__name__}: {error})") from error
