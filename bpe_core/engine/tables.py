"""The engine's one hash and its tables: integer keys, and byte-range keys.

`mix` hashes a non-negative integer key; `mix_word` folds one more word of a byte-string key into
a running hash (the byte-range tables, `ChunkCounts` and `RangeCache`, hash their keys with it).
Both keep every product below 2**63, so compiled code (which would wrap) and pure Python (which
would not) give the same hashes, and so the same table layouts.

`IntTable` maps non-negative i64 keys to i64 values by open addressing with linear probing, each
slot's key and value side by side in one vec, so a lookup reads one cache line. Every table of
integer keys in the engine is one: the trainer's pair ids, the encoders' pair ranks, what the
unit reader remembers. A table may be bounded: at `limit` keys it starts afresh, which bounds the
memory of a cache. `RangeTable` keys are byte strings given as ranges of a buffer (the chunk
counts of training, the encoder's cache of chunks), probed the same way.
"""

from typing import Final, final

from librt.strings import read_i64_le
from librt.vecs import append, vec
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
WORD: Final[i64] = 8  # bytes of a key word
# a RangeTable slot: tag (32 bits of the hash above LENGTH_BITS of the length), first word, value,
# entry
RANGE_SLOT: Final[i64] = 4
HASH_BITS: Final[i64] = 0xFFFFFFFF
LENGTH_BITS: Final[i64] = 31
LENGTH_MASK: Final[i64] = (1 << 31) - 1


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
        else:
            self._insert(slot, key, value)

    def put_new(self, key: i64, value: i64) -> bool:
        """Set the value of a key not in the table and say True; say False for a key in it (one
        probe where `get`, then `put`, take two)."""
        slot = self._slot(key)
        if self.slots[2 * slot] == key:
            return False
        self._insert(slot, key, value)
        return True

    def _insert(self, slot: i64, key: i64, value: i64) -> None:
        """Put a new key in its free slot, `slot` (found again if the table grows or empties)."""
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


class RangeTable:
    """Byte-string keys, each given as a range of a buffer the caller holds (packed symbol ids),
    with an i64 value each: a chunk is hashed and compared eight bytes at a time
    (`librt.strings.read_i64_le`) against keys stored as i64 words, so no Python object is made
    per lookup. A slot holds, side by side, the key's tag (32 bits of its hash above 31 of its
    length), its first word, its value and its entry (the key's index, in the order keys came):
    a key of up to 8 bytes, most chunks, is found in one cache line. The subclasses probe in their
    own hot method (`ChunkCounts.add`, `RangeCache.extend_found`: once per chunk, so written out
    there); the rest is here. Buffers must hold 8 readable bytes past every range.
    """

    words: vec[i64]  # every key's bytes, little-endian, in whole words, zero-padded
    word_start: vec[i64]  # [entry]: where its words start
    length: vec[i64]  # [entry]: its length in bytes
    slots: vec[i64]  # RANGE_SLOT values per slot; EMPTY in the tag marks a free slot
    mask: i64  # slot count - 1
    first_slots: i64
    # [r]: the low r bytes of a word, r = 0..8 (a table: mypyc shifts `1 << 8 * r` as a 32-bit C int)
    word_masks: vec[i64]

    def __init__(self, first_slots: i64) -> None:
        self.first_slots = first_slots
        self.word_masks = vec[i64]([int("FF" * remaining or "0", 16) for remaining in range(8)] + [-1])
        self.clear()

    def clear(self) -> None:
        self.words = vec[i64]()
        self.word_start = vec[i64]()
        self.length = vec[i64]()
        self.slots = empty_slots(self.first_slots * RANGE_SLOT)
        self.mask = self.first_slots - 1

    def size(self) -> i64:
        """Keys held."""
        return len(self.length)

    def key_word(self, data: bytes, at: i64, remaining: i64) -> i64:
        """The key word at data[at:], its bytes past `remaining` masked off."""
        return read_i64_le(data, at) & self.word_masks[remaining if remaining < WORD else WORD]

    def key_hash(self, data: bytes, start: i64, size: i64, first: i64) -> i64:
        """The hash of data[start:start + size] (never negative), whose first word is `first`."""
        state = mix_word(size, first)
        offset: i64 = WORD
        while offset < size:
            state = mix_word(state, self.key_word(data, start + offset, size - offset))
            offset += WORD
        return state

    def same_rest(self, entry: i64, data: bytes, start: i64) -> bool:
        """Whether the words after the first of key `entry` are those of data[start:] (same length)."""
        size = self.length[entry]
        words = self.words
        index = self.word_start[entry] + 1
        offset: i64 = WORD
        while offset < size:
            if words[index] != self.key_word(data, start + offset, size - offset):
                return False
            offset += WORD
            index += 1
        return True

    def insert_key(self, base: i64, tag: i64, first: i64, value: i64, data: bytes, start: i64) -> None:
        """Put a new key, data[start:start + the length in its tag], in the free slot at `base`."""
        size = tag & LENGTH_MASK
        slots = self.slots
        slots[base] = tag
        slots[base + 1] = first
        slots[base + 2] = value
        slots[base + 3] = len(self.length)
        self.word_start = append(self.word_start, len(self.words))
        self.length = append(self.length, size)
        self.words = append(self.words, first)
        offset: i64 = WORD
        while offset < size:
            self.words = append(self.words, self.key_word(data, start + offset, size - offset))
            offset += WORD
        if 2 * len(self.length) > self.mask + 1:
            self._grow()

    def _grow(self) -> None:
        old = self.slots
        capacity: i64 = 2 * (self.mask + 1)
        mask = capacity - 1
        slots = empty_slots(capacity * RANGE_SLOT)
        for old_slot in range(self.mask + 1):
            old_base = old_slot * RANGE_SLOT
            tag = old[old_base]
            if tag == EMPTY:
                continue
            slot = range_home(tag >> LENGTH_BITS, mask)
            while slots[slot * RANGE_SLOT] != EMPTY:
                slot = (slot + 1) & mask
            for field in range(RANGE_SLOT):
                slots[slot * RANGE_SLOT + field] = old[old_base + field]
        self.slots = slots
        self.mask = mask


def range_home(hashed: i64, mask: i64) -> i64:
    """The first slot to probe for a key with these 32 hash bits."""
    return (hashed ^ (hashed >> 17)) & mask
