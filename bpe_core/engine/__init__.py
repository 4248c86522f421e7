"""The compiled core: training, encoding and decoding over an abstract alphabet of symbol ids.

It imports nothing from the rest of bpe_core and does no I/O; docs/architecture.md describes the
trainer and the encoder, and why they are written for mypyc.
"""

import sys
from collections.abc import Callable, Sequence

from bpe_core.engine.alphabet import Alphabet
from bpe_core.engine.decoder import Decoder, join_packed_pieces, join_pieces
from bpe_core.engine.encode.encoder import Encoder
from bpe_core.engine.encode.id_lists import UNCHECKED, check_ids, pack_id_lists, unpack_id_lists
from bpe_core.engine.encode.recover import recover_merges
from bpe_core.engine.encode.unit_sides import CONTINUES, PLAIN, STARTS
from bpe_core.engine.tables import END_WIDTH, MAX_PACKED
from bpe_core.engine.train.chunk_counts import PADDING, ChunkCounts
from bpe_core.engine.train.groups import ChunkGroups
from bpe_core.engine.train.mirror import mirror_tokens
from bpe_core.engine.train.picky import PickyTrainer
from bpe_core.engine.train.picky import merge_list as picky_merge_list
from bpe_core.engine.train.trainer import TIE_HF, TIE_LARGEST, TIE_RULES, TIE_SMALLEST, Trainer

# the compiled modules (all but the packages' __init__), by their names under bpe_core.engine
ENGINE_MODULES = (
    "alphabet",
    "decoder",
    "heap",
    "tables",
    "encode.buckets",
    "encode.encoder",
    "encode.id_lists",
    "encode.kernel",
    "encode.pair_ranks",
    "encode.range_cache",
    "encode.recover",
    "encode.unit_sides",
    "encode.units",
    "encode.windows",
    "train.chunk_counts",
    "train.groups",
    "train.mirror",
    "train.picky",
    "train.pair_heap",
    "train.pairs",
    "train.trainer",
)


def train(
    alphabet_size: int,
    chunks: Sequence[Sequence[int]],
    weights: list[int],
    num_merges: int,
    min_frequency: int = 1,
    max_token_length: int = 0,
    tie_break: int = TIE_SMALLEST,
    progress: Callable[[int], None] | None = None,
    symbol_order: list[int] | None = None,
    veto: Callable[[int, int], bool] | None = None,
    mirror: list[int] | None = None,
) -> Trainer:
    """Train and return the finished Trainer (its `merges`, `merge_counts` and `segments()`).

    >>> t = train(3, [[0, 1, 2], [0, 1]], [2, 1], num_merges=1)
    >>> t.merges
    [(0, 1)]
    """
    trainer = Trainer(
        alphabet_size, chunks, weights, alphabet_size + num_merges, max_token_length, tie_break, symbol_order, mirror
    )
    trainer.run(num_merges, min_frequency, progress, veto)
    return trainer


def is_compiled() -> bool:
    """True when every engine module was loaded from a mypyc-compiled extension module."""
    return all(not (sys.modules[f"{__name__}.{module}"].__file__ or ".py").endswith(".py") for module in ENGINE_MODULES)


__all__ = [
    "CONTINUES",
    "END_WIDTH",
    "MAX_PACKED",
    "PADDING",
    "PLAIN",
    "STARTS",
    "Alphabet",
    "ChunkCounts",
    "ChunkGroups",
    "Decoder",
    "Encoder",
    "PickyTrainer",
    "TIE_HF",
    "TIE_LARGEST",
    "TIE_RULES",
    "TIE_SMALLEST",
    "UNCHECKED",
    "Trainer",
    "check_ids",
    "is_compiled",
    "join_packed_pieces",
    "join_pieces",
    "mirror_tokens",
    "pack_id_lists",
    "picky_merge_list",
    "recover_merges",
    "train",
    "unpack_id_lists",
]
