"""A bounded cache from chunks, given as byte ranges of a buffer the caller holds (packed symbol
ids), to their token ids.

Encoding meets the same short chunks again and again; here a chunk is looked up without making
a Python object for it: it is hashed and compared eight bytes at a time (`librt.strings.read_i64_le`)
against keys stored as i64 words, as `chunk_counts` does. Each cached chunk keeps its ids as one
list, which the caller extends its output with. The cache is emptied whole when it holds `size`
chunks, which bounds its memory.

Buffers must have 8 readable bytes past every range (callers pad with `chunk_counts.PADDING`).
It does no encoding and knows nothing of text.
"""

from typing import Final

from librt.strings import read_i64_le
from librt.vecs import append, vec
from mypy_extensions import i64

from bpe_core.engine.chunk_counts import mix_word

EMPTY: Final[i64] = -1
WORD: Final[i64] = 8
FIRST_SLOTS: Final[i64] = 1 << 12


class RangeCache:
    """Chunks (byte ranges) -> ids; `find` one, `add` one after a miss.

    >>> cache = RangeCache(10)
    >>> cache.add(b"abc" + bytes(8), 0, 3, [7])
    >>> cache.find(b"xabc" + bytes(8), 1, 4)
    [7]
    """

    size: i64
    words: vec[i64]  # every key's bytes, little-endian, in whole words, zero-padded
    word_start: vec[i64]
    length: vec[i64]
    key_hash: vec[i64]
    ids: list[list[int]]
    slots: vec[i64]
    mask: i64
    # [r]: the low r bytes of a word, r = 0..8 (a table: mypyc shifts `1 << 8 * r` as a 32-bit C int)
    word_masks: vec[i64]

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.word_masks = vec[i64]([int("FF" * remaining or "0", 16) for remaining in range(8)] + [-1])
        self.clear()

    def clear(self) -> None:
        self.words = vec[i64]()
        self.word_start = vec[i64]()
        self.length = vec[i64]()
        self.key_hash = vec[i64]()
        self.ids = []
        self.slots = vec[i64]([EMPTY] * FIRST_SLOTS)
        self.mask = FIRST_SLOTS - 1

    def entries(self) -> i64:
        """Chunks cached now."""
        return len(self.length)

    def _word(self, data: bytes, position: i64, remaining: i64) -> i64:
        """The word at position, with only its first `remaining` bytes (all 8 from 8 on)."""
        return read_i64_le(data, position) & self.word_masks[remaining if remaining < WORD else WORD]

    def _hash(self, data: bytes, start: i64, end: i64) -> i64:
        size = end - start
        state: i64 = size
        offset: i64 = 0
        while offset < size:
            state = mix_word(state, self._word(data, start + offset, size - offset))
            offset += WORD
        return state

    def find(self, data: bytes, start: i64, end: i64) -> list[int] | None:
        """The ids cached for data[start:end], or None."""
        state = self._hash(data, start, end)
        size = end - start
        slot = (state ^ (state >> 17)) & self.mask
        slots = self.slots
        while True:
            entry = slots[slot]
            if entry == EMPTY:
                return None
            if self.key_hash[entry] == state and self.length[entry] == size and self._same(entry, data, start):
                return self.ids[entry]
            slot = (slot + 1) & self.mask

    def _same(self, entry: i64, data: bytes, start: i64) -> bool:
        size = self.length[entry]
        words = self.words
        first = self.word_start[entry]
        offset: i64 = 0
        index: i64 = 0
        while offset < size:
            if words[first + index] != self._word(data, start + offset, size - offset):
                return False
            offset += WORD
            index += 1
        return True

    def add(self, data: bytes, start: i64, end: i64, ids: list[int]) -> None:
        """Cache ids for data[start:end], which `find` did not have (emptying the cache first when full)."""
        if len(self.length) >= self.size:
            self.clear()
        state = self._hash(data, start, end)
        size = end - start
        slot = (state ^ (state >> 17)) & self.mask
        slots = self.slots
        while slots[slot] != EMPTY:
            slot = (slot + 1) & self.mask
        slots[slot] = len(self.length)
        self.word_start = append(self.word_start, len(self.words))
        self.length = append(self.length, size)
        self.key_hash = append(self.key_hash, state)
        self.ids.append(ids)
        offset: i64 = 0
        while offset < size:
            self.words = append(self.words, self._word(data, start + offset, size - offset))
            offset += WORD
        if 2 * len(self.length) > len(self.slots):
            self._grow()

    def _grow(self) -> None:
        capacity: i64 = 2 * len(self.slots)
        mask = capacity - 1
        slots = vec[i64]([EMPTY] * capacity)
        hashes = self.key_hash
        for entry in range(len(hashes)):
            state = hashes[entry]
            slot = (state ^ (state >> 17)) & mask
            while slots[slot] != EMPTY:
                slot = (slot + 1) & mask
            slots[slot] = entry
        self.slots = slots
        self.mask = mask
