"""The engine's one hash and its one integer table.

`mix` hashes a non-negative integer key; `mix_word` folds one more word of a byte-string key into
a running hash (the byte-range tables, `ChunkCounts` and `RangeCache`, hash their keys with it).
Both keep every product below 2**63, so compiled code (which would wrap) and pure Python (which
would not) give the same hashes, and so the same table layouts.

`IntTable` maps non-negative i64 keys to i64 values by open addressing with linear probing, each
slot's key and value side by side in one vec, so a lookup reads one cache line. Every table of
integer keys in the engine is one: the trainer's pair ids, the encoders' pair ranks, what the
unit reader remembers. A table may be bounded: at `limit` keys it starts afresh, which bounds the
memory of a cache.
"""

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

MULTIPLIER: Final[i64] = 2654435761  # Knuth's multiplicative hash: 2**32 / the golden ratio
EMPTY: Final[i64] = -1
MISSING: Final[i64] = -1 << 62
NO_LIMIT: Final[i64] = 1 << 62
# packed chunks (`Encoder.encode_ranges`, `ChunkCounts.add_ranges`) are given by where each ends in
# the packed symbols: a little-endian 32-bit offset each, so fewer than 2**31 symbols (the trainer
# and the bucket encoder take no more in any case)
END_WIDTH: Final[i64] = 4
MAX_PACKED: Final[i64] = 1 << 31
FIRST_SLOTS: Final[i64] = 256


def mix(key: i64) -> i64:
    """The hash of a non-negative key (its high bits folded in, the product below 2**63)."""
    folded = (key ^ (key >> 29)) & 0x7FFFFFFF
    return (folded * MULTIPLIER) >> 7


def mix_word(state: i64, word: i64) -> i64:
    """A running hash with the next word of a key folded in (never negative)."""
    folded = (word ^ (word >> 32)) & 0xFFFFFFFF
    mixed = ((state ^ folded) & 0x7FFFFFFF) * MULTIPLIER
    return mixed ^ (mixed >> 29)


def empty_slots(size: i64) -> vec[i64]:
    """`size` i64s of EMPTY."""
    return vec[i64]([EMPTY] * size)


@final
class IntTable:
    """key -> value for keys >= 0; `get` gives MISSING for a key not in it.

    >>> table = IntTable()
    >>> table.put(7, 70)
    >>> table.get(7), table.get(8) == MISSING
    (70, True)
    """

    limit: i64
    count: i64
    slots: vec[i64]  # per slot: key (EMPTY: free), value
    mask: i64  # slot count - 1

    def __init__(self, limit: i64 = NO_LIMIT, expected: i64 = 0) -> None:
        """`limit`: keys held before the table empties itself; `expected`: keys to make room for
        at once (no growing on the way there)."""
        self.limit = limit
        self.count = 0
        slot_count: i64 = FIRST_SLOTS
        while slot_count < 2 * expected + 2:
            slot_count *= 2
        self.slots = empty_slots(2 * slot_count)
        self.mask = slot_count - 1

    def clear(self) -> None:
        self.count = 0
        self.slots = empty_slots(2 * FIRST_SLOTS)
        self.mask = FIRST_SLOTS - 1

    def get(self, key: i64) -> i64:
        slots = self.slots
        mask = self.mask
        slot = mix(key) & mask
        while True:
            stored = slots[2 * slot]
            if stored == key:
                return slots[2 * slot + 1]
            if stored == EMPTY:
                return MISSING
            slot = (slot + 1) & mask

    def put(self, key: i64, value: i64) -> None:
        """Set a key's value (a new key may grow the table, or empty it at the limit)."""
        slot = self._slot(key)
        if self.slots[2 * slot] == key:
            self.slots[2 * slot + 1] = value
            return
        if 2 * (self.count + 1) > self.mask + 1:
            if self.count >= self.limit:
                self.clear()
            else:
                self._grow()
            slot = self._slot(key)
        self.slots[2 * slot] = key
        self.slots[2 * slot + 1] = value
        self.count += 1

    def _slot(self, key: i64) -> i64:
        """The slot holding `key`, or the free slot where it would go."""
        slots = self.slots
        mask = self.mask
        slot = mix(key) & mask
        while slots[2 * slot] != EMPTY and slots[2 * slot] != key:
            slot = (slot + 1) & mask
        return slot

    def _grow(self) -> None:
        old = self.slots
        old_count = self.mask + 1
        self.slots = empty_slots(4 * old_count)
        self.mask = 2 * old_count - 1
        for old_slot in range(old_count):
            key = old[2 * old_slot]
            if key != EMPTY:
                slot = self._slot(key)
                self.slots[2 * slot] = key
                self.slots[2 * slot + 1] = old[2 * old_slot + 1]
