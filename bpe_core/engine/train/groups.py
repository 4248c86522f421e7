"""Group parity for the trainer (Parity-aware BPE, Foroutan et al., arXiv 2508.04796): which group
each merge serves, and the per-group counts and dev-set costs that decide it.

Every chunk carries, per group, a training weight and a dev weight (a chunk of a group's parallel
dev documents; most chunks hold one or two groups, so the weights are kept sparse, as triples).
The trainer merges every chunk, dev ones too, and tells `moved` about each merged occurrence: the
pairs it lost and made, and its chunk. From that this module keeps, per group, a pair count column
(the group's training weights only: a dev chunk counts for no pair) with its own lazy max-heap, and
the group's dev cost: the number of tokens its dev chunks hold under the merges so far (each merged
occurrence lowers it by its chunk's dev weight).

The first `warmup` merges are plain BPE on the summed counts (the paper's hybrid; the trainer's own
heap does them). After that each merge is the best pair, by that group's own counts and the
trainer's tie rule, of the group `choose` names: the one whose dev cost is highest, ties to the
lowest group index. A group with no pair at or above the count threshold is passed over (the
reference code stops instead); training ends when no group has one. With a window of W merges (the
paper's moving-window variant, as the reference code has it): a group already chosen for more than
alpha/n of the last W merges (alpha = 2; n the number of groups, plus one when there is a warmup,
as the reference counts its columns) is passed over for the next highest cost; if every group with
a pair is passed over so, the highest-cost one is taken.

This module does not link chunks, merge or know what a group means.
"""

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

from bpe_core.engine.train.pair_heap import PairHeap
from bpe_core.engine.train.pairs import CHAIN_NEXT, END, NEXT, NO_PAIR, WEIGHT, PairTable

ENTRY: Final[i64] = 3  # a chunk's entry: group, training weight, dev weight
WINDOW_ALPHA: Final[i64] = 2  # the reference's default share factor
NO_GROUP: Final[i64] = -1


class GroupColumn:
    """One group's pair counts (by pair id; shorter than the pair table until a pair of its is
    counted) and the heap over them."""

    count: vec[i64]
    heap: PairHeap

    def __init__(self) -> None:
        self.count = vec[i64]()
        self.heap = PairHeap()

    def add(self, pair_id: i64, delta: i64) -> None:
        while len(self.count) <= pair_id:
            self.count = append(self.count, 0)
        self.count[pair_id] += delta

    def get(self, pair_id: i64) -> i64:
        return self.count[pair_id] if pair_id < len(self.count) else 0


