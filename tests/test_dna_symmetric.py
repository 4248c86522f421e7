"""Reverse-complement-symmetric vocabularies: `dna-nucleotides: {reverse_complement: symmetric}`
and the engine's generic hook under it, the Trainer's `mirror` (an involution on base symbols).

The engine is specified against a naive mirrored reference written here (every round recounts
every pair; the partner of a merge is the pair spelling its mirror image that occurs most,
(mirror[y], mirror[x]) on ties; a merge whose token is its own image is taken alone; no room for
both: stop), on random involutions over small alphabets. The DNA side is checked on phage lambda
(closure under reverse complement, partners next to each other, each token text once there), on
random sequences (a reverse complement tokenizes as the mirror image of the forward one unless a
tie decides: a merge meeting an overlapping occurrence of itself or of its partner), through
continued training and through the Hugging Face export. Expected values come from
tests/helpers (DNA facts) and the reference here, not from bpe_core.
"""

import random
from pathlib import Path
from typing import Any

import pytest
from helpers import strategies
from helpers.dna import COMPLEMENT, DNABERT2_CONFIG, ecoli_slice, reverse_complement, single_sequence, write_fasta
from helpers.modes import PURE
from helpers.paths import LAMBDA_PATH
from helpers.reference import merge_pair
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bpe_core
from bpe_core import BpeError, engine
from bpe_core.plugins import registry

SYMMETRIC = {"pretokenizer.reverse_complement": "symmetric"}
# a corpus on which BPE learns the spelling 00000101 twice, as (000001, 01) and (0000010, 1), each
# with its partner (found by hypothesis): closure and partner order must hold all the same
TWICE_LEARNED = (
    2,
    [0, 1],
    [[0] * 4, [0] * 4, [0, 1, 0] * 3, [0, 1, 0, 0, 1, 0, 0, 1, 0], [1, 0, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1, 0, 1]],
    [1, 1, 2, 2, 1, 1],
)


# ---------------------------------------------------------------------------------------------
# the naive mirrored reference


def spell(alphabet_size: int, merges: list[tuple[int, int]], token: int) -> tuple[int, ...]:
    if token < alphabet_size:
        return (token,)
    left, right = merges[token - alphabet_size]
    return spell(alphabet_size, merges, left) + spell(alphabet_size, merges, right)


