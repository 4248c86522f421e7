"""BPE training over weighted unique chunks of abstract symbol ids.

All chunks live in one flat, linked array of positions (backward links found through `_before`), so
a merge rewrites only the positions it touches: a 10 Mbp chunk costs no more per merge than 10 M
short ones. Each position's node (`pairs.SYMBOL` and on, side by side in one i32 vec: a merge reads
a position in one cache line) holds its symbol, the next token's position, the pair that starts
there and its links in that pair's chain: removing a neighbouring pair is stores, only the two
pairs a merge creates need a lookup in an integer hash table (`pairs.py`). The best pair comes from
a max-heap with lazy entries (`heap.PairHeap.best`). All unboxed, in 32 bits (a genome is most of
the memory: at most MAX_POSITIONS symbols). Overlapping occurrences of a pair (a, a) (`aaa`) merge
left to right from each run's start, as in the reference.

`run` may be given a veto, (left id, right id) -> True if that pair must never merge. It is asked
once per distinct pair: when `run` starts, about each pair the chunks and any replayed merges made
(so replay takes a base's merges whatever the veto says), and after that when a merge creates a
pair. A forbidden pair gets no count, no occurrences and no heap entry, like a pair over
`max_token_length`; the pair table remembers it, so its later occurrences cost one lookup and no
call.

A subclass may hook each merge (`before_merge`, `after_merge`) and split tokens back into parts
(`split_token`): picky.py does, for Picky BPE.

A mirror (an involution on the base symbols; the chunks must be closed under reversal with each
symbol mirrored, as with both DNA strands counted) makes every merge be followed at once by a
partner whose token is its mirror image, or taken alone if its token is its own; mirror.py says
how the partner is chosen and why. The partner is taken whatever its count is by then (merging
x y first takes the partner's occurrences that overlap it, as in `x z x'` with z its own mirror):
closure of the vocabulary is the invariant. With room for one merge only and a best pair that
has a partner, training stops there. A veto forbids a pair when it forbids the pair or
(mirror[y], mirror[x]).

With `groups` (groups.py: per chunk, a training and a dev weight per group), the merges after a
warmup each serve one group, the one whose dev chunks cost the most tokens: its own best pair is
merged. Each node's WEIGHT is then its chunk's index, and each merged occurrence is told to the
groups (`ChunkGroups.moved`); without groups that is one test of a field per occurrence. This module
does not count chunks, read files or know what a symbol means.
"""

from collections.abc import Callable, Sequence
from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

from bpe_core.engine.train.groups import NO_GROUP, ChunkGroups
from bpe_core.engine.train.mirror import Spellings, mirror_tokens
from bpe_core.engine.train.pair_heap import PairHeap
from bpe_core.engine.train.pairs import CHAIN_NEXT, END, NEXT, NO_PAIR, PAIR, SYMBOL, VETOED, WEIGHT, PairTable

TIE_SMALLEST: Final = 0
TIE_LARGEST: Final = 1
TIE_HF: Final = 2
TIE_RULES: Final = ("smallest", "largest", "hf")

DEAD: Final[i64] = -1
# a pair count is at most the chunk weights times (length - 1), summed: bounded by this, no
# count can wrap in compiled i64 arithmetic (pure Python would not wrap, so both refuse alike)
MAX_WEIGHT_SUM: Final = (1 << 63) - 1
PROGRESS_EVERY: Final = 64
MAX_POSITIONS: Final = (1 << 31) - 1  # positions and token ids are stored in 32 bits
UNIFORM_STRIDE: Final[i64] = 5  # i32s in a position's node (pairs.py names them): one weight for all
WEIGHED_STRIDE: Final[i64] = 6  # ... and its chunk's weight (or index), when chunks' weights differ


