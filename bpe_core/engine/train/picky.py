"""Picky BPE for the trainer (Chizhov et al., EMNLP 2024, "BPE Gets Picky"): after each merge, a
part that the merge absorbed almost whole is removed, its remaining occurrences split back into
the tokens it was made of; and the merge list of the tokens that are left.

The rule, as the authors' reference code (github.com/pchizhov/picky_bpe) has it. After merging
(x1, x2) into x3, m times (weighted; overlapping (a, a) runs merge left to right, as in plain
training), each of x1 and x2 (once if they are one token) loses m occurrences (2m for (a, a)) and
is removed when the occurrences it has left are fewer than R x (left + m), R = `threshold`. That
is intersection over self IoS(x) = m / (left + m) > tau with tau = 1 - R, the code's strict test;
its denominator is the token's frequency just before the merge, except for (a, a), where the code
subtracts 2m and divides by left + m, and so do we. x1 is tested and removed before x2, so x2's
frequency includes what x1's removal gave back to it. Base symbols are never removed, nor any
token of a base whose merges were replayed (continued training keeps the base's ids). A removed
token's occurrences are replaced by the two tokens its merge joined, each, if it was removed
since, by the latest token made with the same symbols if that one is present, else by its own
parts, and so on down (the code's `walk`, where a token made again is the same object). Removed
tokens do not count towards `num_merges`; training goes on until that many merged tokens are
present. Where we differ, and why: a merge makes a new id every time, even for symbols a removed
token had (the code gives the old token back; here the old id stays removed and the new one is
made, so ids stay in merge order) or a present one has (the code merges into that token; here it
is a second id with the same symbols, as plain training makes it, and it counts, as the code's
vocabulary counter counts it); ties go by the trainer's tie_break (the code takes the first pair
its Counter holds); and removed tokens' ids are bounded (as many again as the merges the trainer
is built for: training stops when they run out).

Finding a removed token's occurrences: every place a token is put (the occurrences of the pair
merged into it, listed from the pair's chain before the merge, and the pieces of a split) is
appended to a per-token log; a removal walks its token's log once and keeps the entries whose
position still starts that token, then the log is emptied. A scan of all positions per removal
would cost the corpus each time; a chain per token kept exact would cost plain training a store on
every merged occurrence. The log costs plain training nothing (the hooks do nothing there).

`merge_list` turns the result into a plain merge list (ranked tokens, each made by one merge of
two tokens of lower rank, the one a `.tiktoken` import recovers), so the tokenizer encodes,
exports and continues training as any other: see its docstring for how it relates to the paper's
inference, which replays merges and removals. This module does not read files or decide
vocabulary sizes.
"""

from collections.abc import Callable, Sequence
from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

from bpe_core.engine.encode.kernel import MergeKernel
from bpe_core.engine.encode.pair_ranks import PairRanks
from bpe_core.engine.train.groups import ChunkGroups
from bpe_core.engine.train.pairs import CHAIN_NEXT, END, SYMBOL
from bpe_core.engine.train.trainer import TIE_SMALLEST, Trainer

MAX_LOG: Final = (1 << 31) - 1  # log entries are linked in 32 bits


