"""The engine, specified against the naive reference trainer (tests/helpers/reference.py).

Training must give the reference's merges, in the same order, with the same counts and the same
final segmentation of every chunk, for any alphabet, weights up to 64-bit counts, both tie rules,
min_frequency and max_token_length. Encoding a training chunk must reproduce its final
segmentation; the short and the long encoding paths must agree; decoding inverts encoding.
"""

import random

import pytest
from helpers.reference import (
    TIE_RULE_NAMES,
    as_imported,
    assert_trains_like_the_reference,
    decode_reference,
    encode_reference,
    train_reference,
)
from helpers.strategies import TIE_RULES, WEIGHTS, chunk_shapes
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import engine

pytestmark = pytest.mark.both_modes

# chunks this long are far longer than words: long enough for any loop the engine keeps for long chunks
LONG = 100


def train_both(alphabet_size, chunks, weights, num_merges, min_frequency=1, max_token_length=0, tie_break="smallest"):
    trainer = engine.train(
        alphabet_size,
        [list(chunk) for chunk in chunks],
        list(weights),
        num_merges,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=engine.TIE_RULES.index(tie_break),
    )
    reference = train_reference(alphabet_size, chunks, weights, num_merges, min_frequency, max_token_length, tie_break)
    return trainer, reference


# ---------------------------------------------------------------- strategies


@st.composite
def corpora(draw, large_alphabet=False, max_chunks=10):
    """(alphabet_size, chunks, weights); chunks may be empty, of length 1, or repeated."""
    if large_alphabet:
        alphabet_size = draw(st.integers(9, 4000))
        # a few symbols out of a large range, including the top id, so pairs still repeat
        symbols = draw(
            st.lists(
                st.one_of(st.integers(0, alphabet_size - 1), st.just(alphabet_size - 1)),
                min_size=1,
                max_size=6,
                unique=True,
            )
        )
    else:
        alphabet_size = draw(st.integers(2, 8))
        symbols = list(range(alphabet_size))
    symbol = st.sampled_from(symbols)
    chunks = draw(st.lists(chunk_shapes(symbol), max_size=max_chunks))
    weights = draw(st.lists(WEIGHTS, min_size=len(chunks), max_size=len(chunks)))
    return alphabet_size, chunks, weights


# ---------------------------------------------------------------- trainer == reference


@settings(max_examples=300)
@given(corpus=corpora(), num_merges=st.integers(0, 40), tie_break=TIE_RULES)
def test_trainer_matches_reference_on_small_alphabets(corpus, num_merges, tie_break):
    alphabet_size, chunks, weights = corpus
    assert_trains_like_the_reference(*train_both(alphabet_size, chunks, weights, num_merges, tie_break=tie_break))


@settings(max_examples=150)
@given(corpus=corpora(large_alphabet=True), num_merges=st.integers(0, 30), tie_break=TIE_RULES)
def test_trainer_matches_reference_on_large_alphabets(corpus, num_merges, tie_break):
    alphabet_size, chunks, weights = corpus
    assert_trains_like_the_reference(*train_both(alphabet_size, chunks, weights, num_merges, tie_break=tie_break))


@settings(max_examples=250)
@given(
    corpus=corpora(),
    num_merges=st.integers(0, 40),
    min_frequency=st.one_of(st.integers(0, 12), st.sampled_from([2**20, 2**40, 2**41 + 1])),
    max_token_length=st.sampled_from([0, 1, 2, 3, 4, 7]),
    tie_break=TIE_RULES,
)
def test_trainer_matches_reference_with_min_frequency_and_max_token_length(
    corpus, num_merges, min_frequency, max_token_length, tie_break
):
    alphabet_size, chunks, weights = corpus
    assert_trains_like_the_reference(
        *train_both(alphabet_size, chunks, weights, num_merges, min_frequency, max_token_length, tie_break)
    )


