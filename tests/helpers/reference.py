"""The naive reference BPE, written as plainly as possible, to check the engine against.

`train_reference` is the seed article's step 1 ("naive baseline") extended with chunk weights, the
two named tie rules, `min_frequency`, `max_token_length`, a veto on merged tokens (`forbidden`)
and a base's merges taken first (`base_merges`, as continued training does): every round it
recounts every adjacent pair of every chunk (overlapping occurrences count: `aaa` holds (a, a)
twice), picks the best pair, and rewrites every chunk left to right without overlap.
`encode_reference` is the seed's rank-ordered `encode_chunk`, `decode_reference` expands merged
ids recursively.

Nothing here is fast, clever or shared with bpe_core: it must stay obviously correct.
`seed_train_naive` is the article's step 1 copied verbatim, to check the reference itself.
`assert_trains_like_the_reference` compares a trainer's results with the reference's, and
`as_imported` writes merges as an import may (for tests that reach the engine's loop for imports).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# the tie rules train_reference implements, by the names bpe_core.engine.TIE_RULES gives them
TIE_RULE_NAMES = ("smallest", "largest")


@dataclass
class ReferenceResult:
    merges: list[tuple[int, int]]
    merge_counts: list[int]
    segments: list[list[int]]


def merge_pair(chunk: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Every occurrence of `pair` in `chunk` replaced by `new_id`, left to right, no overlap."""
    out: list[int] = []
    i = 0
    while i < len(chunk):
        if i + 1 < len(chunk) and chunk[i] == pair[0] and chunk[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(chunk[i])
            i += 1
    return out


def best_pair(counts: dict[tuple[int, int], int], tie_break: str) -> tuple[int, int]:
    """The most frequent pair; a tie goes to the smallest pair (tie_break "smallest") or the largest."""
    if tie_break == "largest":
        return max(counts, key=lambda pair: (counts[pair], pair))
    return max(counts, key=lambda pair: (counts[pair], -pair[0], -pair[1]))


def pair_counts(chunks: Sequence[tuple[list[int], int]]) -> dict[tuple[int, int], int]:
    """Each adjacent pair's weighted count over the chunks (chunk, weight); pairs counted 0 left out."""
    counts: dict[tuple[int, int], int] = {}
    for chunk, weight in chunks:
        for index in range(len(chunk) - 1):
            pair = (chunk[index], chunk[index + 1])
            counts[pair] = counts.get(pair, 0) + weight
    return {pair: count for pair, count in counts.items() if count > 0}


def train_reference(
    alphabet_size: int,
    chunks: list[list[int]],
    weights: list[int],
    num_merges: int,
    min_frequency: int = 1,
    max_token_length: int = 0,
    tie_break: str = "smallest",
    forbidden: Callable[[list[int]], bool] | None = None,
    base_merges: Sequence[tuple[int, int]] = (),
) -> ReferenceResult:
    """Learn up to `num_merges` merges; merge r creates id alphabet_size + r.

    tie_break "smallest": highest count, then the smallest (left, right).
    tie_break "largest": highest count, then the largest (left, right), i.e. the seed's
    `max(counts, key=lambda p: (counts[p], p))`.
    Training stops when no pair has a count of at least max(min_frequency, 1). With
    max_token_length > 0, a pair whose merged token would hold more base symbols is never a
    candidate; nor is a pair for which `forbidden(the merged token's base symbols)` is true.

    `base_merges` are taken first, in order, whatever their count and whatever `forbidden` says
    (their counts are recorded, 0 for a pair that does not occur); `num_merges` counts them too.
    """
    assert tie_break in TIE_RULE_NAMES
    assert len(chunks) == len(weights)
    segments = [list(chunk) for chunk in chunks]
    token_length = [1] * alphabet_size
    merges: list[tuple[int, int]] = []
    merge_counts: list[int] = []
    for round_number in range(num_merges):
        counts: dict[tuple[int, int], int] = {}
        for chunk, weight in zip(segments, weights):
            for i in range(len(chunk) - 1):
                pair = (chunk[i], chunk[i + 1])
                if round_number < len(base_merges):
                    if pair != base_merges[round_number]:
                        continue
                elif max_token_length > 0 and token_length[pair[0]] + token_length[pair[1]] > max_token_length:
                    continue
                elif forbidden is not None and forbidden(decode_reference(alphabet_size, merges, list(pair))):
                    continue
                counts[pair] = counts.get(pair, 0) + weight
        if round_number < len(base_merges):
            best = base_merges[round_number]
            new_id = alphabet_size + len(merges)
            segments = [merge_pair(chunk, best, new_id) for chunk in segments]
            merges.append(best)
            merge_counts.append(counts.get(best, 0))
            token_length.append(token_length[best[0]] + token_length[best[1]])
            continue
        if not counts:
            break
        best = best_pair(counts, tie_break)
        if counts[best] < max(min_frequency, 1):
            break
        new_id = alphabet_size + len(merges)
        segments = [merge_pair(chunk, best, new_id) for chunk in segments]
        merges.append(best)
        merge_counts.append(counts[best])
        token_length.append(token_length[best[0]] + token_length[best[1]])
    return ReferenceResult(merges, merge_counts, segments)


def assert_trains_like_the_reference(trainer: Any, reference: ReferenceResult) -> None:
    """An engine Trainer learned the reference's merges, with its counts, and left its segments."""
    assert [tuple(pair) for pair in trainer.merges] == reference.merges
    assert list(trainer.merge_counts) == reference.merge_counts
    assert trainer.segments() == reference.segments


def as_imported(alphabet_size: int, merges: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[int]]:
    """(merges, results): the same merges as an import may write them, the first one listed again
    at the end making an id that exists already (as Hugging Face's merges may). A pair listed
    twice keeps its first rank, so the extra merge never applies and the ids are those of
    `merges`; a table in which a merge does not make the next new id is one the engine merges
    with another loop than fresh merges (its kernel), so encoding through it checks that loop."""
    if not merges:
        return [], []
    results = [alphabet_size + rank for rank in range(len(merges))]
    return [*merges, merges[0]], [*results, alphabet_size]


def encode_reference(alphabet_size: int, merges: list[tuple[int, int]], symbols: list[int]) -> list[int]:
    """The seed's encode_chunk: merge the lowest-ranked pair present (all its occurrences,
    left to right), until no adjacent pair has a rank. The first rank of a pair counts."""
    rank: dict[tuple[int, int], int] = {}
    for r, pair in enumerate(merges):
        rank.setdefault(pair, r)
    chunk = list(symbols)
    while True:
        ranked = [rank[(chunk[i], chunk[i + 1])] for i in range(len(chunk) - 1) if (chunk[i], chunk[i + 1]) in rank]
        if not ranked:
            return chunk
        best = min(ranked)
        chunk = merge_pair(chunk, merges[best], alphabet_size + best)


def decode_reference(alphabet_size: int, merges: list[tuple[int, int]], ids: list[int]) -> list[int]:
    """Base symbol ids of token ids, by recursive expansion."""

    def expand(token: int) -> list[int]:
        if token < alphabet_size:
            return [token]
        left, right = merges[token - alphabet_size]
        return expand(left) + expand(right)

    return [symbol for token in ids for symbol in expand(token)]


def seed_train_naive(words, num_merges):  # type: ignore[no-untyped-def]
    """The seed article's step 1, verbatim (byte alphabet, unweighted words, tie: largest)."""
    words = [list(w) for w in words]  # mutable copy
    merges = []
    for _ in range(num_merges):
        counts = {}
        for w in words:  # recount ALL pairs
            for i in range(len(w) - 1):
                p = (w[i], w[i + 1])
                counts[p] = counts.get(p, 0) + 1
        if not counts:
            break
        pair = max(counts, key=lambda p: (counts[p], p))
        new_id = 256 + len(merges)
        for w in words:  # rewrite EVERY word
            i, out = 0, []
            while i < len(w):
                if i < len(w) - 1 and w[i] == pair[0] and w[i + 1] == pair[1]:
                    out.append(new_id)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            w[:] = out
        merges.append(pair)
    return merges
