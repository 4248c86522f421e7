"""Encoding a corpus to ids: to one ids file (`bpe encode -o FILE`), or to token shards, one
binary file of ids per input file plus an index (`bpe encode -o DIR/`), on the local runner or a
Dask cluster (chosen here; the dask runner runs this module's tasks).

A shard holds the ids of its input's documents back to back (each followed by the end-of-
document token when one is given), as little-endian uint16 or uint32. `index.json` lists the
shards in input order with their input, documents and tokens, so the shards concatenated in that
order are what encoding the inputs in one run gives; and the tokenizer that made them, by name,
vocabulary size and content SHA-256 (`fingerprint.tokenizer_digest`), which reading checks.
When the documents are named records (FASTA/FASTQ), a shard's entry also lists each one's name
and token count, so decoding gives the records back. Each shard and the index are written
atomically, so a rerun after a failure (or a retried Dask task) never leaves a torn file.

A whole set is written into a new directory beside the target (`.tmp-NAME-*`) and put in its
place at the end (`files.staged_directory`), replacing a previous set there; a failure, Ctrl-C or
SIGTERM removes the new directory and leaves the old set (shards and index together) as it was,
and of two runs into one directory the later one's set is there whole. A directory that holds
anything but a previous shard set is refused, never replaced. Reading ids back is `idfiles`.
"""

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import IO, Any

from bpe_core import progress as progress_bars
from bpe_core.config import RunnerConfig
from bpe_core.contract import ReadsRanges, document_name
from bpe_core.corpus.streaming import corpus_reader, encode_pieces, prepared_documents, text_cutter
from bpe_core.corpus.training_windows import WindowReport, merged_summary, window_name, window_pieces
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, reader_files, staged_directory
from bpe_core.fingerprint import tokenizer_digest
from bpe_core.formats import native
from bpe_core.idfiles import FORMAT, INDEX, TokenizerMark, check_dtype, id_bytes
from bpe_core.loading import from_dict
from bpe_core.runners import dask
from bpe_core.tokenizer import Tokenizer

VERSION = 1


@dataclass(frozen=True)
class ShardOptions:
    """How ids are written and which special token strings in the text count as special."""

    dtype: str = "uint16"
    eos_id: int | None = None
    allowed_special: Any = frozenset()
    disallowed_special: Any = "all"
    max_length: int | None = None  # cut each document into windows of at most this many tokens
    bos_id: int | None = None  # a special token at the start of each document (and window)
    augment: dict[str, float] | None = None  # augmented copies after each document (`prepared_documents`)
    strict: bool = False  # what encoding loses of a document is an error, not a warning
    keep_description: bool = False  # records named by their whole headers, not their ids


