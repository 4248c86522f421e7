"""A compiled table of unique chunks, as byte strings (packed symbol ids), with 64-bit counts.

Counting a corpus adds millions of chunks to a few tens of thousands of unique ones. Here a chunk
is added as a byte range of a buffer the caller already holds: it is hashed and compared eight
bytes at a time (`librt.strings.read_i64_le`) against keys stored as i64 words in a vec, so no
Python object is made per chunk, only per new unique chunk. A slot of the open-addressing table
holds, side by side, the key's length with 32 bits of its hash, its first word, its count and its
entry: a chunk of up to 8 bytes (most words) is found and counted in one cache line. (With the
hash, length and count each in their own vec, a chunk took about five cache misses to count.)
A table travels between processes as one `bytes` (`serialized`), which another table adds in
(`add_serialized`) without unpacking it into Python objects either.

Buffers handed to `add` must have 8 readable bytes past every range (the callers pad with
PADDING), since the last word of a key is read whole and masked. This module does no I/O and knows
nothing of text: a key is whatever bytes the caller packs a chunk's symbols into.
"""

from typing import Final

from librt.strings import BytesWriter, read_i32_le, read_i64_le, write_i64_le
from librt.vecs import append, vec
from mypy_extensions import i64

from bpe_core.engine.tables import END_WIDTH, mix_word

EMPTY: Final[i64] = -1
PADDING: Final = b"\x00" * 8
WORD: Final[i64] = 8
# a record of `serialized`: key length, count, then the key in whole words
RECORD_HEADER: Final[i64] = 16
# a slot: tag (32 bits of the hash above 31 of the length; EMPTY in a free slot), first word,
# count, entry (the key's index in `words`' order)
SLOT: Final[i64] = 4
HASH_BITS: Final[i64] = 0xFFFFFFFF
LENGTH_BITS: Final[i64] = 31


def _home(hashed: i64, mask: i64) -> i64:
    """The first slot to probe for a key with these 32 hash bits."""
    return (hashed ^ (hashed >> 17)) & mask


