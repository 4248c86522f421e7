"""Files of token ids, and reading them back: little-endian uint16/uint32 (`--format bin`), lines
of decimal ids (`--format ids`, a document a line, `NAME<TAB>ids` with `--names`), and shard
directories (`index.json` and one `.bin` per input, as `bpe encode -o DIR/` writes them).

The readers name the file and line (or shard and record) of anything that is not an id. This
module writes nothing (`corpus.shards` does) and knows no tokenizer: ids are checked by decoding.
"""

import os
import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from bpe_core.errors import BpeError

FORMAT = "bpe-core shards"
INDEX = "index.json"
DTYPES = {"uint16": 2, "uint32": 4}
ARRAY_CODES = {"uint16": "H", "uint32": "I"}
# An id has at most this many digits: more is no id of any vocabulary (and Python refuses to
# convert over 4,300 digits), so such a token is echoed shortened.
ID_DIGITS = 19


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
    path: str | None, vocab_size: int, binary: bool, dtype: str
) -> Iterator[tuple[str, str | None, Sequence[int]]]:
    """(where, name, ids) per document: of a shard directory (its index names the records), or of
    an ids file (`binary`: one document of `dtype` ids); None or "-" is standard input. Binary ids
    come as an `array` of their dtype, as the file holds them."""
    if path is not None and os.path.isdir(path):
        return read_shards(path, vocab_size)
    lines = read_ids(path or "-", binary, dtype)
    return ((f"{path or '-'}, line {line_number}", name, ids) for line_number, name, ids in lines)


def read_ids(source: str, binary: bool, dtype: str) -> Iterator[tuple[int, str | None, Sequence[int]]]:
    """(line number, name, ids) per document in an ids file (a bin file is one document); a line
    `NAME<TAB>ids` (`bpe encode --names`) names its document."""
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
            name, tab, rest = line.partition(b"\t")
            yield (
                line_number,
                (_record_name(name, source, line_number) if tab else None),
                [_token_id(token, source, line_number) for token in (rest if tab else line).split()],
            )


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
    return index_path, index


def read_shards(directory: str, vocab_size: int) -> Iterator[tuple[str, str | None, "array[int]"]]:
    """(where, name, ids) of each document in a shard directory, in index order; the ids as an
    `array` of the index's dtype (slices of the shard's, made without a Python int per id).

    Documents are cut by the index's per-document lengths when it has them (named records,
    windows), else after each
    end-of-document token, else each shard is one stream (text without --eos: decoding the
    pieces gives the concatenation, exactly). `vocab_size` is the decoding tokenizer's: a
    directory encoded with another vocabulary is refused."""
    index_path, index = read_shard_index(directory)
    dtype = index["dtype"]
    encoded_with = (index.get("tokenizer") or {}).get("vocab_size")
    if encoded_with is not None and encoded_with != vocab_size:
        raise BpeError(
            f"{directory} was encoded with a vocabulary of {encoded_with} ids; this tokenizer has {vocab_size}"
        )
    eos_id = index.get("eos_id")
    width = DTYPES[dtype]
    for entry in index["shards"]:
        shard_path = os.path.join(directory, str(entry.get("shard")))
        try:
            with open(shard_path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise BpeError(f"cannot read {shard_path}: {error.strerror or error}") from error
        if len(data) % width:
            raise BpeError(f"{shard_path}: {len(data)} bytes is not a whole number of {dtype} ids")
        ids = _little_endian_ids(data, dtype)
        names = entry.get("names")
        lengths = entry.get("lengths")
        if lengths is not None:  # named records, or windows (`--max-length`)
            if (names is not None and len(names) != len(lengths)) or sum(lengths) != len(ids):
                raise BpeError(f"{index_path}: the lengths of {entry.get('shard')} do not add up to its {len(ids)} ids")
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