@settings(max_examples=100)
@given(
    alphabet_size=st.integers(2, 5),
    unit=st.lists(st.integers(0, 1), min_size=1, max_size=5),
    repeats=st.integers(1, 200),
    weight=WEIGHTS,
    tie_break=TIE_RULES,
)
def test_trainer_matches_reference_on_long_periodic_chunks(alphabet_size, unit, repeats, weight, tie_break):
    chunks = [unit * repeats, [0] * (repeats + 1), [0, 1] * repeats]
    weights = [weight, 3, 1]
    assert_trains_like_the_reference(*train_both(alphabet_size, chunks, weights, 60, tie_break=tie_break))


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32), tie_break=TIE_RULES)
def test_trainer_matches_reference_with_thousands_of_distinct_pairs(seed, tie_break):
    # more distinct pairs than the pair table's first capacity, so it has to grow
    rng = random.Random(seed)
    chunks = [[rng.randrange(200) for _ in range(rng.randrange(10, 40))] for _ in range(rng.randrange(60, 120))]
    weights = [rng.choice([1, 2, 3, rng.randrange(1, 2**40)]) for _ in chunks]
    assert len({(a, b) for chunk in chunks for a, b in zip(chunk, chunk[1:])}) > 512
    assert_trains_like_the_reference(*train_both(200, chunks, weights, 25, tie_break=tie_break))


@settings(max_examples=60)
@given(
    chunks=st.lists(st.lists(st.sampled_from([0, 1, 65534, 65535]), max_size=30), max_size=8),
    weights=st.lists(WEIGHTS, min_size=8, max_size=8),
    tie_break=TIE_RULES,
)
def test_trainer_matches_reference_at_the_top_of_the_largest_alphabet(chunks, weights, tie_break):
    assert_trains_like_the_reference(*train_both(65536, chunks, weights[: len(chunks)], 30, tie_break=tie_break))


@settings(max_examples=150)
@given(
    corpus=corpora(),
    zero_weights=st.lists(st.booleans(), max_size=10),
    num_merges=st.integers(0, 30),
    tie_break=TIE_RULES,
)
def test_zero_weight_chunks_do_not_change_the_merges(corpus, zero_weights, num_merges, tie_break):
    alphabet_size, chunks, weights = corpus
    weights = [
        0 if index < len(zero_weights) and zero_weights[index] else weight for index, weight in enumerate(weights)
    ]
    trainer, reference = train_both(alphabet_size, chunks, weights, num_merges, tie_break=tie_break)
    assert trainer.merges == reference.merges
    assert trainer.merge_counts == reference.merge_counts
    segments = trainer.segments()
    for index, weight in enumerate(weights):
        if weight > 0:
            assert segments[index] == reference.segments[index]


# ---------------------------------------------------------------- the rules, case by case


def test_overlapping_occurrences_are_counted_but_merge_skips_them():
    # a a a holds (a, a) twice when counting; merging takes the leftmost and leaves the last a
    trainer = engine.train(2, [[0, 0, 0]], [1], 1)
    assert trainer.merges == [(0, 0)]
    assert trainer.merge_counts == [2]
    assert trainer.segments() == [[2, 0]]


def test_run_of_four_merges_into_two_tokens_then_one():
    trainer = engine.train(2, [[0, 0, 0, 0]], [5], 5)
    assert trainer.merges == [(0, 0), (2, 2)]
    assert trainer.merge_counts == [15, 5]
    assert trainer.segments() == [[3]]


def test_merge_skips_overlapping_occurrence_inside_a_longer_chunk():
    # b a a a b: (a, a) at 1 and 2 overlap; only the one at 1 is merged
    trainer = engine.train(2, [[1, 0, 0, 0, 1]], [1], 1, tie_break=engine.TIE_SMALLEST)
    assert trainer.merges == [(0, 0)]
    assert trainer.segments() == [[1, 2, 0, 1]]


def test_alternating_run_merges_without_overlap():
    # a b a b a: (a, b) twice, (b, a) twice; smallest tie picks (a, b): [ab ab a]
    trainer = engine.train(2, [[0, 1, 0, 1, 0]], [1], 1)
    assert trainer.merges == [(0, 1)]
    assert trainer.merge_counts == [2]
    assert trainer.segments() == [[2, 2, 0]]


def test_tie_break_smallest_takes_smallest_pair_and_largest_takes_largest():
    chunks = [[2, 3], [0, 1], [1, 0]]
    assert engine.train(4, chunks, [7, 7, 7], 1, tie_break=engine.TIE_SMALLEST).merges == [(0, 1)]
    assert engine.train(4, chunks, [7, 7, 7], 1, tie_break=engine.TIE_LARGEST).merges == [(2, 3)]


