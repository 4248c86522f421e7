"""Many documents at once (`Tokenizer.encode_batch`, `encode_ordinary_batch`): each document's
special tokens are checked here first, as `encode` checks them, then the documents are encoded
in this process or in forked worker processes that stay up between calls, their chunk caches warm.

This module knows special-token rules and worker pools, not tokenizers: it is handed the
tokenizer's `encode` and `encode_ordinary`.
"""

import gc
import itertools
import threading
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import accumulate
from typing import Any

from bpe_core.errors import ArgumentError, BpeError, described
from bpe_core.runners.local import WorkerPool, default_workers, fork_available
from bpe_core.specials import Specials, SpecialTokenInText, allowed_specials

FEW_DOCUMENTS = 64  # a batch of this many documents or fewer is encoded in this process alone
# ...nor text of fewer characters a worker: a worker meets its share with a cold cache and sends
# the ids back, so below this a batch is done sooner in this process alone
MIN_CHARACTERS_PER_WORKER = 1 << 22
# ...and forks for text only when it keeps this many processes busy: with two, this process's
# receiving and unpacking of the other's ids, and the forked one's copy-on-write pages and cold
# cache, cost about what the second core saves (and more when other programs share the cores)
MIN_TEXT_PROCESSES = 3
NO_SPECIALS: frozenset[str] = frozenset()
STRINGS_PER_CALL = 1 << 20  # characters of documents the pretokenizer joins at once (`encode_strings`)

# what a worker is sent: a document and the special tokens it may encode as theirs (none: it is
# encoded as `encode_ordinary` encodes it)
Item = tuple[Any, frozenset[str]]


def check_documents(documents: Any, text: bool, argument: str) -> None:
    """Documents are a list (an iterable other than one str); with `text` each a str (bytes go
    through `Tokenizer.encode_bytes`). Other domains' pretokenizers say what they take."""
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Iterable):
        raise ArgumentError(f"{argument}: expected a list of documents, got {described(documents)}")
    if not text:
        return
    for document in documents:
        if not isinstance(document, str):
            hint = " (bytes go through encode_bytes)" if isinstance(document, (bytes, bytearray)) else ""
            raise ArgumentError(f"{argument}: expected text (str), got {described(document)}{hint}")


