"""The merge kernel: rank-ordered BPE merging of one chunk held as unboxed parts, for merges of
any shape (ids made in rank order, or an import's reused ids).

A chunk is read into `parts` (its symbols) and `ranks` (the rank of the pair each part starts),
then merged the lowest rank first, the leftmost on ties: by rescanning the ranks after each merge
(tiktoken's loop, cheapest for a word), or, from HEAP_CHUNK parts on, over a linked list with a
binary min-heap of (rank, position) keys (stale keys, whose position's pair has changed, are
skipped), O(n log n). The two take the same merges in the same order, so they give the same ids.

The scan has two options. `guard`: before each merge, ask whether a neighbour outside the parts
could take the first or last part first (the unit reader seals units with it, `units`).
BPE-dropout (`rng`, Provilkov et al., 2020): each candidate merge is skipped with probability
`dropout`, trying candidates best first; the chunk is done when every candidate was skipped.
With dropout 0 that is the plain scan.

It neither caches nor splits documents; `encoder.Encoder` chooses what reads a chunk and which
loop merges it.
"""

from random import Random
from typing import Final, cast, final

from librt.vecs import vec
from mypy_extensions import i64

from bpe_core.engine.encode.pair_ranks import NO_BYTE_RANK, NO_RANK, PairRanks
from bpe_core.engine.encode.unit_sides import UnitSides
from bpe_core.engine.heap import sift_down, sift_up

HEAP_CHUNK: Final[i64] = 24  # from this many parts on, the heap instead of the rescans
BLOCKED: Final[i64] = -1  # what `scan` gives when the guard stopped it
LINKED: Final[i64] = -1  # what `merge` gives when the heap loop left the parts linked from position 0
NO_SYMBOL: Final[i64] = -1  # a guard's neighbour at the chunk's edge: nothing can take a part


