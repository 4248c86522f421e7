"""A tokenizer's corpus, streamed: the reader it was trained with, where streamed text may be cut,
and each document's ids in pieces, so however long a document is, memory holds a few pieces and
not its ids.

The functions read a tokenizer through `CorpusTokenizer`, not `Tokenizer`, so that the inspect
page (which `tokenizer.py` imports) streams files with them too. This module writes nothing
(`shards` does) and cuts no windows (`training_windows` does).
"""

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

from bpe_core.chunking import WHOLE, numbered_pieces
from bpe_core.contract import AugmentsDocuments, Pretokenizer, Reader, ReportsLosses, document_source
from bpe_core.errors import BpeError, located
from bpe_core.plugins import Registry
from bpe_core.runners.local import ordered_map
from bpe_core.specials import Specials, allowed_specials, splits_a_special

# the reader options recorded in a config that are not the reader's own
NOT_READER_OPTIONS = ("reader", "paths", "sample")


class CorpusTokenizer(Protocol):
    """What streaming reads of a tokenizer (`Tokenizer` has all of it)."""

    pretokenizer: Pretokenizer
    special_tokens: list[str]
    config: dict[str, Any]
    components: Registry

    def encode(
        self, document: Any, *, allowed_special: Specials = ..., disallowed_special: Specials = ...
    ) -> list[int]: ...


def corpus_reader(tokenizer: CorpusTokenizer) -> Reader:
    """A fresh reader of the kind (and with the options) the tokenizer was trained with: how
    `bpe encode` and `bpe inspect --on` read files for it (text for imports)."""
    recorded = tokenizer.config.get("input", {})
    options = {key: value for key, value in recorded.items() if key not in NOT_READER_OPTIONS}
    return tokenizer.components.reader(str(recorded.get("reader", "text")), options)


def prepared_documents(
    pretokenizer: Pretokenizer, documents: Iterable[Any], augment: Mapping[str, float] | None, strict: bool
) -> Iterator[Any]:
    """The documents as `bpe encode` writes them. What encoding a document loses (a pretokenizer
    that `ReportsLosses`: MIDI notes outside the pitch range) is a warning naming its file, or
    with `strict` an error; with `augment`, each document is followed by its augmented copies (a
    pretokenizer that `AugmentsDocuments`)."""
    losing = pretokenizer if isinstance(pretokenizer, ReportsLosses) else None
    augmenting = check_augment(pretokenizer, augment)
    for document in documents:
        lost = losing.losses(document) if losing is not None else ""
        if lost:
            if strict:
                raise BpeError(f"{document_source(document)}: {lost} (without --strict, a warning)")
            print(f"warning: {document_source(document)}: {lost}", file=sys.stderr)
        if augmenting is not None and augment:
            yield from augmenting.augmented(document, augment)
        else:
            yield document


def check_augment(pretokenizer: Pretokenizer, augment: Mapping[str, float] | None) -> AugmentsDocuments | None:
    """The pretokenizer that makes the copies `augment` asks for, once it has checked the options
    (before any work); None when none are asked for."""
    if not augment:
        return None
    if not isinstance(pretokenizer, AugmentsDocuments):
        raise BpeError(f"--augment: pretokenizer {pretokenizer.name!r} makes no augmented copies")
    pretokenizer.check_augment(augment)
    return pretokenizer


def safe_cut(tokenizer: CorpusTokenizer, text: str) -> int:
    """Where streamed text may be cut: the pretokenizer's safe point, never inside a special
    token's string, nor where one may begin at the end of `text` or have begun before it."""
    cut = tokenizer.pretokenizer.safe_cut(text)
    special_tokens = tokenizer.special_tokens
    if not special_tokens:
        return cut
    longest = max(map(len, special_tokens))
    while cut > 0 and (cut < longest or splits_a_special(text, cut, special_tokens)):
        if cut < longest:
            cut = 0
        else:
            cut = tokenizer.pretokenizer.safe_cut(text[: cut - 1])
    return cut


def text_cutter(tokenizer: CorpusTokenizer) -> Callable[[str], int]:
    """`safe_cut` for this tokenizer, as the readers and `chunking` take it."""
    return partial(safe_cut, tokenizer)


def special_context(tokenizer: CorpusTokenizer) -> int:
    """How many characters before a cut `safe_cut` reads: a special token's string may have begun
    that far back."""
    return max(map(len, tokenizer.special_tokens), default=0) + 2


def plain_pieces(
    tokenizer: CorpusTokenizer, paths: Sequence[str], workers: int | None = None, reader: Reader | None = None
) -> Iterator[tuple[list[int], bool]]:
    """`encode_pieces` of files read as the tokenizer's training input was (by `reader`, a fresh
    `corpus_reader` if not given), every special token's string as plain text: what `inspect
    --on`, `trim --on` and the residue measure count."""
    documents = (reader or corpus_reader(tokenizer)).documents(list(paths), strict=True)
    return encode_pieces(tokenizer, documents, workers, allowed_special=frozenset(), disallowed_special=frozenset())


def encode_pieces(
    tokenizer: CorpusTokenizer,
    documents: Iterable[Any],
    workers: int | None = None,
    allowed_special: Specials = frozenset(),
    disallowed_special: Specials = "all",
    render: Callable[[list[int]], Any] | None = None,
) -> Iterator[tuple[Any, bool]]:
    """Ids for each document a reader gives, in order, in `workers` processes, in pieces:
    (ids, whether the document ends there). Streamed text is encoded piece by piece (cut where
    no chunk can change), so however long a document is, memory holds a few pieces, not its ids.
    With `render`, each piece of ids is given as render(ids), computed by the workers (the end
    of a document is still ([], True))."""
    in_flight: dict[int, Any] = {}  # documents not yet ended, to name the one that fails
    numbered = numbered_pieces(
        documents,
        tokenizer.pretokenizer,
        text_cutter(tokenizer),
        special_context(tokenizer),
        in_flight,
        whole=True,
    )

    def encode_piece(item: tuple[int, int, Any]) -> tuple[int, Any, str | None, bool]:
        """(index, ids or their rendering, None or the error, whether the document ended)"""
        index, line, piece = item
        if piece is None:
            return index, None, None, True
        try:
            if isinstance(piece, str) and tokenizer.special_tokens:
                allowed = allowed_specials(
                    piece, tokenizer.special_tokens, allowed_special, disallowed_special, max(line, 1)
                )
                ids = tokenizer.encode(piece, allowed_special=allowed, disallowed_special=frozenset())
            else:
                ids = tokenizer.encode(piece)
        except BpeError as error:
            return index, None, str(error), True
        if render is not None:
            return index, render(ids), None, line == WHOLE
        return index, ids, None, line == WHOLE

    def piece_weight(item: tuple[int, int, Any]) -> int:
        return len(str(item[2]))

    for index, ids, failure, ended in ordered_map(encode_piece, numbered, workers, piece_weight):
        if failure is not None:
            raise BpeError(located(document_source(in_flight[index]), failure))
        if ids is not None:
            yield ids, False
        if ended:
            del in_flight[index]
            yield [], True
