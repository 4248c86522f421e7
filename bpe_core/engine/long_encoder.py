"""Rank-ordered BPE encoding of one chunk of any length (a 5 Mbp genome as one record) in time
proportional to the merges it makes.

The chunk becomes doubly linked positions (unboxed i32 vecs); each rank has a bucket of the
positions where its pair was created (blocks of a shared pool, so a bucket is read in runs
and freed blocks are reused), and a min-heap holds the ranks whose bucket is not empty. Ranks
are taken lowest first, and a merge creates only pairs of higher rank (merge r makes id
alphabet_size + r), so each rank's bucket is complete when it is taken. An entry is checked
against the symbols (a position never starts the same pair twice) instead of being deleted.
Occurrences of a pair (x, x) overlap (`xxx`): a run of x is merged from its left end, as the
heap encoder and Hugging Face do, or from its right end for the ranks `set_from_right` names
(the generic hook under mirrored encoding: see `mirror_pairs`). A pair -> rank lookup is an
open-addressing table of integers, not a dict.

It requires merges that each create a new id (rank order is then creation order) and does not
cache, split documents or map chunks to symbols: `encoder.Encoder` does that and calls it.
"""

from typing import Final

from librt.vecs import append, pop, vec
from mypy_extensions import i32, i64

NO_RANK: Final[i64] = -1
END: Final[i32] = -1
DEAD: Final[i32] = -1
EMPTY: Final[i64] = -1
BLOCK: Final[i64] = 30  # entries per bucket block; a block is [next block, count, entries...]
BLOCK_SIZE: Final[i64] = BLOCK + 2
MAX_POSITIONS: Final[i64] = (1 << 31) - 1
KEEP_SCRATCH: Final[i64] = 1 << 16  # positions whose buffers are kept between calls (short chunks)


def mirror_pairs(alphabet_size: int, merges: list[tuple[int, int]], token_mirror: list[int]) -> list[int]:
    """The ranks that mirrored encoding resolves from the right, for merges in partner order
    (`token_mirror`: the mirror extended to every token, as `mirror.mirror_tokens` gives it):
    each second partner, the merge whose token is the previous merge's mirror image. Encoding
    it as the mirror image of the first, (mirror[y], mirror[x]) from the right, makes a
    sequence's mirror image tokenize as the mirror image of its tokenization, except where
    the two partners' occurrences overlap or a self-mirrored merge meets an overlapping
    occurrence of itself."""
    ranks: list[int] = []
    for rank in range(1, len(merges)):
        if token_mirror[alphabet_size + rank] == alphabet_size + rank - 1:
            ranks.append(rank)
    return ranks