class PickyTrainer(Trainer):
    """A Trainer that removes tokens as Picky BPE does (see the module docstring). After `run`,
    `merges` and `merge_counts` are the plain merge list of what is left (`merge_list`), cut to
    the merges asked for, `sources[r]` is the id in `training_merges` of the token merge r makes,
    and `token_usage` counts in those ids; `training_merges`, `training_counts`, `removals`
    ((the number of merges made when it went, token id), in order), `present_tokens` and
    `segments` are in the ids training used (a new id per merge)."""

    threshold: float
    protected: i64  # ids below this one are never removed (-1: not known until the first merge)
    present: vec[i32]
    frequency: vec[i64]  # per token id at or above `protected`: its weighted occurrences now
    spelling: list[str]  # per token id: its base symbols, one character each
    latest: dict[str, int]  # symbols -> the latest token id made with them
    log_head: vec[i32]  # per token id: its last log entry, or END
    log_position: vec[i32]
    log_next: vec[i32]
    removals: list[tuple[int, int]]
    training_merges: list[tuple[int, int]]
    training_counts: list[int]
    sources: list[int]

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
        *,
        threshold: float,
    ) -> None:
        """As Trainer's, with `threshold` R (0 < R < 1); no mirror and no groups (a removal would
        change what they keep). Ids are kept for as many merges again as `max_vocab` holds, for
        the removed tokens: training stops when they run out."""
        if not 0 < threshold < 1:
            raise ValueError(f"threshold must be above 0 and below 1, got {threshold}")
        if mirror is not None or groups is not None:
            raise ValueError("Picky BPE takes no mirror and no groups")
        if alphabet_size > 0x110000:
            raise ValueError("Picky BPE spells tokens as strings: an alphabet of at most 0x110000 symbols")
        spare = max(max_vocab - alphabet_size, 0)
        super().__init__(alphabet_size, chunks, weights, max_vocab + spare, max_token_length, tie_break, symbol_order)
        self.threshold = threshold
        self.protected = -1
        self.present = vec[i32]()
        self.frequency = vec[i64]()
        self.spelling = []
        self.latest = {}
        self.log_head = vec[i32]()
        self.log_position = vec[i32]()
        self.log_next = vec[i32]()
        self.removals = []
        self.training_merges = []
        self.training_counts = []
        self.sources = []

    def run(
        self,
        num_merges: int,
        min_frequency: int = 1,
        progress: Callable[[int], None] | None = None,
        veto: Callable[[int, int], bool] | None = None,
    ) -> list[tuple[int, int]]:
        """Train as Trainer.run does, removing tokens; then `merges` is the plain merge list of the
        tokens present (`merge_list`), up to the replayed merges and `num_merges` more."""
        replayed = len(self.merges)
        super().run(num_merges, min_frequency, progress, veto)
        self.training_merges = list(self.merges)
        self.training_counts = list(self.merge_counts)
        merges, sources = merge_list(
            self.alphabet_size, self.training_merges, self.present_tokens(), self.alphabet_size + replayed
        )
        kept = min(len(merges), replayed + num_merges)  # put-back parts take room: the last-listed go
        self.sources = sources[:kept]
        self.merges.clear()  # the same list: a veto may hold it
        self.merges.extend(merges[:kept])
        self.merge_counts = [self.training_counts[source - self.alphabet_size] for source in self.sources]
        return self.merges

    def summary(self) -> dict[str, int]:
        """What removal did (after `run`): removals made, tokens listed that training had removed
        (put back for a longer token), and merged tokens present at the end but not listed (another
        token has their symbols, no two listed tokens make them, or the cut to `num_merges`)."""
        present = self.present_tokens()
        listed = set(self.sources)
        return {
            "removals": len(self.removals),
            "put_back": sum([1 for source in self.sources if not present[source]]),
            "present_unlisted": sum(
                [1 for token in range(self.alphabet_size, len(present)) if present[token] and token not in listed]
            ),
        }

    def token_usage(self) -> list[int]:
        """How often each token of `merges` occurs in the training's final segmentation (a present
        token that `merge_list` left out is not counted)."""
        trained = super().token_usage()
        usage = trained[: self.alphabet_size]
        for source in self.sources:
            usage.append(trained[source])
        return usage

    def _start(self) -> None:
        """At the first merge of `run` (after any replay): the tokens so far are kept as they are."""
        self.protected = self.alphabet_size + len(self.merges)
        for token in range(self.protected):
            if token < self.alphabet_size:
                self._add_token(token, chr(token))
            else:
                left, right = self.merges[token - self.alphabet_size]
                self._add_token(token, self.spelling[left] + self.spelling[right])
            self.present[token] = 1

    def _add_token(self, token: i64, spelling: str) -> None:
        self.spelling.append(spelling)
        self.latest[spelling] = token
        self.present = append(self.present, i32(0))
        self.frequency = append(self.frequency, 0)
        self.log_head = append(self.log_head, i32(END))

    def _log(self, token: i64, position: i64) -> None:
        entry: i64 = len(self.log_position)
        if entry >= MAX_LOG:
            raise ValueError("Picky BPE's log of token places outgrew 32 bits")
        self.log_position = append(self.log_position, i32(position))
        self.log_next = append(self.log_next, self.log_head[token])
        self.log_head[token] = i32(entry)

    def before_merge(self, best: i64, new_id: i64) -> bool:
        """Log where `new_id` will be (the pair's chain); False when no id is left for it."""
        if self.protected < 0:
            self._start()
        if new_id + 1 >= self.id_bound:
            return False
        pairs = self.pairs
        self._add_token(new_id, self.spelling[pairs.left[best]] + self.spelling[pairs.right[best]])
        node = self.node
        stride = self.stride
        position = i64(pairs.head[best])
        while position != END:
            self._log(new_id, position)
            position = i64(node[position * stride + CHAIN_NEXT])
        return True

    def after_merge(self, left: i64, right: i64, new_id: i64) -> i64:
        """Count what the merge made, take it from its parts and remove those it absorbed almost
        whole; the number removed."""
        made: i64 = 0
        entry = i64(self.log_head[new_id])
        while entry != END:
            position = i64(self.log_position[entry])
            if self.node[position * self.stride + SYMBOL] == new_id:
                made += self.chunk_weight(position * self.stride)
            entry = i64(self.log_next[entry])
        self.frequency[new_id] = made
        self.present[new_id] = 1
        if left == right:
            self._absorbed(left, 2 * made)
            return self._remove_if_absorbed(left, made)
        self._absorbed(left, made)
        self._absorbed(right, made)
        removed = self._remove_if_absorbed(left, made)
        return removed + self._remove_if_absorbed(right, made)

    def _absorbed(self, token: i64, amount: i64) -> None:
        if token >= self.protected:
            self.frequency[token] -= amount

    def _remove_if_absorbed(self, token: i64, made: i64) -> i64:
        if token < self.protected:
            return 0
        left_over = self.frequency[token]
        if not float(left_over) < self.threshold * float(left_over + made):
            return 0
        pieces = vec[i64]()
        pieces = self._pieces(token, pieces)
        node = self.node
        stride = self.stride
        entry = i64(self.log_head[token])
        while entry != END:
            position = i64(self.log_position[entry])
            entry = i64(self.log_next[entry])
            if node[position * stride + SYMBOL] != token:
                continue  # merged into a longer token since, or split already
            weight = self.chunk_weight(position * self.stride)
            self.split_token(position, pieces)
            start = position
            for index in range(len(pieces)):
                piece = pieces[index]
                if piece >= self.protected:
                    self.frequency[piece] += weight
                    self._log(piece, start)
                start += self.token_length[piece]
        self.log_head[token] = i32(END)
        self.present[token] = 0
        self.frequency[token] = 0
        self.removals.append((len(self.merges), token))
        return 1

    def _pieces(self, token: i64, pieces: vec[i64]) -> vec[i64]:
        """`pieces` with the present tokens that `token`'s merge parts stand for appended."""
        left, right = self.merges[token - self.alphabet_size]
        pieces = self._piece(left, pieces)
        return self._piece(right, pieces)

    def _piece(self, part: i64, pieces: vec[i64]) -> vec[i64]:
        if part < self.protected or self.present[part] != 0:
            return append(pieces, part)
        latest: i64 = self.latest[self.spelling[part]]
        if self.present[latest] != 0:
            return append(pieces, latest)
        return self._pieces(part, pieces)

    def present_tokens(self) -> list[bool]:
        """Per token id: whether it is in the vocabulary."""
        if self.protected < 0:  # no merge was tried
            return [True] * (self.alphabet_size + len(self.merges))
        return [self.present[token] != 0 for token in range(len(self.present))]


