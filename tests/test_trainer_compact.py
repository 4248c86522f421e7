"""The trainer's compact storage for long sequences: 32-bit positions, one weight for chunks that
share it, chunks given as bytes; it learns exactly what the list-of-ids input and the reference
learn, on real DNA (a slice of E. coli)."""

import gzip

import pytest
from helpers.reference import train_reference

import bpe_core
from bpe_core import engine
from bpe_core.engine.train import pairs
from bpe_core.engine.train import trainer as trainer_module

pytestmark = pytest.mark.both_modes

BASE_IDS = bytes.maketrans(b"ACGT", bytes(range(4)))


def packed(sequence: str) -> bytes:
    return sequence.encode("ascii").translate(BASE_IDS)


def field(trainer: engine.Trainer, position: int, name: int) -> int:
    """One field of a position's node (`pairs.SYMBOL` and on)."""
    return int(trainer.node[position * trainer.stride + name])


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
    # two chunks of weight 2 (one weight for all: none kept per position), a lone base of its own weight
    shared = engine.Trainer(4, [first, second, b"\x01"], [2, 2, 7], 4 + 200)
    # the same counts with weights 1 and 2 (kept per position)
    mixed = engine.Trainer(4, [first, first, second, b"\x01"], [1, 1, 2, 7], 4 + 200)
    assert shared.stride == trainer_module.UNIFORM_STRIDE and mixed.stride == trainer_module.WEIGHED_STRIDE
    shared.run(200)
    mixed.run(200)
    assert shared.merges == mixed.merges and shared.merge_counts == mixed.merge_counts
    assert shared.token_usage() == mixed.token_usage()
    assert sum(shared.token_usage()[token] * length for token, length in enumerate(shared.token_length)) == (
        2 * (len(first) + len(second)) + 7
    )


def test_per_position_storage_is_five_32_bit_fields_with_no_backward_token_links(ecoli_genome):
    trainer = engine.train(4, [packed(ecoli_genome[:20_000])], [1], 50)
    assert memoryview(trainer.node).itemsize == 4
    # symbol, next token, pair, its chain's two links; one chunk: its weight is kept once, not per position
    assert len(trainer.node) == 20_000 * 5 and trainer.stride == 5


def test_each_chain_holds_exactly_the_positions_where_its_pair_starts(ecoli_genome):
    # a chain entry leaves its chain as soon as its position stops starting the pair, so no
    # entry goes stale and the chains need no room beyond one link each way per position
    symbols = packed(ecoli_genome[1_000_000:1_200_000])
    trainer = engine.train(4, [symbols], [1], 2000)
    assert len(trainer.merges) == 2000
    chained = {}
    for pair_id in range(trainer.pairs.size()):
        position, earlier = trainer.pairs.head[pair_id], -1
        while position != -1:
            assert field(trainer, position, pairs.CHAIN_PREV) == earlier
            chained[position] = pair_id
            position, earlier = field(trainer, position, pairs.CHAIN_NEXT), position
    starting = {
        position: field(trainer, position, pairs.PAIR)
        for position in range(len(trainer.node) // trainer.stride)
        if field(trainer, position, pairs.PAIR) != -1
    }
    assert chained == starting
    assert len(starting) > 10_000


def test_too_many_positions_are_refused_before_any_is_stored():
    class Huge:
        def __len__(self) -> int:
            return trainer_module.MAX_POSITIONS + 1

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
