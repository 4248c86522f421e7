"""Picky BPE in the engine (`bpe_core.engine.train.picky`): training that removes tokens a merge
absorbed almost whole, and the plain merge list of what is left.

- A naive reference, written here as plainly as possible (every round recounts every pair and
  every token's frequency, and rewrites every chunk), makes the same merges, the same removals,
  the same vocabulary and the same segmentation as the engine on small random corpora and on the
  words of the Python docs, in both modes.
- Until its first removal it is plain training, merge for merge; a threshold that removes nothing
  trains exactly as plain training, tokenizer included.
- `merge_list`: each token of the list is made by one merge of two tokens listed before it and
  has the symbols of the token it stands for; after removals each merge is the one encoding the
  token's symbols with the list makes (what a `.tiktoken` import recovers, so exports are exact);
  with no removal it is the trainer's merges.
"""

import re
from collections import Counter

import pytest
from helpers.modes import PURE
from helpers.reference import best_pair, encode_reference, merge_pair, pair_counts
from helpers.strategies import TIE_RULES, WEIGHTS, chunk_shapes
from helpers.text import docs_text
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core.engine import TIE_RULES as ENGINE_TIE_RULES
from bpe_core.engine import PickyTrainer, Trainer, picky_merge_list

pytestmark = pytest.mark.both_modes


def picky_reference(
    alphabet_size: int,
    chunks: list[list[int]],
    weights: list[int],
    num_merges: int,
    threshold: float,
    max_ids: int,
    tie_break: str = "smallest",
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[bool], list[list[int]]]:
    """(merges, removals, present, segments), by the rule bpe_core.engine.train.picky states:
    merge the best pair everywhere (a new id every time); then for each of its two tokens (once
    if one), a merged token whose frequency left is below threshold x (left + merges made) is
    removed: every occurrence replaced by the parts of its merge (a removed part: the latest
    token with its symbols if present, else the part's own parts). Removed tokens do not count
    towards num_merges. Stops when no pair occurs or the next id would be max_ids."""
    segments = [list(chunk) for chunk in chunks]
    merges: list[tuple[int, int]] = []
    removals: list[tuple[int, int]] = []
    present = [True] * alphabet_size
    spelling = [(symbol,) for symbol in range(alphabet_size)]
    latest: dict[tuple[int, ...], int] = {}

    def frequency(token: int) -> int:
        return sum(weight * segment.count(token) for segment, weight in zip(segments, weights))

    def pieces(token: int) -> list[int]:
        out = []
        for part in merges[token - alphabet_size]:
            if present[part]:
                out.append(part)
            elif present[latest[spelling[part]]]:
                out.append(latest[spelling[part]])
            else:
                out += pieces(part)
        return out

    learned = 0
    while learned < num_merges:
        counts = pair_counts(list(zip(segments, weights)))
        if not counts:
            break
        best = best_pair(counts, tie_break)
        new_id = alphabet_size + len(merges)
        if new_id >= max_ids:
            break
        segments = [merge_pair(segment, best, new_id) for segment in segments]
        merges.append(best)
        present.append(True)
        spelling.append(spelling[best[0]] + spelling[best[1]])
        latest[spelling[new_id]] = new_id
        learned += 1
        made = frequency(new_id)
        for token in dict.fromkeys(best):
            if token < alphabet_size:
                continue
            left_over = frequency(token)
            if float(left_over) < threshold * float(left_over + made):
                split = pieces(token)
                segments = [
                    [piece for item in segment for piece in (split if item == token else [item])]
                    for segment in segments
                ]
                present[token] = False
                removals.append((len(merges), token))
                learned -= 1
    return merges, removals, present, segments


@st.composite
def corpora(draw: st.DrawFn) -> tuple[int, list[list[int]], list[int]]:
    alphabet_size = draw(st.integers(2, 6))
    chunks = draw(st.lists(chunk_shapes(st.integers(0, alphabet_size - 1), max_run=12), max_size=12))
    weights = draw(st.lists(WEIGHTS, min_size=len(chunks), max_size=len(chunks)))
    return alphabet_size, chunks, weights


THRESHOLDS = st.one_of(st.sampled_from([0.1, 0.3, 0.5, 0.9, 0.99]), st.floats(0.01, 0.99))


