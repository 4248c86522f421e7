"""A bounded open-addressing table from non-negative i64 keys to i64 values, compiled: what the
short encoder remembers about each unit it has met (`short_encoder`), in two vecs, no dict.
When it holds `limit` keys it starts afresh, which bounds its memory.
"""

from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

EMPTY: Final[i64] = -1
MISSING: Final[i64] = -1 << 62
FIRST_SLOTS: Final[i64] = 256


class IntTable:
    """key -> value; `get` gives MISSING for a key not in it.

    >>> table = IntTable(10)
    >>> table.put(7, 70)
    >>> table.get(7), table.get(8) == MISSING
    (70, True)
    """

    limit: i64
    count: i64
    keys: vec[i64]  # EMPTY: a free slot
    values: vec[i64]

    def __init__(self, limit: i64) -> None:
        self.limit = limit
        self.clear()

    def clear(self) -> None:
        self.keys = vec[i64]([EMPTY] * FIRST_SLOTS)
        self.values = vec[i64]([0] * FIRST_SLOTS)
        self.count = 0

    def _slot(self, key: i64) -> i64:
        """The slot holding `key`, or the free slot where it would go."""
        keys = self.keys
        mask: i64 = len(keys) - 1
        mixed = (key ^ (key >> 29)) & 0x7FFFFFFF  # below 2**31: the product stays below 2**63
        slot = ((mixed * 2654435761) >> 7) & mask
        while keys[slot] != EMPTY and keys[slot] != key:
            slot = (slot + 1) & mask
        return slot

    def get(self, key: i64) -> i64:
        """(`_slot`'s probe written out: the short encoder looks up a unit per new character.)"""
        keys = self.keys
        mask: i64 = len(keys) - 1
        mixed = (key ^ (key >> 29)) & 0x7FFFFFFF
        slot = ((mixed * 2654435761) >> 7) & mask
        while True:
            stored = keys[slot]
            if stored == key:
                return self.values[slot]
            if stored == EMPTY:
                return MISSING
            slot = (slot + 1) & mask

    def put(self, key: i64, value: i64) -> None:
        """Set a key's value (a new key may grow the table, or empty it at the limit)."""
        slot = self._slot(key)
        if self.keys[slot] == key:
            self.values[slot] = value
            return
        if 2 * (self.count + 1) > len(self.keys):
            old_keys = self.keys
            old_values = self.values
            if self.count >= self.limit:
                self.clear()
            else:
                self.keys = vec[i64]([EMPTY] * (2 * len(old_keys)))
                self.values = vec[i64]([0] * (2 * len(old_keys)))
                self.count = 0
                for index in range(len(old_keys)):
                    if old_keys[index] != EMPTY:
                        self._set(old_keys[index], old_values[index])
        self._set(key, value)

    def _set(self, key: i64, value: i64) -> None:
        slot = self._slot(key)
        self.keys[slot] = key
        self.values[slot] = value
        self.count += 1