@final
class MergeKernel:
    """Merges chunks read into its scratch by `read_bytes`, `read_list` or the unit reader.

    >>> ranks = PairRanks(3, 2)
    >>> ranks.add(0, 1, 3)
    >>> ranks.add(3, 2, 4)
    >>> kernel = MergeKernel(ranks)
    >>> kernel.encode_list([0, 1, 2, 0])
    [4, 0]
    """

    table: PairRanks
    # scratch, reused between calls
    parts: vec[i64]  # the heap loop: per position, its symbol, or -1 once merged away
    ranks: vec[i64]  # the rank of the pair each part starts
    following: vec[i64]  # the heap loop's linked list: next and previous position, -1 at the ends
    preceding: vec[i64]
    heap: vec[i64]  # rank << shift | position, a binary min-heap in its first entries

    def __init__(self, table: PairRanks) -> None:
        self.table = table
        self.parts = vec[i64]()
        self.ranks = vec[i64]()
        self.following = vec[i64]()
        self.preceding = vec[i64]()
        self.heap = vec[i64]()

    def room(self, size: i64) -> None:
        """Make the scratch hold a chunk of `size` symbols."""
        if len(self.parts) < size:
            self.parts = vec[i64]([0] * size)
            self.ranks = vec[i64]([0] * size)

    # reading ------------------------------------------------------------------------------

    def read_bytes(self, data: bytes, start: i64, size: i64) -> i64:
        """Read data[start:start + size], a symbol id per byte (pairs from the byte table, no call
        per pair); the number of parts."""
        parts = self.parts
        ranks = self.ranks
        byte_ranks = self.table.byte_ranks
        previous: i64 = data[start]
        parts[0] = previous
        for index in range(1, size):
            symbol: i64 = data[start + index]
            parts[index] = symbol
            rank = i64(byte_ranks[previous * 256 + symbol])
            ranks[index - 1] = NO_RANK if rank == NO_BYTE_RANK else rank
            previous = symbol
        return size

    def read_list(self, symbols: list[int]) -> i64:
        """Read a chunk given as a list of symbol ids; the number of parts."""
        size: i64 = len(symbols)
        self.room(size)
        parts = self.parts
        for index in range(size):
            parts[index] = symbols[index]
        self.rank_parts(parts, self.ranks, size)
        return size

    def rank_parts(self, parts: vec[i64], ranks: vec[i64], count: i64) -> None:
        """Fill ranks[:count - 1] with the ranks of the pairs of parts[:count]."""
        table = self.table
        for index in range(count - 1):
            ranks[index] = table.rank_of(parts[index], parts[index + 1])

    # merging ------------------------------------------------------------------------------

    def merge(self, count: i64) -> i64:
        """Merge the parts read; the number left (the heap loop leaves them linked from 0)."""
        if count >= HEAP_CHUNK:
            self._merge_heap(count)
            return LINKED
        return self.scan(self.parts, self.ranks, count, None, NO_SYMBOL, NO_SYMBOL, False, 0.0, None)

    def scan(
        self,
        parts: vec[i64],
        ranks: vec[i64],
        count: i64,
        guard: UnitSides | None,
        before: i64,
        after: i64,
        exact: bool,
        dropout: float,
        rng: Random | None,
    ) -> i64:
        """Merge parts[:count] (ranks[:count - 1] their pairs' ranks) by rescanning; the number
        of parts left. With a `guard`, BLOCKED as soon as a merge would take the first part while
        a merge at that rank or below takes it into a left neighbour ending in `before` (or the
        last part and a right neighbour starting with `after`; `exact`: that very symbol, else
        any of its class). With an `rng`, each merge is chosen with BPE-dropout."""
        table = self.table
        while count > 1:
            best_rank = NO_RANK
            best: i64 = -1
            if rng is None:
                for index in range(count - 1):
                    if ranks[index] < best_rank:
                        best_rank = ranks[index]
                        best = index
            else:
                best = self._dropout_choice(ranks, count, dropout, rng)
                if best >= 0:
                    best_rank = ranks[best]
            if best < 0:
                break
            if guard is not None and self._guarded(parts, count, best, best_rank, guard, before, after, exact):
                return BLOCKED
            new_id = table.results[best_rank]
            parts[best] = new_id
            count -= 1
            for index in range(best + 1, count):
                parts[index] = parts[index + 1]
            for index in range(best, count - 1):
                ranks[index] = ranks[index + 1]
            if best < count - 1:
                ranks[best] = table.rank_of(new_id, parts[best + 1])
            if best > 0:
                ranks[best - 1] = table.rank_of(parts[best - 1], new_id)
        return count

    def _guarded(
        self, parts: vec[i64], count: i64, best: i64, rank: i64, guard: UnitSides, before: i64, after: i64, exact: bool
    ) -> bool:
        """Whether a neighbour could take the first or the last part before merge `rank` at `best`."""
        if best == 0 and before != NO_SYMBOL and guard.taken(parts[0], True, before, rank, exact):
            return True
        return best == count - 2 and after != NO_SYMBOL and guard.taken(parts[count - 1], False, after, rank, exact)

    def _dropout_choice(self, ranks: vec[i64], count: i64, dropout: float, rng: Random) -> i64:
        """The pair to merge under BPE-dropout: the candidates best first (lowest rank, then
        leftmost), each skipped with probability `dropout`; -1 when every one was skipped."""
        candidates: list[int] = []
        for index in range(count - 1):
            if ranks[index] != NO_RANK:
                candidates.append(ranks[index] << 32 | index)
        candidates.sort()
        for candidate in candidates:
            if rng.random() >= dropout:
                return candidate & 0xFFFFFFFF
        return -1

    def _merge_heap(self, size: i64) -> None:
        """Merge parts[:size] over a linked list from position 0, with a heap of rank << shift |
        position keys, shift the bits a position takes."""
        if len(self.following) < size:
            self.following = vec[i64]([0] * size)
            self.preceding = vec[i64]([0] * size)
            self.heap = vec[i64]([0] * (3 * size))
        table = self.table
        parts = self.parts
        ranks = self.ranks
        following = self.following
        preceding = self.preceding
        heap = self.heap
        held: i64 = 0
        shift: i64 = 1
        while (1 << shift) < size:
            shift += 1
        positions: i64 = (1 << shift) - 1
        for index in range(size):
            following[index] = index + 1
            preceding[index] = index - 1
        following[size - 1] = -1
        for index in range(size - 1):
            rank = ranks[index]
            if rank != NO_RANK:
                sift_up(heap, held, (rank << shift) | index)
                held += 1
        ranks[size - 1] = NO_RANK
        while held > 0:
            key = heap[0]
            held -= 1
            sift_down(heap, held, heap[held])
            rank = key >> shift
            position = key & positions
            if ranks[position] != rank:
                continue  # stale: the pair starting here has changed since
            new_id = table.results[rank]
            second = following[position]
            after = following[second]
            parts[position] = new_id
            parts[second] = -1
            ranks[second] = NO_RANK
            following[position] = after
            ranks[position] = NO_RANK
            if after >= 0:
                preceding[after] = position
                rank = table.rank_of(new_id, parts[after])
                ranks[position] = rank
                if rank != NO_RANK:
                    sift_up(heap, held, (rank << shift) | position)
                    held += 1
            before = preceding[position]
            if before >= 0:
                rank = table.rank_of(parts[before], new_id)
                ranks[before] = rank
                if rank != NO_RANK:
                    sift_up(heap, held, (rank << shift) | before)
                    held += 1

    # writing ------------------------------------------------------------------------------

    def write(self, left: i64, boxed: list[object], out: list[int]) -> None:
        """Append the merged parts to `out` as `boxed` writes each token (None: dropped); `left`
        is what `merge` gave."""
        sink = cast(list[object], out)
        parts = self.parts
        if left != LINKED:
            for index in range(left):
                item = boxed[parts[index]]
                if item is not None:
                    sink.append(item)
            return
        position: i64 = 0  # the heap loop: the first position is never merged away
        following = self.following
        while position >= 0:
            item = boxed[parts[position]]
            if item is not None:
                sink.append(item)
            position = following[position]

    def tokens(self, left: i64) -> list[int]:
        """The merged parts as a list of ids; `left` is what `merge` gave."""
        parts = self.parts
        if left != LINKED:
            return [int(parts[index]) for index in range(left)]
        result: list[int] = []
        position: i64 = 0
        while position >= 0:
            result.append(parts[position])
            position = self.following[position]
        return result

    def encode_list(self, symbols: list[int]) -> list[int]:
        """The ids of one chunk given as a list of symbol ids."""
        if len(symbols) < 2:
            return list(symbols)
        return self.tokens(self.merge(self.read_list(symbols)))
