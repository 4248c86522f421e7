"""Training data from shard directories (`bpe encode --format bin -o DIR/`): `TokenShards`, a
map-style dataset of fixed-length windows of ids that a PyTorch `DataLoader` takes as it is.

The shards are read through numpy memmaps (opened on first use in each process, so a DataLoader's
worker processes map the files themselves; nothing is read whole). numpy is imported when a
`TokenShards` is made, never when bpe_core is (the `[data]` extra names it; Biopython, a runtime
dependency, brings it today); torch is never imported: the dataset gives numpy arrays, which the
DataLoader's collate turns into tensors. The shard index is checked as `bpe decode` checks it
(`idfiles.shard_list`: every shard a file inside the directory, exactly as long as the index
says), and, given the tokenizer the ids are for, that the index records it (by content SHA-256).
This module writes nothing and builds no tokenizer.
"""

import importlib
import os
from functools import partial
from typing import Any

from bpe_core.errors import BpeError, path_argument
from bpe_core.fingerprint import tokenizer_digest
from bpe_core.idfiles import TokenizerMark, check_made_by, read_shard_index, shard_list
from bpe_core.tokenizer import Tokenizer

FORCE_HINT = "pass force=True to read them anyway"

NUMPY_DTYPES = {"uint16": "<u2", "uint32": "<u4"}


