"""Files of token ids, and reading them back: little-endian uint16/uint32 (`--format bin`), lines
of decimal ids (`--format ids`, a document a line, `NAME<TAB>ids` with `--names`), and shard
directories (`index.json` and one `.bin` per input, as `bpe encode -o DIR/` writes them).

The readers name the file and line (or shard and record) of anything that is not an id. A
shard index is data, not instructions: each shard it names must be a file inside its directory
(`files.contained_path`) holding exactly the ids the index counts for it. A shard index and an
ids file written with `--names` (its first line, `#bpe-core ids {...}`) record the tokenizer
that made them, by name and content SHA-256 (`fingerprint.tokenizer_digest`); reading them
with another is a `WrongTokenizer` error unless forced. Files written before the digest was
recorded are checked by vocabulary size only.

This module writes nothing (`corpus.shards` does) and knows no tokenizer (its callers give its
`TokenizerMark`): ids are checked by decoding.
"""

import json
import os
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bpe_core.errors import BpeError, WrongTokenizer

FORMAT = "bpe-core shards"
INDEX = "index.json"
DTYPES = {"uint16": 2, "uint32": 4}
ARRAY_CODES = {"uint16": "H", "uint32": "I"}
# An id has at most this many digits: more is no id of any vocabulary (and Python refuses to
# convert over 4,300 digits), so such a token is echoed shortened.
ID_DIGITS = 19
# the first line of an ids file written with --names: this, then the header's JSON
IDS_HEADER = "#bpe-core ids "
FORCE_HINT = "pass --force to decode anyway"


@dataclass(frozen=True)
class TokenizerMark:
    """A tokenizer as ids files record it: its name, its vocabulary size and its content SHA-256
    (`fingerprint.tokenizer_digest`), which `digest` computes when it is first needed (decoding
    an ids file that records none, the common case, never pays for it)."""

    name: str
    vocab_size: int
    digest: Callable[[], str]

    @cached_property
    def sha256(self) -> str:
        """The content SHA-256 (hex); empty when unknown."""
        return self.digest()

    def recorded(self) -> dict[str, Any]:
        """The `tokenizer` object of a shard index or an ids file's header."""
        return {"name": self.name, "vocab_size": self.vocab_size, "sha256": self.sha256}


def ids_header(mark: TokenizerMark) -> str:
    """The first line of an ids file written with --names: which tokenizer made it."""
    return IDS_HEADER + json.dumps({"tokenizer": mark.recorded()}, ensure_ascii=False) + "\n"


def check_made_by(source: str, recorded: Any, reading: TokenizerMark, force: bool, hint: str = FORCE_HINT) -> None:
    """Refuse ids that `recorded` (a shard index's or ids file's `tokenizer` object) says another
    tokenizer made than `reading`, unless `force`: by SHA-256 when both have one, else (a file
    written before digests were recorded) by vocabulary size. The error names both and says
    `hint` (how to read them anyway)."""
    if force or not isinstance(recorded, dict):
        return
    digest = recorded.get("sha256")
    name = recorded.get("name")
    if isinstance(digest, str) and reading.sha256 and digest != reading.sha256:
        made_by = _shown(name) if isinstance(name, str) else "another tokenizer"
        size = recorded.get("vocab_size")
        ids = f", {size} ids" if isinstance(size, int) and not isinstance(size, bool) else ""
        raise WrongTokenizer(
            f"{source} was encoded with {made_by} (sha256 {_shown(digest[:12])}...{ids}), not {_shown(reading.name)} "
            f"(sha256 {reading.sha256[:12]}..., {reading.vocab_size} ids): {hint}"
        )
    size = recorded.get("vocab_size")
    if (not isinstance(digest, str) or not reading.sha256) and isinstance(size, int) and size != reading.vocab_size:
        raise WrongTokenizer(
            f"{source} was encoded with a vocabulary of {size} ids; {_shown(reading.name)} has "
            f"{reading.vocab_size}: {hint}"
        )


