"""Training windows: each document's ids cut into windows of at most N tokens (`bpe encode
--max-length N`), every window a document of the output.

A cut falls between two tokens of the document's own encoding, so its windows laid end to end
are exactly the ids of encoding it whole. Where: at the furthest place within reach where a
boundary of the strongest kind begins (a pretokenizer that `MarksBoundaries` names its kinds:
MIDI's bar lines, then beat lines); when there is none, of the next kind; then at a chunk
boundary (the only kind for text and DNA: between two chunks of the pretokenizer); then anywhere,
after N tokens. Every cut is counted by its kind, in a `WindowReport`. Streamed text is windowed
piece by piece, so memory holds a piece and a window, not a file's ids.

This module encodes through the tokenizer's public methods and cuts; it writes nothing
(`shards` does) and knows no domain.
"""

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from typing import Any

from bpe_core.chunking import numbered_pieces
from bpe_core.contract import MarksBoundaries, document_source
from bpe_core.corpus.streaming import special_context, text_cutter
from bpe_core.errors import BpeError, located
from bpe_core.runners.local import ordered_map
from bpe_core.specials import Specials, allowed_specials
from bpe_core.tokenizer import Tokenizer

CHUNK = "chunk"
ANYWHERE = "anywhere"
PLACES = {"bar": "at bar lines", "beat": "at beat lines", CHUNK: "at chunk boundaries", ANYWHERE: "anywhere"}


