"""Rank-ordered BPE encoding of one short chunk given as a byte range of a buffer (packed symbol
ids, one byte each), compiled to work on unboxed integers only.

The quadratic scan tiktoken uses (cheapest for a word): the ranks of neighbouring pairs in an
i64 vec, the lowest taken first and the leftmost on ties, the two ranks beside a merge looked up
again. A pair of ids below 256 (every pair of the first pass) is read from a 65,536-entry table of i32s;
other pairs from an open-addressing pair -> rank table of integers (key and rank side by side),
not a dict. The chunk's
symbols are read straight from the caller's bytes, so no Python object is made per symbol, and
the ids come out in the output layout. It gives exactly what `encoder.Encoder` gives for the
same chunk.

It is for chunks shorter than `encoder.LONG_CHUNK` (the caller sends longer ones to the heap or
whole-chunk encoders) and does not cache: `encoder.Encoder.encode_range` does both.
"""

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64

NO_RANK: Final[i64] = 1 << 60
NO_BYTE_RANK: Final[i32] = -1
EMPTY: Final[i64] = -1
BYTE_PAIRS: Final[i64] = 256 * 256


class ShortEncoder:
    """Applies merges by rank to short packed chunks; `merges[r]` creates `results[r]`, and
    `output_ids[token]` is the id a token is written as (-1 drops it; an empty list: as it is).

    >>> ShortEncoder(3, [(0, 1), (3, 2)], [3, 4], []).encode(bytes([0, 1, 2, 0]), 0, 4)
    [4, 0]
    """

    id_bound: i64
    byte_ranks: vec[i32]  # [left * 256 + right]: the rank of a pair of ids below 256
    slots: vec[i64]  # per slot: pair key, rank (side by side: one cache line per probe)
    mask: i64  # slot count - 1
    results: vec[i64]
    output: vec[i64]
    mapped: bool
    # scratch, reused between calls
    parts: vec[i64]
    ranks: vec[i64]

    def __init__(
        self, alphabet_size: int, merges: list[tuple[int, int]], results: list[int], output_ids: list[int]
    ) -> None:
        """A pair listed twice keeps its first rank."""
        self.id_bound = alphabet_size + len(merges) + 1
        self.byte_ranks = vec[i32]([NO_BYTE_RANK] * BYTE_PAIRS)
        capacity: i64 = 16
        while capacity < 2 * len(merges) + 2:
            capacity *= 2
        self.slots = vec[i64]([EMPTY] * (2 * capacity))
        self.mask = capacity - 1
        for rank in range(len(merges)):
            left: i64 = merges[rank][0]
            right: i64 = merges[rank][1]
            if left < 256 and right < 256 and self.byte_ranks[left * 256 + right] == NO_BYTE_RANK:
                self.byte_ranks[left * 256 + right] = i32(rank)
            self._insert(left * self.id_bound + right, rank)
        self.results = vec[i64](results)
        self.output = vec[i64](output_ids)
        self.mapped = len(output_ids) > 0
        self.parts = vec[i64]()
        self.ranks = vec[i64]()

    def _slot(self, key: i64) -> i64:
        # mix the high bits in, and keep the product below 2**63 so pure and compiled agree
        mixed = (key ^ (key >> 29)) & 0x7FFFFFFF
        return ((mixed * 2654435761) >> 7) & self.mask

    def _insert(self, key: i64, rank: i64) -> None:
        slot = self._slot(key)
        while self.slots[2 * slot] != EMPTY:
            if self.slots[2 * slot] == key:
                return  # the first rank of a pair counts
            slot = (slot + 1) & self.mask
        self.slots[2 * slot] = key
        self.slots[2 * slot + 1] = rank

    def rank_of(self, left: i64, right: i64) -> i64:
        """The rank of pair (left, right), NO_RANK if no merge makes it."""
        if left < 256 and right < 256:
            rank = i64(self.byte_ranks[left * 256 + right])
            return NO_RANK if rank == NO_BYTE_RANK else rank
        key = left * self.id_bound + right
        slot = self._slot(key)
        slots = self.slots
        while True:
            stored = slots[2 * slot]
            if stored == key:
                return slots[2 * slot + 1]
            if stored == EMPTY:
                return NO_RANK
            slot = (slot + 1) & self.mask

    def encode(self, data: bytes, start: i64, end: i64) -> list[int]:
        """The ids (output layout) of the chunk data[start:end], one symbol id per byte."""
        size = end - start
        if size <= 0:
            return []
        if len(self.parts) < size:
            self.parts = vec[i64]([0] * size)
            self.ranks = vec[i64]([0] * size)
        parts = self.parts
        ranks = self.ranks
        byte_ranks = self.byte_ranks
        previous: i64 = data[start]
        parts[0] = previous
        for index in range(1, size):
            symbol: i64 = data[start + index]
            parts[index] = symbol
            rank = i64(byte_ranks[previous * 256 + symbol])
            ranks[index - 1] = NO_RANK if rank == NO_BYTE_RANK else rank
            previous = symbol
        count = size
        while count > 1:
            best_rank = NO_RANK
            best: i64 = -1
            for index in range(count - 1):
                if ranks[index] < best_rank:
                    best_rank = ranks[index]
                    best = index
            if best < 0:
                break
            new_id = self.results[best_rank]
            parts[best] = new_id
            count -= 1
            for index in range(best + 1, count):
                parts[index] = parts[index + 1]
            for index in range(best, count - 1):
                ranks[index] = ranks[index + 1]
            if best < count - 1:
                ranks[best] = self.rank_of(new_id, parts[best + 1])
            if best > 0:
                ranks[best - 1] = self.rank_of(parts[best - 1], new_id)
        result: list[int] = []
        if self.mapped:
            output = self.output
            for index in range(count):
                token = output[parts[index]]
                if token >= 0:
                    result.append(token)
        else:
            for index in range(count):
                result.append(parts[index])
        return result
