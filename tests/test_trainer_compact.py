"""Training on long sequences, the way genomes come: chunks given as bytes, one weight shared by
many chunks or weights that differ, and a limit on how many positions a corpus may have. Each
learns exactly what the list-of-ids input and the reference learn, on real DNA (slices of
E. coli). How the trainer stores positions is its own business: only what it learns is checked."""

import gzip

import pytest
from helpers.reference import train_reference

import bpe_core
from bpe_core import engine

pytestmark = pytest.mark.both_modes

BASE_IDS = bytes.maketrans(b"ACGT", bytes(range(4)))


def packed(sequence: str) -> bytes:
    return sequence.encode("ascii").translate(BASE_IDS)


def learned(trainer: engine.Trainer) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    return trainer.merges, trainer.merge_counts, trainer.token_usage()


def test_bytes_chunks_learn_what_lists_of_ids_learn(ecoli_genome):
    sequence = ecoli_genome[2_000_000:2_030_000]
    from_bytes = engine.train(4, [packed(sequence)], [1], 300)
    from_lists = engine.train(4, [list(packed(sequence))], [1], 300)
    assert learned(from_bytes) == learned(from_lists)
    assert from_bytes.segments() == from_lists.segments()
    assert len(from_bytes.merges) == 300


def test_bytes_chunk_matches_the_reference_trainer(ecoli_genome):
    symbols = packed(ecoli_genome[3_000_000:3_004_000])
    trainer = engine.train(4, [symbols], [1], 300)
    reference = train_reference(4, [list(symbols)], [1], 300)
    assert trainer.merges == reference.merges


def test_one_shared_weight_and_weights_per_position_learn_the_same(ecoli_genome):
    first, second = packed(ecoli_genome[:12_000]), packed(ecoli_genome[12_000:20_000])
    # two chunks of weight 2, a lone base of its own weight
    shared = engine.Trainer(4, [first, second, b"\x01"], [2, 2, 7], 4 + 200)
    # the same counts, the first chunk given twice at weight 1
    mixed = engine.Trainer(4, [first, first, second, b"\x01"], [1, 1, 2, 7], 4 + 200)
    shared.run(200)
    mixed.run(200)
    assert shared.merges == mixed.merges and shared.merge_counts == mixed.merge_counts
    assert shared.token_usage() == mixed.token_usage()
    lengths = [1] * 4  # each token's length in bases, from the merges that made it
    for left, right in shared.merges:
        lengths.append(lengths[left] + lengths[right])
    usage = shared.token_usage()
    assert sum(usage[token] * lengths[token] for token in range(len(lengths))) == 2 * (len(first) + len(second)) + 7


def test_a_corpus_of_a_trillion_positions_is_refused_before_any_is_read():
    class Huge:
        def __len__(self) -> int:
            return 1 << 40

        def __getitem__(self, index: int) -> int:
            raise AssertionError("never read")

    with pytest.raises(ValueError, match="more than"):
        engine.Trainer(4, [Huge()], [1], 8)


def test_training_a_genome_slice_from_fasta_learns_what_the_engine_learns_from_ids(ecoli_genome, tmp_path):
    sequence = ecoli_genome[1_000_000:1_030_000]
    path = tmp_path / "slice.fa.gz"
    with gzip.open(path, "wt") as out:
        out.write(">slice\n" + "\n".join(sequence[start : start + 70] for start in range(0, len(sequence), 70)) + "\n")
    config = {
        "name": "slice",
        "input": {"reader": "fasta", "paths": [str(path)]},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 15 + 300, "min_frequency": 1},
    }
    tokenizer = bpe_core.train(config, workers=1, progress=False)
    expected = engine.train(15, [list(packed(sequence))], [1], 300)
    assert tokenizer.merges == expected.merges
