"""A compiled table of unique chunks, as byte strings (packed symbol ids), with 64-bit counts.

Counting a corpus adds millions of chunks to a few tens of thousands of unique ones. Here a chunk
is added as a byte range of a buffer the caller already holds: it is hashed and compared eight
bytes at a time (`librt.strings.read_i64_le`) against keys stored as i64 words in a vec, so no
Python object is made per chunk, only per new unique chunk. A table travels between processes as
one `bytes` (`serialized`), which another table adds in (`add_serialized`) without unpacking it
into Python objects either.

Buffers handed to `add` must have 8 readable bytes past every range (the callers pad with
PADDING), since the last word of a key is read whole and masked. This module does no I/O and knows
nothing of text: a key is whatever bytes the caller packs a chunk's symbols into.
"""

from typing import Final

from librt.strings import BytesWriter, read_i64_le, write_i64_le
from librt.vecs import append, vec
from mypy_extensions import i64

EMPTY: Final[i64] = -1
PADDING: Final = b"\x00" * 8
WORD: Final[i64] = 8
# a record of `serialized`: key length, count, then the key in whole words
RECORD_HEADER: Final[i64] = 16


def mix_word(state: i64, word: i64) -> i64:
    """One step of the key hash: `state` with the next word of a key mixed in."""
    # fold to 31 bits before multiplying, so the product stays below 2**63 and pure Python (which
    # never wraps) hashes exactly as compiled code
    folded = (word ^ (word >> 32)) & 0xFFFFFFFF
    mixed = ((state ^ folded) & 0x7FFFFFFF) * 2654435761
    return mixed ^ (mixed >> 29)


class ChunkCounts:
    """Unique byte-string keys with counts; `add` a range, `items` at the end."""

    words: vec[i64]  # every key's bytes, little-endian, in whole words, zero-padded
    word_start: vec[i64]
    length: vec[i64]
    count: vec[i64]
    key_hash: vec[i64]
    slots: vec[i64]
    mask: i64
    # [r]: the low r bytes of a word, r = 0..8 (a table: mypyc shifts `1 << 8 * r` as a 32-bit C int)
    word_masks: vec[i64]

    def __init__(self) -> None:
        self.words = vec[i64]()
        self.word_start = vec[i64]()
        self.length = vec[i64]()
        self.count = vec[i64]()
        self.key_hash = vec[i64]()
        capacity: i64 = 1 << 12
        self.slots = vec[i64]([EMPTY] * capacity)
        self.mask = capacity - 1
        self.word_masks = vec[i64]([int("FF" * remaining or "0", 16) for remaining in range(8)] + [-1])

    def _word_mask(self, remaining: i64) -> i64:
        """The low `remaining` bytes of a word (all of it from 8 on)."""
        return self.word_masks[remaining if remaining < WORD else WORD]

    def size(self) -> i64:
        """Unique keys so far."""
        return len(self.length)

    def add(self, data: bytes, start: i64, end: i64, times: i64) -> None:
        """Count data[start:end] `times` more times (data holds 8 readable bytes after end)."""
        size = end - start
        state: i64 = size
        offset: i64 = 0
        while offset < size:
            state = mix_word(state, read_i64_le(data, start + offset) & self._word_mask(size - offset))
            offset += WORD
        slot = (state ^ (state >> 17)) & self.mask
        slots = self.slots
        while True:
            entry = slots[slot]
            if entry == EMPTY:
                break
            if self.key_hash[entry] == state and self.length[entry] == size and self._same(entry, data, start):
                self.count[entry] += times
                return
            slot = (slot + 1) & self.mask
        entry = len(self.length)
        slots[slot] = entry
        self.word_start = append(self.word_start, len(self.words))
        self.length = append(self.length, size)
        self.count = append(self.count, times)
        self.key_hash = append(self.key_hash, state)
        offset = 0
        while offset < size:
            self.words = append(self.words, read_i64_le(data, start + offset) & self._word_mask(size - offset))
            offset += WORD
        if 2 * len(self.length) > len(self.slots):
            self._grow()

    def _same(self, entry: i64, data: bytes, start: i64) -> bool:
        size = self.length[entry]
        words = self.words
        first = self.word_start[entry]
        offset: i64 = 0
        index: i64 = 0
        while offset < size:
            if words[first + index] != read_i64_le(data, start + offset) & self._word_mask(size - offset):
                return False
            offset += WORD
            index += 1
        return True

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

    def serialized(self) -> bytes:
        """The whole table as one bytes object, for `add_serialized` in another process."""
        writer = BytesWriter()
        words = self.words
        for entry in range(len(self.length)):
            size = self.length[entry]
            write_i64_le(writer, size)
            write_i64_le(writer, self.count[entry])
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
        result: dict[bytes, int] = {}
        for entry in range(len(self.length)):
            first = self.word_start[entry] * WORD
            result[packed[first : first + self.length[entry]]] = self.count[entry]
        return result
