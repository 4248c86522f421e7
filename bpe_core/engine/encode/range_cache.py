"""A bounded cache from chunks, given as byte ranges of a buffer the caller holds (packed symbol
ids), to their token ids.

Encoding meets the same short chunks again and again; here a chunk is looked up without making
a Python object for it: it is hashed and compared eight bytes at a time (`librt.strings.read_i64_le`)
against keys stored as i64 words, as `chunk_counts` does. A slot of the open-addressing table
holds, side by side in one vec, the key's hash, its first word, its length, where its other words
are and where its ids are, so a chunk of up to 8 bytes (most of them) is found in one cache
line. The ids of all cached chunks are one list, so caching makes no object the garbage
collector must visit. The cache is emptied whole when it holds `size` chunks, which bounds its
memory.

Buffers must have 8 readable bytes past every range (callers pad with 8 bytes).
It does no encoding and knows nothing of text.
"""

from typing import Final, cast

from librt.strings import read_i64_le
from librt.vecs import append, vec
from mypy_extensions import i64

from bpe_core.engine.tables import mix_word

EMPTY: Final[i64] = -1
WORD: Final[i64] = 8
FIRST_SLOTS: Final[i64] = 1 << 6
# a slot: hash, first word, length, first index in `words` of the other words, first index in
# `ids`, number of ids; EMPTY in the hash marks a free slot
SLOT: Final[i64] = 6


class RangeCache:
    """Chunks (byte ranges) -> ids; `extend_found` one, `add` one after a miss.

    >>> cache = RangeCache(10)
    >>> cache.add(b"abc" + bytes(8), 0, 3, [7, 8])
    >>> ids = []
    >>> cache.extend_found(b"xabc" + bytes(8), 1, 4, ids), ids
    (True, [7, 8])
    """

    size: i64
    entries: i64
    slots: vec[i64]  # SLOT values per slot
    mask: i64  # slot count - 1
    words: vec[i64]  # the words after the first of every key longer than 8 bytes
    # every cached chunk's ids, one after the other; `object`, so mypyc copies them to the output
    # as they are instead of unboxing and boxing each
    ids: list[object]
    # [r]: the low r bytes of a word, r = 0..8 (a table: mypyc shifts `1 << 8 * r` as a 32-bit C int)
    word_masks: vec[i64]

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.word_masks = vec[i64]([int("FF" * remaining or "0", 16) for remaining in range(8)] + [-1])
        self.clear()

    def clear(self) -> None:
        self.entries = 0
        self.slots = vec[i64]([EMPTY] * (FIRST_SLOTS * SLOT))
        self.mask = FIRST_SLOTS - 1
        self.words = vec[i64]()
        self.ids = []

    def _first_word(self, data: bytes, start: i64, size: i64) -> i64:
        """The key's first word (its first 8 bytes, or all of it zero-padded)."""
        return read_i64_le(data, start) & self.word_masks[size if size < WORD else WORD]

    def _hash(self, data: bytes, start: i64, size: i64, first: i64) -> i64:
        state = mix_word(size, first)
        return self._hash_rest(data, start, size, state) if size > WORD else state

    def _hash_rest(self, data: bytes, start: i64, size: i64, state: i64) -> i64:
        """`state` with the key's words after the first mixed in (mix_word is never negative, so
        neither is a hash: never EMPTY)."""
        offset: i64 = WORD
        while offset < size:
            remaining = size - offset
            word = read_i64_le(data, start + offset) & self.word_masks[remaining if remaining < WORD else WORD]
            state = mix_word(state, word)
            offset += WORD
        return state

    def _find(self, data: bytes, start: i64, size: i64, state: i64, first: i64) -> i64:
        """The slot holding data[start:start + size], or the free slot where it would go, negated - 1."""
        slots = self.slots
        mask = self.mask
        slot = (state ^ (state >> 17)) & mask
        while True:
            base = slot * SLOT
            stored = slots[base]
            if stored == EMPTY:
                return -slot - 1
            if stored == state and slots[base + 1] == first and slots[base + 2] == size:
                if size <= WORD or self._same_rest(slots[base + 3], data, start, size):
                    return slot
            slot = (slot + 1) & mask

    def _same_rest(self, word_start: i64, data: bytes, start: i64, size: i64) -> bool:
        words = self.words
        offset: i64 = WORD
        index = word_start
        while offset < size:
            remaining = size - offset
            word = read_i64_le(data, start + offset) & self.word_masks[remaining if remaining < WORD else WORD]
            if words[index] != word:
                return False
            offset += WORD
            index += 1
        return True

    def extend_found(self, data: bytes, start: i64, end: i64, out: list[int]) -> bool:
        """Extend `out` with the ids cached for data[start:end] and say True, or say False.
        (One function, with the hash and the probe written out: it runs once per chunk.)"""
        size = end - start
        first = read_i64_le(data, start) & self.word_masks[size if size < WORD else WORD]
        state = mix_word(size, first)
        if size > WORD:
            state = self._hash_rest(data, start, size, state)
        slots = self.slots
        mask = self.mask
        slot = (state ^ (state >> 17)) & mask
        while True:
            base = slot * SLOT
            stored = slots[base]
            if stored == EMPTY:
                return False
            if stored == state and slots[base + 1] == first and slots[base + 2] == size:
                if size <= WORD or self._same_rest(slots[base + 3], data, start, size):
                    break
            slot = (slot + 1) & mask
        begin = slots[base + 4]
        count = slots[base + 5]
        ids = self.ids
        sink = cast(list[object], out)
        if count == 1:
            sink.append(ids[begin])
            return True
        for index in range(begin, begin + count):
            sink.append(ids[index])
        return True

    def add(self, data: bytes, start: i64, end: i64, ids: list[int], begin: i64 = 0) -> None:
        """Cache ids[begin:] for data[start:end], which is not cached (emptying the cache first
        when full)."""
        if self.entries >= self.size:
            self.clear()
        size = end - start
        first = self._first_word(data, start, size)
        state = self._hash(data, start, size, first)
        slot = -self._find(data, start, size, state, first) - 1
        base = slot * SLOT
        slots = self.slots
        slots[base] = state
        slots[base + 1] = first
        slots[base + 2] = size
        slots[base + 3] = len(self.words)
        slots[base + 4] = len(self.ids)
        slots[base + 5] = len(ids) - begin
        offset: i64 = WORD
        while offset < size:
            remaining = size - offset
            word = read_i64_le(data, start + offset) & self.word_masks[remaining if remaining < WORD else WORD]
            self.words = append(self.words, word)
            offset += WORD
        cached = self.ids
        given = cast(list[object], ids)
        for index in range(begin, len(given)):
            cached.append(given[index])
        self.entries += 1
        if 2 * self.entries > self.mask + 1:
            self._grow()

    def _grow(self) -> None:
        old = self.slots
        capacity: i64 = 2 * (self.mask + 1)
        mask = capacity - 1
        slots = vec[i64]([EMPTY] * (capacity * SLOT))
        for old_slot in range(self.mask + 1):
            old_base = old_slot * SLOT
            state = old[old_base]
            if state == EMPTY:
                continue
            slot = (state ^ (state >> 17)) & mask
            while slots[slot * SLOT] != EMPTY:
                slot = (slot + 1) & mask
            for field in range(SLOT):
                slots[slot * SLOT + field] = old[old_base + field]
        self.slots = slots
        self.mask = mask