def _shown(text: str) -> str:
    """A name from a file, cut short and with no line breaks (a hostile index may hold anything)."""
    text = text if len(text) <= 60 else text[:40] + "..."
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def id_bytes(ids: list[int], dtype: str) -> bytes:
    """Ids as little-endian uint16 or uint32."""
    packed = array(ARRAY_CODES[dtype], ids)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def check_dtype(dtype: str, vocab_size: int, option: str = "dtype") -> None:
    """uint16 holds ids below 65536: refuse it for a larger vocabulary (naming the option)."""
    if dtype == "uint16" and vocab_size > 1 << 16:
        raise BpeError(f"{option} uint16 holds ids below 65536, but the vocabulary has {vocab_size}; use uint32")


def narrowest_dtype(vocab_size: int) -> str:
    """The narrowest id width that holds every id of a vocabulary."""
    return "uint16" if vocab_size <= 1 << 16 else "uint32"


def documents_in(
    path: str | None, reading: TokenizerMark, binary: bool, dtype: str, force: bool = False
) -> Iterator[tuple[str, str | None, Sequence[int]]]:
    """(where, name, ids) per document: of a shard directory (its index names the records), or of
    an ids file (`binary`: one document of `dtype` ids); None or "-" is standard input. Binary ids
    come as an `array` of their dtype, as the file holds them. Ids that another tokenizer than
    `reading` made (by their index, the index beside a shard read alone, or their header) are
    refused unless `force`."""
    if path is not None and os.path.isdir(path):
        return read_shards(path, reading.vocab_size, reading, force)
    if binary and path not in (None, "-"):
        _check_listed_shard(path, reading, force)
    lines = read_ids(path or "-", binary, dtype, reading, force)
    return ((f"{path or '-'}, line {line_number}", name, ids) for line_number, name, ids in lines)


def _check_listed_shard(path: str, reading: TokenizerMark, force: bool) -> None:
    """A `.bin` file decoded alone that the shard index beside it lists: made by `reading`, and
    exactly as long as the index says. An index that does not list it says nothing about it."""
    from bpe_core.files import read_json  # imported on use, as in read_shard_index

    index_path = os.path.join(os.path.dirname(os.path.abspath(path)), INDEX)
    if not os.path.isfile(index_path):
        return
    index = read_json(index_path, "shard index")
    if not isinstance(index, dict) or index.get("format") != FORMAT or not isinstance(index.get("shards"), list):
        return
    name = os.path.basename(path)
    entry = next((item for item in index["shards"] if isinstance(item, dict) and item.get("shard") == name), None)
    if entry is None:
        return
    check_made_by(path, index.get("tokenizer"), reading, force)
    tokens = entry.get("tokens")
    width = DTYPES.get(str(index.get("dtype")))
    try:
        size = os.path.getsize(path)
    except OSError:
        return  # reading it says why
    if isinstance(tokens, int) and width is not None and size != tokens * width:
        raise BpeError(f"{path}: {size} bytes, but {index_path} says {tokens} ids of {index['dtype']}")


def read_ids(
    source: str, binary: bool, dtype: str, reading: TokenizerMark | None = None, force: bool = False
) -> Iterator[tuple[int, str | None, Sequence[int]]]:
    """(line number, name, ids) per document in an ids file (a bin file is one document); a line
    `NAME<TAB>ids` (`bpe encode --names`) names its document. A first line `#bpe-core ids {...}`
    (no tab) is the header `--names` writes: the tokenizer it records is checked against
    `reading` (see `check_made_by`)."""
    if binary:
        width = DTYPES[dtype]
        try:
            data = sys.stdin.buffer.read() if source == "-" else open(source, "rb").read()
        except OSError as error:
            raise BpeError(f"cannot read {source}: {error.strerror or error}") from error
        if len(data) % width:
            raise BpeError(f"{source}: {len(data)} bytes is not a whole number of {dtype} ids")
        yield 1, None, _little_endian_ids(data, dtype)
        return
    try:
        handle = sys.stdin.buffer if source == "-" else open(source, "rb")
    except OSError as error:
        raise BpeError(f"cannot read {source}: {error.strerror or error}") from error
    with handle:
        for line_number, line in enumerate(handle, start=1):
            if line_number == 1 and line.startswith(IDS_HEADER.encode()) and b"\t" not in line:
                _check_header(line, source, reading, force)
                continue
            name, tab, rest = line.rpartition(b"\t")  # ids hold no tab; a whole header may
            yield (
                line_number,
                (_record_name(name, source, line_number) if tab else None),
                [_token_id(token, source, line_number) for token in (rest if tab else line).split()],
            )


