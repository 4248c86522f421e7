"""A bounded cache from chunks, given as byte ranges of a buffer the caller holds (packed symbol
ids), to their token ids.

Encoding meets the same short chunks again and again; a chunk is looked up without making a
Python object for it (`tables.RangeTable`; a chunk of up to 8 bytes, most of them, is found in
one cache line). A slot's value says where the chunk's ids are: the ids of all cached chunks are
one list, so caching makes no object the garbage collector must visit. The cache is emptied whole
when it holds `size` chunks, which bounds its memory. It does no encoding and knows nothing of
text.
"""

from typing import Final, cast

from librt.strings import read_i64_le
from mypy_extensions import i64

from bpe_core.engine.tables import EMPTY, HASH_BITS, LENGTH_BITS, RANGE_SLOT, WORD, RangeTable, mix_word, range_home

FIRST_SLOTS: Final[i64] = 1 << 6
ID_BITS: Final[i64] = 24  # a value: where the chunk's ids start << ID_BITS | how many there are
ID_COUNT: Final[i64] = (1 << 24) - 1


class RangeCache(RangeTable):
    """Chunks (byte ranges) -> ids; `extend_found` one, `add` one after a miss.

    >>> cache = RangeCache(10)
    >>> cache.add(b"abc" + bytes(8), 0, 3, [7, 8])
    >>> ids = []
    >>> cache.extend_found(b"xabc" + bytes(8), 1, 4, ids), ids
    (True, [7, 8])
    """

    limit: i64
    # every cached chunk's ids, one after the other; `object`, so mypyc copies them to the output
    # as they are instead of unboxing and boxing each
    ids: list[object]

    def __init__(self, size: int) -> None:
        self.limit = max(1, size)
        self.ids = []
        super().__init__(FIRST_SLOTS)

    def clear(self) -> None:
        super().clear()
        self.ids = []

    def extend_found(self, data: bytes, start: i64, end: i64, out: list[int]) -> bool:
        """Extend `out` with the ids cached for data[start:end] and say True, or say False.
        (The first word, the hash's first step and the probe written out: it runs once per
        chunk.)"""
        size = end - start
        first = read_i64_le(data, start) & self.word_masks[size if size < WORD else WORD]
        state = mix_word(size, first) if size <= WORD else self.key_hash(data, start, size, first)
        hashed = state & HASH_BITS
        tag = (hashed << LENGTH_BITS) | size
        slots = self.slots
        mask = self.mask
        slot = (hashed ^ (hashed >> 17)) & mask  # range_home, written out
        while True:
            base = slot * RANGE_SLOT
            stored = slots[base]
            if stored == EMPTY:
                return False
            if stored == tag and slots[base + 1] == first:
                if size <= WORD or self.same_rest(slots[base + 3], data, start):
                    break
            slot = (slot + 1) & mask
        value = slots[base + 2]
        begin = value >> ID_BITS
        ids = self.ids
        sink = cast(list[object], out)
        for index in range(begin, begin + (value & ID_COUNT)):
            sink.append(ids[index])
        return True

    def add(self, data: bytes, start: i64, end: i64, ids: list[int], begin: i64 = 0) -> None:
        """Cache ids[begin:] for data[start:end], which is not cached (emptying the cache first
        when full; a chunk of 2**24 ids or more is not cached)."""
        count: i64 = len(ids) - begin
        if count >> ID_BITS != 0 or (end - start) >> LENGTH_BITS != 0:
            return
        if self.size() >= self.limit:
            self.clear()
        size = end - start
        first = self.key_word(data, start, size)
        state = mix_word(size, first) if size <= WORD else self.key_hash(data, start, size, first)
        hashed = state & HASH_BITS
        slots = self.slots
        mask = self.mask
        slot = range_home(hashed, mask)
        while slots[slot * RANGE_SLOT] != EMPTY:
            slot = (slot + 1) & mask
        value = len(self.ids) << ID_BITS | count
        cached = self.ids
        given = cast(list[object], ids)
        for index in range(begin, len(given)):
            cached.append(given[index])
        self.insert_key(slot * RANGE_SLOT, (hashed << LENGTH_BITS) | size, first, value, data, start)
