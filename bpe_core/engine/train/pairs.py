"""The trainer's pairs: ids, counts and the first position of each pair's chain, all in unboxed
vecs (ids and positions in 32 bits: the trainer's positions and ids fit; counts in 64).

A pair (left, right) gets a dense id on first sight through the engine's integer table
(`tables.IntTable`: no Python dict, so no boxed keys). The positions where a pair starts form its chain,
doubly linked through two fields of each position's node (the trainer's), from the pair's `head`. A
pair the trainer's veto forbids is kept in the hash table with the id VETOED and nothing else, so
each later occurrence costs the one lookup any pair costs. This module does not decide which pair
to merge.
"""

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

from bpe_core.engine.tables import MISSING, IntTable

NO_PAIR: Final[i64] = -1
END: Final[i64] = -1
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


class PairTable:
    """Dense pair ids with counts and the heads of their occurrence chains."""

    id_bound: i64
    left: vec[i32]
    right: vec[i32]
    count: vec[i64]
    head: vec[i32]
    stamp: vec[i64]
    ids: IntTable  # left * id_bound + right -> pair id, or VETOED

    def __init__(self, id_bound: i64) -> None:
        self.id_bound = id_bound
        self.left = vec[i32]()
        self.right = vec[i32]()
        self.count = vec[i64]()
        self.head = vec[i32]()
        self.stamp = vec[i64]()
        self.ids = IntTable()

    def size(self) -> i64:
        return len(self.left)

    def find(self, left: i64, right: i64) -> i64:
        """The id of (left, right); NO_PAIR if it was never added, VETOED if it is forbidden."""
        pair_id = self.ids.get(left * self.id_bound + right)
        return NO_PAIR if pair_id == MISSING else pair_id

    def add(self, left: i64, right: i64) -> i64:
        """A new id for (left, right), which must not be in the table yet."""
        pair_id: i64 = len(self.left)
        self.ids.put(left * self.id_bound + right, pair_id)
        self.left = append(self.left, i32(left))
        self.right = append(self.right, i32(right))
        self.count = append(self.count, 0)
        self.head = append(self.head, i32(END))
        self.stamp = append(self.stamp, 0)
        return pair_id

    def forbid(self, left: i64, right: i64) -> None:
        """From now on `find` gives VETOED for (left, right). A pair that had an id keeps its id's
        entries (the trainer empties them); the table no longer leads to it."""
        self.ids.put(left * self.id_bound + right, VETOED)

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
