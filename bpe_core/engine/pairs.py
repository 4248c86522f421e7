"""The trainer's pairs: ids, counts and the first position of each pair's chain, all in unboxed
vecs (ids and positions in 32 bits: the trainer's positions and ids fit; counts in 64).

A pair (left, right) gets a dense id on first sight through an open-addressing hash table of
integers (no Python dict, so no boxed keys). The positions where a pair starts form its chain,
doubly linked through two fields of each position's node (the trainer's), from the pair's `head`. A
pair the trainer's veto forbids is kept in the hash table with the id VETOED and nothing else, so
each later occurrence costs the one lookup any pair costs. This module does not decide which pair
to merge.
"""

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

NO_PAIR: Final[i64] = -1
END: Final[i64] = -1
EMPTY: Final[i64] = -1
VETOED: Final[i64] = -2
# a position's node in the trainer, `stride` i32s: its symbol (DEAD once merged into the token
# before it), the position of the next token in its chunk, the id of the pair that starts there,
# its neighbours in that pair's chain, and (when chunks' weights differ) its chunk's weight, or its
# chunk's index if some weight needs more than 31 bits
SYMBOL: Final[i64] = 0
NEXT: Final[i64] = 1
PAIR: Final[i64] = 2
CHAIN_NEXT: Final[i64] = 3
CHAIN_PREV: Final[i64] = 4
WEIGHT: Final[i64] = 5


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
    """Dense pair ids with counts and the heads of their occurrence chains."""

    id_bound: i64
    left: vec[i32]
    right: vec[i32]
    count: vec[i64]
    head: vec[i32]
    stamp: vec[i64]
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

    def chain(self, node: vec[i32], stride: i64, pair_id: i64, position: i64) -> None:
        """Put `position` first in the pair's chain (its links are in its node: `stride` ints a
        position, in the trainer's `node`)."""
        first = i64(self.head[pair_id])
        at = position * stride
        node[at + CHAIN_NEXT] = i32(first)
        node[at + CHAIN_PREV] = i32(END)
        if first != END:
            node[first * stride + CHAIN_PREV] = i32(position)
        self.head[pair_id] = i32(position)

    def unchain(self, node: vec[i32], stride: i64, pair_id: i64, position: i64) -> None:
        """Take `position` out of the pair's chain (the pair no longer starts there)."""
        at = position * stride
        earlier = i64(node[at + CHAIN_PREV])
        later = i64(node[at + CHAIN_NEXT])
        if earlier != END:
            node[earlier * stride + CHAIN_NEXT] = i32(later)
        else:
            self.head[pair_id] = i32(later)
        if later != END:
            node[later * stride + CHAIN_PREV] = i32(earlier)
