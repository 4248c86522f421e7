"""Counting unique chunks over a corpus, in parallel worker processes.

Documents are cut into pieces that split independently (streamed text is cut only where the
pretokenizer says no chunk can change), each piece is split and counted in a worker, and the
partial counts are summed. Peak memory grows with the unique chunks, not with the corpus: no list
of every chunk is ever built. This module does not train.
"""

import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.components import Pretokenizer, StreamedText
from bpe_core.parallel import ordered_map


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
) -> Counter[Hashable]:
    """Unique chunks of all documents with how often each occurs.

    `prepare` (normalization) runs on each piece in the workers; `sample` = (fraction, seed)
    keeps a seeded random subset of the pieces (whole documents, or blocks of streamed text).
    """

    count_fast = getattr(pretokenizer, "count", None)  # optional: counts without a list of chunks

    def count(piece: Any) -> tuple[Counter[Hashable], int]:
        size = piece_size(piece)
        if prepare is not None:
            piece = prepare(piece)
        if count_fast is not None:
            return Counter(count_fast(piece)), size
        return Counter(pretokenizer.split(piece)), size

    stream = pieces(documents, pretokenizer)
    if sample is not None:
        stream = sampled(stream, *sample)
    totals: Counter[Hashable] = Counter()
    with progress_bars.bar(progress, "counting chunks", unit="char", unit_scale=True) as bar:
        for partial, size in ordered_map(count, stream, workers):
            totals.update(partial)
            bar.update(size)
    return totals