def allowed_sets(
    documents: Sequence[Any], special_tokens: Sequence[str], allowed_special: Specials, disallowed_special: Specials
) -> list[frozenset[str]]:
    """The special tokens each document may hold as theirs, by `encode`'s rules; a BpeError naming
    the first document (by index) that holds a disallowed one, before any is encoded."""
    allowed: list[frozenset[str]] = []
    for index, document in enumerate(documents):
        found = NO_SPECIALS
        if special_tokens and isinstance(document, str):
            try:
                found = allowed_specials(document, special_tokens, allowed_special, disallowed_special)
            except SpecialTokenInText as error:
                raise SpecialTokenInText(f"document {index}: {error}") from None
            except BpeError as error:
                raise BpeError(f"document {index}: {error}") from None
        allowed.append(found)
    return allowed


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while code makes many lists that it keeps (a batch's lists
    of ids, a `tokenizer.json`'s merges): each new list counts towards a collection, and each
    collection walks the young lists again. Such lists make no cycles, so there is nothing for it
    to find meanwhile; it runs as before after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class BatchEncoder:
    """Encodes documents in order, here or in `workers` forked processes kept until `close()`."""

    def __init__(
        self,
        encode: Callable[..., list[int]],
        encode_ordinary: Callable[[Any], list[int]],
        byte_level: bool,
        encode_strings: Callable[[list[str]], list[list[int]]] | None,
    ) -> None:
        """`byte_level`: text, whose documents are weighed by their characters (and which takes no
        more workers than it gives MIN_CHARACTERS_PER_WORKER each, and forks none for fewer than
        MIN_TEXT_PROCESSES). `encode_strings`: given when `encode_ordinary` would pack each string
        as it is, it encodes a list of strings packed in one call."""
        self.encode_document = encode
        self.encode_ordinary = encode_ordinary
        self.encode_ordinary_strings = encode_strings
        self.byte_level = byte_level
        self.pool: WorkerPool | None = None
        self.finalizer: weakref.finalize[[], BatchEncoder] | None = None
        # one batch at a time on the worker processes (their pipes carry one conversation): a
        # thread that finds them busy encodes its batch itself
        self.pool_lock = threading.Lock()

    def encode(
        self, documents: Sequence[Any], allowed: Sequence[frozenset[str]] | None, workers: int | None
    ) -> list[list[int]]:
        """Each document's ids, in order; `allowed[i]`: the special tokens document i may hold as
        theirs (None: no document may hold any, and in this process none is paired with its set)."""
        workers = workers or default_workers()
        weights = [len(document) if isinstance(document, str) else 1 for document in documents]
        if self.byte_level:  # text: as many workers as it keeps busy, none forked for fewer than MIN_TEXT_PROCESSES
            workers = min(workers, sum(weights) // MIN_CHARACTERS_PER_WORKER)
            workers = workers if workers >= MIN_TEXT_PROCESSES else 1
        pooled = workers > 1 and len(documents) > FEW_DOCUMENTS and fork_available()
        if pooled and self.pool_lock.acquire(blocking=False):
            try:
                return self.encode_on_workers(documents, allowed, workers, weights)
            finally:
                self.pool_lock.release()
        with collector_paused():
            return self.encode_here(documents, allowed, weights)

    def encode_here(
        self, documents: Sequence[Any], allowed: Sequence[frozenset[str]] | None, weights: list[int]
    ) -> list[list[int]]:
        """`encode` in this process: documents that hold no special token of their own are joined
        in groups (`encode_strings`) where the tokenizer can, else encoded one by one."""
        if allowed is None or not any(allowed):  # no document holds a special token of its own
            if self.encode_ordinary_strings is not None and all(isinstance(item, str) for item in documents):
                return self.encode_strings(documents, weights)
            encode_ordinary = self.encode_ordinary
            return [encode_ordinary(document) for document in documents]
        return [self.encode_item(item) for item in zip(documents, allowed)]

    def encode_share(self, items: list[Item]) -> list[list[int]]:
        """`encode_here` of a worker's share: (document, allowed) pairs."""
        documents = [document for document, _ in items]
        weights = [len(document) if isinstance(document, str) else 1 for document in documents]
        with collector_paused():  # in a forked worker (this process's share is paused already)
            return self.encode_here(documents, [allowed for _, allowed in items], weights)

    def encode_on_workers(
        self, documents: Sequence[Any], allowed: Sequence[frozenset[str]] | None, workers: int, weights: list[int]
    ) -> list[list[int]]:
        """`encode` on `workers` processes (this one and forked ones), kept for the next batch. A
        process forked from the one that started them has workers of its own."""
        if self.pool is not None and not self.pool.owned():  # inherited by a fork: the parent's
            if self.finalizer is not None:
                self.finalizer.detach()
            self.pool = None
        if self.pool is None or self.pool.workers != workers:
            self.close()
            self.pool = WorkerPool(self.encode_share, workers, int_lists=True)
            self.finalizer = weakref.finalize(self, self.pool.close)
        items = list(zip(documents, allowed if allowed is not None else itertools.repeat(NO_SPECIALS)))
        with collector_paused():
            return self.pool.map(self.encode_share, items, weights)

    def encode_strings(self, documents: Sequence[str], lengths: list[int]) -> list[list[int]]:
        """`encode_ordinary_strings` over consecutive groups of documents of up to
        STRINGS_PER_CALL characters (a group is joined: memory holds a group's text twice, not the
        whole batch's)."""
        assert self.encode_ordinary_strings is not None
        results: list[list[int]] = []
        total = list(accumulate(lengths))  # total[i]: the characters of documents 0..i
        start = 0
        while start < len(documents):
            before = total[start - 1] if start else 0
            end = max(start + 1, bisect_right(total, before + STRINGS_PER_CALL, start))
            results.extend(self.encode_ordinary_strings(list(documents[start:end])))
            start = end
        return results

    def encode_item(self, item: Item) -> list[int]:
        document, allowed = item
        if allowed:
            return self.encode_document(document, allowed_special=allowed, disallowed_special=NO_SPECIALS)
        return self.encode_ordinary(document)

    def close(self) -> None:
        """Stop the worker processes (they also stop when this object is garbage-collected, or at exit)."""
        if self.pool is not None and self.finalizer is not None:
            self.finalizer.detach()
            self.pool.close()
            self.pool = None
