"""Forbidding merges: a pair the trainer's veto forbids is never merged.

The engine takes a veto, (left id, right id) -> True if the pair must never merge, and must learn
exactly what the naive reference learns when it skips the same pairs (tests/helpers/reference.py),
for both tie rules and for hf's, asking the veto at most once per distinct pair. Continued
training takes the base's merges whatever the veto says, and the veto governs the new ones.
"""

import pytest
import regex
from helpers.reference import decode_reference, train_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import engine

LETTERS = "abcdefgh"
TIE_RULES = {"smallest": engine.TIE_SMALLEST, "largest": engine.TIE_LARGEST}


class LetterVeto:
    """The engine tests' veto: the merged token's base symbols as letters (symbol s is
    LETTERS[s]) matched against the patterns; it records every pair it is asked about."""

    def __init__(self, patterns: list[str], alphabet_size: int, merges: list) -> None:
        self.forbidden = forbidden_symbols(patterns, list(range(alphabet_size)))
        self.alphabet_size = alphabet_size
        self.merges = merges  # the trainer's list, growing as it learns
        self.asked: list[tuple[int, int]] = []

    def __call__(self, left: int, right: int) -> bool:
        self.asked.append((left, right))
        return self.forbidden(decode_reference(self.alphabet_size, self.merges, [left, right]))


def forbidden_symbols(patterns: list[str], labels: list[int]):
    """The reference's veto: True when the token's symbols, as letters (symbol s is
    LETTERS[labels[s]]), match a pattern."""

    def forbidden(symbols: list[int]) -> bool:
        text = "".join(LETTERS[labels[symbol]] for symbol in symbols)
        return any(regex.search(pattern, text) for pattern in patterns)

    return forbidden


def run_with_veto(alphabet_size, chunks, weights, num_merges, patterns, tie_break=engine.TIE_SMALLEST, base=()):
    """The engine: `base` replayed, then merges learned up to `num_merges` in all, with a LetterVeto."""
    trainer = engine.Trainer(
        alphabet_size, [list(chunk) for chunk in chunks], list(weights), alphabet_size + num_merges + 1, 0, tie_break
    )
    trainer.replay(list(base))
    veto = LetterVeto(patterns, alphabet_size, trainer.merges)
    trainer.run(num_merges - len(base), veto=veto)
    return trainer, veto


def assert_same(trainer, reference):
    assert [tuple(pair) for pair in trainer.merges] == reference.merges
    assert list(trainer.merge_counts) == reference.merge_counts
    assert trainer.segments() == reference.segments


# ---------------------------------------------------------------- strategies


@st.composite
def corpora(draw):
    """(alphabet_size, chunks, weights) over 2-5 symbols: random chunks, runs and periodic ones,
    so that pairs repeat and forbidden tokens come up."""
    alphabet_size = draw(st.integers(2, 5))
    symbol = st.integers(0, alphabet_size - 1)
    chunk = st.one_of(
        st.lists(symbol, max_size=20),
        st.builds(lambda s, n: [s] * n, symbol, st.integers(0, 20)),
        st.builds(lambda unit, n: unit * n, st.lists(symbol, min_size=1, max_size=4), st.integers(1, 8)),
    )
    chunks = draw(st.lists(chunk, min_size=1, max_size=8))
    weight = st.one_of(st.integers(1, 5), st.integers(1, 2**40))
    weights = draw(st.lists(weight, min_size=len(chunks), max_size=len(chunks)))
    return alphabet_size, chunks, weights


@st.composite
def patterns(draw, alphabet_size=5):
    """1 to 3 small regexes over the letters: literals, anchored literals, classes, repeats."""
    letters = LETTERS[:alphabet_size]
    literal = st.text(st.sampled_from(letters), min_size=1, max_size=3)
    pattern = st.one_of(
        literal,
        literal.map(lambda text: f"^{text}"),
        literal.map(lambda text: f"{text}$"),
        st.builds(lambda first, second: f"[{first}]{second}", literal, literal),
        st.builds(lambda letter, times: f"{letter}{{{times}}}", st.sampled_from(letters), st.integers(2, 4)),
        st.just(r"(.)\1"),
        st.builds(lambda first, second: f"{first}.*{second}", st.sampled_from(letters), st.sampled_from(letters)),
    )
    return draw(st.lists(pattern, min_size=1, max_size=3))


tie_rules = st.sampled_from(sorted(TIE_RULES))


# ---------------------------------------------------------------- engine == reference, with a veto


@pytest.mark.both_modes
@settings(max_examples=300)
@given(corpus=corpora(), forbid=patterns(), num_merges=st.integers(0, 30), tie_break=tie_rules)
def test_trainer_with_a_veto_learns_the_merges_of_the_reference_that_skips_the_same_pairs(
    corpus, forbid, num_merges, tie_break
):
    alphabet_size, chunks, weights = corpus
    trainer, veto = run_with_veto(alphabet_size, chunks, weights, num_merges, forbid, TIE_RULES[tie_break])
    reference = train_reference(
        alphabet_size, chunks, weights, num_merges, tie_break=tie_break,
        forbidden=forbidden_symbols(forbid, list(range(alphabet_size))),
    )  # fmt: skip
    assert_same(trainer, reference)
    assert len(set(veto.asked)) == len(veto.asked), "a pair was asked about twice"
    forbidden = forbidden_symbols(forbid, list(range(alphabet_size)))
    tokens = range(alphabet_size, alphabet_size + len(trainer.merges))
    assert not any(forbidden(decode_reference(alphabet_size, trainer.merges, [token])) for token in tokens)


