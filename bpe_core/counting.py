"""Counting unique chunks over a corpus, in parallel worker processes.

Documents are cut into pieces that split independently (streamed text is cut only where the
pretokenizer says no chunk can change), each piece is split and counted in a worker, and the
partial counts are summed. Peak memory grows with the unique chunks, not with the corpus: no list
of every chunk is ever built. This module does not train.
"""

import itertools
import multiprocessing
import os
from collections import Counter, deque
from collections.abc import Hashable, Iterable, Iterator
from multiprocessing.pool import AsyncResult
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.components import Pretokenizer, StreamedText

_worker_pretokenizer: Pretokenizer | None = None


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def pieces(documents: Iterable[Any], pretokenizer: Pretokenizer) -> Iterator[Any]:
    """Documents, with streamed text cut at safe points into pieces of about a block each."""
    for document in documents:
        if not isinstance(document, StreamedText):
            yield document
            continue
        parts: list[str] = []
        tail = ""
        for block in document.blocks():
            # the safe point may depend on a character or two before the block
            cut = pretokenizer.safe_cut(tail + block) - len(tail)
            if cut > 0:
                parts.append(block[:cut])
                yield "".join(parts)
                parts = [block[cut:]]
            else:
                parts.append(block)
            tail = (tail + block)[-2:]
        rest = "".join(parts)
        if rest:
            yield rest


def _init_worker(pretokenizer: Pretokenizer) -> None:
    global _worker_pretokenizer
    _worker_pretokenizer = pretokenizer


def _count_piece(piece: Any) -> tuple[Counter[Hashable], int]:
    assert _worker_pretokenizer is not None
    return Counter(_worker_pretokenizer.split(piece)), _size(piece)


def _size(piece: Any) -> int:
    return len(piece) if isinstance(piece, (str, bytes)) else 1


def count_chunks(
    documents: Iterable[Any],
    pretokenizer: Pretokenizer,
    workers: int | None = None,
    progress: bool | None = None,
) -> Counter[Hashable]:
    """Unique chunks of all documents with how often each occurs."""
    workers = workers or default_workers()
    totals: Counter[Hashable] = Counter()
    stream = pieces(documents, pretokenizer)
    first = next(stream, None)
    if first is None:
        return totals
    second = next(stream, None)
    with progress_bars.bar(progress, "counting chunks", unit="char", unit_scale=True) as bar:
        if second is None or workers == 1:
            for piece in [first] + ([second] if second is not None else []):
                totals.update(pretokenizer.split(piece))
                bar.update(_size(piece))
            for piece in stream:
                totals.update(pretokenizer.split(piece))
                bar.update(_size(piece))
            return totals
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        with context.Pool(workers, initializer=_init_worker, initargs=(pretokenizer,)) as pool:
            # a bounded window of pieces in flight keeps memory flat however large the corpus
            pending: deque[AsyncResult[tuple[Counter[Hashable], int]]] = deque()
            for piece in itertools.chain([first, second], stream):
                pending.append(pool.apply_async(_count_piece, (piece,)))
                if len(pending) >= 2 * workers:
                    _collect(pending.popleft(), totals, bar)
            while pending:
                _collect(pending.popleft(), totals, bar)
    return totals


def _collect(
    result: "AsyncResult[tuple[Counter[Hashable], int]]", totals: Counter[Hashable], bar: Any
) -> None:
    partial, size = result.get()
    totals.update(partial)
    bar.update(size)
