"""Counts: the unique chunks of a corpus with their 64-bit counts, as an artefact of its own.

Counting is the part of training that grows with the corpus; the merge step needs only what a
Counts holds. So counts can be made anywhere (here, on a Dask cluster, by any program that writes
the format), merged associatively, and trained from with the same result as counting and training
in one run.

A chunk is stored as its base symbol ids (what the engine trains on), packed big-endian in 1, 2
or 3 bytes per symbol by alphabet size, so byte order is symbol order: for a byte-level text
pretokenizer a key is the chunk's UTF-8 bytes. The file is gzip-compressed:

    line 1   JSON header: format, version, the counting config (normalizer, pretokenizer) and its
             SHA-256 (`config_sha256`: of its canonical JSON, `config_digest`), alphabet size,
             symbol width, totals, inputs (path, size, sha256, how each was read), reader measures
    then     one record per unique chunk, sorted by key: count (8 bytes, big-endian),
             key length (4 bytes, big-endian), key

Records are sorted and inputs listed by path, so merging the same files in any order gives the
same bytes. Writing is atomic. The input paths are a record of what was counted: nothing opens
them. Counts made with another counting config than the one trained with are refused, naming
both by digest and the first key that differs (files written before the digest was recorded
are compared by their config alone).
"""

import gzip
import hashlib
import json
import os
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpe_core.errors import ArgumentError, BpeError, WrongTokenizer, path_argument
from bpe_core.files import atomic_output

FORMAT = "bpe-core counts"
VERSION = 1
_RECORD = struct.Struct(">QI")
_MAX_COUNT = (1 << 64) - 1
# Training counts pairs in signed 64 bits. A pair's count is at most the symbols counted (a
# chunk's count times its length, summed), so bounding that sum bounds every pair count.
MAX_TRAINING_SYMBOLS = (1 << 63) - 1


def symbol_width(alphabet_size: int) -> int:
    """Bytes per packed symbol."""
    if alphabet_size <= 1 << 8:
        return 1
    if alphabet_size <= 1 << 16:
        return 2
    return 3


def pack(symbols: Sequence[int], width: int) -> bytes:
    """Symbol ids as a key: `width` big-endian bytes each."""
    if width == 1:
        return bytes(symbols)
    return b"".join(symbol.to_bytes(width, "big") for symbol in symbols)


def unpack(key: bytes, width: int) -> list[int]:
    """The symbol ids a key packs."""
    if width == 1:
        return list(key)
    return [int.from_bytes(key[start : start + width], "big") for start in range(0, len(key), width)]