class ChunkGroups:
    """The chunks' per-group weights, and (once `start`ed) the group columns and dev costs."""

    group_count: i64
    warmup: i64
    window: i64
    entry_start: vec[i64]  # per chunk, and one past the last: where its entries start
    entries: vec[i64]  # group, training weight, dev weight per entry
    columns: list[GroupColumn]
    dev_tokens: vec[i64]
    recent: vec[i64]  # the last `window` groups chosen, as a ring
    recent_next: i64
    recent_share: vec[i64]  # per group: how often it is in `recent`
    share_groups: i64  # n in the window rule

    def __init__(self, group_count: int, chunk_entries: list[list[int]], warmup: int = 0, window: int = 0) -> None:
        """`chunk_entries[c]`: chunk c's weights, flat triples (group, training weight, dev
        weight), each group at most once. `window` 0: no window."""
        if group_count < 1:
            raise ValueError("group parity needs at least one group")
        if warmup < 0 or window < 0:
            raise ValueError("warmup and window are counts of merges, 0 or more")
        self.group_count = group_count
        self.warmup = warmup
        self.window = window
        self.entry_start = vec[i64]()
        self.entries = vec[i64]()
        for chunk_index in range(len(chunk_entries)):
            self.entry_start = append(self.entry_start, len(self.entries) // ENTRY)
            flat = chunk_entries[chunk_index]
            if len(flat) % ENTRY != 0:
                raise ValueError(f"chunk {chunk_index}: entries come in triples (group, training, dev)")
            seen: set[int] = set()
            for at in range(0, len(flat), ENTRY):
                group: i64 = flat[at]
                if group < 0 or group >= group_count or group in seen:
                    raise ValueError(f"chunk {chunk_index}: group {group} is not one of 0..{group_count - 1} once")
                seen.add(group)
                if flat[at + 1] < 0 or flat[at + 2] < 0:
                    raise ValueError(f"chunk {chunk_index}: negative weight for group {group}")
                self.entries = append(self.entries, group)
                self.entries = append(self.entries, flat[at + 1])
                self.entries = append(self.entries, flat[at + 2])
        self.entry_start = append(self.entry_start, len(self.entries) // ENTRY)
        self.columns = []
        self.dev_tokens = vec[i64]([0] * group_count)
        self.recent = vec[i64]([NO_GROUP] * window)
        self.recent_next = 0
        self.recent_share = vec[i64]([0] * group_count)
        self.share_groups = group_count + 1 if warmup > 0 else group_count

    def chunk_count(self) -> i64:
        return len(self.entry_start) - 1

    def training_weight(self, chunk: i64) -> i64:
        """The chunk's training weights summed: its weight in plain BPE (the warmup)."""
        total: i64 = 0
        for entry in range(self.entry_start[chunk], self.entry_start[chunk + 1]):
            total += self.entries[entry * ENTRY + 1]
        return total

    def start(self, pairs: PairTable, node: vec[i32], stride: i64, chunk_starts: vec[i64]) -> None:
        """Count every live pair occurrence into its chunk's groups' columns (through the pairs'
        chains; the node's WEIGHT is its chunk's index) and every dev chunk's tokens; the heaps
        are filled by `list_pair`."""
        self.columns = [GroupColumn() for _ in range(self.group_count)]
        entries = self.entries
        for pair_id in range(pairs.size()):
            position = i64(pairs.head[pair_id])
            while position != END:
                chunk = i64(node[position * stride + WEIGHT])
                for entry in range(self.entry_start[chunk], self.entry_start[chunk + 1]):
                    weight = entries[entry * ENTRY + 1]
                    if weight != 0:
                        self.columns[entries[entry * ENTRY]].add(pair_id, weight)
                position = i64(node[position * stride + CHAIN_NEXT])
        for chunk in range(len(chunk_starts)):
            tokens: i64 = 0
            position = chunk_starts[chunk]
            while position != END:
                tokens += 1
                position = i64(node[position * stride + NEXT])
            for entry in range(self.entry_start[chunk], self.entry_start[chunk + 1]):
                self.dev_tokens[entries[entry * ENTRY]] += tokens * entries[entry * ENTRY + 2]

    def list_pair(self, pair_id: i64, tie: i64) -> None:
        """Give the pair an entry in each heap whose group counts it higher than its latest entry
        (after `start`, for every pair; after a merge, for the pairs whose count rose)."""
        for group in range(self.group_count):
            column = self.columns[group]
            count = column.get(pair_id)
            if count > 0 and column.heap.rose(pair_id, count):
                column.heap.push(count, tie, pair_id)

    def moved(
        self, chunk: i64, lost_before: i64, made_before: i64, lost_after: i64, made_after: i64, merged: i64
    ) -> None:
        """One occurrence of `merged` in `chunk` merged: the token before lost its pair with the
        first half and made one with the new token, the token after likewise (NO_PAIR: none)."""
        entries = self.entries
        for entry in range(self.entry_start[chunk], self.entry_start[chunk + 1]):
            at = entry * ENTRY
            group = entries[at]
            self.dev_tokens[group] -= entries[at + 2]
            weight = entries[at + 1]
            if weight == 0:
                continue
            column = self.columns[group]
            if lost_before != NO_PAIR:
                column.add(lost_before, -weight)
            if made_before != NO_PAIR:
                column.add(made_before, weight)
            if lost_after != NO_PAIR:
                column.add(lost_after, -weight)
            if made_after != NO_PAIR:
                column.add(made_after, weight)
            column.add(merged, -weight)

    def clear(self, pair_id: i64) -> None:
        """The pair is merged: no group counts it any more."""
        for group in range(self.group_count):
            column = self.columns[group]
            if pair_id < len(column.count):
                column.count[pair_id] = 0

    def choose(self, threshold: i64) -> i64:
        """The group the next merge serves (see the module docstring), NO_GROUP if no group has
        a pair counted at least `threshold` times."""
        fallback = NO_GROUP
        passed = vec[i64]([0] * self.group_count)
        while True:
            group = NO_GROUP
            for candidate in range(self.group_count):
                if passed[candidate] == 0 and (
                    group == NO_GROUP or self.dev_tokens[candidate] > self.dev_tokens[group]
                ):
                    group = candidate
            if group == NO_GROUP:
                return fallback
            passed[group] = 1
            column = self.columns[group]
            best = column.heap.best(column.count)
            if best == NO_PAIR or column.count[best] < threshold:
                continue  # nothing left to merge for this group
            if self.window == 0 or self.recent_share[group] * self.share_groups <= WINDOW_ALPHA * self.window:
                return group
            if fallback == NO_GROUP:
                fallback = group

    def best(self, group: i64) -> i64:
        """The group's best pair (`choose` found it has one)."""
        column = self.columns[group]
        return column.heap.best(column.count)

    def take(self, group: i64) -> None:
        """The group's best pair is merged: off its heap, and the group into the window."""
        self.columns[group].heap.pop()
        self.served(group)

    def served(self, group: i64) -> None:
        """A merge served the group: into the window (a replayed merge's entry leaves its heap
        lazily, its count being cleared)."""
        if self.window == 0:
            return
        dropped = self.recent[self.recent_next]
        if dropped != NO_GROUP:
            self.recent_share[dropped] -= 1
        self.recent[self.recent_next] = group
        self.recent_share[group] += 1
        self.recent_next = (self.recent_next + 1) % self.window
