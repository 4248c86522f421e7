"""Rank-ordered BPE encoding of one chunk of any length (a genome as one record) in time
proportional to the merges it makes, for merges that each make a new id (`PairRanks.fresh`).

The chunk becomes doubly linked positions (one unboxed i32 vec: each position's symbol, next and
previous side by side, in one cache line); each rank has a bucket of the positions where its pair
was created (blocks of a shared pool, so a bucket is read in runs and freed blocks are reused), and
a min-heap holds the ranks whose bucket is not empty. Ranks are taken lowest first, and a merge
creates only pairs of higher rank (merge r makes id alphabet_size + r), so each rank's bucket is
complete when it is taken. An entry is checked against the symbols (a position never starts the
same pair twice) instead of being deleted. Occurrences of a pair (x, x) overlap (`xxx`): a run of
x is merged from its left end, as the kernel's loops and Hugging Face do, so the ids are theirs.
With a mirror (`set_mirror`: an involution on the tokens, the merges in partner order) a merge and
its partner are one step instead, so that a chunk's mirror image encodes as the mirror image of
its encoding (see `set_mirror`).

A chunk longer than a window (WINDOW symbols: its positions and buckets stay in the CPU's L2
cache) is encoded window by window and joined where two overlapping windows agree, which is exact
(`windows` says why).

It does not cache, split documents or map chunks to symbols: `encoder.Encoder` does that and
calls it.
"""

from typing import Final

from librt.vecs import append, pop, vec
from mypy_extensions import i32, i64

from bpe_core.engine.encode.pair_ranks import NO_RANK, PairRanks
from bpe_core.engine.encode.windows import encode_joined
from bpe_core.engine.heap import sift_down, sift_up

END: Final[i32] = -1
DEAD: Final[i32] = -1
BLOCK: Final[i64] = 30  # entries per bucket block; a block is [next block, count, entries...]
BLOCK_SIZE: Final[i64] = BLOCK + 2
MAX_POSITIONS: Final[i64] = (1 << 31) - 1
# what a rank is under a mirror: unmirrored (no mirror), the first of two partners, the second
# (taken with the first), or a merge whose token is its own mirror image
PLAIN: Final[i64] = 0
FIRST: Final[i64] = 1
SECOND: Final[i64] = 2
OWN_IMAGE: Final[i64] = 3
KEEP_SCRATCH: Final[i64] = 1 << 16  # positions whose buffers are kept between calls (short chunks)
WINDOW: Final[i64] = 1 << 15  # symbols per window of a long chunk (`joined_windows`)
OVERLAP: Final[i64] = 1 << 9  # symbols two windows share (more when they find no junction)


