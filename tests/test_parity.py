"""Group-parity training in the engine (Parity-aware BPE, Foroutan et al., arXiv 2508.04796),
specified against a naive reference of the paper's algorithm written below.

The reference recounts everything every round: each group's pair counts over its own training
chunks, each group's dev cost (the tokens of its dev chunks under the merges so far). The first
`warmup` merges are plain BPE on the summed counts; after that the group with the highest dev
cost (ties: the lowest index) that still has a pair at or above the threshold is served: its
most frequent pair, ties by the tie rule, is merged everywhere. With a window of W merges, a
group chosen more than 2/n of the last W times (n: the groups, plus one with a warmup, as the
paper's reference code counts) gives way to the next highest cost, if any does not.
"""

from collections import deque
from fractions import Fraction

import pytest
from helpers.reference import best_pair, merge_pair, pair_counts
from hypothesis import given
from hypothesis import strategies as st

from bpe_core import engine

pytestmark = pytest.mark.both_modes

Weighted = list[tuple[list[int], int]]  # chunks with their weights


def parity_reference(
    alphabet_size: int,
    train: list[Weighted],
    dev: list[Weighted],
    num_merges: int,
    warmup: int = 0,
    window: int = 0,
    tie_break: str = "smallest",
    min_frequency: int = 1,
) -> tuple[list[tuple[int, int]], list[int]]:
    """(merges, each merge's count summed over the groups' training chunks)."""
    threshold = max(min_frequency, 1)
    train = [[(list(chunk), weight) for chunk, weight in group] for group in train]
    dev = [[(list(chunk), weight) for chunk, weight in group] for group in dev]
    share_groups = len(train) + (1 if warmup else 0)
    recent: deque[int] = deque(maxlen=window or None)
    merges: list[tuple[int, int]] = []
    counts: list[int] = []
    while len(merges) < num_merges:
        group_counts = [pair_counts(group) for group in train]
        summed: dict[tuple[int, int], int] = {}
        for group in group_counts:
            for pair, count in group.items():
                summed[pair] = summed.get(pair, 0) + count
        if len(merges) < warmup:
            if not summed or max(summed.values()) < threshold:
                break
            best = best_pair(summed, tie_break)
        else:
            costs = [sum(len(chunk) * weight for chunk, weight in group) for group in dev]
            candidates = [
                g for g in range(len(train)) if group_counts[g] and max(group_counts[g].values()) >= threshold
            ]
            if not candidates:
                break
            order = sorted(candidates, key=lambda g: (-costs[g], g))
            chosen = order[0]
            if window:
                within = [g for g in order if Fraction(recent.count(g), window) <= Fraction(2, share_groups)]
                chosen = within[0] if within else order[0]
                recent.append(chosen)
            best = best_pair(group_counts[chosen], tie_break)
        new_id = alphabet_size + len(merges)
        merges.append(best)
        counts.append(summed.get(best, 0))
        train = [[(merge_pair(chunk, best, new_id), weight) for chunk, weight in group] for group in train]
        dev = [[(merge_pair(chunk, best, new_id), weight) for chunk, weight in group] for group in dev]
    return merges, counts


def grouped_trainer(
    alphabet_size: int,
    train: list[Weighted],
    dev: list[Weighted],
    num_merges: int,
    warmup: int = 0,
    window: int = 0,
    tie_break: str = "smallest",
) -> engine.Trainer:
    """An engine trainer over the union of every group's chunks, each with its group weights."""
    weights: dict[tuple[int, ...], dict[int, list[int]]] = {}
    for kind, groups in enumerate((train, dev)):
        for group, chunks in enumerate(groups):
            for chunk, weight in chunks:
                weights.setdefault(tuple(chunk), {}).setdefault(group, [0, 0])[kind] += weight
    chunks = list(weights)
    entries = [
        [value for group, pair in sorted(weights[chunk].items()) for value in (group, *pair)] for chunk in chunks
    ]
    groups = engine.ChunkGroups(len(train), entries, warmup, window)
    summed = [sum(pair[0] for pair in weights[chunk].values()) for chunk in chunks]
    return engine.Trainer(
        alphabet_size,
        [list(chunk) for chunk in chunks],
        summed,
        alphabet_size + num_merges,
        tie_break=engine.TIE_RULES.index(tie_break),
        groups=groups,
    )