class LongEncoder:
    """Applies merges by rank to whole chunks: `encode(symbols)` equals the heap encoder's result.

    >>> LongEncoder(3, [(0, 1), (3, 2)]).encode([0, 1, 2, 0])
    [4, 0]
    """

    alphabet_size: i64
    id_bound: i64
    left: vec[i64]
    right: vec[i64]
    from_right: vec[i64]
    slot_keys: vec[i64]
    slot_ranks: vec[i64]
    mask: i64
    # scratch, reused between calls
    sym: vec[i32]
    nxt: vec[i32]
    prv: vec[i32]
    bucket: vec[i32]
    pool: vec[i32]
    free_block: i64
    active: vec[i64]

    def __init__(self, alphabet_size: int, merges: list[tuple[int, int]]) -> None:
        """`merges[r]` creates id `alphabet_size + r`; a pair listed twice keeps its first rank."""
        self.alphabet_size = alphabet_size
        self.id_bound = alphabet_size + len(merges) + 1
        if self.id_bound >= MAX_POSITIONS:
            raise ValueError("too many merges for 32-bit token ids")
        self.left = vec[i64]()
        self.right = vec[i64]()
        self.from_right = vec[i64]()
        capacity: i64 = 16
        while capacity < 2 * len(merges) + 2:
            capacity *= 2
        self.slot_keys = vec[i64]([EMPTY] * capacity)
        self.slot_ranks = vec[i64]([EMPTY] * capacity)
        self.mask = capacity - 1
        for rank in range(len(merges)):
            left: i64 = merges[rank][0]
            right: i64 = merges[rank][1]
            self.left = append(self.left, left)
            self.right = append(self.right, right)
            self.from_right = append(self.from_right, 0)
            self._insert(left, right, rank)
        self.bucket = vec[i32]([END] * len(merges))
        self.active = vec[i64]()
        self._reset_scratch()

    def _reset_scratch(self) -> None:
        self.sym = vec[i32]()
        self.nxt = vec[i32]()
        self.prv = vec[i32]()
        self.pool = vec[i32]()
        self.free_block = -1

    def _slot(self, key: i64) -> i64:
        # mix the high bits in, and keep the product below 2**63 so pure and compiled agree
        mixed = (key ^ (key >> 29)) & 0x7FFFFFFF
        return ((mixed * 2654435761) >> 7) & self.mask

    def _insert(self, left: i64, right: i64, rank: i64) -> None:
        key = left * self.id_bound + right
        slot = self._slot(key)
        while self.slot_keys[slot] != EMPTY:
            if self.slot_keys[slot] == key:
                return  # the first rank of a pair counts
            slot = (slot + 1) & self.mask
        self.slot_keys[slot] = key
        self.slot_ranks[slot] = rank

    def rank_of(self, left: i64, right: i64) -> i64:
        """The rank of pair (left, right), NO_RANK if no merge makes it."""
        key = left * self.id_bound + right
        slot = self._slot(key)
        slot_keys = self.slot_keys
        while True:
            stored = slot_keys[slot]
            if stored == key:
                return self.slot_ranks[slot]
            if stored == EMPTY:
                return NO_RANK
            slot = (slot + 1) & self.mask

    def set_from_right(self, ranks: list[int], pairs: list[tuple[int, int]]) -> None:
        """Merge `ranks[k]` makes its id from `pairs[k]` (same symbols, another split) and merges
        a run of overlapping occurrences from its right end. The table is rebuilt."""
        for index in range(len(ranks)):
            rank: i64 = ranks[index]
            self.left[rank] = pairs[index][0]
            self.right[rank] = pairs[index][1]
            self.from_right[rank] = 1
        for slot in range(len(self.slot_keys)):
            self.slot_keys[slot] = EMPTY
            self.slot_ranks[slot] = EMPTY
        for rank in range(len(self.left)):
            self._insert(self.left[rank], self.right[rank], rank)

    # buckets --------------------------------------------------------------------------------

    def _push(self, rank: i64, position: i64) -> None:
        block = i64(self.bucket[rank])
        if block == END:
            self._activate(rank)
        if block == END or i64(self.pool[block + 1]) == BLOCK:
            fresh = self.free_block
            if fresh >= 0:
                self.free_block = i64(self.pool[fresh])
            else:
                fresh = len(self.pool)
                for _ in range(BLOCK_SIZE):
                    self.pool = append(self.pool, 0)
            self.pool[fresh] = i32(block)
            self.pool[fresh + 1] = 0
            self.bucket[rank] = i32(fresh)
            block = fresh
        count = i64(self.pool[block + 1])
        self.pool[block + 2 + count] = i32(position)
        self.pool[block + 1] = i32(count + 1)

    def _activate(self, rank: i64) -> None:
        """Push rank onto the min-heap of ranks with a bucket."""
        self.active = append(self.active, rank)
        active = self.active
        child: i64 = len(active) - 1
        while child > 0:
            parent = (child - 1) >> 1
            if active[parent] <= rank:
                break
            active[child] = active[parent]
            child = parent
        active[child] = rank

    def _pop_rank(self) -> i64:
        """Take the lowest rank off the heap."""
        active, last = pop(self.active)
        self.active = active
        size: i64 = len(active)
        if size == 0:
            return last
        top = active[0]
        parent: i64 = 0
        while True:
            child = 2 * parent + 1
            if child >= size:
                break
            if child + 1 < size and active[child + 1] < active[child]:
                child += 1
            if active[child] >= last:
                break
            active[parent] = active[child]
            parent = child
        active[parent] = last
        return top

    # encoding -------------------------------------------------------------------------------

    def encode(self, symbols: list[int]) -> list[int]:
        """Token ids for one chunk given as base symbol ids."""
        size: i64 = len(symbols)
        if size < 2:
            return list(symbols)
        if size >= MAX_POSITIONS:
            raise ValueError(f"a chunk of {size} symbols is too long for 32-bit positions")
        sym = vec[i32](capacity=size)
        nxt = vec[i32](capacity=size)
        prv = vec[i32](capacity=size)
        for index in range(size):
            sym = append(sym, i32(symbols[index]))
            nxt = append(nxt, i32(index + 1))
            prv = append(prv, i32(index - 1))
        nxt[size - 1] = END
        self.sym = sym
        self.nxt = nxt
        self.prv = prv
        for index in range(size - 1):
            rank = self.rank_of(i64(sym[index]), i64(sym[index + 1]))
            if rank != NO_RANK:
                self._push(rank, index)
        while len(self.active) > 0:
            self._take(self._pop_rank())
        result: list[int] = []
        position: i64 = 0
        while position != END:
            result.append(sym[position])
            position = i64(nxt[position])
        if size > KEEP_SCRATCH:
            self._reset_scratch()
        return result

    def _take(self, rank: i64) -> None:
        """Merge every live occurrence of rank's pair (its bucket), then free the bucket."""
        left = self.left[rank]
        right = self.right[rank]
        new_id = self.alphabet_size + rank
        overlapping = left == right
        from_right = self.from_right[rank] != 0
        sym = self.sym
        nxt = self.nxt
        block = i64(self.bucket[rank])
        self.bucket[rank] = END
        while block != END:
            count = i64(self.pool[block + 1])
            for entry in range(count):
                position = i64(self.pool[block + 2 + entry])
                if i64(sym[position]) != left:
                    continue
                second = i64(nxt[position])
                if second == END or i64(sym[second]) != right:
                    continue
                if not overlapping:
                    self._merge(position, second, new_id)
                elif from_right:
                    self._merge_run_from_right(second, left, new_id)
                else:
                    self._merge_run_from_left(position, left, new_id)
            following = i64(self.pool[block])
            self.pool[block] = i32(self.free_block)
            self.free_block = block
            block = following

    def _merge_run_from_left(self, position: i64, symbol: i64, new_id: i64) -> None:
        sym = self.sym
        nxt = self.nxt
        prv = self.prv
        while True:
            before = i64(prv[position])
            if before == END or i64(sym[before]) != symbol:
                break
            position = before
        while position != END and i64(sym[position]) == symbol:
            second = i64(nxt[position])
            if second == END or i64(sym[second]) != symbol:
                return
            self._merge(position, second, new_id)
            position = i64(nxt[position])

    def _merge_run_from_right(self, position: i64, symbol: i64, new_id: i64) -> None:
        sym = self.sym
        nxt = self.nxt
        prv = self.prv
        while True:
            after = i64(nxt[position])
            if after == END or i64(sym[after]) != symbol:
                break
            position = after
        while position != END and i64(sym[position]) == symbol:
            first = i64(prv[position])
            if first == END or i64(sym[first]) != symbol:
                return
            self._merge(first, position, new_id)
            position = i64(prv[first])

    def _merge(self, position: i64, second: i64, new_id: i64) -> None:
        """Merge the pair at position (its right symbol at `second`) into new_id; bucket the
        two pairs that creates."""
        sym = self.sym
        nxt = self.nxt
        prv = self.prv
        after = i64(nxt[second])
        sym[position] = i32(new_id)
        sym[second] = DEAD
        nxt[position] = i32(after)
        if after != END:
            prv[after] = i32(position)
            rank = self.rank_of(new_id, i64(sym[after]))
            if rank != NO_RANK:
                self._push(rank, position)
        before = i64(prv[position])
        if before != END:
            rank = self.rank_of(i64(sym[before]), new_id)
            if rank != NO_RANK:
                self._push(rank, before)
