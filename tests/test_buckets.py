"""The bucket encoder (`engine/encode/buckets.py`) against the reference encoder: random
merge lists trained by the naive reference, random and run-heavy sequences, and a real genome
slice (E. coli, encoded with merges learned on phage lambda). Expected values come from
tests/helpers/reference.py, not from bpe_core.
"""

import gzip

import pytest
from helpers.paths import ECOLI_PATH, LAMBDA_PATH
from helpers.reference import encode_reference, train_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_core import engine
from bpe_core.engine import Trainer
from bpe_core.engine.encode.buckets import BucketEncoder
from bpe_core.engine.encode.pair_ranks import PairRanks


def bucket_encoder(alphabet_size: int, merges: list[tuple[int, int]]) -> BucketEncoder:
    """The bucket encoder over these merges (merge r makes alphabet_size + r)."""
    table = PairRanks(alphabet_size, len(merges))
    for rank, (left, right) in enumerate(merges):
        table.add(left, right, alphabet_size + rank)
    return BucketEncoder(table)


@st.composite
def merges_and_sequences(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]], list[list[int]]]:
    alphabet_size = draw(st.integers(1, 5))
    symbol = st.integers(0, alphabet_size - 1)
    chunk = st.one_of(
        st.lists(symbol, max_size=60),
        st.builds(lambda s, n: [s] * n, symbol, st.integers(0, 40)),
        st.builds(lambda unit, n: unit * n, st.lists(symbol, min_size=1, max_size=3), st.integers(1, 20)),
    )
    corpus = draw(st.lists(chunk, min_size=1, max_size=6))
    merges = train_reference(alphabet_size, corpus, [1] * len(corpus), draw(st.integers(0, 40))).merges
    return alphabet_size, merges, draw(st.lists(chunk, min_size=1, max_size=4))


@pytest.mark.both_modes
@settings(max_examples=200)
@given(case=merges_and_sequences())
def test_bucket_encoder_gives_the_reference_encoding(case: tuple[int, list[tuple[int, int]], list[list[int]]]) -> None:
    alphabet_size, merges, sequences = case
    encoder = bucket_encoder(alphabet_size, merges)
    for sequence in sequences:  # one encoder for several chunks: its reused buffers must not leak
        assert encoder.encode(sequence) == encode_reference(alphabet_size, merges, sequence)


def fasta_sequence(path: object, length: int) -> list[int]:
    with gzip.open(str(path), "rt") as handle:
        handle.readline()
        text = handle.read(length * 2).replace("\n", "")[:length].upper()
    return ["ACGT".index(letter) for letter in text]


@pytest.mark.both_modes
def test_bucket_encoder_gives_the_reference_encoding_on_a_genome_slice() -> None:
    training = fasta_sequence(LAMBDA_PATH, 20_000)
    merges = train_reference(4, [training], [1], 60).merges
    sequence = fasta_sequence(ECOLI_PATH, 20_000)
    assert bucket_encoder(4, merges).encode(sequence) == encode_reference(4, merges, sequence)


@st.composite
def windows(draw: st.DrawFn) -> tuple[int, int]:
    """A window and the overlap of two windows, small enough that a chunk has many."""
    window = draw(st.integers(2, 24))
    return window, draw(st.integers(1, window - 1))


@pytest.mark.both_modes
@settings(max_examples=300)
@given(case=merges_and_sequences(), sizes=windows())
def test_windowed_encoding_gives_the_reference_encoding(
    case: tuple[int, list[tuple[int, int]], list[list[int]]], sizes: tuple[int, int]
) -> None:
    """Chunks longer than a window are encoded window by window and joined where two windows
    agree (or whole, when no two do): the same ids for any merges, including runs of one symbol
    whose windows may never agree."""
    alphabet_size, merges, sequences = case
    encoder = bucket_encoder(alphabet_size, merges)
    encoder.window, encoder.overlap = sizes
    for sequence in sequences:
        assert encoder.encode(sequence) == encode_reference(alphabet_size, merges, sequence)
        assert encoder.encode_bytes(bytes(sequence), 0, len(sequence)) == encoder.encode(sequence)


@pytest.mark.both_modes
def test_windowed_encoding_of_a_genome_equals_encoding_it_whole() -> None:
    """E. coli's first 600 kbp (120 kbp pure) with 2,000 merges learned on phage lambda: windows
    of the default shape and of shapes that make hundreds or thousands of junctions give the
    whole-chunk ids."""
    merges = Trainer(4, [fasta_sequence(LAMBDA_PATH, 20_000)], [1], 2_004).run(2_000)
    sequence = fasta_sequence(ECOLI_PATH, 600_000 if engine.is_compiled() else 120_000)
    whole = bucket_encoder(4, merges)
    whole.window = len(sequence)
    expected = whole.encode(sequence)
    assert bucket_encoder(4, merges).encode(sequence) == expected
    for window, overlap in [(64, 16), (1 << 10, 1 << 6)]:
        windowed = bucket_encoder(4, merges)
        windowed.window, windowed.overlap = window, overlap
        assert windowed.encode(sequence) == expected
        assert windowed.junctions >= len(sequence) // window - 1  # joined, not encoded whole