class ChunkCounts:
    """Unique byte-string keys with counts; `add` a range, `items` at the end."""

    words: vec[i64]  # every key's bytes, little-endian, in whole words, zero-padded
    word_start: vec[i64]
    length: vec[i64]
    slots: vec[i64]  # SLOT values per slot
    mask: i64  # slot count - 1
    # [r]: the low r bytes of a word, r = 0..8 (a table: mypyc shifts `1 << 8 * r` as a 32-bit C int)
    word_masks: vec[i64]

    def __init__(self) -> None:
        self.words = vec[i64]()
        self.word_start = vec[i64]()
        self.length = vec[i64]()
        capacity: i64 = 1 << 12
        self.slots = vec[i64]([EMPTY] * (capacity * SLOT))
        self.mask = capacity - 1
        self.word_masks = vec[i64]([int("FF" * remaining or "0", 16) for remaining in range(8)] + [-1])

    def _word(self, data: bytes, at: i64, remaining: i64) -> i64:
        """The key word at data[at:], its bytes past `remaining` masked off."""
        return read_i64_le(data, at) & self.word_masks[remaining if remaining < WORD else WORD]

    def size(self) -> i64:
        """Unique keys so far."""
        return len(self.length)

    def add(self, data: bytes, start: i64, end: i64, times: i64) -> None:
        """Count data[start:end] `times` more times (data holds 8 readable bytes after end).
        (One function, with the hash and the probe written out: it runs once per chunk.)"""
        size = end - start
        if size >> LENGTH_BITS != 0:
            raise ValueError(f"a chunk of {size} bytes is longer than a table key may be (2**31 - 1)")
        first = self._word(data, start, size)
        state = mix_word(size, first)
        offset: i64 = WORD
        while offset < size:
            state = mix_word(state, self._word(data, start + offset, size - offset))
            offset += WORD
        hashed = state & HASH_BITS
        tag = (hashed << LENGTH_BITS) | size
        slots = self.slots
        mask = self.mask
        slot = _home(hashed, mask)
        while True:
            base = slot * SLOT
            stored = slots[base]
            if stored == EMPTY:
                break
            if stored == tag and slots[base + 1] == first:
                if size <= WORD or self._same_rest(slots[base + 3], data, start):
                    slots[base + 2] += times
                    return
            slot = (slot + 1) & mask
        entry: i64 = len(self.length)
        slots[base] = tag
        slots[base + 1] = first
        slots[base + 2] = times
        slots[base + 3] = entry
        self.word_start = append(self.word_start, len(self.words))
        self.length = append(self.length, size)
        self.words = append(self.words, first)
        offset = WORD
        while offset < size:
            self.words = append(self.words, self._word(data, start + offset, size - offset))
            offset += WORD
        if 2 * len(self.length) > mask + 1:
            self._grow()

    def add_ranges(self, data: bytes, ends: bytes, first: i64, last: i64, start: i64) -> i64:
        """Count chunks first..last - 1 of packed chunks once each: chunk k ends at the
        offset `ends` holds at END_WIDTH * k (`tables.END_WIDTH`), and chunk `first` starts at `start`. Gives where the
        last one ends."""
        for chunk in range(first, last):
            end = i64(read_i32_le(ends, END_WIDTH * chunk))
            self.add(data, start, end, 1)
            start = end
        return start

    def _same_rest(self, entry: i64, data: bytes, start: i64) -> bool:
        """Whether the words after the first of key `entry` are those of data[start:] (same length)."""
        size = self.length[entry]
        words = self.words
        index = self.word_start[entry] + 1
        offset: i64 = WORD
        while offset < size:
            if words[index] != self._word(data, start + offset, size - offset):
                return False
            offset += WORD
            index += 1
        return True

    def _grow(self) -> None:
        old = self.slots
        capacity: i64 = 2 * (self.mask + 1)
        mask = capacity - 1
        slots = vec[i64]([EMPTY] * (capacity * SLOT))
        for old_slot in range(self.mask + 1):
            old_base = old_slot * SLOT
            tag = old[old_base]
            if tag == EMPTY:
                continue
            slot = _home(tag >> LENGTH_BITS, mask)
            while slots[slot * SLOT] != EMPTY:
                slot = (slot + 1) & mask
            for field in range(SLOT):
                slots[slot * SLOT + field] = old[old_base + field]
        self.slots = slots
        self.mask = mask

    def _counts(self) -> vec[i64]:
        """Each entry's count, in entry order."""
        counts = vec[i64]([0] * len(self.length))
        slots = self.slots
        for slot in range(self.mask + 1):
            base = slot * SLOT
            if slots[base] != EMPTY:
                counts[slots[base + 3]] = slots[base + 2]
        return counts

    def serialized(self) -> bytes:
        """The whole table as one bytes object, for `add_serialized` in another process."""
        writer = BytesWriter()
        words = self.words
        counts = self._counts()
        for entry in range(len(self.length)):
            size = self.length[entry]
            write_i64_le(writer, size)
            write_i64_le(writer, counts[entry])
            first = self.word_start[entry]
            for index in range((size + WORD - 1) // WORD):
                write_i64_le(writer, words[first + index])
        write_i64_le(writer, 0)  # the padding `add` reads past the last key
        return writer.getvalue()

    def add_serialized(self, table: bytes) -> None:
        """Add the counts of a table `serialized` gave."""
        end: i64 = len(table) - WORD
        offset: i64 = 0
        while offset < end:
            size = read_i64_le(table, offset)
            times = read_i64_le(table, offset + WORD)
            key = offset + RECORD_HEADER
            self.add(table, key, key + size, times)
            offset = key + (size + WORD - 1) // WORD * WORD

    def items(self) -> dict[bytes, int]:
        """Each key's bytes with its count."""
        writer = BytesWriter()
        for word in self.words:
            write_i64_le(writer, word)
        packed = writer.getvalue()
        counts = self._counts()
        result: dict[bytes, int] = {}
        for entry in range(len(self.length)):
            first = self.word_start[entry] * WORD
            result[packed[first : first + self.length[entry]]] = counts[entry]
        return result
