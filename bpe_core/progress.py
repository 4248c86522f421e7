"""Progress bars for long work: shown on a terminal, silent in pipes and when asked to be quiet.

`input_bar` and `metered` show encoding progress in bytes of input, so that a few large
documents (one genome, one large text file) move the bar too, not only many small ones. They
measure what has been read; they do not know how long encoding what was read will take.

tqdm is imported only when a bar is shown: it is slow to import (it reads its own version from
the installed metadata), and a command in a pipe or with --quiet shows none.
"""

import os
import sys
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Protocol, TextIO

from bpe_core.contract import StreamedText


class Bar(Protocol):
    """What callers use of a bar: a tqdm bar when shown, a `HiddenBar` when not."""

    @property
    def disable(self) -> bool | None: ...

    @property
    def n(self) -> float: ...

    @property
    def total(self) -> float | None: ...

    @property
    def unit(self) -> str: ...

    def update(self, n: float | None = 1) -> bool | None: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...

    def write(self, s: str, file: TextIO | None = None) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> "Bar": ...

    def __exit__(
        self, _type: type[BaseException] | None, _value: BaseException | None, _traceback: TracebackType | None, /
    ) -> None: ...


class HiddenBar:
    """A bar that is not shown: like tqdm's disabled bar, it counts nothing and draws nothing
    (its `n` stays 0), and a line written through it is only written."""

    disable = True
    n = 0

    def __init__(self, total: float | None, unit: str) -> None:
        self.total = total
        self.unit = unit

    def update(self, n: float | None = 1) -> None:
        return None

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        del s, refresh  # nothing is shown

    def write(self, s: str, file: TextIO | None = None) -> None:
        print(s, file=file or sys.stdout)  # where tqdm.write writes

    def close(self) -> None:
        return None

    def __enter__(self) -> "HiddenBar":
        return self

    def __exit__(self, *_exception: object) -> None:
        return None


def wanted(progress: bool | None) -> bool:
    """None means: show progress when standard error is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


def bar(progress: bool | None, desc: str, total: float | None = None, unit: str = "it", **options: Any) -> Bar:
    if not wanted(progress):
        return HiddenBar(total, unit)
    from tqdm import tqdm  # imported on use: see the module's docstring

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=False,
        **options,
    )


def input_bar(progress: bool | None, desc: str, files: list[str]) -> Bar:
    """A bar in bytes of the input files (their sizes are the total); in documents when the input
    is standard input or its files are unknown (then there is no total to measure against)."""
    if not files or any(not os.path.isfile(path) for path in files):
        return bar(progress, desc, unit="doc")
    return bar(progress, desc, total=sum(os.path.getsize(path) for path in files), unit="B", unit_scale=True)


def counts_bytes(progress_bar: Bar) -> bool:
    """Whether a bar from `input_bar` is shown and measures bytes (else its caller counts documents)."""
    return not progress_bar.disable and progress_bar.unit == "B"


def metered(documents: Iterable[Any], progress_bar: Bar) -> Iterator[Any]:
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