def image(mirror: list[int], spelling: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(mirror[symbol] for symbol in reversed(spelling))


def pair_counts(segments: list[list[int]], weights: list[int]) -> dict[tuple[int, int], int]:
    counts: dict[tuple[int, int], int] = {}
    for chunk, weight in zip(segments, weights):
        for index in range(len(chunk) - 1):
            pair = (chunk[index], chunk[index + 1])
            counts[pair] = counts.get(pair, 0) + weight
    return counts


def train_mirrored_reference(
    alphabet_size: int, mirror: list[int], chunks: list[list[int]], weights: list[int], num_merges: int
) -> tuple[list[tuple[int, int]], list[int], list[list[int]]]:
    segments = [list(chunk) for chunk in chunks]
    merges: list[tuple[int, int]] = []
    merge_counts: list[int] = []
    tokens_of: dict[tuple[int, ...], list[int]] = {(symbol,): [symbol] for symbol in range(alphabet_size)}
    token_mirror = list(mirror)  # extended as merges are taken, to name the usual partner
    while len(merges) < num_merges:
        counts = pair_counts(segments, weights)
        if not counts:
            break
        best = max(counts, key=lambda pair: (counts[pair], -pair[0], -pair[1]))
        made = spell(alphabet_size, merges, best[0]) + spell(alphabet_size, merges, best[1])
        wanted = image(mirror, made)
        partner = None
        if wanted != made:
            usual = (token_mirror[best[1]], token_mirror[best[0]])
            spellings = [
                (left, right)
                for cut in range(1, len(wanted))
                for left in tokens_of.get(wanted[:cut], [])
                for right in tokens_of.get(wanted[cut:], [])
            ]
            partner = usual
            for candidate in spellings:  # in (cut, left id, right id) order: the first of the highest count
                if counts.get(candidate, 0) > counts.get(partner, 0):
                    partner = candidate
            if len(merges) + 2 > num_merges:
                break
        new_id = alphabet_size + len(merges)
        merges.append(best)
        merge_counts.append(counts[best])
        tokens_of.setdefault(made, []).append(new_id)
        segments = [merge_pair(chunk, best, new_id) for chunk in segments]
        if partner is None:
            token_mirror.append(new_id)
            continue
        token_mirror += [new_id + 1, new_id]
        merge_counts.append(pair_counts(segments, weights).get(partner, 0))
        merges.append(partner)
        tokens_of.setdefault(wanted, []).append(new_id + 1)
        segments = [merge_pair(chunk, partner, new_id + 1) for chunk in segments]
    return merges, merge_counts, segments


# ---------------------------------------------------------------------------------------------
# engine: a generic involution on a small alphabet


def mirrored_corpora() -> st.SearchStrategy[tuple[int, list[int], list[list[int]], list[int]]]:
    """Corpora closed under a random involution on 1-6 symbols, of short chunks."""
    return strategies.mirrored_corpora(max_length=20, max_run=12, max_unit=3, max_repeats=6)


@pytest.mark.both_modes
@given(corpus=mirrored_corpora(), num_merges=st.integers(1, 30))
@example(corpus=TWICE_LEARNED, num_merges=21)
def test_mirrored_training_gives_the_reference_merges_counts_and_segments(
    corpus: tuple[int, list[int], list[list[int]], list[int]], num_merges: int
) -> None:
    alphabet_size, mirror, chunks, weights = corpus
    trainer = engine.train(alphabet_size, [list(c) for c in chunks], list(weights), num_merges, mirror=mirror)
    merges, merge_counts, segments = train_mirrored_reference(alphabet_size, mirror, chunks, weights, num_merges)
    assert [tuple(pair) for pair in trainer.merges] == merges
    assert list(trainer.merge_counts) == merge_counts
    assert trainer.segments() == segments


@pytest.mark.both_modes
@given(corpus=mirrored_corpora(), num_merges=st.integers(1, 30))
@example(corpus=TWICE_LEARNED, num_merges=21)
def test_mirrored_merges_are_closed_with_partners_adjacent_and_own_images_alone(
    corpus: tuple[int, list[int], list[list[int]], list[int]], num_merges: int
) -> None:
    alphabet_size, mirror, chunks, weights = corpus
    merges = [tuple(pair) for pair in engine.train(alphabet_size, chunks, weights, num_merges, mirror=mirror).merges]
    assert len(merges) <= num_merges
    spellings = [spell(alphabet_size, merges, alphabet_size + rank) for rank in range(len(merges))]
    # no test that each spelling is learned once: BPE itself may learn one twice through other
    # pairs (0000010|1 after 000001|01 on these corpora, partners and all); an own image is
    # taken alone, so it steps by one below
    rank = 0
    while rank < len(merges):
        if image(mirror, spellings[rank]) == spellings[rank]:
            rank += 1
        else:
            assert rank + 1 < len(merges) and spellings[rank + 1] == image(mirror, spellings[rank])
            rank += 2
    extended = engine.mirror_tokens(mirror, alphabet_size, merges)
    for token, other in enumerate(extended):
        assert extended[other] == token
        assert spell(alphabet_size, merges, other) == image(mirror, spell(alphabet_size, merges, token))


@pytest.mark.both_modes
@given(corpus=mirrored_corpora(), first=st.integers(1, 20), more=st.integers(0, 20))
def test_replaying_a_mirrored_run_then_running_on_gives_one_mirrored_run(
    corpus: tuple[int, list[int], list[list[int]], list[int]], first: int, more: int
) -> None:
    alphabet_size, mirror, chunks, weights = corpus
    base = engine.train(alphabet_size, chunks, weights, first, mirror=mirror)
    whole = engine.train(alphabet_size, chunks, weights, len(base.merges) + more, mirror=mirror)
    continued = engine.Trainer(alphabet_size, chunks, weights, alphabet_size + len(base.merges) + more, mirror=mirror)
    continued.replay(list(base.merges))
    continued.run(more)
    assert continued.merges == whole.merges
    assert continued.merge_counts == whole.merge_counts
    assert continued.segments() == whole.segments()


@pytest.mark.both_modes
def test_the_partner_is_taken_even_when_the_first_merge_took_its_occurrences() -> None:
    # mirror: 0 <-> 1, 2 its own. Chunk 0 2 1 is its own image; (0, 2) and its partner (2, 1)
    # overlap at 2, so merging (0, 2) first leaves the partner no occurrence.
    trainer = engine.train(3, [[0, 2, 1]], [5], 2, mirror=[1, 0, 2])
    assert trainer.merges == [(0, 2), (2, 1)]
    assert trainer.merge_counts == [5, 0]
    assert trainer.segments() == [[3, 1]]


@pytest.mark.both_modes
def test_with_room_for_one_merge_and_a_partnered_best_pair_training_stops() -> None:
    chunks, weights = [[0, 0, 2], [2, 1, 1]], [3, 3]  # mirror 0 <-> 1: the chunks are each other's image
    assert engine.train(3, chunks, weights, 1, mirror=[1, 0, 2]).merges == []
    assert engine.train(3, chunks, weights, 2, mirror=[1, 0, 2]).merges == [(0, 0), (1, 1)]


@pytest.mark.both_modes
def test_a_veto_on_one_partner_forbids_both() -> None:
    chunks, weights = [[0, 0, 2], [2, 1, 1]], [3, 3]
    trainer = engine.train(3, chunks, weights, 2, mirror=[1, 0, 2], veto=lambda left, right: (left, right) == (1, 1))
    assert (0, 0) not in trainer.merges and (1, 1) not in trainer.merges
    assert trainer.merges == [(0, 2), (2, 1)]


@pytest.mark.both_modes
def test_a_mirror_that_is_no_involution_and_a_base_out_of_partner_order_are_refused() -> None:
    with pytest.raises(ValueError, match="not an involution"):
        engine.Trainer(3, [[0, 1]], [1], 10, mirror=[1, 2, 0])
    with pytest.raises(ValueError, match="entries for an alphabet"):
        engine.Trainer(3, [[0, 1]], [1], 10, mirror=[1, 0])
    trainer = engine.Trainer(3, [[0, 0, 2], [2, 1, 1]], [1, 1], 10, mirror=[1, 0, 2])
    with pytest.raises(ValueError, match="not followed by a merge that makes its mirror image"):
        trainer.replay([(0, 0), (0, 2)])


# ---------------------------------------------------------------------------------------------
# DNA: phage lambda, trained as configs/dnabert2-style.yaml with reverse_complement: symmetric


def train_lambda(overrides: dict[str, Any]) -> bpe_core.Tokenizer:
    return bpe_core.train(str(DNABERT2_CONFIG), [str(LAMBDA_PATH)], overrides, progress=False)


@pytest.fixture(scope="module")
def symmetric_lambda() -> bpe_core.Tokenizer:
    return train_lambda(SYMMETRIC)


def texts(tokenizer: bpe_core.Tokenizer) -> list[str]:
    return [tokenizer.token_text(token) for token in tokenizer.merged_ids()]


def test_every_token_of_a_symmetric_vocabulary_has_its_reverse_complement_in_it(
    symmetric_lambda: bpe_core.Tokenizer,
) -> None:
    merged = texts(symmetric_lambda)
    assert len(merged) > 2000
    assert len(set(merged)) == len(merged)  # no text twice: a palindrome is learned once
    assert {reverse_complement(text) for text in merged} == set(merged)
    # without symmetric, lambda's vocabulary is far from closed
    plain = set(texts(train_lambda({})))
    assert sum(reverse_complement(text) not in plain for text in plain) > len(plain) // 4


def test_partners_are_next_to_each_other_and_palindromes_stand_alone(symmetric_lambda: bpe_core.Tokenizer) -> None:
    merged = texts(symmetric_lambda)
    rank, palindromes = 0, 0
    while rank < len(merged):
        if reverse_complement(merged[rank]) == merged[rank]:
            palindromes += 1
            rank += 1
        else:
            assert merged[rank + 1] == reverse_complement(merged[rank]), rank
            rank += 2
    assert palindromes > 10  # GC, TA, CG, AT, TGCA, ... (even lengths only)


def test_symmetric_counts_both_strands_and_hands_training_the_complement() -> None:
    symmetric = registry().pretokenizer("dna-nucleotides", {"reverse_complement": "symmetric", "case": "keep"})
    letters = symmetric.alphabet()
    assert symmetric.symbol_mirror() == [
        letters.index(COMPLEMENT[letter.upper()].lower() if letter.islower() else COMPLEMENT[letter])
        for letter in letters
    ]
    for option in (False, "augment"):
        assert registry().pretokenizer("dna-nucleotides", {"reverse_complement": option}).symbol_mirror() is None
    sequence = "AAACGNTTTAGCCA"
    assert symmetric.count(sequence) == registry().pretokenizer(
        "dna-nucleotides", {"reverse_complement": "augment", "case": "keep"}
    ).count(sequence)
    windowed = (
        registry()
        .pretokenizer("dna-nucleotides", {"reverse_complement": "symmetric", "max_chunk": 4, "overlap": 1})
        .count("AACGTTGCA")
    )
    assert windowed == {chunk: windowed[reverse_complement(chunk)] for chunk in windowed}  # exactly closed


def test_symmetric_lambda_trains_on_both_strands(symmetric_lambda: bpe_core.Tokenizer) -> None:
    assert symmetric_lambda.provenance["symbols"] == 2 * len(single_sequence(LAMBDA_PATH))
    assert symmetric_lambda.pretokenizer.options()["reverse_complement"] == "symmetric"


def tie_decides(tokenizer: bpe_core.Tokenizer, sequence: str) -> bool:
    """Encode as the engine does (lowest rank first, all its occurrences left to right) and say
    whether a merge ever met an overlapping occurrence of itself (`AAA` for (A, A)) or of its
    partner: the only places where the order of encoding, not the vocabulary, picks the cut."""
    merges = tokenizer.merges
    made = tokenizer.merged_ids()
    rank_of = {pair: rank for rank, pair in enumerate(merges)}
    text = texts(tokenizer)
    rank_of_text = {token_text: rank for rank, token_text in enumerate(text)}
    partner = [rank_of_text[reverse_complement(token_text)] for token_text in text]
    ids = [tokenizer.encode(letter)[0] for letter in sequence]
    while True:
        ranks = [rank_of.get((ids[i], ids[i + 1])) for i in range(len(ids) - 1)]
        present = [rank for rank in ranks if rank is not None]
        if not present:
            return False
        best = min(present)
        starts = {i for i, rank in enumerate(ranks) if rank == best}
        rivals = {i for i, rank in enumerate(ranks) if rank == partner[best] and partner[best] != best}
        if any(i + 1 in starts or i + 1 in rivals or i - 1 in rivals for i in starts):
            return True
        out, i = [], 0
        while i < len(ids):
            if i in starts:
                out.append(made[best])
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out


def cuts(tokenizer: bpe_core.Tokenizer, ids: list[int]) -> set[int]:
    points, position = set(), 0
    for token in ids[:-1]:
        position += len(tokenizer.token_symbols(token))
        points.add(position)
    return points


def mirrored_cuts(tokenizer: bpe_core.Tokenizer, sequence: str) -> tuple[set[int], set[int]]:
    """The forward cut points, and the reverse complement's cut points mapped back onto the forward strand."""
    backward = cuts(tokenizer, tokenizer.encode(reverse_complement(sequence)))
    return cuts(tokenizer, tokenizer.encode(sequence)), {len(sequence) - point for point in backward}


dna = st.text(alphabet="ACGT", min_size=1, max_size=120)
runs = st.lists(st.tuples(st.sampled_from("ACGT"), st.integers(1, 7)), min_size=1, max_size=25).map(
    lambda parts: "".join(letter * times for letter, times in parts)
)


@pytest.mark.both_modes
@settings(max_examples=150)
@given(sequence=st.one_of(dna, runs))
def test_a_reverse_complement_tokenizes_as_the_mirror_image_unless_a_tie_decides(
    symmetric_lambda: bpe_core.Tokenizer, sequence: str
) -> None:
    forward, mirrored = mirrored_cuts(symmetric_lambda, sequence)
    if forward != mirrored:
        assert tie_decides(symmetric_lambda, sequence) or tie_decides(symmetric_lambda, reverse_complement(sequence))


@pytest.mark.both_modes
@settings(max_examples=50)
@given(sequence=dna.filter(lambda text: len(text) > 1))
def test_without_ties_the_mirror_image_is_exact(symmetric_lambda: bpe_core.Tokenizer, sequence: str) -> None:
    if not tie_decides(symmetric_lambda, sequence):
        forward, mirrored = mirrored_cuts(symmetric_lambda, sequence)
        assert forward == mirrored


def mirror_share(tokenizer: bpe_core.Tokenizer, sequence: str) -> float:
    forward, mirrored = mirrored_cuts(tokenizer, sequence)
    return 2 * len(forward & mirrored) / (len(forward) + len(mirrored))


def test_on_a_genome_not_trained_on_symmetric_mirrors_far_more_cut_points_than_augment(
    symmetric_lambda: bpe_core.Tokenizer,
) -> None:
    sequence = ecoli_slice(20_000 if PURE else 200_000)
    symmetric = mirror_share(symmetric_lambda, sequence)
    augmented = mirror_share(train_lambda({"pretokenizer.reverse_complement": "augment"}), sequence)
    assert symmetric > 0.88 and symmetric > augmented + 0.3


def test_continuing_a_symmetric_vocabulary_stays_symmetric_and_equals_one_run() -> None:
    base = train_lambda({**SYMMETRIC, "trainer.vocab_size": 1000})
    continued = bpe_core.train(
        str(DNABERT2_CONFIG), [str(LAMBDA_PATH)], {**SYMMETRIC, "trainer.vocab_size": 2000}, progress=False, base=base
    )
    whole = train_lambda({**SYMMETRIC, "trainer.vocab_size": 2000})
    assert continued.spec.internal_merges == whole.spec.internal_merges
    assert continued.merge_counts == whole.merge_counts
    merged = texts(continued)
    assert {reverse_complement(text) for text in merged} == set(merged)


def test_continuing_symmetric_from_a_base_that_is_not_is_refused_naming_the_key() -> None:
    base = train_lambda({"trainer.vocab_size": 300})
    with pytest.raises(BpeError, match="pretokenizer: 'dna-nucleotides' learns merges with their mirror partners"):
        bpe_core.train(
            str(DNABERT2_CONFIG),
            [str(LAMBDA_PATH)],
            {**SYMMETRIC, "trainer.vocab_size": 600},
            progress=False,
            base=base,
        )


def test_to_hf_of_a_symmetric_vocabulary_gives_our_ids_on_both_strands(
    symmetric_lambda: bpe_core.Tokenizer, tmp_path: Path
) -> None:
    from tokenizers import Tokenizer

    path = tmp_path / "tokenizer.json"
    symmetric_lambda.to_hf(path)
    peer = Tokenizer.from_file(str(path))
    sequence = ecoli_slice(5_000 if PURE else 50_000)
    rng = random.Random(15)
    pieces = [sequence, reverse_complement(sequence)]
    pieces += ["".join(rng.choice("ACGT") for _ in range(rng.randint(1, 300))) for _ in range(50)]
    pieces += [reverse_complement(piece) for piece in pieces[2:]]
    for piece in pieces:
        assert peer.encode(piece, add_special_tokens=False).ids == symmetric_lambda.encode(piece)


def test_symmetric_is_refused_nowhere_and_unknown_values_name_the_option(tmp_path: Path) -> None:
    path = write_fasta(tmp_path / "tiny.fa", [("one", "ACGTTGCAAACCGGTT" * 20)])
    tokenizer = bpe_core.train(
        str(DNABERT2_CONFIG), [str(path)], {**SYMMETRIC, "trainer.vocab_size": 60}, progress=False
    )
    assert tokenizer.decode(tokenizer.encode("ACGTTGCAAACC")) == "ACGTTGCAAACC"
    with pytest.raises(BpeError, match="reverse_complement.*allowed: false, augment, symmetric"):
        bpe_core.train(str(DNABERT2_CONFIG), [str(path)], {"pretokenizer.reverse_complement": "both"}, progress=False)