def test_tie_break_compares_left_id_before_right_id():
    chunks = [[1, 0], [0, 5]]
    assert engine.train(6, chunks, [1, 1], 1, tie_break=engine.TIE_SMALLEST).merges == [(0, 5)]
    assert engine.train(6, chunks, [1, 1], 1, tie_break=engine.TIE_LARGEST).merges == [(1, 0)]


def test_higher_count_wins_over_tie_break():
    chunks = [[0, 1], [2, 3]]
    for rule in (engine.TIE_SMALLEST, engine.TIE_LARGEST):
        assert engine.train(4, chunks, [1, 2], 1, tie_break=rule).merges == [(2, 3)]
        assert engine.train(4, chunks, [2, 1], 1, tie_break=rule).merges == [(0, 1)]


def test_weights_multiply_pair_counts():
    # (0, 1) occurs in one chunk of weight 10; (1, 2) in two chunks of weight 4 and 3
    trainer = engine.train(3, [[0, 1], [1, 2], [1, 2]], [10, 4, 3], 2)
    assert trainer.merges == [(0, 1), (1, 2)]
    assert trainer.merge_counts == [10, 7]


def test_counts_beyond_32_bits_are_exact():
    weight = 2**40 + 3
    # counts: (0, 1) = 3 weight, (1, 0) = 2 weight, (1, 1) = 2**41
    trainer = engine.train(2, [[0, 1, 0, 1, 0, 1], [1, 1]], [weight, 2**41], 3)
    assert trainer.merges == [(0, 1), (2, 2), (1, 1)]
    assert trainer.merge_counts == [3 * weight, 2 * weight, 2**41]
    assert trainer.segments() == [[3, 2], [4]]


def test_min_frequency_stops_before_a_pair_below_it():
    # counts: (0, 1) = 5, (2, 3) = 3
    chunks = [[0, 1], [2, 3]]
    assert engine.train(4, chunks, [5, 3], 10, min_frequency=4).merges == [(0, 1)]
    assert engine.train(4, chunks, [5, 3], 10, min_frequency=3).merges == [(0, 1), (2, 3)]
    assert engine.train(4, chunks, [5, 3], 10, min_frequency=6).merges == []


def test_max_token_length_leaves_longer_pairs_out_and_merges_the_next_best():
    # a a a a: after (a, a) the pair (aa, aa) would be 4 symbols long; (b, c) is merged instead
    trainer = engine.train(3, [[0, 0, 0, 0], [1, 2]], [10, 1], 5, max_token_length=3)
    assert trainer.merges == [(0, 0), (1, 2)]
    assert trainer.segments() == [[3, 3], [4]]


def test_max_token_length_one_allows_no_merge():
    trainer = engine.train(2, [[0, 1, 0, 1]], [3], 5, max_token_length=1)
    assert trainer.merges == []
    assert trainer.segments() == [[0, 1, 0, 1]]


def test_training_stops_when_no_pair_is_left():
    trainer = engine.train(3, [[0, 1, 2], [2]], [1, 1], 100)
    assert len(trainer.merges) == 2
    assert trainer.segments() == [[4], [2]]


def test_empty_and_single_symbol_chunks_keep_their_place_in_segments():
    trainer = engine.train(3, [[], [2], [0, 1], [], [1]], [1, 4, 2, 9, 1], 3)
    assert trainer.merges == [(0, 1)]
    assert trainer.segments() == [[], [2], [3], [], [1]]


def test_no_chunks_means_no_merges():
    trainer = engine.train(5, [], [], 10)
    assert trainer.merges == [] and trainer.merge_counts == [] and trainer.segments() == []


def test_zero_weight_chunk_adds_no_counts():
    # (0, 1) occurs only in a chunk of weight 0: it is never a candidate
    trainer = engine.train(4, [[0, 1], [2, 3]], [0, 1], 5)
    assert trainer.merges == [(2, 3)]


