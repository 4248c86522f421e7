"""Cutting a corpus into chunks and counting the unique ones, in parallel worker processes.

Documents are cut into pieces that split independently (streamed text is cut only where the
pretokenizer says no chunk can change), each piece is split and counted in a worker, and the
partial counts are summed. Peak memory grows with the unique chunks, not with the corpus: no list
of every chunk is ever built. This module does not train.
"""

import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.contract import (
    CountsChunks,
    CountsPacked,
    Normalizer,
    Pretokenizer,
    Reader,
    ReportsCounting,
    Source,
    StreamedText,
)
from bpe_core.engine import ChunkCounts
from bpe_core.errors import BpeError
from bpe_core.packing import count_documents
from bpe_core.runners.local import claimed_map, ordered_map, shared_map

SAMPLE_UNIT = 1 << 10  # characters of text per sampling decision (about a paragraph)
# characters handed to a worker at once: small enough that the batches in flight, their pickled
# copies and glibc's raised mmap threshold (every freed block of megabytes raises it, so later
# ones stay in the heap and fragment it) keep counting's peak memory close to the imports'
BATCH_CHARS = 1 << 18
# counting's first batch, counted where it is read (no pickled copy): below about a megabyte a
# forked worker costs more time than it saves
FIRST_BATCH_CHARS = 1 << 20
# The most characters of streamed text held at once waiting for a place to cut (see `pieces`):
# with the built-in patterns that takes a 64 Mi-character stretch with no letter before a
# non-letter, which no real text has.
MAX_UNCUT_CHARS = 1 << 26


def normalize(document: Any, normalizers: Sequence[Normalizer]) -> Any:
    """The document after the normalizers, in order (text only; other documents pass unchanged)."""
    if isinstance(document, str):
        for normalizer in normalizers:
            document = normalizer.normalize(document)
    return document


def pieces(
    documents: Iterable[Any], pretokenizer: Pretokenizer, safe_cut: Callable[[str], int] | None = None, context: int = 2
) -> Iterator[Any]:
    """Documents, with streamed text cut at safe points into pieces of about a block each.

    `safe_cut` is the pretokenizer's, or `corpus.streaming.safe_cut`'s, which also keeps special tokens whole
    and so needs `context` characters before each block (a special token's length).

    Text that goes on for more than MAX_UNCUT_CHARS characters without a safe point is an error
    naming its file: it would have to be held whole (a custom regex pattern never cuts).
    """
    for document in documents:
        if not isinstance(document, StreamedText):
            yield document
            continue
        parts: list[str] = []
        uncut = 0
        tail = ""
        cut_at = safe_cut or pretokenizer.safe_cut
        for block in document.blocks():
            # the safe point may depend on a character or two before the block
            cut = cut_at(tail + block) - len(tail)
            if cut > 0:
                parts.append(block[:cut])
                yield "".join(parts)
                parts = [block[cut:]]
                uncut = len(block) - cut
            else:
                parts.append(block)
                uncut += len(block)
                if uncut > MAX_UNCUT_CHARS:
                    raise BpeError(
                        f"{document.source}: more than {MAX_UNCUT_CHARS} characters with no place where pretokenizer "
                        f"{pretokenizer.name!r} can cut the text (a custom pattern never cuts); split it into "
                        "smaller files or into documents (jsonl)"
                    )
            tail = (tail + block)[-context:]
        rest = "".join(parts)
        if rest:
            yield rest


WHOLE = -1  # numbered_pieces: the line number of a document given whole, which ends it