def _check_header(line: bytes, source: str, reading: TokenizerMark | None, force: bool) -> None:
    """The header line of an ids file written with --names, checked against the reading tokenizer."""
    try:
        header = json.loads(line[len(IDS_HEADER) :].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BpeError(f"{source}, line 1: a damaged header (as `bpe encode --names` writes it)") from None
    if reading is not None and isinstance(header, dict):
        check_made_by(source, header.get("tokenizer"), reading, force)


def _record_name(name: bytes, source: str, line_number: int) -> str:
    """The record name before a tab (`bpe encode --names`)."""
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        raise BpeError(f"{source}, line {line_number}: the record name is not UTF-8 text") from None


def _token_id(token: bytes, source: str, line_number: int) -> int:
    """One id of an ids file: ASCII digits only (no sign, no `_`, no other script's digits)."""
    if token.isdigit() and len(token) <= ID_DIGITS:  # bytes.isdigit() is ASCII digits only
        return int(token)
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        raw = token if len(token) <= 40 else token[:20] + b"..." + token[-8:]
        raise BpeError(
            f"{source}, line {line_number}: {raw!r} is not a token id (the file is not UTF-8 text)"
        ) from None
    shown = repr(text if len(text) <= 40 else text[:20] + "..." + text[-8:])
    if token.isdigit():
        raise BpeError(f"{source}, line {line_number}: {shown} ({len(token)} digits) is too large for a token id")
    raise BpeError(f"{source}, line {line_number}: {shown} is not a token id (ids are ASCII digits 0-9)")


def read_shard_index(directory: str) -> tuple[str, dict[str, Any]]:
    """The path and contents of a shard directory's index, checked: its format, a list of
    shards and a known dtype."""
    # imported on use: the command line's grammar reads DTYPES, and `bpe --help` needs no more
    from bpe_core.files import read_json

    index_path = os.path.join(directory, INDEX)
    index = read_json(index_path, "shard index")
    if not isinstance(index, dict) or index.get("format") != FORMAT or not isinstance(index.get("shards"), list):
        raise BpeError(f"{index_path} is not a {FORMAT} index (as `bpe encode --format bin -o DIR/` writes it)")
    if index.get("dtype") not in DTYPES:
        raise BpeError(f"{index_path}: dtype {index.get('dtype')!r}; allowed: {', '.join(DTYPES)}")
    eos_id = index.get("eos_id")
    if eos_id is not None and (isinstance(eos_id, bool) or not isinstance(eos_id, int) or eos_id < 0):
        raise BpeError(f"{index_path}: eos_id {eos_id!r} is not a token id")
    return index_path, index


@dataclass(frozen=True)
class Shard:
    """One shard an index lists, checked: its path inside the directory, its entry, and its ids
    (the file holds exactly this many of the index's dtype)."""

    path: str
    entry: dict[str, Any]
    tokens: int


def shard_list(directory: str, index_path: str, index: dict[str, Any]) -> list[Shard]:
    """The shards `index` lists, each a regular file inside `directory` (`files.contained_path`)
    whose size is exactly its `tokens` ids, with `lengths` (and `names`) that fit them; anything
    else is a BpeError naming the index and the entry."""
    from bpe_core.files import contained_path  # imported on use, as in read_shard_index

    width = DTYPES[index["dtype"]]
    shards: list[Shard] = []
    for number, entry in enumerate(index["shards"], start=1):
        if not isinstance(entry, dict):
            raise BpeError(f"{index_path}: shard {number} is not an object with a shard name")
        path = contained_path(directory, entry.get("shard"), index_path, f"shard {number}")
        tokens = entry.get("tokens")
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise BpeError(f"{index_path}: shard {number} ({entry['shard']}) has no token count (tokens)")
        try:
            status = os.stat(path)
        except OSError as error:
            raise BpeError(f"cannot read {path}: {error.strerror or error}") from None
        if not os.path.isfile(path):
            raise BpeError(f"cannot read {path}: it is not a regular file")
        if status.st_size != tokens * width:
            size = f"{status.st_size // width} ids" if status.st_size % width == 0 else f"{status.st_size} bytes"
            raise BpeError(
                f"{path}: {size}, but {index_path} says {tokens} ids of {index['dtype']}; "
                "the shard set is damaged (encode it again)"
            )
        lengths = entry.get("lengths")
        names = entry.get("names")
        if lengths is not None and (
            not isinstance(lengths, list)
            or not all(isinstance(length, int) and not isinstance(length, bool) and length >= 0 for length in lengths)
            or sum(lengths) != tokens
            or (names is not None and (not isinstance(names, list) or len(names) != len(lengths)))
        ):
            raise BpeError(f"{index_path}: the lengths of {entry['shard']} do not add up to its {tokens} ids")
        shards.append(Shard(path, entry, tokens))
    return shards


def read_shards(
    directory: str, vocab_size: int, reading: TokenizerMark | None = None, force: bool = False
) -> Iterator[tuple[str, str | None, "array[int]"]]:
    """(where, name, ids) of each document in a shard directory, in index order; the ids as an
    `array` of the index's dtype (slices of the shard's, made without a Python int per id).

    Documents are cut by the index's per-document lengths when it has them (named records,
    windows), else after each
    end-of-document token, else each shard is one stream (text without --eos: decoding the
    pieces gives the concatenation, exactly). `reading` is the decoding tokenizer (else one of
    `vocab_size` ids, known by that alone): a directory another tokenizer encoded is refused
    unless `force` (see `check_made_by`). Every shard is checked (`shard_list`) before any is read."""
    index_path, index = read_shard_index(directory)
    dtype = index["dtype"]
    check_made_by(directory, index.get("tokenizer"), reading or TokenizerMark("this tokenizer", vocab_size, str), force)
    shards = shard_list(directory, index_path, index)
    eos_id = index.get("eos_id")
    for shard in shards:
        shard_path = shard.path
        entry = shard.entry
        try:
            with open(shard_path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise BpeError(f"cannot read {shard_path}: {error.strerror or error}") from error
        if len(data) != shard.tokens * DTYPES[dtype]:  # it changed since it was checked
            raise BpeError(f"{shard_path}: {len(data)} bytes, but {index_path} says {shard.tokens} ids of {dtype}")
        ids = _little_endian_ids(data, dtype)
        names = entry.get("names")
        lengths = entry.get("lengths")
        if lengths is not None:  # named records, or windows (`--max-length`)
            start = 0
            for number, length in enumerate(lengths, start=1):
                if names is None:
                    yield f"{shard_path}, document {number}", None, ids[start : start + length]
                else:
                    name = names[number - 1]
                    yield f"{shard_path}, record {number} ({name})", str(name), ids[start : start + length]
                start += length
        elif eos_id is not None:
            end = 0
            for number, (start, end) in enumerate(_ends_after(ids, eos_id), start=1):
                yield f"{shard_path}, document {number}", None, ids[start:end]
            if end < len(ids):
                yield f"{shard_path}, after the last end token", None, ids[end:]
        else:
            yield shard_path, None, ids


def _little_endian_ids(data: bytes, dtype: str) -> "array[int]":
    """Little-endian ids of `dtype` as an array of that width."""
    ids = array(ARRAY_CODES[dtype])
    ids.frombytes(data)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids


def _ends_after(ids: "array[int]", eos_id: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each stretch of ids that ends with `eos_id`, found by the array's own search."""
    start = 0
    while True:
        try:
            end = ids.index(eos_id, start) + 1
        except ValueError:
            return
        yield start, end
        start = end
