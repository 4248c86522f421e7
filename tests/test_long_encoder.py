"""The whole-chunk encoder (`engine/long_encoder.py`) against the reference encoder: random
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

from bpe_core.engine.long_encoder import LongEncoder


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
def test_long_encoder_gives_the_reference_encoding(case: tuple[int, list[tuple[int, int]], list[list[int]]]) -> None:
    alphabet_size, merges, sequences = case
    encoder = LongEncoder(alphabet_size, merges)
    for sequence in sequences:  # one encoder for several chunks: its reused buffers must not leak
        assert encoder.encode(sequence) == encode_reference(alphabet_size, merges, sequence)


def fasta_sequence(path: object, length: int) -> list[int]:
    with gzip.open(str(path), "rt") as handle:
        handle.readline()
        text = handle.read(length * 2).replace("\n", "")[:length].upper()
    return ["ACGT".index(letter) for letter in text]


@pytest.mark.both_modes
def test_long_encoder_gives_the_reference_encoding_on_a_genome_slice() -> None:
    training = fasta_sequence(LAMBDA_PATH, 20_000)
    merges = train_reference(4, [training], [1], 60).merges
    sequence = fasta_sequence(ECOLI_PATH, 20_000)
    assert LongEncoder(4, merges).encode(sequence) == encode_reference(4, merges, sequence)
