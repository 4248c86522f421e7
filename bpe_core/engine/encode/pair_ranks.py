"""Pair -> (rank, result): the one merge table every encoding loop reads.

`merges[r]` is a pair (left, right) and makes `results[r]`: the next new id (alphabet_size + the
count of new ids before it), or, in an imported vocabulary, an id that exists already. A pair
listed twice keeps its first rank. Pairs of ids below 256 (every pair of a byte-level chunk's
first pass) are read from a 65,536-entry table; other pairs from the engine's integer table, after
a filter of one bit per hash bucket: most lookups there find no merge, and the filter, a small
fraction of the table's size, answers them without a cache miss in its megabytes. Merges may be
added one at a time (`add`), as `recover_merges` finds them.
"""

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i32, i64

from bpe_core.engine.tables import EMPTY, IntTable, mix

NO_RANK: Final[i64] = 1 << 60
NO_BYTE_RANK: Final[i32] = -1
BYTE_PAIRS: Final[i64] = 256 * 256
FILTER_BITS_PER_PAIR: Final[i64] = 8
MAX_MERGES: Final[i64] = 1 << 31
# [b]: the word with only bit b set (bit 63 is the sign bit; a table, as mypyc shifted `1 << b`
# in 32 bits)
BIT_VALUES: Final = vec[i64]([1 << bit if bit < 63 else -(1 << 63) for bit in range(64)])


@final
class PairRanks:
    """The ranks and results of merges added in rank order, within a capacity given up front.

    >>> ranks = PairRanks(3, 2)
    >>> ranks.add(0, 1, 3)
    >>> ranks.add(3, 2, 4)
    >>> ranks.rank_of(3, 2), ranks.rank_of(2, 3) == NO_RANK, ranks.results[1]
    (1, True, 4)
    """

    alphabet_size: i64
    capacity: i64  # merges there is room for
    id_bound: i64  # above every id a merge may name or make
    count: i64  # merges added
    left: vec[i64]  # [rank]: the merge's pair (room for `capacity`, the first `count` set)
    right: vec[i64]
    results: vec[i64]  # [rank]: the id it makes
    # whether each merge makes alphabet_size + rank from ids made before it: rank order is then
    # creation order (what the bucket encoder and the unit reader need)
    fresh: bool
    byte_ranks: vec[i32]  # [left * 256 + right]: the rank of a pair of ids below 256
    ranks: IntTable  # left * id_bound + right -> rank, for the other pairs
    # bit (mix(key) & filter_mask) is set if `ranks` holds a key with that hash
    filter: vec[i64]
    filter_mask: i64

    def __init__(self, alphabet_size: i64, capacity: i64) -> None:
        if capacity >= MAX_MERGES:
            raise ValueError(f"{capacity} merges are more than 32-bit token ids allow")
        self.alphabet_size = alphabet_size
        self.capacity = capacity
        self.id_bound = alphabet_size + capacity + 1
        self.count = 0
        self.left = vec[i64]([0] * capacity)
        self.right = vec[i64]([0] * capacity)
        self.results = vec[i64]([0] * capacity)
        self.fresh = True
        self.byte_ranks = vec[i32]([NO_BYTE_RANK] * BYTE_PAIRS)
        self.ranks = IntTable(expected=capacity)
        filter_bits: i64 = 64
        while filter_bits < FILTER_BITS_PER_PAIR * capacity:
            filter_bits *= 2
        self.filter = vec[i64]([0] * (filter_bits // 64))
        self.filter_mask = filter_bits - 1

    def size(self) -> i64:
        """Merges added."""
        return self.count

    def add(self, left: i64, right: i64, result: i64) -> None:
        """Append a merge (lowest priority so far) that makes `result`."""
        rank = self.count
        bound = self.id_bound
        if rank >= self.capacity or left < 0 or right < 0 or left >= bound or right >= bound or result >= bound:
            raise ValueError(f"merge {rank} ({left}, {right}) -> {result} is beyond the table's room")
        if left < 256 and right < 256:
            if self.byte_ranks[left * 256 + right] == NO_BYTE_RANK:
                self.byte_ranks[left * 256 + right] = i32(rank)
        else:
            key = left * self.id_bound + right
            if self.ranks.put_new(key, rank):
                self._filter_in(key)
        self.left[rank] = left
        self.right[rank] = right
        self.results[rank] = result
        self.count = rank + 1
        if result != self.alphabet_size + rank or left >= result or right >= result:
            self.fresh = False

    def alias(self, left: i64, right: i64, rank: i64) -> None:
        """Make (left, right) another pair of merge `rank`, unless it has a rank already (a
        mirror's merge that is its own image is made from its pair and from the pair's image)."""
        if self.rank_of(left, right) != NO_RANK:
            return
        if left < 256 and right < 256:
            self.byte_ranks[left * 256 + right] = i32(rank)
            return
        key = left * self.id_bound + right
        self.ranks.put(key, rank)
        self._filter_in(key)

    def _filter_in(self, key: i64) -> None:
        bit = mix(key) & self.filter_mask
        self.filter[bit >> 6] |= BIT_VALUES[bit & 63]

    def rank_of(self, left: i64, right: i64) -> i64:
        """The rank of pair (left, right), NO_RANK if no merge makes it."""
        if left < 256 and right < 256:
            byte_rank = i64(self.byte_ranks[left * 256 + right])
            return NO_RANK if byte_rank == NO_BYTE_RANK else byte_rank
        # the filter, then the integer table's probe written out (one hash: the encoders ask
        # this once or twice per merge they make)
        key = left * self.id_bound + right
        hashed = mix(key)
        bit = hashed & self.filter_mask
        if (self.filter[bit >> 6] >> (bit & 63)) & 1 == 0:
            return NO_RANK
        slots = self.ranks.slots
        mask = self.ranks.mask
        slot = hashed & mask
        while True:
            stored = slots[2 * slot]
            if stored == key:
                return slots[2 * slot + 1]
            if stored == EMPTY:
                return NO_RANK
            slot = (slot + 1) & mask

    def pairs(self) -> list[tuple[int, int]]:
        """Each merge's (left, right), in rank order (made on each call: kept as two vecs, which
        the garbage collector never visits)."""
        return [(int(self.left[rank]), int(self.right[rank])) for rank in range(self.count)]
