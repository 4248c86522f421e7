"""A compiled table of unique chunks, as byte strings (packed symbol ids), with 64-bit counts.

Counting a corpus adds millions of chunks to a few tens of thousands of unique ones. A chunk is
added as a byte range of a buffer the caller already holds (`tables.RangeTable`: no Python object
per chunk, only per new unique chunk; a chunk of up to 8 bytes is counted in one cache line). A
table travels between processes as one `bytes` (`serialized`), which another table adds in
(`add_serialized`) without unpacking it into Python objects either. This module does no I/O and
knows nothing of text: a key is whatever bytes the caller packs a chunk's symbols into.
"""

from typing import Final

from librt.strings import BytesWriter, read_i32_le, read_i64_le, write_i64_le
from librt.vecs import vec
from mypy_extensions import i64

from bpe_core.engine.tables import (
    EMPTY,
    END_WIDTH,
    HASH_BITS,
    LENGTH_BITS,
    RANGE_SLOT,
    WORD,
    RangeTable,
    mix_word,
    range_home,
)

PADDING: Final = b"\x00" * 8
# a record of `serialized`: key length, count, then the key in whole words
RECORD_HEADER: Final[i64] = 16
FIRST_SLOTS: Final[i64] = 1 << 12


class ChunkCounts(RangeTable):
    """Unique byte-string keys with counts (a slot's value); `add` a range, `items` at the end."""

    def __init__(self) -> None:
        super().__init__(FIRST_SLOTS)

    def add(self, data: bytes, start: i64, end: i64, times: i64) -> None:
        """Count data[start:end] `times` more times (data holds 8 readable bytes after end).
        (The hash's first step and the probe written out: it runs once per chunk.)"""
        size = end - start
        if size >> LENGTH_BITS != 0:
            raise ValueError(f"a chunk of {size} bytes is longer than a table key may be (2**31 - 1)")
        first = self.key_word(data, start, size)
        state = mix_word(size, first) if size <= WORD else self.key_hash(data, start, size, first)
        hashed = state & HASH_BITS
        tag = (hashed << LENGTH_BITS) | size
        slots = self.slots
        mask = self.mask
        slot = range_home(hashed, mask)
        while True:
            base = slot * RANGE_SLOT
            stored = slots[base]
            if stored == EMPTY:
                break
            if stored == tag and slots[base + 1] == first:
                if size <= WORD or self.same_rest(slots[base + 3], data, start):
                    slots[base + 2] += times
                    return
            slot = (slot + 1) & mask
        self.insert_key(base, tag, first, times, data, start)

    def add_ranges(self, data: bytes, ends: bytes, first: i64, last: i64, start: i64) -> i64:
        """Count chunks first..last - 1 of packed chunks once each: chunk k ends at the offset
        `ends` holds at END_WIDTH * k (`tables.END_WIDTH`), and chunk `first` starts at `start`.
        Gives where the last one ends."""
        for chunk in range(first, last):
            end = i64(read_i32_le(ends, END_WIDTH * chunk))
            self.add(data, start, end, 1)
            start = end
        return start

    def _counts(self) -> vec[i64]:
        """Each entry's count, in entry order."""
        counts = vec[i64]([0] * len(self.length))
        slots = self.slots
        for slot in range(self.mask + 1):
            base = slot * RANGE_SLOT
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
