"""Progress bars for long work: shown on a terminal, silent in pipes and when asked to be quiet.

`input_bar` and `metered` show encoding progress in bytes of input, so that a few large
documents (one genome, one large text file) move the bar too, not only many small ones. They
measure what has been read; they do not know how long encoding what was read will take.
"""

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from tqdm import tqdm

from bpe_core.contract import StreamedText


def wanted(progress: bool | None) -> bool:
    """None means: show progress when standard error is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


def bar(progress: bool | None, desc: str, total: float | None = None, unit: str = "it", **options: Any) -> "tqdm[Any]":
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not wanted(progress),
        file=sys.stderr,
        dynamic_ncols=True,
        leave=False,
        **options,
    )


def input_bar(progress: bool | None, desc: str, files: list[str]) -> "tqdm[Any]":
    """A bar in bytes of the input files (their sizes are the total); in documents when the input
    is standard input or its files are unknown (then there is no total to measure against)."""
    if not files or any(not os.path.isfile(path) for path in files):
        return bar(progress, desc, unit="doc")
    return bar(progress, desc, total=sum(os.path.getsize(path) for path in files), unit="B", unit_scale=True)


def counts_bytes(progress_bar: "tqdm[Any]") -> bool:
    """Whether a bar from `input_bar` is shown and measures bytes (else its caller counts documents)."""
    return not progress_bar.disable and progress_bar.unit == "B"


def metered(documents: Iterable[Any], progress_bar: "tqdm[Any]") -> Iterator[Any]:
    """The documents, moving a bar from `input_bar` as they are read: streamed text by each block
    read, a document from a file (a genome record, a song) by its file once the next file starts
    or the input ends, another document (a JSONL line) by its UTF-8 size. A bar in documents is
    left to its caller."""
    if not counts_bytes(progress_bar):
        yield from documents
        return
    total = int(progress_bar.total or 0)
    credited: dict[str, int] = {}  # file -> bytes credited so far

    def credit(source: str | None, amount: int) -> None:
        amount = max(0, min(amount, total - int(progress_bar.n)))  # never past the total (gzip inflates)
        if source is not None:
            credited[source] = credited.get(source, 0) + amount
        progress_bar.update(amount)

    def finish(source: str | None) -> None:
        if source is not None:
            credit(source, os.path.getsize(source) - credited.get(source, 0))

    def blocks(document: StreamedText, source: str | None) -> Iterator[str]:
        for block in document.blocks():
            credit(source, len(block.encode("utf-8", "surrogatepass")))
            yield block

    current: str | None = None
    for document in documents:
        source = _source_file(document)
        if source != current:
            finish(current)
            current = source
        if isinstance(document, StreamedText):
            yield StreamedText(document.source, lambda document=document, source=source: blocks(document, source))  # type: ignore[misc]
        else:
            if source is None and isinstance(document, (str, bytes)):
                credit(
                    None, len(document.encode("utf-8", "surrogatepass")) if isinstance(document, str) else len(document)
                )
            yield document
    finish(current)
    progress_bar.update(total - int(progress_bar.n))


def _source_file(document: Any) -> str | None:
    """The file a document came from, if it names one ("path" or "path, line 3")."""
    for attribute in ("source", "filename"):
        value = getattr(document, attribute, None)
        if isinstance(value, str):
            for candidate in (value, value.split(", ", 1)[0]):
                if os.path.isfile(candidate):
                    return candidate
    return None