def test_zero_weight_chunk_is_segmented_by_the_merges_like_any_other():
    # segments() is each chunk's final token ids; the reference rewrites every chunk, and
    # encoding the chunk with the learned merges gives the same
    chunks = [[0, 1, 0, 1], [0, 1]]
    trainer = engine.train(2, chunks, [0, 1], 5)
    assert trainer.merges == [(0, 1)]
    assert trainer.segments() == [[2, 2], [2]]


def test_progress_reports_the_final_number_of_merges():
    seen: list[int] = []
    trainer = engine.train(2, [[0, 1] * 200], [1], 500, progress=seen.append)
    assert seen and seen[-1] == len(trainer.merges)
    assert seen == sorted(seen)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((3, [[0, 3]], [1], 1), "outside the alphabet"),
        ((3, [[0, -1]], [1], 1), "outside the alphabet"),
        ((3, [[0, 1]], [1, 2], 1), "weights"),
        ((3, [[0, 1]], [-1], 1), "negative weight"),
    ],
)
def test_trainer_rejects_bad_input(arguments, message):
    with pytest.raises(ValueError, match=message):
        engine.train(*arguments)


def test_trainer_rejects_unknown_tie_rule():
    with pytest.raises(ValueError):
        engine.train(3, [[0, 1]], [1], 1, tie_break=7)


# ---------------------------------------------------------------- encoding == training


@settings(max_examples=200)
@given(
    corpus=corpora(),
    num_merges=st.integers(0, 40),
    max_token_length=st.sampled_from([0, 0, 3]),
    tie_break=TIE_RULES,
)
def test_encoding_a_training_chunk_gives_its_final_segmentation(corpus, num_merges, max_token_length, tie_break):
    alphabet_size, chunks, weights = corpus
    trainer = engine.train(
        alphabet_size,
        chunks,
        weights,
        num_merges,
        max_token_length=max_token_length,
        tie_break=engine.TIE_RULES.index(tie_break),
    )
    encoder = engine.Encoder(alphabet_size, trainer.merges)
    assert [encoder.encode_symbols(chunk) for chunk in chunks] == trainer.segments()


@st.composite
def merge_lists(draw, alphabet_size, max_merges=30):
    """Valid, duplicate-free merge lists over alphabet_size symbols (any pair of existing ids)."""
    merges: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(0, max_merges))):
        bound = alphabet_size + len(merges) - 1
        pair = (draw(st.integers(0, bound)), draw(st.integers(0, bound)))
        if pair not in merges:
            merges.append(pair)
    return merges