def shard_name(index: int, path: str) -> str:
    """The shard file for the index-th input: numbered, so names sort in input order."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(path)) or "input"
    return f"{index:05d}-{stem}.bin"


# a shard's own keys in the index beyond its name, input, documents and tokens: `names` and
# `lengths` (each document's tokens) for named records or windows, `windows` (a WindowReport's summary)
Entries = dict[str, Any]


def encode_shard(
    tokenizer: Tokenizer, path: str, shard_path: str, options: ShardOptions, workers: int | None
) -> tuple[int, int, Entries]:
    """Encode one input file into one shard, piece by piece; returns (documents, tokens, entries)."""
    documents = corpus_reader(tokenizer).documents([path], strict=True)
    prepared = prepared_documents(tokenizer.pretokenizer, documents, options.augment, options.strict)
    return _write(tokenizer, prepared, shard_path, options, workers, whole=True)


def encode_range(
    tokenizer: Tokenizer, path: str, start: int, step: int, part_path: str, options: ShardOptions
) -> tuple[int, int]:
    """Encode the byte range of a file at grid point `start` (see the text plugin's readers) into
    a part of its shard; returns (documents, tokens). For a reader whose ranges are fragments of
    one document per file, no document ends in a part: `join_parts` ends it."""
    reader = corpus_reader(tokenizer)
    assert isinstance(reader, ReadsRanges)  # only such readers' files are split into ranges
    documents = reader.range_documents(path, start, step, text_cutter(tokenizer))
    count, tokens, _ = _write(tokenizer, documents, part_path, options, 1, whole=not reader.range_fragments)
    return count, tokens


def join_parts(
    part_paths: list[str], shard_path: str, options: ShardOptions, fragments: bool, parts: list[tuple[int, int]]
) -> tuple[int, int, Entries]:
    """The shard of a file encoded in ranges: its parts in order (then removed); with `fragments`
    the parts make one document, which ends here. Returns (documents, tokens, no entries): ranges
    are read from text, whose documents have no names, and never windowed."""
    documents = sum(part[0] for part in parts)
    tokens = sum(part[1] for part in parts)
    with atomic_output(shard_path, binary=True) as out:
        if fragments and options.bos_id is not None:
            out.write(id_bytes([options.bos_id], options.dtype))
            tokens += 1
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
    return documents, tokens, {}


def part_path(shard_path: str, start: int) -> str:
    """Where the range at `start` of a shard's input is encoded before the parts are joined."""
    directory, name = os.path.split(shard_path)
    return os.path.join(directory, f".{name}.part-{start:015d}")


def _write(
    tokenizer: Tokenizer, documents: Iterable[Any], path: str, options: ShardOptions, workers: int | None, whole: bool
) -> tuple[int, int, Entries]:
    """Write the documents' ids to `path`, with the end-of-document token after each when `whole`;
    returns (documents, tokens, entries)."""
    names: list[str] | None = []  # None as soon as one document has no name: then none are kept

    def named(items: Iterable[Any]) -> Iterator[Any]:
        nonlocal names
        for document in items:
            name = document_name(document, options.keep_description)
            if name is None:
                names = None
            elif names is not None:
                names.append(name)
            yield document

    windows = WindowReport(options.max_length) if options.max_length is not None else None
    with atomic_output(path, binary=True) as out:
        count, tokens, lengths = write_ids(
            tokenizer, named(documents), out, IdsFormat("bin"), options, workers, whole=whole, windows=windows
        )
    entries: Entries = {}
    if names and whole:
        if windows is not None:
            names = [window_name(names[document], number, cut) for document, number, cut in windows.numbers]
        entries = {"names": names, "lengths": lengths}
    if windows is not None:
        entries = {"lengths": lengths, **entries, "windows": windows.summary()}
    return count, tokens, entries


def encode_to_shards(
    tokenizer: Tokenizer,
    paths: Sequence[str],
    directory: str,
    options: ShardOptions,
    runner: RunnerConfig,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Encode each input file into its own shard in `directory` and write the index; returns it."""
    check_dtype(options.dtype, tokenizer.vocab_size)
    files = reader_files(corpus_reader(tokenizer), list(paths))
    target = os.path.normpath(directory)
    _check_target(target, directory)
    with staged_directory(target, directory) as staging:
        return _encode_set(tokenizer, files, staging, options, runner, progress)


def _encode_set(
    tokenizer: Tokenizer,
    files: list[str],
    directory: str,
    options: ShardOptions,
    runner: RunnerConfig,
    progress: bool | None,
) -> dict[str, Any]:
    """Encode each input file into its own shard in `directory` and write the index; returns it."""
    names = [shard_name(index, path) for index, path in enumerate(files)]
    if runner.kind == "dask":
        shard_paths = [os.path.join(directory, name) for name in names]
        data = native.to_dict(tokenizer)
        results = dask.encode_on_dask(
            data,
            corpus_reader(tokenizer),
            files,
            shard_paths,
            options,
            runner,
            progress,
            SHARD_TASKS,
            whole_files=options.max_length is not None,  # a window may not end where a range does
            components=[
                ("pretokenizer", tokenizer.spec.pretokenizer.name),
                ("reader", str(tokenizer.config.get("input", {}).get("reader", "text"))),
                *(("normalizer", item.name) for item in tokenizer.spec.normalizers),
            ],
        )
    else:
        results = []
        sizes = [os.path.getsize(path) for path in files]
        with progress_bars.bar(progress, "encoding", total=sum(sizes), unit="B", unit_scale=True) as bar:
            for path, name, size in zip(files, names, sizes):
                results.append(encode_shard(tokenizer, path, os.path.join(directory, name), options, runner.workers))
                bar.set_postfix_str(f"{len(results)}/{len(files)} files", refresh=False)
                bar.update(size)
    made_by = TokenizerMark(tokenizer.name, tokenizer.vocab_size, partial(tokenizer_digest, tokenizer))
    index = {
        "format": FORMAT,
        "version": VERSION,
        "tokenizer": made_by.recorded(),
        "dtype": options.dtype,
        "eos_id": options.eos_id,
        **({"bos_id": options.bos_id} if options.bos_id is not None else {}),
        **({"augment": options.augment} if options.augment else {}),
        "documents": sum(result[0] for result in results),
        "tokens": sum(result[1] for result in results),
        "shards": [
            {"shard": name, "input": path, "documents": documents, "tokens": tokens, **entries}
            for name, path, (documents, tokens, entries) in zip(names, files, results)
        ],
    }
    if options.max_length is not None:
        index["windows"] = merged_summary(result[2]["windows"] for result in results)
    with atomic_output(os.path.join(directory, INDEX)) as out:
        out.write(json.dumps(index, ensure_ascii=False, indent=1) + "\n")
    return index


def _check_target(target: str, shown: str) -> None:
    """`target` may take a new set: absent, empty or a previous shard set (which it replaces)."""
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise BpeError(f"cannot write shards to {shown}: it is a file, not a directory")
        stranger = _not_a_shard(target)
        if stranger is not None:
            raise BpeError(
                f"cannot write shards to {shown}: it holds {stranger!r}, which no previous `bpe encode` wrote there "
                "(give a new or empty directory, or one with a shard set to replace)"
            )


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


# encoding on a Dask worker: the tasks the dask runner submits, by name ----------------------------

_worker_tokenizers: dict[str, Tokenizer] = {}


def _tokenizer_on_worker(data: dict[str, Any], digest: str) -> Tokenizer:
    """The tokenizer (built once per worker process and kept: its chunk cache stays warm)."""
    tokenizer = _worker_tokenizers.get(digest)
    if tokenizer is None:
        tokenizer = _worker_tokenizers[digest] = from_dict(data, f"tokenizer {data.get('name')}")
    return tokenizer


def encode_file_task(
    data: dict[str, Any], digest: str, path: str, shard_path: str, options: ShardOptions
) -> tuple[int, int, Entries]:
    return encode_shard(_tokenizer_on_worker(data, digest), path, shard_path, options, 1)


def encode_range_task(
    data: dict[str, Any], digest: str, path: str, start: int, step: int, part: str, options: ShardOptions
) -> tuple[int, int]:
    return encode_range(_tokenizer_on_worker(data, digest), path, start, step, part, options)


SHARD_TASKS = dask.ShardTasks(whole=encode_file_task, part=encode_range_task, join=join_parts, part_path=part_path)


# one ids file ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdsFormat:
    """How ids are written to one file: `ids` (decimal ids, a document a line), `tokens` (each
    token's text), or `bin` (ids of `ShardOptions.dtype` back to back); `names` puts each record's
    name and a tab before its line."""

    format: str = "ids"
    names: bool = False


def write_ids(
    tokenizer: Tokenizer,
    documents: Iterable[Any],
    out: IO[Any],
    written: IdsFormat,
    options: ShardOptions,
    workers: int | None,
    bar: Any = None,
    whole: bool = True,
    windows: WindowReport | None = None,
) -> tuple[int, int, list[int]]:
    """Encode the documents into `out` as `written` says, the end-of-document token after each
    (unless not `whole`: a range's part, whose last document goes on in the next part), moving the
    progress `bar` per document; returns (documents, tokens, each document's tokens). With
    `windows` (and `options.max_length`), each window of at most that many tokens (the end token
    included) is a document, and the report counts the cuts."""
    binary = written.format == "bin"
    names: list[str] = []  # names: each document's record id, in input order
    count = tokens = document_tokens = 0
    lengths: list[int] = []
    read = _named(documents, names, options.keep_description) if written.names else documents
    # text formats: the workers write each piece's text, so that this process only writes it
    render: Callable[[list[int]], tuple[str, int]] | None = None
    if written.format == "ids":
        render = DecimalIds(tokenizer.vocab_size)
    elif not binary:
        render = partial(rendered, tokenizer.token_text)
    pieces: Iterator[tuple[Any, bool]]
    if windows is not None:
        reserve = sum(whole and special is not None for special in (options.bos_id, options.eos_id))
        pieces = window_pieces(
            tokenizer, read, windows, workers, options.allowed_special, options.disallowed_special, reserve
        )
    else:
        pieces = encode_pieces(
            tokenizer, read, workers, options.allowed_special, options.disallowed_special, render=render
        )
    line_started = False  # text formats: one line per document, written piece by piece
    name_written = False  # the reader has already given the current document: its name is known
    if whole and options.bos_id is not None:
        pieces = _begun(pieces, options.bos_id)
    for piece, ends in pieces:
        if ends:
            piece = [options.eos_id] if whole and options.eos_id is not None else []
        payload: Any
        if render is None:
            payload = id_bytes(piece, options.dtype)
            size = len(piece)
        elif isinstance(piece, list):  # ids from the windows, the end token: rendered here
            payload, size = render(piece)
        else:
            payload, size = piece
        tokens += size
        document_tokens += size
        if not binary and written.names and not name_written:
            if windows is not None:
                document, number, cut = windows.numbers[count]
                out.write(window_name(names[document], number, cut) + "\t")
            else:
                out.write(names[count] + "\t")
            name_written = True
        if binary:
            out.write(payload)
        elif size:
            out.write(" " + payload if line_started else payload)
            line_started = True
        if not ends:
            continue
        if not binary:
            out.write("\n")
        line_started = name_written = False
        if whole:
            count += 1
            lengths.append(document_tokens)
        document_tokens = 0
        if bar is not None:
            bar.set_postfix_str(f"{count:,} docs", refresh=False)
            if not progress_bars.counts_bytes(bar):
                bar.update(1)
    return count, tokens, lengths


def _begun(pieces: Iterator[tuple[Any, bool]], bos_id: int) -> Iterator[tuple[Any, bool]]:
    """The pieces with the start token before each document's first (an empty one's too)."""
    starting = True
    for piece, ends in pieces:
        if starting:
            yield [bos_id], False
        starting = ends
        yield piece, ends


def rendered(show: Callable[[int], str], ids: list[int]) -> tuple[str, int]:
    """A piece's ids as the text of its part of a line, and how many there are."""
    return " ".join(map(show, ids)), len(ids)


class DecimalIds:
    """`rendered` for ids in decimal: each id's text made by str() at first, then, once about as
    many ids as the vocabulary has were written, looked up in a table of them all (faster per id,
    but building it costs what a one-line input costs in all)."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self.before_table = vocab_size
        self.table: list[str] = []

    def __call__(self, ids: list[int]) -> tuple[str, int]:
        if not self.table:
            self.before_table -= len(ids)
            if self.before_table > 0:
                return rendered(str, ids)
            self.table = [str(token_id) for token_id in range(self.vocab_size)]
        return rendered(self.table.__getitem__, ids)


def _named(documents: Iterable[Any], names: list[str], whole: bool) -> Iterator[Any]:
    """The documents, appending each one's record id (with `whole`, its whole header) to `names`
    as it is read (`--names`)."""
    for number, document in enumerate(documents, start=1):
        name = document_name(document, whole)
        if name is None:
            raise BpeError(f"--names: document {number} has no name; names are the record ids of FASTA/FASTQ readers")
        names.append(name)
        yield document
