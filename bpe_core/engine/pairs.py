"""The trainer's pairs: ids, counts and where each pair was created, all in unboxed vecs (ids,
positions and chains in 32 bits: the trainer's positions and ids fit; counts in 64).

A pair (left, right) gets a dense id on first sight through an open-addressing hash table of
integers (no Python dict, so no boxed keys). Each pair has a singly linked chain of the positions
where it was created, kept in one shared pool; a chain entry goes stale when its position stops
starting that pair, and the trainer skips stale entries when it merges the pair. A pair the
trainer's veto forbids is kept in the hash table with the id VETOED and nothing else, so each later
occurrence costs the one lookup any pair costs. This module does not decide which pair to merge.
"""

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

NO_PAIR: Final[i64] = -1
END: Final[i64] = -1
EMPTY: Final[i64] = -1
VETOED: Final[i64] = -2


def _slot(key: i64, mask: i64) -> i64:
    # mix the high bits in, and keep the product below 2**63 so pure and compiled agree
    mixed = (key ^ (key >> 29)) & 0x7FFFFFFF
    return ((mixed * 2654435761) >> 7) & mask


def _empty_keys(capacity: i64) -> vec[i64]:
    # filled in place: a list of `capacity` EMPTYs to build it from would cost 8 bytes a slot more;
    # counted in an i64, as mypyc boxes the index of `for _ in range(...)` on every turn (a
    # tenth of training's instructions went to growing these tables)
    keys = vec[i64](capacity=capacity)
    while len(keys) < capacity:
        keys = append(keys, EMPTY)
    return keys


def _empty_ids(capacity: i64) -> vec[i32]:
    ids = vec[i32](capacity=capacity)
    while len(ids) < capacity:
        ids = append(ids, i32(EMPTY))
    return ids


