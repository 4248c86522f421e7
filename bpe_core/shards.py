"""Encoding a corpus to token shards: one binary file of ids per input file, plus an index.

A shard holds the ids of its input's documents back to back (each followed by the end-of-
document token when one is given), as little-endian uint16 or uint32. `index.json` lists the
shards in input order with their input, documents and tokens, so the shards concatenated in that
order are what encoding the inputs in one run gives. When the documents are named records
(FASTA/FASTQ), a shard's entry also lists each one's name and token count, so decoding gives
the records back. Each shard and the index are written atomically, so a rerun after a failure
(or a retried Dask task) never leaves a torn file.

A whole set is written into a new directory beside the target (`.tmp-NAME-*`) and renamed into
place at the end, replacing a previous set there; a failure, Ctrl-C or SIGTERM removes the new
directory and leaves the old set (shards and index together) as it was. A directory that holds
anything but a previous shard set is refused, never replaced.
"""

import json
import os
import re
import shutil
import sys
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bpe_core import progress as progress_bars
from bpe_core.config import RunnerConfig
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, current_umask, read_json, reader_files, unwind_on_termination
from bpe_core.plugins import registry

if TYPE_CHECKING:
    from bpe_core.pipeline import Tokenizer

FORMAT = "bpe-core shards"
VERSION = 1
INDEX = "index.json"
DTYPES = {"uint16": 2, "uint32": 4}
_ARRAY_CODES = {"uint16": "H", "uint32": "I"}


def id_bytes(ids: list[int], dtype: str) -> bytes:
    """Ids as little-endian uint16 or uint32."""
    packed = array(_ARRAY_CODES[dtype], ids)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


@dataclass(frozen=True)
class ShardOptions:
    """How ids are written and which special token strings in the text count as special."""

    dtype: str = "uint16"
    eos_id: int | None = None
    allowed_special: Any = frozenset()
    disallowed_special: Any = "all"


def shard_name(index: int, path: str) -> str:
    """The shard file for the index-th input: numbered, so names sort in input order."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(path)) or "input"
    return f"{index:05d}-{stem}.bin"


# (name, tokens) of each document of a shard whose documents are named records; None otherwise
Records = list[tuple[str, int]] | None


def document_name(document: Any) -> str | None:
    """A document's own name: a FASTA/FASTQ record's id; None for documents without one (text)."""
    name = getattr(document, "id", None)
    return name if isinstance(name, str) else None


def reader_for(tokenizer: "Tokenizer") -> Any:
    """A fresh reader as the tokenizer's config describes it."""
    recorded = tokenizer.config.get("input", {})
    options = {key: value for key, value in recorded.items() if key not in ("reader", "paths", "sample")}
    return registry().reader(str(recorded.get("reader", "text")), options)


def encode_shard(
    tokenizer: "Tokenizer", path: str, shard_path: str, options: ShardOptions, workers: int | None
) -> tuple[int, int, Records]:
    """Encode one input file into one shard, piece by piece; returns (documents, tokens, records)."""
    documents = reader_for(tokenizer).documents([path], strict=True)
    return _write(tokenizer, documents, shard_path, options, workers, whole=True)


def encode_range(tokenizer: "Tokenizer", path: str, start: int, step: int, part_path: str, options: ShardOptions) -> tuple[int, int]:
    """Encode the byte range of a file at grid point `start` (see the text plugin's readers) into
    a part of its shard; returns (documents, tokens). For a reader whose ranges are fragments of
    one document per file, no document ends in a part: `join_parts` ends it."""
    reader = reader_for(tokenizer)
    documents = reader.range_documents(path, start, step, tokenizer.safe_cut)
    count, tokens, _ = _write(tokenizer, documents, part_path, options, 1, whole=not getattr(reader, "range_fragments", False))
    return count, tokens


def join_parts(
    part_paths: list[str], shard_path: str, options: ShardOptions, fragments: bool, parts: list[tuple[int, int]]
) -> tuple[int, int, Records]:
    """The shard of a file encoded in ranges: its parts in order (then removed); with `fragments`
    the parts make one document, which ends here. Returns (documents, tokens, None): ranges are
    read from text, whose documents have no names."""
    documents, tokens = sum(part[0] for part in parts), sum(part[1] for part in parts)
    with atomic_output(shard_path, binary=True) as out:
        for part_path in part_paths:
            with open(part_path, "rb") as part:
                while block := part.read(1 << 24):
                    out.write(block)
        if fragments:
            documents = 1
            if options.eos_id is not None:
                out.write(id_bytes([options.eos_id], options.dtype))
                tokens += 1
    for part_path in part_paths:
        os.unlink(part_path)
    return documents, tokens, None


