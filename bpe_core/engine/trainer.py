"""BPE training over weighted unique chunks of abstract symbol ids.

All chunks live in one flat, doubly linked array of positions, so a merge rewrites only the
positions it touches: a 10 Mbp chunk costs no more per merge than 10 M short ones with the same
occurrences. Each position knows the id of the pair that starts there (`pair_at`), which makes
removing a neighbouring pair an array lookup; only the two pairs a merge creates need a dict
lookup. Each pair keeps an append-only list of positions where it was created; entries whose
position no longer starts that pair are skipped when the pair is merged (lazy deletion), exactly
as stale heap entries are skipped when the best pair is chosen.

This module does not count chunks, read files or know what a symbol means.
"""

from typing import Callable, Final

from bpe_core.engine.heap import PairHeap

TIE_SMALLEST: Final = 0
TIE_LARGEST: Final = 1
TIE_RULES: Final = ("smallest", "largest")

NO_PAIR: Final = -1
DEAD: Final = -1
PROGRESS_EVERY: Final = 64


class Trainer:
    """Learns merges; `run` may be called once. `segments` gives the final chunk segmentation."""

    alphabet_size: int
    id_bound: int
    max_token_length: int
    tie_break: int
    # per position (all chunks concatenated)
    sym: list[int]
    nxt: list[int]
    prv: list[int]
    weight_at: list[int]
    pair_at: list[int]
    chunk_starts: list[int]
    # per pair id
    pair_left: list[int]
    pair_right: list[int]
    pair_count: list[int]
    pair_positions: list[list[int]]
    pair_index: dict[int, int]
    # per token id
    token_length: list[int]
    merges: list[tuple[int, int]]
    merge_counts: list[int]

    def __init__(
        self,
        alphabet_size: int,
        chunks: list[list[int]],
        weights: list[int],
        max_vocab: int,
        max_token_length: int = 0,
        tie_break: int = TIE_SMALLEST,
    ) -> None:
        if alphabet_size < 1:
            raise ValueError("alphabet_size must be at least 1")
        if len(chunks) != len(weights):
            raise ValueError(f"{len(chunks)} chunks but {len(weights)} weights")
        if tie_break != TIE_SMALLEST and tie_break != TIE_LARGEST:
            raise ValueError(f"unknown tie_break {tie_break}")
        self.alphabet_size = alphabet_size
        self.id_bound = max(max_vocab, alphabet_size) + 1
        self.max_token_length = max_token_length
        self.tie_break = tie_break
        self.sym = []
        self.nxt = []
        self.prv = []
        self.weight_at = []
        self.pair_at = []
        self.chunk_starts = []
        self.pair_left = []
        self.pair_right = []
        self.pair_count = []
        self.pair_positions = []
        self.pair_index = {}
        self.token_length = [1] * alphabet_size
        self.merges = []
        self.merge_counts = []
        self._link(chunks, weights)

    def _link(self, chunks: list[list[int]], weights: list[int]) -> None:
        sym = self.sym
        nxt = self.nxt
        prv = self.prv
        weight_at = self.weight_at
        pair_at = self.pair_at
        pair_count = self.pair_count
        pair_positions = self.pair_positions
        alphabet_size = self.alphabet_size
        for chunk_index in range(len(chunks)):
            chunk = chunks[chunk_index]
            weight = weights[chunk_index]
            if weight < 0:
                raise ValueError(f"chunk {chunk_index} has negative weight {weight}")
            start = len(sym)
            size = len(chunk)
            self.chunk_starts.append(start if size > 0 else DEAD)
            for offset in range(size):
                symbol = chunk[offset]
                if symbol < 0 or symbol >= alphabet_size:
                    raise ValueError(
                        f"chunk {chunk_index} has symbol id {symbol} outside the alphabet 0..{alphabet_size - 1}"
                    )
                position = start + offset
                sym.append(symbol)
                prv.append(position - 1 if offset > 0 else DEAD)
                nxt.append(position + 1 if offset + 1 < size else DEAD)
                weight_at.append(weight)
                pair_at.append(NO_PAIR)
            if weight == 0:
                continue
            for offset in range(size - 1):
                position = start + offset
                pair_id = self._pair_id(chunk[offset], chunk[offset + 1])
                pair_at[position] = pair_id
                if pair_id != NO_PAIR:
                    pair_count[pair_id] += weight
                    pair_positions[pair_id].append(position)

    def _pair_id(self, left: int, right: int) -> int:
        """The id of pair (left, right), created on first use; NO_PAIR if it may never merge."""
        key = left * self.id_bound + right
        pair_id = self.pair_index.get(key, NO_PAIR)
        if pair_id != NO_PAIR:
            return pair_id
        if self.max_token_length > 0:
            if self.token_length[left] + self.token_length[right] > self.max_token_length:
                return NO_PAIR
        pair_id = len(self.pair_left)
        self.pair_index[key] = pair_id
        self.pair_left.append(left)
        self.pair_right.append(right)
        self.pair_count.append(0)
        self.pair_positions.append([])
        return pair_id

    def _tie(self, pair_id: int) -> int:
        key = self.pair_left[pair_id] * self.id_bound + self.pair_right[pair_id]
        return -key if self.tie_break == TIE_SMALLEST else key

    def run(
        self,
        num_merges: int,
        min_frequency: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> list[tuple[int, int]]:
        """Learn up to `num_merges` merges whose count is at least `min_frequency` (and > 0)."""
        if self.alphabet_size + num_merges >= self.id_bound:
            raise ValueError("num_merges exceeds the max_vocab the trainer was built for")
        sym = self.sym
        nxt = self.nxt
        prv = self.prv
        weight_at = self.weight_at
        pair_at = self.pair_at
        pair_count = self.pair_count
        pair_positions = self.pair_positions
        token_length = self.token_length
        heap = PairHeap()
        for pair_id in range(len(pair_count)):
            if pair_count[pair_id] > 0:
                heap.push(pair_count[pair_id], self._tie(pair_id), pair_id)
        touched_stamp: list[int] = [0] * len(pair_count)
        touched: list[int] = []
        threshold = max(min_frequency, 1)
        for step in range(1, num_merges + 1):
            best = NO_PAIR
            while len(heap) > 0:
                candidate = heap.top_pair()
                if heap.top_count() == pair_count[candidate]:
                    best = candidate
                    break
                heap.pop()
            if best == NO_PAIR or pair_count[best] < threshold:
                break
            heap.pop()
            left = self.pair_left[best]
            right = self.pair_right[best]
            new_id = self.alphabet_size + len(self.merges)
            self.merges.append((left, right))
            self.merge_counts.append(pair_count[best])
            token_length.append(token_length[left] + token_length[right])
            positions = pair_positions[best]
            pair_positions[best] = []
            if left == right:
                # overlapping occurrences (aaa) must merge left to right, as the reference does
                positions.sort()
            touched.clear()
            for position in positions:
                if pair_at[position] != best:
                    continue
                weight = weight_at[position]
                second = nxt[position]
                before = prv[position]
                after = nxt[second]
                if before != DEAD:
                    old = pair_at[before]
                    if old != NO_PAIR:
                        pair_count[old] -= weight
                        if touched_stamp[old] != step:
                            touched_stamp[old] = step
                            touched.append(old)
                    created = self._pair_id(sym[before], new_id)
                    pair_at[before] = created
                    if created != NO_PAIR:
                        if created >= len(touched_stamp):
                            touched_stamp.append(0)
                        pair_count[created] += weight
                        pair_positions[created].append(before)
                        if touched_stamp[created] != step:
                            touched_stamp[created] = step
                            touched.append(created)
                if after != DEAD:
                    old = pair_at[second]
                    if old != NO_PAIR:
                        pair_count[old] -= weight
                        if touched_stamp[old] != step:
                            touched_stamp[old] = step
                            touched.append(old)
                    created = self._pair_id(new_id, sym[after])
                    pair_at[position] = created
                    if created != NO_PAIR:
                        if created >= len(touched_stamp):
                            touched_stamp.append(0)
                        pair_count[created] += weight
                        pair_positions[created].append(position)
                        if touched_stamp[created] != step:
                            touched_stamp[created] = step
                            touched.append(created)
                    prv[after] = position
                else:
                    pair_at[position] = NO_PAIR
                pair_count[best] -= weight
                sym[position] = new_id
                nxt[position] = after
                sym[second] = DEAD
                pair_at[second] = NO_PAIR
            pair_count[best] = 0
            for pair_id in touched:
                count = pair_count[pair_id]
                if count > 0 and pair_id != best:
                    heap.push(count, self._tie(pair_id), pair_id)
            if progress is not None and step % PROGRESS_EVERY == 0:
                progress(step)
        if progress is not None:
            progress(len(self.merges))
        return self.merges

    def segments(self) -> list[list[int]]:
        """Each chunk as the token ids it holds now, in input order."""
        result: list[list[int]] = []
        for start in self.chunk_starts:
            tokens: list[int] = []
            position = start
            while position != DEAD:
                tokens.append(self.sym[position])
                position = self.nxt[position]
            result.append(tokens)
        return result


def train(
    alphabet_size: int,
    chunks: list[list[int]],
    weights: list[int],
    num_merges: int,
    min_frequency: int = 1,
    max_token_length: int = 0,
    tie_break: int = TIE_SMALLEST,
    progress: Callable[[int], None] | None = None,
) -> Trainer:
    """Train and return the finished Trainer (its `merges`, `merge_counts` and `segments()`).

    >>> t = train(3, [[0, 1, 2], [0, 1]], [2, 1], num_merges=1)
    >>> t.merges
    [(0, 1)]
    """
    trainer = Trainer(alphabet_size, chunks, weights, alphabet_size + num_merges, max_token_length, tie_break)
    trainer.run(num_merges, min_frequency, progress)
    return trainer