def numbered_pieces(
    documents: Iterable[Any],
    pretokenizer: Pretokenizer,
    safe_cut: Callable[[str], int],
    context: int,
    in_flight: dict[int, Any],
    whole: bool = False,
) -> Iterator[tuple[int, int, Any]]:
    """(document index, first line, piece) for each document, then (index, 0, None) to end it:
    streamed text in pieces (`pieces`), other documents whole. With `whole`, a document that is
    not streamed is one item, (index, WHOLE, document), which also ends it (for many small
    documents, half the items). Each document is put in `in_flight` under its index as it is read
    (the caller removes it once ended), so an error can name it without asking every document
    where it came from."""
    for index, document in enumerate(documents):
        in_flight[index] = document
        if isinstance(document, StreamedText):
            line = 1
            for piece in pieces([document], pretokenizer, safe_cut, context):
                yield index, line, piece
                line += piece.count("\n")
        elif whole:
            yield index, WHOLE, document
            continue
        else:
            yield index, 1, document
        yield index, 0, None


def subdivided(items: Iterable[Any], pretokenizer: Pretokenizer, size: int) -> Iterator[Any]:
    """Text pieces cut further, where the pretokenizer allows, into parts of about `size`
    characters (so that sampling keeps or drops paragraphs, not megabytes)."""
    for item in items:
        while isinstance(item, str) and len(item) > size:
            window = size
            cut = pretokenizer.safe_cut(item[:window])
            while cut <= 0 and window < len(item):  # no safe point yet: look further
                window *= 2
                cut = pretokenizer.safe_cut(item[:window])
            if cut <= 0 or cut >= len(item):
                break
            yield item[:cut]
            item = item[cut:]
        yield item


def batched(items: Iterable[Any], size: int, first_size: int | None = None) -> Iterator[list[Any]]:
    """Consecutive items in lists of about `size` characters (each item still splits alone), the
    first of about `first_size` if given."""
    batch: list[Any] = []
    total = 0
    limit = size if first_size is None else first_size
    for item in items:
        batch.append(item)
        total += piece_size(item)
        if total >= limit:
            yield batch
            batch = []
            total = 0
            limit = size
    if batch:
        yield batch


def piece_size(piece: Any) -> int:
    """Characters (or bytes) in a piece, for progress; 1 for other documents."""
    return len(piece) if isinstance(piece, (str, bytes)) else 1


def sampled(items: Iterable[Any], fraction: float, seed: int) -> Iterator[Any]:
    """Each item kept with probability `fraction`, the same items for the same seed and input."""
    rng = random.Random(seed)
    for item in items:
        if rng.random() < fraction:
            yield item


def count_chunks(
    documents: Iterable[Any],
    pretokenizer: Pretokenizer,
    workers: int | None = None,
    progress: bool | None = None,
    prepare: Callable[[Any], Any] | None = None,
    sample: tuple[float, int] | None = None,
    report: Counter[str] | None = None,
) -> Counter[Hashable]:
    """Unique chunks of all documents with how often each occurs.

    `prepare` (normalization) runs on each piece in the workers; `sample` = (fraction, seed)
    keeps a seeded random subset of the pieces (whole documents, or blocks of streamed text).
    A pretokenizer that `ReportsCounting` counts with its own report, summed into `report`.
    """

    reported = pretokenizer if isinstance(pretokenizer, ReportsCounting) else None
    fast = pretokenizer if isinstance(pretokenizer, CountsChunks) else None  # counts without a list of chunks

    def count(batch: list[Any]) -> tuple[Counter[Hashable], int, Counter[str]]:
        counts: Counter[Hashable] = Counter()
        piece_report: Counter[str] = Counter()
        for piece in batch:
            if prepare is not None:
                piece = prepare(piece)
            if reported is not None:
                chunks, said = reported.count_reported(piece)
                counts.update(chunks)
                piece_report.update(said)
            else:
                counts.update(fast.count(piece) if fast is not None else pretokenizer.split(piece))
        return counts, sum(piece_size(piece) for piece in batch), piece_report

    totals: Counter[Hashable] = Counter()
    with progress_bars.bar(progress, "counting chunks", unit="char", unit_scale=True) as bar:
        for partial, size, partial_report in ordered_map(count, batches(documents, pretokenizer, sample), workers):
            totals.update(partial)
            if report is not None:
                report.update(partial_report)
            bar.update(size)
    return totals