class BucketEncoder:
    """Applies merges by rank to whole chunks: `encode(symbols)` equals the kernel's result.

    >>> ranks = PairRanks(3, 2)
    >>> ranks.add(0, 1, 3)
    >>> ranks.add(3, 2, 4)
    >>> BucketEncoder(ranks).encode([0, 1, 2, 0])
    [4, 0]
    """

    alphabet_size: i64
    table: PairRanks  # under a mirror, its own (see set_mirror)
    left: vec[i64]  # [rank]: the merge's pair (the table's)
    right: vec[i64]
    kind: vec[i64]
    image_left: vec[i64]  # the mirror image of each rank's pair (its partner's, or its own image's)
    image_right: vec[i64]
    # scratch, reused between calls
    node: vec[i32]  # per position: its symbol, the next position, the previous (one cache line, not three)
    bucket: vec[i32]
    pool: vec[i32]
    free_block: i64
    active: vec[i64]
    level: vec[i64]
    chain: vec[i64]
    mirrored: bool
    window: i64  # symbols per window of a longer chunk, and how many two windows share
    overlap: i64
    junctions: i64  # windows joined so far (tests check that windows were used)

    def __init__(self, table: PairRanks) -> None:
        """Over the table's merges, which must each make a new id (`table.fresh`)."""
        if not table.fresh:
            raise ValueError("the bucket encoder needs merges that each make a new id")
        self.alphabet_size = table.alphabet_size
        self.table = table
        self.left = table.left
        self.right = table.right
        self.kind = vec[i64]([PLAIN] * table.size())
        self.image_left = vec[i64]()
        self.image_right = vec[i64]()
        self.bucket = vec[i32]([END] * table.size())
        self.active = vec[i64]()
        self.level = vec[i64]()
        self.chain = vec[i64]()
        self.mirrored = False
        self.window = WINDOW
        self.overlap = OVERLAP
        self.junctions = 0
        self._reset_scratch()

    def _reset_scratch(self) -> None:
        self.node = vec[i32]()
        self.pool = vec[i32]()
        self.free_block = -1

    def set_mirror(self, token_mirror: list[int]) -> None:
        """Encode under a mirror: `token_mirror` an involution on every token id (base symbols,
        then one per merge) with each merge next to its partner, the merge making its mirror image
        (as `mirror.mirror_tokens` checks), or its own image.

        A merge and its partner are then one step: the partner makes its token from the mirror
        image of the first's pair, and their occurrences are merged together. A run of
        overlapping occurrences of one of them (`xxx`) is merged from its left end for the first,
        from its right end for the second; a run that mixes the two, or of a merge that is its own
        image (both its pair and the pair's image), from both ends towards the middle, leaving an
        occurrence in the middle unmerged when no choice is its own mirror image (`x y x'`, y its
        own image). Every rule maps to its mirror image, so a chunk's mirror image (reversed, each
        symbol mirrored) encodes as the mirror image of its encoding, exactly."""
        size = self.table.size()
        if len(token_mirror) != self.alphabet_size + size:
            raise ValueError(f"a mirror of {len(token_mirror)} tokens for {self.alphabet_size + size}")
        left = vec[i64]()  # copies: the table given is the encoder's, and stays as it is
        right = vec[i64]()
        kinds = vec[i64]()
        self.image_left = vec[i64]()
        self.image_right = vec[i64]()
        for rank in range(size):
            token = self.alphabet_size + rank
            other: i64 = token_mirror[token]
            kind = FIRST
            if other == token:
                kind = OWN_IMAGE
            elif other != token + 1:
                kind = SECOND
            if kind == SECOND and other != token - 1:
                raise ValueError(f"merge {rank} is not next to the merge that makes its mirror image")
            pair_left = self.left[rank]
            pair_right = self.right[rank]
            if kind == SECOND:  # the first's pair, mirrored: same symbols, maybe another split
                pair_left = token_mirror[right[rank - 1]]
                pair_right = token_mirror[left[rank - 1]]
            left = append(left, pair_left)
            right = append(right, pair_right)
            kinds = append(kinds, kind)
            self.image_left = append(self.image_left, token_mirror[pair_right])
            self.image_right = append(self.image_right, token_mirror[pair_left])
        table = PairRanks(self.alphabet_size, size)
        for rank in range(size):
            table.add(left[rank], right[rank], self.alphabet_size + rank)
        for rank in range(size):
            if kinds[rank] == OWN_IMAGE:  # the image's split makes the same token
                table.alias(self.image_left[rank], self.image_right[rank], rank)
        self.table = table
        self.left = left
        self.right = right
        self.kind = kinds
        self.mirrored = True  # no windows: their junctions rely on runs merged from the left

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
                while len(self.pool) < fresh + BLOCK_SIZE:  # not `for _ in range`: mypyc boxes `_`
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
        sift_up(self.active, len(self.active) - 1, rank)

    def _pop_rank(self) -> i64:
        """Take the lowest rank off the heap."""
        active, last = pop(self.active)
        self.active = active
        if len(active) == 0:
            return last
        top = active[0]
        sift_down(active, len(active), last)
        return top

    # encoding -------------------------------------------------------------------------------

    def encode(self, symbols: list[int]) -> list[int]:
        """Token ids for one chunk given as base symbol ids."""
        size: i64 = len(symbols)
        if size < 2:
            return list(symbols)
        if size >= MAX_POSITIONS:
            raise ValueError(f"a chunk of {size} symbols is too long for 32-bit positions")
        source = vec[i32](capacity=size)
        for index in range(size):
            source = append(source, i32(symbols[index]))
        return self._encode_source(source)

    def encode_bytes(self, data: bytes, start: i64, end: i64) -> list[int]:
        """Token ids for the chunk data[start:end], one base symbol id per byte."""
        if end - start >= MAX_POSITIONS:
            raise ValueError(f"a chunk of {end - start} symbols is too long for 32-bit positions")
        source = vec[i32](capacity=end - start)
        for index in range(start, end):
            source = append(source, i32(data[index]))
        return self._encode_source(source)

    def _encode_source(self, source: vec[i32]) -> list[int]:
        size: i64 = len(source)
        if size < 2:
            return [int(source[index]) for index in range(size)]
        if self.mirrored or size <= self.window + self.overlap:
            return self._encode_whole(source)
        result, junctions = encode_joined(source, self.window, self.overlap, self._window_tokens, self._encode_whole)
        self.junctions += junctions
        return result

    def _encode_whole(self, source: vec[i32]) -> list[int]:
        size: i64 = len(source)
        self._run(source, 0, size)
        node = self.node
        result: list[int] = []
        position: i64 = 0
        while position != END:
            result.append(node[3 * position])
            position = i64(node[3 * position + 1])
        self._release(size)
        return result

    def _run(self, source: vec[i32], start: i64, end: i64) -> None:
        """Merge source[start:end] by rank into `self.node` (positions counted from start)."""
        size = end - start
        node = self.node  # longer than needed when kept from a longer chunk
        while len(node) < 3 * size:
            node = append(node, 0)
        for index in range(size):
            node[3 * index] = source[start + index]
            node[3 * index + 1] = i32(index + 1)
            node[3 * index + 2] = i32(index - 1)
        node[3 * size - 2] = END
        self.node = node
        table = self.table
        for index in range(size - 1):
            rank = table.rank_of(i64(node[3 * index]), i64(node[3 * index + 3]))
            if rank != NO_RANK:
                self._push(rank, index)
        while len(self.active) > 0:
            self._take(self._pop_rank())

    def _release(self, size: i64) -> None:
        if size > KEEP_SCRATCH:
            self._reset_scratch()

    def _window_tokens(self, source: vec[i32], start: i64, end: i64) -> tuple[vec[i64], vec[i64]]:
        """The tokens of source[start:end] and where each starts in source, plus its end."""
        self._run(source, start, end)
        tokens = vec[i64]()
        starts = vec[i64]()
        node = self.node
        position: i64 = 0
        while position != END:
            tokens = append(tokens, i64(node[3 * position]))
            starts = append(starts, start + position)
            position = i64(node[3 * position + 1])
        starts = append(starts, end)
        self._release(end - start)
        return tokens, starts

    def _take(self, rank: i64) -> None:
        """Merge every live occurrence of rank's pair (its bucket), then free the bucket."""
        kind = self.kind[rank]
        if kind == SECOND:  # taken with the first, unless that had no occurrence
            if i64(self.bucket[rank]) != END:
                self._take_mirrored(rank - 1)
            return
        if kind != PLAIN:
            self._take_mirrored(rank)
            return
        left = self.left[rank]
        right = self.right[rank]
        new_id = self.alphabet_size + rank
        overlapping = left == right
        node = self.node
        block = i64(self.bucket[rank])
        self.bucket[rank] = END
        while block != END:
            count = i64(self.pool[block + 1])
            for entry in range(count):
                position = i64(self.pool[block + 2 + entry])
                if i64(node[3 * position]) != left:
                    continue
                second = i64(node[3 * position + 1])
                if second == END or i64(node[3 * second]) != right:
                    continue
                if not overlapping:
                    self._merge(position, second, new_id)
                else:
                    self._merge_run_from_left(position, left, new_id)
            block = self._free_block(block)

    def _free_block(self, block: i64) -> i64:
        """Put a bucket block on the free list; the bucket's next block."""
        following = i64(self.pool[block])
        self.pool[block] = i32(self.free_block)
        self.free_block = block
        return following

    # mirrored steps -------------------------------------------------------------------------

    def _take_mirrored(self, rank: i64) -> None:
        """One step under a mirror: rank's pair and its image (the partner's pair, rank + 1, or
        the same token's other split) merged together, runs of overlapping occurrences resolved
        as `set_mirror` says."""
        second_rank = rank + 1 if self.kind[rank] == FIRST else rank
        level = vec[i64]()  # the positions where either pair was created; the buckets are complete
        for taken in range(rank, second_rank + 1):
            block = i64(self.bucket[taken])
            self.bucket[taken] = END
            while block != END:
                for entry in range(i64(self.pool[block + 1])):
                    level = append(level, i64(self.pool[block + 2 + entry]))
                block = self._free_block(block)
        self.level = level
        node = self.node
        for index in range(len(level)):
            position = level[index]
            if self._level_pair(position, rank) == 0:
                continue  # stale, or merged in this step already
            before = i64(node[3 * position + 2])
            if before != END and self._level_pair(before, rank) != 0:
                continue  # not where its run starts: the run is resolved from its start
            self._resolve_run(position, rank, second_rank)
        if len(level) > KEEP_SCRATCH:
            self.level = vec[i64]()

    def _level_pair(self, position: i64, rank: i64) -> i64:
        """1 if rank's pair starts at position, 2 if its image does (and is another pair), else 0."""
        node = self.node
        symbol = i64(node[3 * position])
        if symbol == DEAD:
            return 0
        second = i64(node[3 * position + 1])
        if second == END:
            return 0
        following = i64(node[3 * second])
        if symbol == self.left[rank] and following == self.right[rank]:
            return 1
        if symbol == self.image_left[rank] and following == self.image_right[rank]:
            return 2
        return 0

    def _resolve_run(self, start: i64, rank: i64, second_rank: i64) -> None:
        """Merge a run of overlapping occurrences (one or more) of rank's pair and its image that
        starts at `start`, as `set_mirror` says."""
        node = self.node
        chain = self.chain
        while len(chain) > 0:
            chain, _ = pop(chain)
        firsts: i64 = 0
        position = start
        while position != END:
            kind = self._level_pair(position, rank)
            if kind == 0:
                break
            chain = append(chain, position)
            if kind == 1:
                firsts += 1
            position = i64(node[3 * position + 1])
        self.chain = chain
        size: i64 = len(chain)
        own_image = self.left[rank] == self.image_left[rank] and self.right[rank] == self.image_right[rank]
        if own_image:
            firsts = size + 1  # one pair: neither first nor second, resolve symmetrically
        first_id = self.alphabet_size + rank
        second_id = self.alphabet_size + second_rank
        for index in range(size):
            across: i64 = size - 1 - index  # index counted from the run's right end
            if firsts == size:
                chosen = index % 2 == 0  # the first's run: from the left
            elif firsts == 0:
                chosen = across % 2 == 0  # the second's: from the right, the mirror image
            else:
                chosen = (index % 2 == 0 and index <= across) or (across % 2 == 0 and across <= index)
                if size % 2 == 0 and (index == size // 2 - 1 or index == size // 2) and (size // 2) % 2 == 1:
                    chosen = False  # the two middle ones overlap, and taking one is not symmetric
            if chosen:
                position = chain[index]
                is_first = self._level_pair(position, rank) == 1
                self._merge(position, i64(node[3 * position + 1]), first_id if is_first else second_id)

    def _merge_run_from_left(self, position: i64, symbol: i64, new_id: i64) -> None:
        node = self.node
        while True:
            before = i64(node[3 * position + 2])
            if before == END or i64(node[3 * before]) != symbol:
                break
            position = before
        while position != END and i64(node[3 * position]) == symbol:
            second = i64(node[3 * position + 1])
            if second == END or i64(node[3 * second]) != symbol:
                return
            self._merge(position, second, new_id)
            position = i64(node[3 * position + 1])

    def _merge(self, position: i64, second: i64, new_id: i64) -> None:
        """Merge the pair at position (its right symbol at `second`) into new_id; bucket the
        two pairs that creates."""
        node = self.node
        after = i64(node[3 * second + 1])
        node[3 * position] = i32(new_id)
        node[3 * second] = DEAD
        node[3 * position + 1] = i32(after)
        if after != END:
            node[3 * after + 2] = i32(position)
            rank = self.table.rank_of(new_id, i64(node[3 * after]))
            if rank != NO_RANK:
                self._push(rank, position)
        before = i64(node[3 * position + 2])
        if before != END:
            rank = self.table.rank_of(i64(node[3 * before]), new_id)
            if rank != NO_RANK:
                self._push(rank, before)