class PairTable:
    """Dense pair ids with counts and occurrence chains."""

    id_bound: i64
    left: vec[i32]
    right: vec[i32]
    count: vec[i64]
    head: vec[i32]
    stamp: vec[i64]
    occurrence_position: vec[i32]
    occurrence_next: vec[i32]
    free_occurrence: i64
    pool_capacity: i64
    slot_keys: vec[i64]
    slot_ids: vec[i32]
    occupied: i64
    mask: i64

    def __init__(self, id_bound: i64) -> None:
        self.id_bound = id_bound
        self.left = vec[i32]()
        self.right = vec[i32]()
        self.count = vec[i64]()
        self.head = vec[i32]()
        self.stamp = vec[i64]()
        self.occurrence_position = vec[i32]()
        self.occurrence_next = vec[i32]()
        self.free_occurrence = END
        self.pool_capacity = 0
        capacity: i64 = 1024
        self.slot_keys, self.slot_ids = _empty_keys(capacity), _empty_ids(capacity)
        self.occupied = 0
        self.mask = capacity - 1

    def size(self) -> i64:
        return len(self.left)

    def find(self, left: i64, right: i64) -> i64:
        """The id of (left, right); NO_PAIR if it was never added, VETOED if it is forbidden."""
        key = left * self.id_bound + right
        slot = _slot(key, self.mask)
        slot_keys = self.slot_keys
        while True:
            stored = slot_keys[slot]
            if stored == key:
                return i64(self.slot_ids[slot])
            if stored == EMPTY:
                return NO_PAIR
            slot = (slot + 1) & self.mask

    def add(self, left: i64, right: i64) -> i64:
        """A new id for (left, right), which must not be in the table yet."""
        pair_id: i64 = len(self.left)
        self._insert(left * self.id_bound + right, pair_id)
        self.left = append(self.left, i32(left))
        self.right = append(self.right, i32(right))
        self.count = append(self.count, 0)
        self.head = append(self.head, i32(END))
        self.stamp = append(self.stamp, 0)
        return pair_id

    def forbid(self, left: i64, right: i64) -> None:
        """From now on `find` gives VETOED for (left, right). A pair that had an id keeps its id's
        entries (the trainer empties them); the table no longer leads to it."""
        key = left * self.id_bound + right
        slot = _slot(key, self.mask)
        slot_keys = self.slot_keys
        while True:
            stored = slot_keys[slot]
            if stored == key:
                self.slot_ids[slot] = i32(VETOED)
                return
            if stored == EMPTY:
                break
            slot = (slot + 1) & self.mask
        self._insert(key, VETOED)

    def _insert(self, key: i64, pair_id: i64) -> None:
        if 2 * (self.occupied + 1) > len(self.slot_keys):
            self._grow()
        self.occupied += 1
        slot = _slot(key, self.mask)
        slot_keys = self.slot_keys
        while slot_keys[slot] != EMPTY:
            slot = (slot + 1) & self.mask
        slot_keys[slot] = key
        self.slot_ids[slot] = i32(pair_id)

    def _grow(self) -> None:
        old_keys = self.slot_keys
        old_ids = self.slot_ids
        capacity: i64 = 2 * len(old_keys)
        self.slot_keys, self.slot_ids = _empty_keys(capacity), _empty_ids(capacity)
        self.mask = capacity - 1
        slot_keys = self.slot_keys
        slot_ids = self.slot_ids
        for index in range(len(old_keys)):
            key = old_keys[index]
            if key == EMPTY:
                continue
            slot = _slot(key, self.mask)
            while slot_keys[slot] != EMPTY:
                slot = (slot + 1) & self.mask
            slot_keys[slot] = key
            slot_ids[slot] = old_ids[index]

    def reserve_occurrences(self, expected: i64) -> None:
        """Size the pool for `expected` entries at once (a genome's first chains): grown by appends
        it would double, and peak at three times its size while a full buffer is copied."""
        if expected > self.pool_capacity:
            self.pool_capacity = expected
            self.occurrence_position = vec[i32](self.occurrence_position, capacity=expected)
            self.occurrence_next = vec[i32](self.occurrence_next, capacity=expected)

    def pool_full(self) -> bool:
        return self.free_occurrence == END and len(self.occurrence_position) >= self.pool_capacity

    def sweep(self, pair_at: vec[i32]) -> None:
        """Return every stale chain entry (its position no longer starts the pair: `pair_at` says
        what does) to the pool, keeping each chain's order; grow the pool by a quarter if that
        freed less than an eighth of it. Called when the pool is full, so sweeping costs O(1) per
        entry over time and the pool stays near the live entries, at most one per position."""
        size: i64 = len(self.occurrence_position)
        if 8 * self._drop_stale(pair_at) <= size:
            # one array at a time, and no other reference to the old buffers: each copy briefly
            # holds the old and the new buffer of one array only
            self.pool_capacity = max(size + size // 4, 1024)
            self.occurrence_position = vec[i32](self.occurrence_position, capacity=self.pool_capacity)
            self.occurrence_next = vec[i32](self.occurrence_next, capacity=self.pool_capacity)

    def _drop_stale(self, pair_at: vec[i32]) -> i64:
        position_of = self.occurrence_position
        next_of = self.occurrence_next
        freed: i64 = 0
        for pair_id in range(len(self.head)):
            node = i64(self.head[pair_id])
            kept: i64 = END
            while node != END:
                following = i64(next_of[node])
                if i64(pair_at[i64(position_of[node])]) == pair_id:
                    if kept == END:
                        self.head[pair_id] = i32(node)
                    else:
                        next_of[kept] = i32(node)
                    kept = node
                else:
                    self.release_occurrence(node)
                    freed += 1
                node = following
            if kept == END:
                self.head[pair_id] = i32(END)
            else:
                next_of[kept] = i32(END)
        return freed

    def add_occurrence(self, pair_id: i64, position: i64) -> None:
        node = self.free_occurrence
        if node != END:
            self.free_occurrence = i64(self.occurrence_next[node])
            self.occurrence_position[node] = i32(position)
            self.occurrence_next[node] = self.head[pair_id]
        else:
            node = len(self.occurrence_position)
            self.occurrence_position = append(self.occurrence_position, i32(position))
            self.occurrence_next = append(self.occurrence_next, self.head[pair_id])
        self.head[pair_id] = i32(node)

    def release_occurrence(self, node: i64) -> None:
        """Return a chain entry to the pool (the caller has read it and unlinked its chain)."""
        self.occurrence_next[node] = i32(self.free_occurrence)
        self.free_occurrence = node