def part_path(shard_path: str, start: int) -> str:
    """Where the range at `start` of a shard's input is encoded before the parts are joined."""
    directory, name = os.path.split(shard_path)
    return os.path.join(directory, f".{name}.part-{start:015d}")


def _write(
    tokenizer: "Tokenizer", documents: Iterable[Any], path: str, options: ShardOptions, workers: int | None, whole: bool
) -> tuple[int, int, Records]:
    """Write the documents' ids to `path`, with the end-of-document token after each when `whole`;
    returns (documents, tokens, records)."""
    names: list[str] | None = []  # None as soon as one document has no name: then none are kept

    def named(items: Iterable[Any]) -> Iterator[Any]:
        nonlocal names
        for document in items:
            name = document_name(document)
            if name is None:
                names = None
            elif names is not None:
                names.append(name)
            yield document

    count = tokens = document_tokens = 0
    lengths: list[int] = []
    encoded = tokenizer.encode_pieces(named(documents), workers, options.allowed_special, options.disallowed_special)
    with atomic_output(path, binary=True) as out:
        for ids, ends in encoded:
            if ends and whole:
                count += 1
                ids = [] if options.eos_id is None else [options.eos_id]
            out.write(id_bytes(ids, options.dtype))
            tokens += len(ids)
            document_tokens += len(ids)
            if ends and whole and names is not None:
                lengths.append(document_tokens)
            if ends:
                document_tokens = 0
    records = list(zip(names, lengths)) if names and whole else None
    return count, tokens, records


