"""Encoding chunks of any length given as lists of symbols (`Encoder.encode_symbols`) against the
reference encoder: random merge lists trained by the naive reference, random and run-heavy
sequences, and real genomes (E. coli, encoded with merges learned on phage lambda), long enough
for the engine to encode them window by window. Expected values come from
tests/helpers/reference.py, or from the same merges written as an import's (`as_imported`, which
the engine merges with another loop), not from the loop under test.

One test still reaches into the engine, `bpe_core.engine.encode.buckets`: joining windows is exact
for any window and overlap, and only windows far smaller than the engine's own make the many
junctions that show it on inputs a property test can draw.
"""

import gzip

import pytest
from helpers.paths import ECOLI_PATH, LAMBDA_PATH
from helpers.reference import as_imported, encode_reference, train_reference
from helpers.strategies import chunk_shapes
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
    chunk = chunk_shapes(st.integers(0, alphabet_size - 1), max_length=60, max_unit=3, max_repeats=20)
    corpus = draw(st.lists(chunk, min_size=1, max_size=6))
    merges = train_reference(alphabet_size, corpus, [1] * len(corpus), draw(st.integers(0, 40))).merges
    return alphabet_size, merges, draw(st.lists(chunk, min_size=1, max_size=4))


@pytest.mark.both_modes
@settings(max_examples=200)
@given(case=merges_and_sequences())
def test_encode_symbols_gives_the_reference_encoding(case: tuple[int, list[tuple[int, int]], list[list[int]]]) -> None:
    alphabet_size, merges, sequences = case
    encoder = engine.Encoder(alphabet_size, merges)
    for sequence in sequences:  # one encoder for several chunks: its reused buffers must not leak
        assert encoder.encode_symbols(sequence) == encode_reference(alphabet_size, merges, sequence)


def fasta_sequence(path: object, length: int) -> list[int]:
    with gzip.open(str(path), "rt") as handle:
        handle.readline()
        text = handle.read(length * 2).replace("\n", "")[:length].upper()
    return ["ACGT".index(letter) for letter in text]


@pytest.mark.both_modes
def test_encode_symbols_gives_the_reference_encoding_on_a_genome_slice() -> None:
    training = fasta_sequence(LAMBDA_PATH, 20_000)
    merges = train_reference(4, [training], [1], 60).merges
    sequence = fasta_sequence(ECOLI_PATH, 20_000)
    assert engine.Encoder(4, merges).encode_symbols(sequence) == encode_reference(4, merges, sequence)


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
def test_a_genome_and_long_runs_encode_as_an_imports_merges_encode_them() -> None:
    """E. coli's first 600 kbp (120 kbp pure), a run of 100,000 of one base and a periodic chunk as
    long, with 2,000 merges learned on phage lambda: chunks this long are encoded window by window,
    and give the ids of the same merges read as an import's, which are merged whole."""
    merges = Trainer(4, [fasta_sequence(LAMBDA_PATH, 20_000)], [1], 4 + 2_000).run(2_000)
    genome = fasta_sequence(ECOLI_PATH, 600_000 if engine.is_compiled() else 120_000)
    imported_merges, results = as_imported(4, merges)
    fresh, imported = engine.Encoder(4, merges), engine.Encoder(4, imported_merges, results=results)
    for sequence in (genome, [0] * 100_000, [0, 1, 1, 3, 2] * 20_000):
        ids = fresh.encode_symbols(sequence)
        assert ids == imported.encode_symbols(sequence)
        assert engine.Decoder(4, merges).symbols(ids) == sequence
