"""A max-heap of pair entries for the trainer, kept in parallel typed lists.

An entry is (count, tie, pair id); the best entry has the highest count and, among equal counts,
the highest tie key. The trainer encodes its tie-break rule into the tie key, so the heap itself
knows no rule. Entries go stale when counts change; the trainer discards them lazily. This module
does not know what a pair is.
"""


class PairHeap:
    """Binary max-heap on (count, tie) with a pair id payload; no dicts, no tuples, no heapq."""

    counts: list[int]
    ties: list[int]
    pair_ids: list[int]

    def __init__(self) -> None:
        self.counts = []
        self.ties = []
        self.pair_ids = []

    def __len__(self) -> int:
        return len(self.pair_ids)

    def push(self, count: int, tie: int, pair_id: int) -> None:
        counts = self.counts
        ties = self.ties
        pair_ids = self.pair_ids
        counts.append(count)
        ties.append(tie)
        pair_ids.append(pair_id)
        child = len(pair_ids) - 1
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

    def top_count(self) -> int:
        return self.counts[0]

    def top_pair(self) -> int:
        return self.pair_ids[0]

    def pop(self) -> None:
        """Remove the best entry (the heap must not be empty)."""
        counts = self.counts
        ties = self.ties
        pair_ids = self.pair_ids
        last_count = counts.pop()
        last_tie = ties.pop()
        last_pair = pair_ids.pop()
        size = len(pair_ids)
        if size == 0:
            return
        parent = 0
        while True:
            child = 2 * parent + 1
            if child >= size:
                break
            right = child + 1
            if right < size and (
                counts[right] > counts[child]
                or (counts[right] == counts[child] and ties[right] > ties[child])
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