class Trainer:
    """Learns merges: `replay` known ones first (to continue training), then `run` once.
    `segments` gives the final chunk segmentation. `merges` is one list, appended to as merges
    are taken, so a veto may read it to know the tokens it is asked about."""

    alphabet_size: i64
    id_bound: i64
    max_token_length: i64
    tie_break: i64
    tie_rank: vec[i64]
    # per position (all chunks concatenated), side by side: its node (`pairs.SYMBOL` and on)
    node: vec[i32]
    stride: i64
    uniform_weight: i64  # the weight of every chunk with a pair, or -1: each node's WEIGHT says
    weight_indexed: bool  # WEIGHT is the chunk's index in chunk_weights (a weight needs 64 bits)
    chunk_starts: vec[i64]
    chunk_weights: vec[i64]
    pairs: PairTable
    token_length: vec[i64]
    touched: vec[i64]  # the pairs whose count rose in this step
    step: i64
    merges: list[tuple[int, int]]
    merge_counts: list[int]
    veto: Callable[[int, int], bool] | None
    mirrored: bool
    mirror_of: vec[i64]
    spellings: Spellings | None
    groups: ChunkGroups | None  # group parity (groups.py), if given
    live_groups: ChunkGroups | None  # the groups once their merges begin (after the warmup)

    def __init__(
        self,
        alphabet_size: int,
        chunks: Sequence[Sequence[int]],
        weights: list[int],
        max_vocab: int,
        max_token_length: int = 0,
        tie_break: int = TIE_SMALLEST,
        symbol_order: list[int] | None = None,
        mirror: list[int] | None = None,
        groups: ChunkGroups | None = None,
    ) -> None:
        """`symbol_order` (for tie_break hf): the base symbols' ids in the order Hugging Face
        gives them (its alphabet sorted by code point); ties go to the smallest pair in that order.
        `mirror`: an involution on the base symbol ids (mirror[mirror[s]] == s) under which, with
        reversal, the chunks are closed; each merge is then learned with its mirror partner.
        `groups`: each chunk's weights per group, for group-parity training (groups.py); each
        chunk's weight must be its training weights summed.
        A chunk may be any sequence of ids (`bytes` for an alphabet of up to 256: no list of ints)."""
        if alphabet_size < 1:
            raise ValueError("alphabet_size must be at least 1")
        if len(chunks) != len(weights):
            raise ValueError(f"{len(chunks)} chunks but {len(weights)} weights")
        if tie_break != TIE_SMALLEST and tie_break != TIE_LARGEST and tie_break != TIE_HF:
            raise ValueError(f"unknown tie_break {tie_break}")
        order = symbol_order if symbol_order is not None else list(range(alphabet_size))
        if sorted(order) != list(range(alphabet_size)):
            raise ValueError("symbol_order must list every base symbol id once")
        self.alphabet_size = alphabet_size
        self.id_bound = max(max_vocab, alphabet_size) + 1
        if self.id_bound > MAX_POSITIONS:
            raise ValueError(f"a vocabulary of {max_vocab} is more than {MAX_POSITIONS} ids")
        self.max_token_length = max_token_length
        self.tie_break = tie_break
        self.tie_rank = vec[i64]([0] * alphabet_size)
        for position in range(alphabet_size):
            self.tie_rank[order[position]] = position
        self.uniform_weight = -1
        self.chunk_starts = vec[i64]()
        self.chunk_weights = vec[i64]()
        self.pairs = PairTable(self.id_bound)
        self.token_length = vec[i64]([1] * alphabet_size)
        self.touched = vec[i64]()
        self.step = 0
        self.merges = []
        self.merge_counts = []
        self.veto = None
        self.mirrored = mirror is not None
        self.mirror_of = vec[i64]()
        self.spellings = None
        self.groups = groups
        self.live_groups = None
        if groups is not None:
            if groups.chunk_count() != len(chunks):
                raise ValueError(f"{len(chunks)} chunks but group weights for {groups.chunk_count()}")
            for index in range(len(chunks)):
                if groups.training_weight(index) != weights[index]:
                    raise ValueError(f"chunk {index}: its weight is not its training weights summed")
        if mirror is not None:
            self.mirror_of = vec[i64](mirror_tokens(mirror, alphabet_size, []))
            self.spellings = Spellings(mirror)
        self._link(chunks, weights)

    def _link(self, chunks: Sequence[Sequence[int]], weights: list[int]) -> None:
        alphabet_size = self.alphabet_size
        pair_total = 0
        position_total = sum([len(chunk) for chunk in chunks])
        if position_total > MAX_POSITIONS:
            raise ValueError(f"the chunks hold {position_total} symbols, more than the {MAX_POSITIONS} a trainer takes")
        # only chunks with a pair need their weight per position: a genome's N-split stretches of one base do not
        paired_weights = {weights[index] for index in range(len(chunks)) if len(chunks[index]) > 1}
        uniform = len(paired_weights) <= 1 and self.groups is None
        stride = UNIFORM_STRIDE if uniform else WEIGHED_STRIDE
        self.stride = stride
        # with groups, WEIGHT is the chunk's index: its group weights are found from it
        self.weight_indexed = not uniform and (self.groups is not None or max(weights) >> 31 != 0)
        node = vec[i32](capacity=position_total * stride)  # sized once (regrowing copies a genome's)
        for chunk_index in range(len(chunks)):
            chunk = chunks[chunk_index]
            given: int = weights[chunk_index]
            if given < 0:
                raise ValueError(f"chunk {chunk_index} has negative weight {given}")
            pair_total += given * max(len(chunk) - 1, 0)
            if given > MAX_WEIGHT_SUM or pair_total > MAX_WEIGHT_SUM:
                raise ValueError(
                    "the chunk weights times their pairs add up to more than 2**63 - 1: pair counts would overflow"
                )
            weight: i64 = given
            # a node's WEIGHT: read in the node's cache line, not in chunk_weights (unless it needs 64 bits)
            stored = i32(0)
            if self.weight_indexed:
                stored = i32(chunk_index)
            elif not uniform:
                stored = i32(weight)
            start: i64 = len(node) // stride
            size: i64 = len(chunk)
            self.chunk_starts = append(self.chunk_starts, start if size > 0 else DEAD)
            self.chunk_weights = append(self.chunk_weights, weight)
            for offset in range(size):
                symbol: i64 = chunk[offset]
                if symbol < 0 or symbol >= alphabet_size:
                    raise ValueError(
                        f"chunk {chunk_index} has symbol id {symbol} outside the alphabet 0..{alphabet_size - 1}"
                    )
                node = append(node, i32(symbol))
                node = append(node, i32(start + offset + 1) if offset + 1 < size else i32(DEAD))
                node = append(node, i32(NO_PAIR))
                node = append(node, i32(END))  # no chain yet
                node = append(node, i32(END))
                if not uniform:
                    node = append(node, stored)
            for offset in range(size - 1):  # weight 0 chunks: no count, still rewritten (segments() covers them)
                at = (start + offset) * stride
                pair_id = self._pair_for(i64(node[at + SYMBOL]), i64(node[at + stride + SYMBOL]))
                node[at + PAIR] = i32(pair_id)
                if pair_id != NO_PAIR:
                    self.pairs.count[pair_id] += weight
                    self.pairs.chain(node, stride, pair_id, start + offset)
        self.node = node
        if uniform:  # every weight is checked by now: this one fits in 64 bits
            self.uniform_weight = paired_weights.pop() if paired_weights else 0

    def _pair_for(self, left: i64, right: i64) -> i64:
        """The id of pair (left, right), created on first use; NO_PAIR if it may never merge."""
        pair_id = self.pairs.find(left, right)
        if pair_id >= 0:
            return pair_id
        if pair_id == VETOED:
            return NO_PAIR
        if self.max_token_length > 0:
            if self.token_length[left] + self.token_length[right] > self.max_token_length:
                return NO_PAIR
        if self._vetoed(left, right):
            self.pairs.forbid(left, right)
            return NO_PAIR
        return self.pairs.add(left, right)

    def _vetoed(self, left: i64, right: i64) -> bool:
        """The veto forbids the pair, or (with a mirror) its partner: partners merge together."""
        veto = self.veto
        if veto is None:
            return False
        if veto(left, right):
            return True
        return self.mirrored and veto(self.mirror_of[right], self.mirror_of[left])

    def _veto_existing(self) -> None:
        """Ask the veto about each pair made before `run` but the replayed merges (no occurrence of
        those can come back: a merge only creates pairs holding its id); a forbidden one loses its
        occurrences, as if it had been vetoed when it was created."""
        if self.veto is None:
            return
        pairs = self.pairs
        node = self.node
        stride = self.stride
        replayed = {pairs.find(left, right) for left, right in self.merges}
        for pair_id in range(pairs.size()):
            if pair_id in replayed:
                continue
            left = i64(pairs.left[pair_id])
            right = i64(pairs.right[pair_id])
            if not self._vetoed(left, right):
                continue
            position = i64(pairs.head[pair_id])
            pairs.head[pair_id] = i32(END)
            while position != END:
                node[position * stride + PAIR] = i32(NO_PAIR)
                position = i64(node[position * stride + CHAIN_NEXT])
            pairs.count[pair_id] = 0
            pairs.forbid(left, right)

    def _tie(self, pair_id: i64) -> i64:
        left = i64(self.pairs.left[pair_id])
        right = i64(self.pairs.right[pair_id])
        if self.tie_break == TIE_HF:
            # Hugging Face numbers its alphabet by code point, merged tokens in merge order
            if left < self.alphabet_size:
                left = self.tie_rank[left]
            if right < self.alphabet_size:
                right = self.tie_rank[right]
        key = left * self.id_bound + right
        return key if self.tie_break == TIE_LARGEST else -key

    def _change(self, pair_id: i64, delta: i64) -> None:
        """Add `delta` to a pair's count; a pair whose count rises is `touched` (one whose count
        falls keeps its heap entry: see `PairHeap.best`)."""
        pairs = self.pairs
        pairs.count[pair_id] += delta
        if delta > 0 and pairs.stamp[pair_id] != self.step:
            pairs.stamp[pair_id] = self.step
            self.touched = append(self.touched, pair_id)

    def chunk_weight(self, at: i64) -> i64:
        """The weight of the chunk whose position's node starts at `at`."""
        if self.uniform_weight >= 0:
            return self.uniform_weight
        weight = i64(self.node[at + WEIGHT])
        return self.chunk_weights[weight] if self.weight_indexed else weight

    def _merge_at(self, position: i64, new_id: i64, merged: i64) -> None:
        """Merge the pair starting at position into new_id, updating the neighbouring pairs."""
        node = self.node
        stride = self.stride
        pairs = self.pairs
        at = position * stride
        weight = self.chunk_weight(at)
        second = i64(node[at + NEXT])
        second_at = second * stride
        before = self._before(position)
        after = i64(node[second_at + NEXT])
        lost_before = NO_PAIR
        made_before = NO_PAIR
        lost_after = NO_PAIR
        made_after = NO_PAIR
        if before != DEAD:
            before_at = before * stride
            old = i64(node[before_at + PAIR])
            lost_before = old
            if old != NO_PAIR:
                self._change(old, -weight)
                pairs.unchain(node, stride, old, before)
            created = self._pair_for(i64(node[before_at + SYMBOL]), new_id)
            made_before = created
            node[before_at + PAIR] = i32(created)
            if created != NO_PAIR:
                self._change(created, weight)
                pairs.chain(node, stride, created, before)
        if after != DEAD:
            old = i64(node[second_at + PAIR])
            lost_after = old
            if old != NO_PAIR:
                self._change(old, -weight)
                if old != merged:  # an overlapping occurrence of the pair being merged: see _merge_all
                    pairs.unchain(node, stride, old, second)
            created = self._pair_for(new_id, i64(node[after * stride + SYMBOL]))
            made_after = created
            node[at + PAIR] = i32(created)
            if created != NO_PAIR:
                self._change(created, weight)
                pairs.chain(node, stride, created, position)
        else:
            node[at + PAIR] = i32(NO_PAIR)
        pairs.count[merged] -= weight
        end = second + self.token_length[i64(node[second_at + SYMBOL])] - 1  # the merged token's last slot
        node[at + SYMBOL] = i32(new_id)
        node[at + NEXT] = i32(after)
        node[end * stride + NEXT] = i32(position)
        node[second_at + SYMBOL] = i32(DEAD)
        node[second_at + PAIR] = i32(NO_PAIR)
        groups = self.live_groups
        if groups is not None:
            groups.moved(i64(node[at + WEIGHT]), lost_before, made_before, lost_after, made_after, merged)

    def _before(self, position: i64) -> i64:
        """The token before `position`'s in its chunk, or DEAD: the slot before a token is the previous
        token's last, which (if not its first, so dead) keeps that token's start as its NEXT."""
        last = position - 1
        if last < 0:
            return DEAD
        node = self.node
        stride = self.stride
        start = last if node[last * stride + SYMBOL] != DEAD else i64(node[last * stride + NEXT])
        return start if i64(node[start * stride + NEXT]) == position else DEAD

    def _merge_all(self, best: i64, left: i64, right: i64, new_id: i64) -> None:
        """Merge every live occurrence of pair `best` = (left, right) into new_id."""
        pairs = self.pairs
        node = self.node
        stride = self.stride
        position = i64(pairs.head[best])
        pairs.head[best] = i32(END)  # every occurrence is merged or gone by the end
        if left != right:
            # merging one occurrence leaves the others and their links as they are: walk the chain
            while position != END:
                following = i64(node[position * stride + CHAIN_NEXT])
                self._merge_at(position, new_id, best)
                position = following
            return
        # (a, a): merging a run rewrites the links of occurrences further on in the chain (and ends
        # those it covers, which stay in the list: their PAIR no longer says best), so list them first
        found = vec[i32]()
        while position != END:
            found = append(found, i32(position))
            position = i64(node[position * stride + CHAIN_NEXT])
        for index in range(len(found)):
            position = i64(found[index])
            if i64(node[position * stride + PAIR]) != best:
                continue
            # overlapping occurrences: merge the whole run of `left` from its start
            before = self._before(position)
            while before != DEAD and i64(node[before * stride + PAIR]) == best:
                position = before
                before = self._before(position)
            while position != DEAD and i64(node[position * stride + PAIR]) == best:
                self._merge_at(position, new_id, best)
                position = i64(node[position * stride + NEXT])

    def replay(self, merges: list[tuple[int, int]], min_frequency: int = 1) -> None:
        """Take these merges first, in order, as if training had chosen them (merge r creates id
        alphabet_size + r), keeping every pair count: `run` then goes on exactly as a run that
        had learned them itself. A merge whose pair never occurs is kept, with count 0. The veto
        (given to `run`, later) does not apply: the merges given here are taken as they are. With
        a mirror the merges must come in partner pairs (as a mirrored run learns them). With
        groups, each merge after the warmup is put in the window of the group `run` would have
        chosen for it (with `min_frequency` as `run` gets it): the base does not record which
        group a merge served, and a base trained with the same groups is so continued exactly."""
        pairs = self.pairs
        if self.merges or self.veto is not None or self.alphabet_size + len(merges) >= self.id_bound:
            raise ValueError("replay comes first, with no more merges than the max_vocab the trainer was built for")
        spellings = self.spellings
        if spellings is not None:
            mirror = [int(self.mirror_of[symbol]) for symbol in range(self.alphabet_size)]
            self.mirror_of = vec[i64](mirror_tokens(mirror, self.alphabet_size, merges))
            for rank in range(len(merges)):
                spellings.add(merges[rank][0], merges[rank][1])
        for rank in range(len(merges)):
            left: i64 = merges[rank][0]
            right: i64 = merges[rank][1]
            bound = self.alphabet_size + rank
            if left < 0 or right < 0 or left >= bound or right >= bound:
                raise ValueError(f"merge {rank} ({left}, {right}) uses an id that no earlier merge made")
            groups = self._parity_groups()
            if groups is not None:
                served = groups.choose(max(min_frequency, 1))
                if served != NO_GROUP:
                    groups.served(served)
            best = pairs.find(left, right)
            self.merges.append((left, right))
            self.merge_counts.append(pairs.count[best] if best >= 0 else 0)
            self.token_length = append(self.token_length, self.token_length[left] + self.token_length[right])
            if best < 0:
                continue
            self.step += 1
            self.touched = vec[i64]()  # only run() and the groups list touched pairs: keep the list short
            self._merge_all(best, left, right, bound)
            pairs.count[best] = 0
            if groups is not None:
                groups.clear(best)
                touched = self.touched
                for index in range(len(touched)):
                    groups.list_pair(touched[index], self._tie(touched[index]))

    def run(
        self,
        num_merges: int,
        min_frequency: int = 1,
        progress: Callable[[int], None] | None = None,
        veto: Callable[[int, int], bool] | None = None,
    ) -> list[tuple[int, int]]:
        """Learn up to `num_merges` merges (after any replayed ones) whose count is at least
        `min_frequency` (and > 0), none of them a pair the `veto` forbids (True: never merge
        (left, right))."""
        if self.alphabet_size + len(self.merges) + num_merges >= self.id_bound:
            raise ValueError("num_merges exceeds the max_vocab the trainer was built for")
        if veto is not None:
            self.veto = veto
            self._veto_existing()
        pairs = self.pairs
        heap = PairHeap()
        for pair_id in range(pairs.size()):
            if pairs.count[pair_id] > 0:
                heap.push(pairs.count[pair_id], self._tie(pair_id), pair_id)
        threshold: i64 = max(min_frequency, 1)
        learned: i64 = 0
        reported: i64 = 0
        while learned < num_merges:
            self.step += 1  # stamps stay unique across replay and run
            groups = self._parity_groups()
            group = NO_GROUP
            if groups is not None:
                group = groups.choose(threshold)
                if group == NO_GROUP:
                    break
                best = groups.best(group)
            else:
                best = heap.best(pairs.count)
                if best == NO_PAIR or pairs.count[best] < threshold:
                    break
            left = i64(pairs.left[best])
            right = i64(pairs.right[best])
            new_id: i64 = self.alphabet_size + len(self.merges)
            partner_left = left
            partner_right = right
            if self.mirrored:
                partner_left, partner_right = self._partner(left, right)
            paired = partner_left != left or partner_right != right
            if paired and learned + 2 > num_merges:
                break  # room for one merge only: stop, so the vocabulary stays closed under the mirror
            if not self.before_merge(best, new_id):
                break  # a subclass's hook (picky.py): no id left for the merge
            if groups is not None:
                groups.take(group)
            else:
                heap.pop()
                heap.listed[best] = 0  # no entry now: if a split (picky.py) counts the pair again, it needs one
            self.touched = vec[i64]()
            # both merges are listed (and mirrored) first: the veto may ask about the partner's token
            self._list_merge(left, right, new_id + 1 if paired else new_id)
            if paired:
                self._list_merge(partner_left, partner_right, new_id)
            self.merge_counts.append(pairs.count[best])
            self._merge_all(best, left, right, new_id)
            pairs.count[best] = 0
            if groups is not None:
                groups.clear(best)
            learned += 1
            if paired:
                partner = pairs.find(partner_left, partner_right)  # never seen (count 0): no id
                self.merge_counts.append(pairs.count[partner] if partner >= 0 else 0)
                if partner >= 0:
                    self._merge_all(partner, partner_left, partner_right, new_id + 1)
                    pairs.count[partner] = 0
                    if groups is not None:
                        groups.clear(partner)
                learned += 1
            learned -= self.after_merge(left, right, new_id)  # a subclass's hook (picky.py): the tokens it removed
            touched = self.touched
            for index in range(len(touched)):
                pair_id = touched[index]
                if groups is not None:
                    groups.list_pair(pair_id, self._tie(pair_id))
                    continue
                count = pairs.count[pair_id]
                if count > 0 and heap.rose(pair_id, count):
                    heap.push(count, self._tie(pair_id), pair_id)
            if progress is not None and learned - reported >= PROGRESS_EVERY:
                reported = learned
                progress(learned)
        if progress is not None:
            progress(learned)  # merged tokens learned and kept (picky.py removes some)
        return self.merges

    def _parity_groups(self) -> ChunkGroups | None:
        """The groups, once their merges begin (after the warmup, plain BPE on the summed counts):
        they are counted from the chunks as they are then, and serve every merge after."""
        groups = self.groups
        if groups is None or len(self.merges) < groups.warmup:
            return None
        if self.live_groups is None:
            groups.start(self.pairs, self.node, self.stride, self.chunk_starts)
            for pair_id in range(self.pairs.size()):
                groups.list_pair(pair_id, self._tie(pair_id))
            self.live_groups = groups
        return groups

    def _partner(self, left: i64, right: i64) -> tuple[i64, i64]:
        """The pair to learn right after (left, right): itself when its token is its own mirror
        image, else the pair spelling that image with the highest count, (mirror[right],
        mirror[left]) on ties."""
        spellings = self.spellings
        assert spellings is not None  # only called with a mirror
        image = spellings.image(left, right)
        if image == spellings.spelling[left] + spellings.spelling[right]:
            return left, right
        pairs = self.pairs
        best_left = self.mirror_of[right]
        best_right = self.mirror_of[left]
        found = pairs.find(best_left, best_right)
        best_count: i64 = pairs.count[found] if found >= 0 else 0
        for candidate_left, candidate_right in spellings.pairs_spelling(image):
            found = pairs.find(candidate_left, candidate_right)
            if found >= 0 and pairs.count[found] > best_count:
                best_left = candidate_left
                best_right = candidate_right
                best_count = pairs.count[found]
        return best_left, best_right

    def _list_merge(self, left: i64, right: i64, mirror_id: i64) -> None:
        self.merges.append((left, right))
        self.token_length = append(self.token_length, self.token_length[left] + self.token_length[right])
        if self.spellings is not None:
            self.mirror_of = append(self.mirror_of, mirror_id)
            self.spellings.add(left, right)

    def before_merge(self, best: i64, new_id: i64) -> bool:
        """A hook for a subclass (picky.py), called before pair `best` merges into `new_id`: False
        stops training there. Plain training has nothing to do."""
        return True

    def after_merge(self, left: i64, right: i64, new_id: i64) -> i64:
        """A hook for a subclass (picky.py), called after (left, right) merged into `new_id`: the
        number of merged tokens it removed (they no longer count towards `num_merges`)."""
        return 0

    def split_token(self, position: i64, pieces: vec[i64]) -> None:
        """Replace the token that starts at `position` by `pieces`, tokens whose symbols make its
        own, in order (the inverse of merges), updating the pairs around and between them."""
        node = self.node
        stride = self.stride
        pairs = self.pairs
        at = position * stride
        weight = self.chunk_weight(at)
        before = self._before(position)
        after = i64(node[at + NEXT])
        if before != DEAD:
            old = i64(node[before * stride + PAIR])
            if old != NO_PAIR:
                self._change(old, -weight)
                pairs.unchain(node, stride, old, before)
        old = i64(node[at + PAIR])
        if old != NO_PAIR:
            self._change(old, -weight)
            pairs.unchain(node, stride, old, position)
        start = position
        for index in range(len(pieces)):
            piece = pieces[index]
            size = self.token_length[piece]
            following = start + size if index + 1 < len(pieces) else after
            node[start * stride + SYMBOL] = i32(piece)
            node[start * stride + NEXT] = i32(following)
            node[start * stride + PAIR] = i32(NO_PAIR)
            if size > 1:
                node[(start + size - 1) * stride + NEXT] = i32(start)  # its last slot leads back (see _before)
            start += size
        if before != DEAD:
            self._link_pair(before)
        start = position
        for index in range(len(pieces)):
            if index + 1 < len(pieces) or after != DEAD:
                self._link_pair(start)
            start += self.token_length[pieces[index]]

    def _link_pair(self, position: i64) -> None:
        """Give the token at `position` and the next one their pair (counted and chained)."""
        node = self.node
        stride = self.stride
        at = position * stride
        weight = self.chunk_weight(at)
        following = i64(node[at + NEXT])
        created = self._pair_for(i64(node[at + SYMBOL]), i64(node[following * stride + SYMBOL]))
        node[at + PAIR] = i32(created)
        if created != NO_PAIR:
            self._change(created, weight)
            self.pairs.chain(node, stride, created, position)

    def token_usage(self) -> list[int]:
        """How often each token id occurs in the weighted chunks now (the sum is the token count:
        symbols per token = compression)."""
        usage = [0] * len(self.token_length)  # every id made
        for index in range(len(self.chunk_starts)):
            weight = self.chunk_weights[index]
            position = self.chunk_starts[index]
            while position != DEAD:
                usage[self.node[position * self.stride + SYMBOL]] += weight
                position = i64(self.node[position * self.stride + NEXT])
        return usage

    def segments(self) -> list[list[int]]:
        """Each chunk as the token ids it holds now, in input order."""
        result: list[list[int]] = []
        for index in range(len(self.chunk_starts)):
            tokens: list[int] = []
            position = self.chunk_starts[index]
            while position != DEAD:
                tokens.append(i64(self.node[position * self.stride + SYMBOL]))
                position = i64(self.node[position * self.stride + NEXT])
            result.append(tokens)
        return result