def config_digest(config: dict[str, Any]) -> str:
    """The SHA-256 (hex) of a counting config as canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(config, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def merge_measures(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """Readers' measures (MIDI: beats, files skipped) and counting reports (`measures["counting"]`)
    add up across parts."""
    merged = dict(total)
    for key, value in part.items():
        if isinstance(value, dict):
            merged[key] = merge_measures(merged.get(key, {}), value)
        else:
            merged[key] = round(merged.get(key, 0) + value, 6) if isinstance(value, (int, float)) else value
    return merged


@dataclass
class Counts:
    """Unique chunks (packed symbol ids) with how often each occurs, and what produced them."""

    config: dict[str, Any]  # what gives a chunk its symbols: normalizer, pretokenizer
    alphabet_size: int
    chunks: dict[bytes, int] = field(default_factory=dict)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # path, size, sha256, input (reader config)
    measures: dict[str, Any] = field(default_factory=dict)

    @property
    def width(self) -> int:
        return symbol_width(self.alphabet_size)

    def total(self) -> int:
        """Chunks counted (with repeats)."""
        return sum(self.chunks.values())

    def symbols(self) -> int:
        """Base symbols counted (with repeats)."""
        width = self.width
        return sum(len(key) // width * count for key, count in self.chunks.items())

    def save(self, path: str) -> None:
        """Write the counts file (atomically): header line, then sorted records, gzip-compressed."""
        header = {
            "format": FORMAT,
            "version": VERSION,
            "config": self.config,
            "config_sha256": config_digest(self.config),
            "alphabet_size": self.alphabet_size,
            "symbol_width": self.width,
            "unique_chunks": len(self.chunks),
            "chunks": self.total(),
            "inputs": sorted(self.inputs, key=lambda item: (item["path"], item["sha256"])),
            "measures": self.measures,
        }
        with (
            atomic_output(path, binary=True) as raw,
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=6, mtime=0) as out,
        ):
            out.write(json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n")
            buffer = bytearray()
            for key in sorted(self.chunks):
                count = self.chunks[key]
                if count > _MAX_COUNT:
                    raise BpeError(f"cannot write {path}: a count of {count} does not fit in 64 bits")
                buffer += _RECORD.pack(count, len(key))
                buffer += key
                if len(buffer) >= 1 << 20:
                    out.write(buffer)
                    buffer.clear()
            out.write(buffer)


def load_counts(path: str | os.PathLike[str]) -> Counts:
    """Read a counts file; anything else (or a damaged one) is a BpeError naming it."""
    path = path_argument(path, "load_counts(path)")
    try:
        with gzip.open(path, "rb") as handle:
            first = handle.readline(1 << 26)
            try:
                header = json.loads(first)
            except (UnicodeDecodeError, json.JSONDecodeError):
                header = None
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                raise BpeError(f"{path} is not a bpe-core counts file (write one with `bpe count`)")
            version = header.get("version")
            if not isinstance(version, int) or version > VERSION:
                raise BpeError(
                    f"{path} has counts format version {version}; this bpe-core reads up to {VERSION}, upgrade it"
                )
            body = handle.read()
    except OSError as error:
        if isinstance(error, gzip.BadGzipFile):
            raise BpeError(f"{path} is not a bpe-core counts file (not gzip-compressed)") from None
        raise BpeError(f"cannot read {path}: {error.strerror or error}") from error
    except (EOFError, zlib.error) as error:
        raise BpeError(f"{path} is damaged (the compressed data ends early or is corrupt: {error})") from None
    try:
        alphabet_size = int(header["alphabet_size"])
        if int(header["symbol_width"]) != symbol_width(alphabet_size):
            raise ValueError(f"symbol_width {header['symbol_width']} does not fit an alphabet of {alphabet_size}")
        recorded = header.get("config_sha256")
        if recorded is not None and recorded != config_digest(dict(header["config"])):
            raise ValueError("its config_sha256 is not the SHA-256 of its config: the header was changed")
        chunks = _records(body, int(header["unique_chunks"]))
        return Counts(
            dict(header["config"]), alphabet_size, chunks, list(header["inputs"]), dict(header.get("measures", {}))
        )
    except (KeyError, TypeError, ValueError) as error:
        raise BpeError(f"{path}: malformed counts file ({error})") from None


def _records(body: bytes, expected: int) -> dict[bytes, int]:
    chunks: dict[bytes, int] = {}
    unpack_record = _RECORD.unpack_from
    size = _RECORD.size
    offset = 0
    end = len(body)
    while offset < end:
        if offset + size > end:
            raise ValueError(f"a record is cut off at byte {offset} of the records")
        count, length = unpack_record(body, offset)
        offset += size
        if offset + length > end:
            raise ValueError(f"a record is cut off at byte {offset} of the records")
        chunks[body[offset : offset + length]] = count
        offset += length
    if len(chunks) != expected:
        raise ValueError(f"{len(chunks)} records where the header says {expected}")
    return chunks


def check_trainable(counts: Counts, alphabet_size: int, origin: str) -> None:
    """Counts a trainer can take: over the pretokenizer's alphabet, with symbols counted (count x
    chunk length, summed) below 2**63 so that no pair count can overflow."""
    if counts.alphabet_size != alphabet_size:
        raise BpeError(
            f"{origin}: alphabet_size is {counts.alphabet_size}, but the pretokenizer has {alphabet_size} base symbols"
        )
    width = counts.width
    symbols = 0
    for key, count in counts.chunks.items():
        if len(key) % width:
            raise BpeError(f"{origin}: a chunk of {len(key)} bytes is not a whole number of {width}-byte symbols")
        symbols += count * (len(key) // width)
        if count > MAX_TRAINING_SYMBOLS or symbols > MAX_TRAINING_SYMBOLS:
            raise BpeError(
                f"{origin}: the counts add up to more than 2**63 - 1 symbols (count x chunk length, summed); "
                "training counts pairs in 64 bits, so this is the largest input it takes"
            )
        if width > 1 and key and max(unpack(key, width)) >= alphabet_size:
            raise BpeError(f"{origin}: a chunk has a symbol id beyond the alphabet of {alphabet_size}")
    if width == 1 and alphabet_size < 256 and any(key and max(key) >= alphabet_size for key in counts.chunks):
        raise BpeError(f"{origin}: a chunk has a symbol id beyond the alphabet of {alphabet_size}")


def check_same_config(expected: dict[str, Any], found: dict[str, Any], origin: str) -> None:
    """Counts combine (and train) only when they split and normalize alike; the error
    (`WrongTokenizer`) names both configs by SHA-256 and the first key that differs."""
    for section in sorted(set(expected) | set(found)):
        if expected.get(section) != found.get(section):
            raise WrongTokenizer(
                f"{origin}: counted with {section} {_show(found.get(section))} (config sha256 "
                f"{config_digest(found)[:12]}...), but this needs {section} {_show(expected.get(section))} "
                f"(config sha256 {config_digest(expected)[:12]}...)"
            )


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def sum_counts(items: Iterable[tuple[str, Counts]], repeats: bool = False) -> Counts:
    """The sum of several counts, each named by where it came from (for errors); the inputs stay
    untouched, so a Dask task rerun after a lost worker sums the same. All must split and normalize
    alike. A file in two of them is an error unless `repeats` (the parts of one run that named a
    file twice)."""
    total: Counts | None = None
    seen: set[tuple[str, str]] = set()
    pairs = list(items)
    for number, pair in enumerate(pairs):
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Counts)):
            shown = type(pair).__name__
            raise ArgumentError(f"sum_counts(items[{number}]): expected a pair (name, Counts), got {shown}")
    for origin, counts in pairs:
        if total is None:
            total = Counts(
                counts.config, counts.alphabet_size, dict(counts.chunks), list(counts.inputs), dict(counts.measures)
            )
        else:
            check_same_config(total.config, counts.config, origin)
            if total.alphabet_size != counts.alphabet_size:
                raise BpeError(f"{origin}: alphabet of {counts.alphabet_size} symbols, expected {total.alphabet_size}")
            for item in counts.inputs:
                if not repeats and (item["path"], item["sha256"]) in seen:
                    raise BpeError(f"{origin}: {item['path']} is counted twice (it is in both counts)")
            chunks = total.chunks
            get = total.chunks.get
            for key, count in counts.chunks.items():
                chunks[key] = get(key, 0) + count
            total.inputs = total.inputs + counts.inputs
            total.measures = merge_measures(total.measures, counts.measures)
        seen.update((item["path"], item["sha256"]) for item in counts.inputs)
    if total is None:
        raise BpeError("no counts to merge")
    return total