@pytest.mark.both_modes
@settings(max_examples=150)
@given(corpus=corpora(), forbid=patterns(), num_merges=st.integers(0, 30), data=st.data())
def test_tie_break_hf_with_a_veto_is_smallest_in_the_hf_symbol_order(corpus, forbid, num_merges, data):
    # hf breaks ties by the base symbols' order in Hugging Face's alphabet: relabel each symbol by
    # its place in that order and it is `smallest`; the veto still sees the original symbols
    alphabet_size, chunks, weights = corpus
    order = data.draw(st.permutations(range(alphabet_size)))
    rank = {symbol: place for place, symbol in enumerate(order)}
    trainer = engine.Trainer(
        alphabet_size, [list(chunk) for chunk in chunks], list(weights), alphabet_size + num_merges + 1, 0,
        engine.TIE_HF, list(order),
    )  # fmt: skip
    trainer.run(num_merges, veto=LetterVeto(forbid, alphabet_size, trainer.merges))
    reference = train_reference(
        alphabet_size, [[rank[symbol] for symbol in chunk] for chunk in chunks], weights, num_merges,
        forbidden=forbidden_symbols(forbid, list(order)),
    )  # fmt: skip

    def relabel(token: int) -> int:
        return rank[token] if token < alphabet_size else token

    assert [(relabel(left), relabel(right)) for left, right in trainer.merges] == reference.merges
    assert list(trainer.merge_counts) == reference.merge_counts


@pytest.mark.both_modes
@settings(max_examples=200)
@given(
    corpus=corpora(),
    forbid=patterns(),
    base_merges=st.integers(0, 12),
    new_merges=st.integers(0, 20),
    tie_break=tie_rules,
)
def test_replay_takes_the_base_merges_the_veto_forbids_and_the_veto_governs_the_new_ones(
    corpus, forbid, base_merges, new_merges, tie_break
):
    alphabet_size, chunks, weights = corpus
    base = engine.train(
        alphabet_size, [list(c) for c in chunks], list(weights), base_merges, tie_break=TIE_RULES[tie_break]
    )
    total = len(base.merges) + new_merges
    trainer, _ = run_with_veto(alphabet_size, chunks, weights, total, forbid, TIE_RULES[tie_break], base=base.merges)
    reference = train_reference(
        alphabet_size, chunks, weights, total, tie_break=tie_break,
        forbidden=forbidden_symbols(forbid, list(range(alphabet_size))), base_merges=base.merges,
    )  # fmt: skip
    assert_same(trainer, reference)
    assert trainer.merges[: len(base.merges)] == base.merges


@pytest.mark.both_modes
@settings(max_examples=150)
@given(corpus=corpora(), forbid=patterns(), first=st.integers(0, 15), more=st.integers(0, 15), tie_break=tie_rules)
def test_continuing_with_the_same_veto_gives_the_merges_of_one_run(corpus, forbid, first, more, tie_break):
    alphabet_size, chunks, weights = corpus
    one_run, _ = run_with_veto(alphabet_size, chunks, weights, first + more, forbid, TIE_RULES[tie_break])
    base, _ = run_with_veto(alphabet_size, chunks, weights, first, forbid, TIE_RULES[tie_break])
    continued, _ = run_with_veto(
        alphabet_size, chunks, weights, len(base.merges) + more, forbid, TIE_RULES[tie_break], base=list(base.merges)
    )
    # a base that ran out of allowed pairs early is where one run runs out too
    assert continued.merges == one_run.merges
    assert continued.merge_counts == one_run.merge_counts
    assert continued.segments() == one_run.segments()


@pytest.mark.both_modes
def test_a_vetoed_pair_is_asked_about_once_however_often_it_occurs():
    # (0, 1) occurs 2,000 times in chunks of every length; forbidden, it is asked about once
    chunks = [[0, 1] * size for size in range(1, 64)] + [[2, 0, 1, 2]] * 50
    asked: list[tuple[int, int]] = []

    def veto(left: int, right: int) -> bool:
        asked.append((left, right))
        return (left, right) == (0, 1)

    trainer = engine.train(3, chunks, [1] * len(chunks), 20, veto=veto)
    assert (0, 1) not in trainer.merges
    assert asked.count((0, 1)) == 1
    assert len(asked) == len(set(asked))


@pytest.mark.both_modes
def test_a_pair_that_merges_create_again_and_again_is_asked_about_once():
    # merging (0, 1) into 3 creates (3, 2) at each of 600 places; forbidden, it is asked once
    asked: list[tuple[int, int]] = []

    def veto(left: int, right: int) -> bool:
        asked.append((left, right))
        return (left, right) == (3, 2)

    trainer = engine.train(3, [[0, 1, 2] * 200] * 3, [1, 2, 3], 10, veto=veto)
    assert trainer.merges[0] == (0, 1)
    assert (3, 2) not in trainer.merges
    assert asked.count((3, 2)) == 1
    assert len(asked) == len(set(asked))


@pytest.mark.both_modes
def test_replay_takes_a_base_merge_the_veto_forbids_and_goes_on_around_the_forbidden_pairs():
    trainer = engine.Trainer(3, [[0, 1, 2, 0, 1]], [1], 3 + 4)
    trainer.replay([(0, 1)])  # 0 1 2 0 1 -> 3 2 3
    trainer.run(3, veto=lambda left, right: (left, right) in ((0, 1), (3, 2)))
    assert trainer.merges == [(0, 1), (2, 3), (3, 4)]
    assert trainer.merge_counts == [2, 1, 1]
    assert trainer.segments() == [[5]]


@pytest.mark.both_modes
def test_a_veto_that_forbids_everything_learns_nothing():
    trainer = engine.train(2, [[0, 1, 0, 1, 1]], [3], 10, veto=lambda left, right: True)
    assert trainer.merges == []
    assert trainer.segments() == [[0, 1, 0, 1, 1]]