def merge_list(
    alphabet_size: int, merges: list[tuple[int, int]], present: list[bool], protected: int
) -> tuple[list[tuple[int, int]], list[int]]:
    """The present tokens as a plain merge list, in id order: the merges (new ids: the base
    symbols, then one per merge) and, per merge, the id in `merges` of the token it makes.

    With no removal, this is `merges` itself. Otherwise each token's merge is found again as a
    `.tiktoken` import finds it: the two pieces its symbols end in when encoded with the merges
    listed so far (lowest rank first, leftmost on ties); the training's own merge may not be that
    one, since a removal's split leaves a segmentation that no rank order makes, and an export
    must give the merges its import recovers. When they end in more pieces, the removed tokens its
    merge joined are put back, just before it (their own merges found the same way, first putting
    back theirs if need be), and it is encoded again. A token still not made in two pieces is left
    out, and so are the removed tokens that no listed token needs; a token whose symbols a listed
    token has is that token (what is built on it gets that id). The ids below `protected` (base
    symbols, replayed merges) are listed as they are.

    Picky BPE's own inference replays the training's merges and removals in order, word by word, so
    a removed token is made and split again inside a word; a plain merge list has no removals, and
    no tokenizer file (ours, Hugging Face's, tiktoken's) holds one. So encoding with this list is
    not the paper's inference: a token that a kept token needs is kept, with an id, and is given on
    its own where the paper's inference would split it; what holds is the vocabulary's longer
    tokens, exact exports, and lossless encoding."""
    if all(present):
        return list(merges), list(range(alphabet_size, alphabet_size + len(merges)))
    size = alphabet_size + len(merges)
    spelling: list[str] = [chr(symbol) for symbol in range(alphabet_size)]
    for left, right in merges:
        spelling.append(spelling[left] + spelling[right])
    listing = MergeListing(alphabet_size, merges, spelling)
    for token in range(alphabet_size, size):
        if token < protected:
            left, right = merges[token - alphabet_size]
            listing.add(token, listing.listed_as[left], listing.listed_as[right])
        elif present[token]:
            listing.put_back(token)
    return listing.new_merges, listing.sources