@st.composite
def grouped_corpora(draw, max_groups=4):
    """(alphabet_size, train per group, dev per group): small alphabets, so pairs repeat."""
    alphabet_size = draw(st.integers(2, 4))
    symbols = st.integers(0, alphabet_size - 1)
    group_count = draw(st.integers(1, max_groups))
    train = [
        draw(st.lists(st.tuples(st.lists(symbols, max_size=8), st.integers(1, 6)), max_size=6))
        for _ in range(group_count)
    ]
    dev = [
        draw(st.lists(st.tuples(st.lists(symbols, min_size=1, max_size=8), st.integers(1, 3)), max_size=4))
        for _ in range(group_count)
    ]
    return alphabet_size, train, dev


@given(
    grouped_corpora(),
    st.integers(0, 14),
    st.integers(0, 4),
    st.sampled_from([0, 0, 1, 2, 3, 5]),
    st.sampled_from(["smallest", "largest"]),
)
def test_parity_merges_equal_the_naive_reference(corpus, num_merges, warmup, window, tie_break):
    alphabet_size, train, dev = corpus
    trainer = grouped_trainer(alphabet_size, train, dev, num_merges, warmup, window, tie_break)
    trainer.run(num_merges)
    merges, counts = parity_reference(alphabet_size, train, dev, num_merges, warmup, window, tie_break)
    assert [tuple(pair) for pair in trainer.merges] == merges
    assert list(trainer.merge_counts) == counts


@given(
    grouped_corpora(),
    st.integers(0, 14),
    st.integers(0, 14),
    st.integers(0, 4),
    st.sampled_from([0, 1, 2, 3, 5]),
    st.sampled_from(["smallest", "largest"]),
)
def test_replayed_merges_then_run_equal_one_run(corpus, num_merges, replayed, warmup, window, tie_break):
    """Continued training (`--from`): the base's merges replayed, the window restored from them."""
    alphabet_size, train, dev = corpus
    whole = grouped_trainer(alphabet_size, train, dev, num_merges, warmup, window, tie_break)
    whole.run(num_merges)
    base = list(whole.merges[: min(replayed, len(whole.merges))])
    continued = grouped_trainer(alphabet_size, train, dev, num_merges, warmup, window, tie_break)
    continued.replay(base)
    continued.run(num_merges - len(base))
    assert continued.merges == whole.merges
    assert continued.merge_counts == whole.merge_counts


@given(grouped_corpora(max_groups=1), st.integers(0, 14), st.integers(0, 4), st.sampled_from(["smallest", "largest"]))
def test_one_group_merges_equal_plain_training(corpus, num_merges, warmup, tie_break):
    alphabet_size, train, dev = corpus
    grouped = grouped_trainer(alphabet_size, train, dev, num_merges, warmup, 0, tie_break)
    grouped.run(num_merges)
    plain = engine.train(
        alphabet_size,
        [chunk for chunk, _ in train[0]],
        [weight for _, weight in train[0]],
        num_merges,
        tie_break=engine.TIE_RULES.index(tie_break),
    )
    assert grouped.merges == plain.merges
    assert grouped.merge_counts == plain.merge_counts


def test_the_costliest_group_is_served():
    # group 0 has the common pair (0, 0); group 1's dev text costs more, so its pair (1, 1) comes first
    train = [[([0, 0], 10)], [([1, 1], 2)]]
    dev = [[([0, 0], 1)], [([1, 1, 1, 1], 1)]]
    trainer = grouped_trainer(2, train, dev, 2)
    trainer.run(2)
    assert trainer.merges == [(1, 1), (0, 0)]


def test_a_group_with_nothing_left_to_merge_is_passed_over():
    train = [[([0, 1], 3)], [([1], 5)]]  # group 1 has no pair at all, though its dev cost is highest
    dev = [[([0, 1], 1)], [([1, 1, 1], 1)]]
    trainer = grouped_trainer(2, train, dev, 3)
    trainer.run(3)
    assert trainer.merges == [(0, 1)]


def test_chunk_weights_must_be_the_training_weights_summed():
    groups = engine.ChunkGroups(2, [[0, 1, 0, 1, 2, 0]], 0, 0)
    with pytest.raises(ValueError, match="training weights summed"):
        engine.Trainer(2, [[0, 1]], [1], 10, groups=groups)


def test_a_group_listed_twice_in_a_chunk_is_refused():
    with pytest.raises(ValueError, match="group 0"):
        engine.ChunkGroups(2, [[0, 1, 0, 0, 2, 0]], 0, 0)