def count_packed(
    documents: Iterable[Any],
    pretokenizer: Pretokenizer,
    workers: int | None = None,
    progress: bool | None = None,
    prepare: Callable[[Any], Any] | None = None,
    sample: tuple[float, int] | None = None,
) -> dict[bytes, int]:
    """Unique chunks of all documents as packed symbol ids (what a `Counts` holds) with how often
    each occurs, as `count_chunks` would count them, through a pretokenizer that `CountsPacked`.

    A worker counts each batch into a compiled table that travels back as one `bytes`; this
    process counts batches too (`shared_map`), straight into the totals, so `workers` cores take
    `workers` processes, not one more.
    """
    packer = pretokenizer
    assert isinstance(packer, CountsPacked)
    totals = ChunkCounts()

    def count(batch: list[Any]) -> tuple[bytes, int]:
        counts = ChunkCounts()
        size = _count_packed_into(batch, packer, counts, prepare)
        return counts.serialized(), size

    def count_here(batch: list[Any]) -> tuple[bytes, int]:
        return b"", _count_packed_into(batch, packer, totals, prepare)

    with progress_bars.bar(progress, "counting chunks", unit="char", unit_scale=True) as bar:
        for partial, size in shared_map(count, batches(documents, pretokenizer, sample), workers, here=count_here):
            if partial:
                totals.add_serialized(partial)
            bar.update(size)
    return totals.items()


def count_packed_parts(
    parts: Sequence[Any],
    read: Callable[[Any], tuple[Iterable[Any], Reader]],
    pretokenizer: Pretokenizer,
    workers: int,
    progress: bool | None = None,
    prepare: Callable[[Any], Any] | None = None,
) -> tuple[dict[bytes, int], list[Source]]:
    """`count_packed` for an input cut into parts that each process reads itself (byte ranges of
    a large file, groups of small files): `read(part)` gives the part's documents and the fresh
    reader that reads them. No text passes between processes, and each forked process hands its
    counts over once, at the end (`claimed_map`). Also returns the files the parts' readers saw
    whole (each file once: a file cut into ranges is hashed by the reader of its first)."""
    packer = pretokenizer
    assert isinstance(packer, CountsPacked)
    totals = ChunkCounts()  # each forked process adds to its own copy, empty when it forks
    sources: list[Source] = []

    def count_part(part: Any) -> int:
        documents, reader = read(part)
        size = _count_packed_into(pieces(documents, pretokenizer), packer, totals, prepare)
        sources.extend(reader.sources())
        return size

    def handover() -> tuple[bytes, list[Source]]:
        return totals.serialized(), sources

    with progress_bars.bar(progress, "counting chunks", unit="char", unit_scale=True) as bar:
        handed = claimed_map(count_part, parts, workers, handover, bar.update)
    for table, seen in handed:
        totals.add_serialized(table)
        sources.extend(seen)
    return totals.items(), sources


def _count_packed_into(
    items: Iterable[Any], packer: CountsPacked, counts: ChunkCounts, prepare: Callable[[Any], Any] | None
) -> int:
    """Count the pieces' chunks into `counts`; their size, for progress."""
    size = 0
    for piece in items:
        if prepare is not None:
            piece = prepare(piece)
        count_documents(counts, packer, [piece])
        size += piece_size(piece)
    return size


def batches(
    documents: Iterable[Any], pretokenizer: Pretokenizer, sample: tuple[float, int] | None
) -> Iterator[list[Any]]:
    """The documents as the lists of pieces counting hands a worker at once, sampled if asked.
    The first is larger: `shared_map` counts it here before it forks a worker, so an input of up
    to FIRST_BATCH_CHARS characters is counted with no worker at all."""
    stream: Iterator[Any] = pieces(documents, pretokenizer)
    if sample is not None:
        stream = sampled(subdivided(stream, pretokenizer, SAMPLE_UNIT), *sample)
    return batched(stream, BATCH_CHARS, FIRST_BATCH_CHARS)