class MergeListing:
    """The merge list `merge_list` builds, with what finding merges again needs."""

    alphabet_size: i64
    merges: list[tuple[int, int]]
    spelling: list[str]
    listed_as: list[int]  # per token id in `merges`: its new id, or -1
    token_of: dict[str, int]  # symbols -> the new id of the listed token with them
    table: PairRanks  # the merges listed so far, each making the next new id
    kernel: MergeKernel  # encodes with them
    new_merges: list[tuple[int, int]]
    sources: list[int]

    def __init__(self, alphabet_size: int, merges: list[tuple[int, int]], spelling: list[str]) -> None:
        self.alphabet_size = alphabet_size
        self.merges = merges
        self.spelling = spelling
        self.listed_as = list(range(alphabet_size)) + [-1] * len(merges)
        self.token_of = {spelling[symbol]: symbol for symbol in range(alphabet_size)}
        self.table = PairRanks(alphabet_size, len(merges))
        self.kernel = MergeKernel(self.table)
        self.new_merges = []
        self.sources = []

    def add(self, token: i64, left: i64, right: i64) -> i64:
        new_id: i64 = self.alphabet_size + len(self.new_merges)
        self.new_merges.append((left, right))
        self.sources.append(token)
        self.listed_as[token] = new_id
        self.token_of.setdefault(self.spelling[token], new_id)
        self.table.add(left, right, new_id)
        return new_id

    def put_back(self, token: i64) -> i64:
        """The new id of a listed token with `token`'s symbols, listing it (and what it needs)
        if there is none and it can be made; -1 if it cannot."""
        listed = self.token_of.get(self.spelling[token], -1)
        if listed >= 0:
            self.listed_as[token] = listed  # what is built on it is built on that one
            return listed
        pieces = self.encoded(self.spelling[token])
        if len(pieces) > 2:
            left, right = self.merges[token - self.alphabet_size]
            if self.put_back(left) < 0 or self.put_back(right) < 0:
                return -1
            pieces = self.encoded(self.spelling[token])
        if len(pieces) != 2:
            return -1
        return self.add(token, pieces[0], pieces[1])

    def encoded(self, symbols: str) -> list[int]:
        """`symbols` encoded with the merges listed so far: the lowest new id first, leftmost on
        ties (the merges are listed in new-id order, so that is rank order)."""
        return self.kernel.encode_list([ord(symbol) for symbol in symbols])