def _numpy() -> Any:
    """numpy, imported on use (the `[data]` extra)."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        raise BpeError("bpe_core.data needs numpy: pip install 'bpe-core[data]'") from None


class TokenShards:
    """Windows of `length` ids from a shard directory, for training.

    By default (`documents=False`) the shards are one stream, in index order (what encoding the
    inputs in one run gives), and item i is the window at a random start in it: `samples` starts
    (default: as many windows as the stream holds whole) drawn once from `seed`, so item i is the
    same in every process and every run. A window may cross documents and shards; a stream
    shorter than `length` is padded with `pad_id` at the end.

    With `documents=True` item i is document i (the windows of `bpe encode --max-length`, the
    records an index lists, or the documents its end token ends; a shard without either is one
    document): a document longer than `length` gives a window of it at a random start (from
    `seed` and i), a shorter one is padded with `pad_id` at the end.

    Each item is a numpy int64 array of shape (length,); `mask(i)` says which of its ids are not
    padding. With `dicts=True` each item is what a transformers model (or a plain DataLoader
    loop) takes instead: a dict of `input_ids`, `attention_mask` (1 for ids, 0 for padding) and
    `labels` (the ids, with -100 for padding, which the model's loss ignores and which shifts
    them itself), each an int64 array of shape (length,).

    Given `tokenizer` (the one the model's ids are for), a directory that the index says another
    tokenizer encoded is refused with a `WrongTokenizer` error naming both (by content SHA-256, or
    by vocabulary size for an index written before digests were recorded), unless `force=True`.

    >>> shards = TokenShards("shards/", length=512, pad_id=0)
    >>> loader = torch.utils.data.DataLoader(shards, batch_size=8, shuffle=True)
    >>> batch = next(iter(DataLoader(TokenShards("shards/", 512, 0, dicts=True), batch_size=8)))
    >>> model(**batch).loss
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        length: int,
        pad_id: int | None = None,
        *,
        documents: bool = False,
        samples: int | None = None,
        seed: int = 0,
        tokenizer: Tokenizer | None = None,
        force: bool = False,
        dicts: bool = False,
    ) -> None:
        numpy = _numpy()
        self.dicts = dicts
        self.directory = path_argument(directory, "TokenShards(directory)")
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise BpeError(f"TokenShards length: expected a whole number, 1 or more, got {length!r}")
        self.length = length
        self.pad_id = pad_id
        self.documents = documents
        self.seed = seed
        if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
            raise BpeError(f"TokenShards samples: expected a whole number, 1 or more, got {samples!r}")
        if samples is not None and documents:
            raise BpeError("TokenShards samples: with documents=True there is one item per document")
        index_path, index = read_shard_index(self.directory)
        if tokenizer is not None:
            reading = TokenizerMark(tokenizer.name, tokenizer.vocab_size, partial(tokenizer_digest, tokenizer))
            check_made_by(self.directory, index.get("tokenizer"), reading, force, FORCE_HINT)
        shards = shard_list(self.directory, index_path, index)
        self.dtype: str = NUMPY_DTYPES[index["dtype"]]
        self.eos_id: int | None = index.get("eos_id")
        self.paths = [shard.path for shard in shards]
        self.shard_starts = [0]
        for shard in shards:
            self.shard_starts.append(self.shard_starts[-1] + shard.tokens)
        self.tokens = self.shard_starts[-1]
        if self.tokens == 0:
            raise BpeError(f"{self.directory} holds no ids")
        self._maps: list[Any] | None = None
        self._pid = -1
        if documents:
            self.spans = self._document_spans(index["shards"], index_path)
            self.size = len(self.spans)
        else:
            self.spans = []
            self.size = samples if samples is not None else max(1, self.tokens // length)
            rng = numpy.random.default_rng(seed)
            self.starts = rng.integers(0, max(0, self.tokens - length) + 1, size=self.size).tolist()
        if pad_id is None and (documents or self.tokens < length):
            raise BpeError(
                f"TokenShards: give pad_id: {'documents' if documents else 'the stream'} may be shorter "
                f"than length {length}"
            )

    def _document_spans(self, entries: list[Any], index_path: str) -> list[tuple[int, int]]:
        """(start, end) of each document in the stream."""
        spans: list[tuple[int, int]] = []
        for number, entry in enumerate(entries):
            start = self.shard_starts[number]
            end = self.shard_starts[number + 1]
            lengths = entry.get("lengths")
            if lengths is not None:
                if sum(lengths) != end - start:
                    raise BpeError(f"{index_path}: the lengths of {entry.get('shard')} do not add up to its ids")
                for length in lengths:
                    spans.append((start, start + length))
                    start += length
            elif self.eos_id is not None:
                ids = self._map(number)
                ends = (_numpy().flatnonzero(ids == self.eos_id) + 1 + start).tolist()
                for document_end in ends:
                    spans.append((start, document_end))
                    start = document_end
                if start < end:
                    spans.append((start, end))
            elif end > start:
                spans.append((start, end))
        return spans

    def _map(self, shard: int) -> Any:
        """The memmap of a shard, opened once per process (a forked DataLoader worker opens its own)."""
        if self._maps is None or self._pid != os.getpid():
            numpy = _numpy()
            try:
                self._maps = [
                    numpy.memmap(path, dtype=self.dtype, mode="r")
                    if os.path.getsize(path)
                    else numpy.zeros(0, self.dtype)
                    for path in self.paths
                ]
            except OSError as error:  # a shard removed, or made unreadable, since the index was read
                raise BpeError(f"cannot read {error.filename}: {error.strerror or error}") from None
            self._pid = os.getpid()
        return self._maps[shard]

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the memmaps (a spawned DataLoader worker maps the files again)."""
        state = dict(self.__dict__)
        state["_maps"] = None
        return state

    def __len__(self) -> int:
        return self.size

    def _span(self, item: int) -> tuple[int, int]:
        if not -self.size <= item < self.size:
            raise IndexError(f"TokenShards index {item} out of range for {self.size} items")
        item %= self.size
        if not self.documents:
            start = int(self.starts[item])
            return start, min(self.tokens, start + self.length)
        start, end = self.spans[item]
        if end - start > self.length:
            rng = _numpy().random.default_rng([self.seed, item])
            start += int(rng.integers(0, end - start - self.length + 1))
            end = start + self.length
        return start, end

    def __getitem__(self, item: int) -> Any:
        """The ids of item `item`: a numpy int64 array of shape (length,); with `dicts`, the dict
        of `input_ids`, `attention_mask` and `labels`."""
        if not self.dicts:
            return self._window(item)
        ids = self._window(item)
        mask = self.mask(item)
        labels = ids.copy()
        labels[~mask] = -100
        return {"input_ids": ids, "attention_mask": mask.astype(ids.dtype), "labels": labels}

    def _window(self, item: int) -> Any:
        numpy = _numpy()
        start, end = self._span(item)
        window = numpy.full(self.length, self.pad_id if self.pad_id is not None else 0, dtype=numpy.int64)
        filled = 0
        shard = max(0, _last_at_or_before(self.shard_starts, start))
        while start < end:
            shard_start = self.shard_starts[shard]
            shard_end = self.shard_starts[shard + 1]
            take = min(end, shard_end) - start
            if take > 0:
                window[filled : filled + take] = self._map(shard)[start - shard_start : start - shard_start + take]
                filled += take
                start += take
            shard += 1
        return window

    def mask(self, item: int) -> Any:
        """Which ids of item `item` are not padding: a numpy bool array of shape (length,)."""
        numpy = _numpy()
        start, end = self._span(item)
        kept = numpy.zeros(self.length, dtype=bool)
        kept[: end - start] = True
        return kept


def _last_at_or_before(starts: list[int], position: int) -> int:
    """The index of the last shard that begins at or before `position` (shards may be empty)."""
    low = 0
    high = len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= position:
            low = middle
        else:
            high = middle - 1
    return min(low, len(starts) - 2)