@st.composite
def encoder_cases(draw):
    """(alphabet_size, merges, symbols): merges either trained on the input or arbitrary."""
    alphabet_size = draw(st.integers(2, 5))
    symbol = st.integers(0, alphabet_size - 1)
    long_input = st.one_of(
        st.lists(symbol, min_size=LONG, max_size=4 * LONG),
        st.builds(lambda s, n: [s] * n, symbol, st.integers(LONG - 2, 3 * LONG)),
        st.builds(lambda unit, n: unit * n, st.lists(symbol, min_size=1, max_size=5), st.integers(LONG // 2, 200)),
    )
    symbols = draw(st.one_of(st.lists(symbol, min_size=1, max_size=LONG - 1), long_input))
    if draw(st.booleans()):
        extra = draw(st.lists(st.lists(symbol, max_size=30), max_size=4))
        merges = engine.train(alphabet_size, [symbols] + extra, [1] * (1 + len(extra)), draw(st.integers(0, 60))).merges
        merges = [tuple(pair) for pair in merges]
    else:
        merges = draw(merge_lists(alphabet_size))
    return alphabet_size, merges, symbols


@settings(max_examples=300)
@given(case=encoder_cases())
def test_every_merge_loop_agrees_with_the_rank_order_reference(case):
    """Short and long chunks as lists of fresh merges, as lists of the same merges written as an
    import's, and as byte ranges: whichever loop the engine picks for each, the reference's ids."""
    alphabet_size, merges, symbols = case
    expected = encode_reference(alphabet_size, merges, symbols)
    assert engine.Encoder(alphabet_size, merges).encode_symbols(symbols) == expected
    imported, results = as_imported(alphabet_size, merges)
    assert engine.Encoder(alphabet_size, imported, results=results).encode_symbols(symbols) == expected
    ranges = engine.Encoder(alphabet_size, merges)
    assert ranges.encode_uncached(bytes(symbols) + engine.PADDING, 0, len(symbols)) == expected


@settings(max_examples=200)
@given(case=encoder_cases())
def test_decoder_inverts_encoder(case):
    alphabet_size, merges, symbols = case
    ids = engine.Encoder(alphabet_size, merges).encode_symbols(symbols)
    decoder = engine.Decoder(alphabet_size, merges)
    assert decoder.symbols(ids) == symbols
    assert decode_reference(alphabet_size, merges, ids) == symbols


@settings(max_examples=100)
@given(case=encoder_cases())
def test_decoder_expands_every_token_to_its_base_symbols(case):
    alphabet_size, merges, _ = case
    decoder = engine.Decoder(alphabet_size, merges)
    for token in range(alphabet_size + len(merges)):
        assert decoder.symbols([token]) == decode_reference(alphabet_size, merges, [token])


def test_encoder_applies_lowest_rank_first_not_longest_match():
    # merges: (b, c) rank 0, (a, b) rank 1; "abc" -> a + bc, although "ab" comes first
    encoder = engine.Encoder(3, [(1, 2), (0, 1)])
    assert encoder.encode_symbols([0, 1, 2]) == [0, 3]
    long_input = [0, 1, 2] * LONG
    assert encoder.encode_symbols(long_input) == [0, 3] * LONG


def test_encoder_merges_a_run_from_the_left_on_every_path():
    encoder = engine.Encoder(2, [(0, 0)])
    imported_merges, results = as_imported(2, [(0, 0)])
    imported = engine.Encoder(2, imported_merges, results=results)
    for length in (3, 5, LONG + 1, 3 * LONG + 1, 10_001):
        expected = [2] * (length // 2) + [0]
        assert encoder.encode_symbols([0] * length) == expected
        assert imported.encode_symbols([0] * length) == expected
        assert encoder.encode_uncached(bytes(length) + engine.PADDING, 0, length) == expected


def test_encoder_leaves_empty_and_single_symbol_chunks_alone():
    encoder = engine.Encoder(3, [(0, 1)])
    assert encoder.encode_symbols([]) == []
    assert encoder.encode_symbols([2]) == [2]


def test_encoder_rejects_a_merge_that_uses_an_id_not_created_yet():
    with pytest.raises(ValueError):
        engine.Encoder(3, [(0, 3)])
    with pytest.raises(ValueError):
        engine.Encoder(3, [(0, 1), (4, 0)])


def test_decoder_rejects_ids_outside_the_vocabulary():
    decoder = engine.Decoder(3, [(0, 1)])
    with pytest.raises(ValueError):
        decoder.symbols([4])
    with pytest.raises(ValueError):
        decoder.symbols([-1])


@settings(max_examples=100)
@given(texts=st.lists(st.text(max_size=30), max_size=20), cache_size=st.sampled_from([1, 2, 1 << 18]))
def test_encode_ranges_equals_encoding_each_chunk_through_any_cache(texts, cache_size):
    merges = [tuple(pair) for pair in engine.train(256, [list(t.encode()) for t in texts], [1] * len(texts), 30).merges]
    encoder = engine.Encoder(256, merges, cache_size)
    plain = engine.Encoder(256, merges)
    expected = [token for text in texts for token in plain.encode_symbols(list(text.encode("utf-8")))]
    packed = b"".join(text.encode("utf-8") for text in texts) + engine.PADDING
    lengths = [len(text.encode("utf-8")) for text in texts]
    ends = b"".join(sum(lengths[: index + 1]).to_bytes(engine.END_WIDTH, "little") for index in range(len(texts)))
    for _ in range(2):  # again, now from the cache
        ids: list[int] = []
        assert encoder.encode_ranges(packed, ends, 0, len(texts), 0, ids, True) == len(packed) - 8
        assert ids == expected


# ---------------------------------------------------------------- alphabet


def test_alphabet_maps_labels_to_ids_in_order():
    alphabet = engine.Alphabet(["A", "C", "G", "T"])
    assert len(alphabet) == 4
    assert [alphabet.id_of(label) for label in "TGCA"] == [3, 2, 1, 0]
    with pytest.raises(KeyError):
        alphabet.id_of("N")


@pytest.mark.parametrize("size", [0, 1, (1 << 17) + 1])
def test_alphabet_size_is_between_2_and_2_to_the_17(size):
    # 65,536 symbols and more: DNA 8-mers (4**8) with tails and ambiguity letters need 65,551
    with pytest.raises(ValueError):
        engine.Alphabet([str(index) for index in range(size)])


def test_alphabet_accepts_the_extremes():
    assert len(engine.Alphabet(["x", "y"])) == 2
    assert len(engine.Alphabet([str(index) for index in range(65536)])) == 65536


def test_alphabet_rejects_duplicate_labels():
    with pytest.raises(ValueError, match="twice"):
        engine.Alphabet(["A", "C", "A"])


# ---------------------------------------------------------------- long chunks (real DNA)


def dna_ids(sequence):
    return ["ACGT".index(base) for base in sequence]


@pytest.mark.parametrize("tie_break", sorted(TIE_RULE_NAMES))
def test_long_genome_chunk_matches_reference(ecoli_genome, tie_break):
    symbols = dna_ids(ecoli_genome[1_000_000:1_005_000])
    assert_trains_like_the_reference(*train_both(4, [symbols], [1], 400, tie_break=tie_break))


def test_200_kbp_genome_chunk_segments_equal_its_encoding_and_decode_back(ecoli_genome):
    symbols = dna_ids(ecoli_genome[:200_000])
    trainer = engine.train(4, [symbols], [1], 1000)
    assert len(trainer.merges) == 1000
    (segment,) = trainer.segments()
    encoder = engine.Encoder(4, trainer.merges)
    assert encoder.encode_symbols(symbols) == segment
    assert engine.Decoder(4, trainer.merges).symbols(segment) == symbols
    # the counts never increase: each merge was the best pair left
    assert all(a >= b for a, b in zip(trainer.merge_counts, trainer.merge_counts[1:]))


@pytest.mark.parametrize("repeats", [7, 40, 800])
def test_tandem_repeat_trains_to_exhaustion_like_the_reference(tandem_repeat, repeats):
    unit = tandem_repeat[:125]
    symbols = dna_ids(unit) * repeats
    assert tandem_repeat[: 125 * repeats] == unit * repeats
    trainer, reference = train_both(4, [symbols], [1], 100_000)
    assert_trains_like_the_reference(trainer, reference)
    # trained to exhaustion, the whole chunk became one token
    assert len(trainer.segments()[0]) == 1
    assert engine.Encoder(4, trainer.merges).encode_symbols(symbols) == trainer.segments()[0]


def test_tandem_repeat_with_weighted_unit_chunks_matches_reference(tandem_repeat):
    unit = dna_ids(tandem_repeat[:125])
    chunks = [unit * 3, unit, unit[:60], unit[60:] + unit[:5]]
    assert_trains_like_the_reference(*train_both(4, chunks, [2**33, 5, 2**40, 1], 300, tie_break="largest"))


@given(
    st.lists(st.integers(-2, 40) | st.sampled_from([2**31 - 1, 2**31, 10**12, 10**30, -(10**30), True, 1.5, "7"])),
    st.integers(0, 5),
)
def test_check_ids_finds_what_a_plain_reading_finds(ids: list[object], low_below: int) -> None:
    """The first entry that is not an int from 0 (-1 below `low_below`) to 2^31 - 1, else the
    first that repeats an earlier id (-1 aside), and the highest id."""

    def fits(index: int, value: object) -> bool:
        return type(value) is int and (-1 if index < low_below else 0) <= value <= 2**31 - 1

    out_of_range = next((index for index, value in enumerate(ids) if not fits(index, value)), None)
    unfit, highest = engine.check_ids(ids, low_below)
    if out_of_range is not None:
        assert (unfit, highest) == (out_of_range, -1)
        return
    assert highest == max([-1, *ids])
    repeat = next((index for index, value in enumerate(ids) if value != -1 and value in ids[:index]), -1)
    assert unfit == repeat or (unfit == engine.UNCHECKED and highest >= 2**16)  # sparse: left to the caller