def encode_to_shards(
    tokenizer: "Tokenizer",
    paths: Sequence[str],
    directory: str,
    options: ShardOptions,
    runner: RunnerConfig,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Encode each input file into its own shard in `directory` and write the index; returns it."""
    if options.dtype == "uint16" and tokenizer.vocab_size > 1 << 16:
        raise BpeError(f"dtype uint16 holds ids below 65536, but the vocabulary has {tokenizer.vocab_size}; use uint32")
    files = reader_files(reader_for(tokenizer), list(paths))
    target = os.path.normpath(directory)
    staging = _staging_directory(target, directory)
    try:
        with unwind_on_termination():
            index = _encode_set(tokenizer, files, staging, options, runner, progress)
            _swap_in(staging, target, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return index


def _encode_set(
    tokenizer: "Tokenizer", files: list[str], directory: str, options: ShardOptions, runner: RunnerConfig, progress: bool | None
) -> dict[str, Any]:
    """Encode each input file into its own shard in `directory` and write the index; returns it."""
    names = [shard_name(index, path) for index, path in enumerate(files)]
    if runner.kind == "dask":
        from bpe_core.runners.dask import encode_on_dask

        results = encode_on_dask(tokenizer, files, [os.path.join(directory, name) for name in names], options, runner, progress)
    else:
        results = []
        sizes = [os.path.getsize(path) for path in files]
        with progress_bars.bar(progress, "encoding", total=sum(sizes), unit="B", unit_scale=True) as bar:
            for path, name, size in zip(files, names, sizes):
                results.append(encode_shard(tokenizer, path, os.path.join(directory, name), options, runner.workers))
                bar.set_postfix_str(f"{len(results)}/{len(files)} files", refresh=False)
                bar.update(size)
    index = {
        "format": FORMAT,
        "version": VERSION,
        "tokenizer": {"name": tokenizer.name, "vocab_size": tokenizer.vocab_size},
        "dtype": options.dtype,
        "eos_id": options.eos_id,
        "documents": sum(result[0] for result in results),
        "tokens": sum(result[1] for result in results),
        "shards": [
            {"shard": name, "input": path, "documents": documents, "tokens": tokens, **_record_entries(records)}
            for name, path, (documents, tokens, records) in zip(names, files, results)
        ],
    }
    with atomic_output(os.path.join(directory, INDEX)) as out:
        out.write(json.dumps(index, ensure_ascii=False, indent=1) + "\n")
    return index


def _record_entries(records: Records) -> dict[str, Any]:
    """A shard's index keys for named records: each one's name and token count (end token included)."""
    if records is None:
        return {}
    return {"names": [name for name, _ in records], "lengths": [length for _, length in records]}


def read_shards(directory: str, vocab_size: int) -> Iterator[tuple[str, str | None, list[int]]]:
    """(where, name, ids) of each document in a shard directory, in index order.

    Documents are cut by the index's per-record lengths when it has them, else after each
    end-of-document token, else each shard is one stream (text without --eos: decoding the
    pieces gives the concatenation, exactly). `vocab_size` is the decoding tokenizer's: a
    directory encoded with another vocabulary is refused."""
    index_path = os.path.join(directory, INDEX)
    index = read_json(index_path, "shard index")
    if not isinstance(index, dict) or index.get("format") != FORMAT or not isinstance(index.get("shards"), list):
        raise BpeError(f"{index_path} is not a {FORMAT} index (as `bpe encode --format bin -o DIR/` writes it)")
    dtype = index.get("dtype")
    if dtype not in DTYPES:
        raise BpeError(f"{index_path}: dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
    encoded_with = (index.get("tokenizer") or {}).get("vocab_size")
    if encoded_with is not None and encoded_with != vocab_size:
        raise BpeError(f"{directory} was encoded with a vocabulary of {encoded_with} ids; this tokenizer has {vocab_size}")
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
        ids = array(_ARRAY_CODES[dtype])
        ids.frombytes(data)
        if sys.byteorder == "big":
            ids.byteswap()
        names, lengths = entry.get("names"), entry.get("lengths")
        if names is not None and lengths is not None:
            if len(names) != len(lengths) or sum(lengths) != len(ids):
                raise BpeError(f"{index_path}: the lengths of {entry.get('shard')} do not add up to its {len(ids)} ids")
            start = 0
            for number, (name, length) in enumerate(zip(names, lengths), start=1):
                yield f"{shard_path}, record {number} ({name})", str(name), ids[start : start + length].tolist()
                start += length
        elif eos_id is not None:
            start = 0
            for number, end in enumerate((position + 1 for position, token in enumerate(ids) if token == eos_id), start=1):
                yield f"{shard_path}, document {number}", None, ids[start:end].tolist()
                start = end
            if start < len(ids):
                yield f"{shard_path}, after the last end token", None, ids[start:].tolist()
        else:
            yield shard_path, None, ids.tolist()


def _staging_directory(target: str, shown: str) -> str:
    """A new, empty directory beside `target` for the new set, once `target` is known to be
    absent, empty or a previous shard set (which the new set may replace)."""
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise BpeError(f"cannot write shards to {shown}: it is a file, not a directory")
        stranger = _not_a_shard(target)
        if stranger is not None:
            raise BpeError(
                f"cannot write shards to {shown}: it holds {stranger!r}, which no previous `bpe encode` wrote there "
                "(give a new or empty directory, or one with a shard set to replace)"
            )
    parent = os.path.dirname(os.path.abspath(target))
    try:
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(dir=parent, prefix=f".tmp-{os.path.basename(os.path.abspath(target))}-")
        os.chmod(staging, 0o777 & ~current_umask())  # temporary directories are private; outputs are not
        return staging
    except OSError as error:
        raise BpeError(f"cannot create the shard directory {shown}: {error.strerror or error}") from error


def _not_a_shard(directory: str) -> str | None:
    """The first entry of `directory` that is not part of a shard set (its index and the shards
    it lists); None when it is empty or holds exactly such a set."""
    entries = sorted(os.listdir(directory))
    if not entries:
        return None
    listed: set[str] | None = None
    try:
        with open(os.path.join(directory, INDEX), encoding="utf-8") as handle:
            index = json.load(handle)
        if index.get("format") == FORMAT:
            listed = {str(entry["shard"]) for entry in index["shards"]}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # no index, or a damaged one
        listed = None
    if listed is None:
        return INDEX if INDEX in entries else entries[0]
    return next((entry for entry in entries if entry != INDEX and entry not in listed), None)


def _swap_in(staging: str, target: str, shown: str) -> None:
    """Put the finished set in place of `target`; the previous set is removed only once the new
    one is there (if the rename fails, the previous set is put back)."""
    try:
        if not os.path.exists(target):
            os.rename(staging, target)
            return
        retired = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(target)), prefix=".old-")
        os.replace(target, retired)  # a directory may replace an empty one
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(retired, target)
            raise
    except OSError as error:
        raise BpeError(f"cannot replace the shard directory {shown}: {error.strerror or error}") from error
    shutil.rmtree(retired, ignore_errors=True)