def trained_picky(
    alphabet_size: int,
    chunks: list[list[int]],
    weights: list[int],
    num_merges: int,
    threshold: float,
    tie_break: str = "smallest",
) -> PickyTrainer:
    """The engine's Picky BPE trainer after `num_merges` merges."""
    trainer = PickyTrainer(
        alphabet_size,
        chunks,
        weights,
        alphabet_size + num_merges,
        tie_break=ENGINE_TIE_RULES.index(tie_break),
        threshold=threshold,
    )
    trainer.run(num_merges)
    return trainer


@settings(max_examples=300)
@given(corpus=corpora(), num_merges=st.integers(0, 30), threshold=THRESHOLDS, tie_break=TIE_RULES)
def test_picky_trainer_matches_the_naive_reference(corpus, num_merges, threshold, tie_break):
    alphabet_size, chunks, weights = corpus
    trainer = trained_picky(alphabet_size, chunks, weights, num_merges, threshold, tie_break)
    # ids for as many merges again are kept for removed tokens
    max_ids = alphabet_size + 2 * num_merges
    merges, removals, present, segments = picky_reference(
        alphabet_size, chunks, weights, num_merges, threshold, max_ids, tie_break
    )
    assert trainer.training_merges == merges
    assert trainer.removals == removals
    assert trainer.present_tokens() == present
    assert trainer.segments() == segments


@pytest.mark.parametrize("threshold", [0.1, 0.5])
def test_picky_trainer_matches_the_naive_reference_on_words_of_the_docs(threshold):
    words = Counter(re.findall(r" ?\w+| ?[^\w\s]+|\s+", docs_text()[: 8_000 if PURE else 40_000]))
    chunks = [list(word.encode("utf-8")) for word in words]
    weights = list(words.values())
    num_merges = 120
    trainer = trained_picky(256, chunks, weights, num_merges, threshold)
    merges, removals, present, segments = picky_reference(
        256, chunks, weights, num_merges, threshold, 256 + 2 * num_merges
    )
    assert removals  # the docs' words give removals at both thresholds
    assert trainer.training_merges == merges
    assert trainer.removals == removals
    assert trainer.present_tokens() == present
    assert trainer.segments() == segments


@settings(max_examples=200)
@given(corpus=corpora(), num_merges=st.integers(0, 30), threshold=THRESHOLDS, tie_break=TIE_RULES)
def test_picky_training_is_plain_training_until_its_first_removal(corpus, num_merges, threshold, tie_break):
    alphabet_size, chunks, weights = corpus
    rule = ENGINE_TIE_RULES.index(tie_break)
    picky = trained_picky(alphabet_size, chunks, weights, num_merges, threshold, tie_break)
    same = picky.removals[0][0] if picky.removals else len(picky.training_merges)
    plain = Trainer(alphabet_size, chunks, weights, alphabet_size + same, tie_break=rule)
    plain.run(same)
    assert picky.training_merges[:same] == plain.merges
    assert picky.training_counts[:same] == plain.merge_counts
    if not picky.removals:  # a threshold that removes nothing trains exactly as plain training
        assert picky.segments() == plain.segments()
        assert picky.merges == plain.merges
        assert picky.merge_counts == plain.merge_counts
        assert picky.token_usage() == plain.token_usage()
        assert picky.sources == list(range(alphabet_size, alphabet_size + len(picky.merges)))


def spelled(alphabet_size: int, merges: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    symbols = [(symbol,) for symbol in range(alphabet_size)]
    for left, right in merges:
        symbols.append(symbols[left] + symbols[right])
    return symbols


@settings(max_examples=300)
@given(corpus=corpora(), num_merges=st.integers(0, 30), threshold=THRESHOLDS)
def test_the_merge_list_makes_each_listed_token_from_two_listed_before_it(corpus, num_merges, threshold):
    alphabet_size, chunks, weights = corpus
    trainer = trained_picky(alphabet_size, chunks, weights, num_merges, threshold)
    present = trainer.present_tokens()
    merges, sources = picky_merge_list(alphabet_size, trainer.training_merges, present, alphabet_size)
    assert trainer.merges == merges[:num_merges]
    trained = spelled(alphabet_size, trainer.training_merges)
    listed = spelled(alphabet_size, merges)
    for rank, (left, right) in enumerate(merges):
        assert left < alphabet_size + rank and right < alphabet_size + rank
        assert listed[alphabet_size + rank] == trained[sources[rank]]
    assert len(set(sources)) == len(sources)
    if trainer.removals:  # each merge is the one encoding its token's symbols with the list makes
        for rank in range(len(merges)):
            symbols = list(listed[alphabet_size + rank])
            assert encode_reference(alphabet_size, merges, symbols) == [alphabet_size + rank]
    else:
        assert merges == trainer.training_merges
