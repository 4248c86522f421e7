"""The trainer's max-heap of pair entries, kept in an unboxed i64 vec.

An entry is (count, tie, pair id); the best entry has the highest count and, among equal counts,
the highest tie key. The trainer encodes its tie-break rule into the tie key, so the heap itself
knows no rule. Entries are lazy (`PairHeap.best` says how). This module does not know what a pair
is.
"""

from typing import Final

from librt.vecs import append, pop, vec
from mypy_extensions import i64

ENTRY: Final[i64] = 3  # an entry: count, tie, pair id


class PairHeap:
    """Binary max-heap on (count, tie) with a pair id payload; no tuples, no heapq, no boxing.
    An entry's three values sit side by side in one vec, so a step down the heap reads one
    cache line, not one in each of three vecs."""

    entries: vec[i64]  # count, tie, pair id per entry, in heap order
    listed: vec[i64]  # per pair id: the count of its latest entry (0: none)

    def __init__(self) -> None:
        self.entries = vec[i64]()
        self.listed = vec[i64]()

    def size(self) -> i64:
        return len(self.entries) // ENTRY

    def rose(self, pair_id: i64, count: i64) -> bool:
        """Whether `count` is above the pair's latest entry's (so it needs a new entry)."""
        return pair_id >= len(self.listed) or count > self.listed[pair_id]

    def best(self, counts: vec[i64]) -> i64:
        """The pair with the highest count now (then tie key), -1 if none has a count. Every pair
        with a count must have an entry at or above it, its latest: a pair whose count rose gets
        a new entry (`rose`), one whose count fell keeps its entry, which is pushed again at the
        count when it comes to the top (a merge lowers thousands of pairs' counts and raises few,
        so pushing only the risen ones keeps the heap small). The first entry at the top that is
        its pair's count is the best."""
        entries = self.entries
        while len(entries) > 0:
            pair_id = entries[2]
            listed = entries[0]
            count = counts[pair_id]
            if listed == count:
                return pair_id
            tie = entries[1]
            self.pop()
            if listed == self.listed[pair_id]:  # its latest entry
                if count > 0:
                    self.push(count, tie, pair_id)
                else:
                    self.listed[pair_id] = 0  # none now: should its count rise again (picky.py), it gets one
            entries = self.entries
        return -1

    def push(self, count: i64, tie: i64, pair_id: i64) -> None:
        while len(self.listed) <= pair_id:
            self.listed = append(self.listed, 0)
        self.listed[pair_id] = count
        # vecs are values: append may return a new buffer, so write the field back first
        self.entries = append(self.entries, count)
        self.entries = append(self.entries, tie)
        self.entries = append(self.entries, pair_id)
        entries = self.entries
        child: i64 = len(entries) // ENTRY - 1
        while child > 0:
            parent = (child - 1) >> 1
            above = parent * ENTRY
            parent_count = entries[above]
            if parent_count > count or (parent_count == count and entries[above + 1] >= tie):
                break
            below = child * ENTRY
            entries[below] = parent_count
            entries[below + 1] = entries[above + 1]
            entries[below + 2] = entries[above + 2]
            child = parent
        below = child * ENTRY
        entries[below] = count
        entries[below + 1] = tie
        entries[below + 2] = pair_id

    def pop(self) -> None:
        """Remove the best entry (the heap must not be empty)."""
        self.entries, last_pair = pop(self.entries)
        self.entries, last_tie = pop(self.entries)
        self.entries, last_count = pop(self.entries)
        entries = self.entries
        size: i64 = len(entries) // ENTRY
        if size == 0:
            return
        parent: i64 = 0
        while True:
            child = 2 * parent + 1
            if child >= size:
                break
            left = child * ENTRY
            if child + 1 < size:
                right = left + ENTRY
                if entries[right] > entries[left] or (
                    entries[right] == entries[left] and entries[right + 1] > entries[left + 1]
                ):
                    child += 1
            below = child * ENTRY
            child_count = entries[below]
            if child_count < last_count or (child_count == last_count and entries[below + 1] <= last_tie):
                break
            above = parent * ENTRY
            entries[above] = child_count
            entries[above + 1] = entries[below + 1]
            entries[above + 2] = entries[below + 2]
            parent = child
        above = parent * ENTRY
        entries[above] = last_count
        entries[above + 1] = last_tie
        entries[above + 2] = last_pair
