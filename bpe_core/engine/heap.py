"""A max-heap of pair entries for the trainer, kept in unboxed i64 vecs, and the two steps of a
min-heap of plain i64 keys for the encoders (`sift_up`, `sift_down`).

An entry is (count, tie, pair id); the best entry has the highest count and, among equal counts,
the highest tie key. The trainer encodes its tie-break rule into the tie key, so the heap itself
knows no rule. Entries go stale when counts change; the trainer discards them lazily. This module
does not know what a pair is.
"""

from librt.vecs import append, pop, vec
from mypy_extensions import i64


class PairHeap:
    """Binary max-heap on (count, tie) with a pair id payload; no tuples, no heapq, no boxing."""

    counts: vec[i64]
    ties: vec[i64]
    pair_ids: vec[i64]

    def __init__(self) -> None:
        self.counts = vec[i64]()
        self.ties = vec[i64]()
        self.pair_ids = vec[i64]()

    def size(self) -> i64:
        return len(self.pair_ids)

    def push(self, count: i64, tie: i64, pair_id: i64) -> None:
        # vecs are values: append may return a new buffer, so write the fields back first
        self.counts = append(self.counts, count)
        self.ties = append(self.ties, tie)
        self.pair_ids = append(self.pair_ids, pair_id)
        counts = self.counts
        ties = self.ties
        pair_ids = self.pair_ids
        child: i64 = len(pair_ids) - 1
        while child > 0:
            parent = (child - 1) >> 1
            parent_count = counts[parent]
            if parent_count > count or (parent_count == count and ties[parent] >= tie):
                break
            counts[child] = parent_count
            ties[child] = ties[parent]
            pair_ids[child] = pair_ids[parent]
            child = parent
        counts[child] = count
        ties[child] = tie
        pair_ids[child] = pair_id

    def top_count(self) -> i64:
        return self.counts[0]

    def top_pair(self) -> i64:
        return self.pair_ids[0]

    def pop(self) -> None:
        """Remove the best entry (the heap must not be empty)."""
        self.counts, last_count = pop(self.counts)
        self.ties, last_tie = pop(self.ties)
        self.pair_ids, last_pair = pop(self.pair_ids)
        counts = self.counts
        ties = self.ties
        pair_ids = self.pair_ids
        size: i64 = len(pair_ids)
        if size == 0:
            return
        parent: i64 = 0
        while True:
            child = 2 * parent + 1
            if child >= size:
                break
            right = child + 1
            if right < size and (
                counts[right] > counts[child] or (counts[right] == counts[child] and ties[right] > ties[child])
            ):
                child = right
            child_count = counts[child]
            if child_count < last_count or (child_count == last_count and ties[child] <= last_tie):
                break
            counts[parent] = child_count
            ties[parent] = ties[child]
            pair_ids[parent] = pair_ids[child]
            parent = child
        counts[parent] = last_count
        ties[parent] = last_tie
        pair_ids[parent] = last_pair


def sift_up(keys: vec[i64], child: i64, key: i64) -> None:
    """Put key at index `child` of the min-heap in keys[:child + 1] (its entries below `child` in
    heap order) and move it up to its place."""
    while child > 0:
        parent = (child - 1) >> 1
        if keys[parent] <= key:
            break
        keys[child] = keys[parent]
        child = parent
    keys[child] = key


def sift_down(keys: vec[i64], held: i64, key: i64) -> None:
    """Put key at the top of the min-heap in keys[:held] (the old top taken off) and move it down
    to its place; nothing when the heap is empty."""
    if held <= 0:
        return
    parent: i64 = 0
    while True:
        child = 2 * parent + 1
        if child >= held:
            break
        if child + 1 < held and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[parent] = keys[child]
        parent = child
    keys[parent] = key