@dataclass
class WindowReport:
    """How many documents were cut into how many windows, and each cut's kind (the first kind is
    where windows should start; the others are counted as exceptions). `numbers` has, per window
    in output order, (its document's index, its number in the document from 1, whether the
    document was cut)."""

    max_length: int
    kinds: tuple[str, ...] = (CHUNK, ANYWHERE)
    documents: int = 0
    windows: int = 0
    cuts: dict[str, int] = field(default_factory=dict)
    numbers: list[tuple[int, int, bool]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """What the shard index records: the limit, documents, windows and cuts by kind."""
        return {
            "max_length": self.max_length,
            "documents": self.documents,
            "windows": self.windows,
            "cuts": {kind: self.cuts.get(kind, 0) for kind in self.kinds},
        }

    def line(self) -> str:
        """The report `bpe encode --max-length` prints."""
        cuts = ", ".join(f"{self.cuts.get(kind, 0):,} {PLACES.get(kind, 'at ' + kind)}" for kind in self.kinds)
        return (
            f"windows of at most {self.max_length} tokens: {self.windows:,} from {self.documents:,} documents; "
            f"cuts: {cuts}"
        )


def merged_summary(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The summaries of several shards added up."""
    total: dict[str, Any] = {"max_length": 0, "documents": 0, "windows": 0, "cuts": {}}
    for summary in summaries:
        total["max_length"] = summary["max_length"]
        total["documents"] += summary["documents"]
        total["windows"] += summary["windows"]
        for kind, count in summary["cuts"].items():
            total["cuts"][kind] = total["cuts"].get(kind, 0) + count
    return total


def summary_line(summary: dict[str, Any]) -> str:
    report = WindowReport(summary["max_length"], tuple(summary["cuts"]), summary["documents"], summary["windows"])
    report.cuts = dict(summary["cuts"])
    return report.line()


def boundary_kinds(tokenizer: Tokenizer) -> tuple[str, ...]:
    """The kinds of places a window may start, strongest first, ending with chunk and anywhere."""
    pretokenizer = tokenizer.pretokenizer
    named = tuple(pretokenizer.boundary_names) if isinstance(pretokenizer, MarksBoundaries) else ()
    return (*named, CHUNK, ANYWHERE)


class TokenLengths(dict[int, int]):
    """Token id -> its length in base symbols (bytes for byte-level text), looked up once per id."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        super().__init__()
        self.tokenizer = tokenizer

    def __missing__(self, token: int) -> int:
        tokenizer = self.tokenizer
        if tokenizer.pretokenizer.byte_level:
            length = len(tokenizer.token_bytes(token))
        else:
            length = len(tokenizer.token_symbols(token))
        self[token] = length
        return length


class Marker:
    """Encodes a piece and says which of its tokens begin a boundary of each kind."""

    def __init__(self, tokenizer: Tokenizer, allowed_special: Specials, disallowed_special: Specials) -> None:
        self.tokenizer = tokenizer
        self.allowed_special = allowed_special
        self.disallowed_special = disallowed_special
        self.lengths = TokenLengths(tokenizer)

    def mark(self, piece: Any, line: int = 1) -> tuple[list[int], list[list[int]]]:
        """(ids, per kind but `anywhere`: the indexes of the tokens that begin one, ascending; 0
        too, which matters where a piece of streamed text begins)."""
        tokenizer = self.tokenizer
        allowed: Specials = self.allowed_special
        if isinstance(piece, str) and tokenizer.special_tokens:
            allowed = allowed_specials(
                piece, tokenizer.special_tokens, self.allowed_special, self.disallowed_special, line
            )
            ids = tokenizer.encode(piece, allowed_special=allowed, disallowed_special=frozenset())
        else:
            ids = tokenizer.encode(piece)
        pretokenizer = tokenizer.pretokenizer
        normalized = tokenizer.normalize(piece)
        offsets: list[list[int]] = []
        if isinstance(pretokenizer, MarksBoundaries):
            chunks, offsets = pretokenizer.split_with_boundaries(normalized)
        else:
            chunks = list(pretokenizer.split(normalized))
        chunk_offsets = list(accumulate(map(len, map(pretokenizer.symbols, chunks)), initial=0))
        # offset in symbols -> the index of the token that begins there
        token_at = dict(zip(accumulate(map(self.lengths.__getitem__, ids), initial=0), range(len(ids))))
        marks = []
        for kind_offsets in [*offsets, chunk_offsets]:
            marks.append(sorted(index for index in map(token_at.get, kind_offsets, repeat(-1)) if index >= 0))
        return ids, marks


class Windower:
    """Cuts one document's ids, pushed piece by piece, into windows (see the module's docstring)."""

    def __init__(self, limit: int, kinds: tuple[str, ...], report: WindowReport, document: int) -> None:
        self.limit = limit
        self.kinds = kinds
        self.report = report
        self.document = document
        self.ids: list[int] = []
        self.marks: list[list[int]] = [[] for _ in kinds[:-1]]
        self.start = 0  # where the window being filled begins in self.ids
        self.number = 0

    def push(self, ids: list[int], marks: list[list[int]]) -> Iterator[list[int]]:
        """Add a piece's ids and marks; yield the windows that are full."""
        base = len(self.ids)
        self.ids.extend(ids)
        for kind_marks, piece_marks in zip(self.marks, marks):
            kind_marks.extend(base + index for index in piece_marks)
        if base > 0 and ids:  # a piece of streamed text begins between two chunks
            chunk_marks = self.marks[-1]
            position = bisect.bisect_left(chunk_marks, base)
            if position == len(chunk_marks) or chunk_marks[position] != base:
                chunk_marks.insert(position, base)
        # (a mark at a window's start is no place to cut it: _cut looks after the start)
        while len(self.ids) - self.start > self.limit:
            yield self._cut()
        if self.start > 0:  # keep only what the next window needs
            self.ids = self.ids[self.start :]
            self.marks = [[mark - self.start for mark in kind if mark > self.start] for kind in self.marks]
            self.start = 0

    def _cut(self) -> list[int]:
        start = self.start
        reach = self.start + self.limit
        end = reach
        kind = ANYWHERE
        for name, kind_marks in zip(self.kinds, self.marks):
            position = bisect.bisect_right(kind_marks, reach) - 1
            if position >= 0 and kind_marks[position] > start:
                end = kind_marks[position]
                kind = name
                break
        self.report.cuts[kind] = self.report.cuts.get(kind, 0) + 1
        self.start = end
        return self._window(self.ids[start:end], cut=True)

    def finish(self) -> Iterator[list[int]]:
        """The last window (none for a document with no ids)."""
        self.report.documents += 1
        if len(self.ids) > self.start:
            yield self._window(self.ids[self.start :], cut=self.number > 0)

    def _window(self, ids: list[int], cut: bool) -> list[int]:
        self.number += 1
        self.report.windows += 1
        self.report.numbers.append((self.document, self.number, cut))
        return ids


def window_pieces(
    tokenizer: Tokenizer,
    documents: Iterable[Any],
    report: WindowReport,
    workers: int | None = None,
    allowed_special: Specials = frozenset(),
    disallowed_special: Specials = "all",
    reserve: int = 0,
) -> Iterator[tuple[list[int], bool]]:
    """What `streaming.encode_pieces` gives ((ids, False) pieces, then ([], True) where a document
    ends), with each window a document: windows of at most `report.max_length - reserve` tokens (`reserve`: room for an
    end-of-document token), counted in `report`."""
    limit = report.max_length - reserve
    if limit < 1:
        raise BpeError(f"--max-length {report.max_length} leaves no room for a token beside the end-of-document token")
    report.kinds = boundary_kinds(tokenizer)
    marker = Marker(tokenizer, allowed_special, disallowed_special)
    in_flight: dict[int, Any] = {}  # documents not yet ended, to name the one that fails
    numbered = numbered_pieces(
        documents, tokenizer.pretokenizer, text_cutter(tokenizer), special_context(tokenizer), in_flight
    )

    def mark(item: tuple[int, int, Any]) -> tuple[int, tuple[list[int], list[list[int]]] | None, str | None]:
        index, line, piece = item
        if piece is None:
            return index, None, None
        try:
            return index, marker.mark(piece, line), None
        except BpeError as error:
            return index, None, str(error)

    windower: Windower | None = None
    for index, marked, failure in ordered_map(mark, numbered, workers):
        if failure is not None:
            raise BpeError(located(document_source(in_flight[index]), failure))
        if windower is None:
            windower = Windower(limit, report.kinds, report, index)
        if marked is None:
            del in_flight[index]
            for window in windower.finish():
                yield window, False
                yield [], True
            windower = None
            continue
        for window in windower.push(*marked):
            yield window, False
            yield [], True


def window_name(name: str, number: int, cut: bool) -> str:
    """A window's record name: the record's, with `/k` for the k-th window of a record cut in
    several, after its id (a whole header's description follows: `chr1/2 Homo sapiens ...`)."""
    if not cut:
        return name
    end = next((index for index, character in enumerate(name) if character.isspace()), len(name))
    return f"{name[:end]}/{number}{name[end:]}"
