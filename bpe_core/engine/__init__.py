"""The compiled core: training, encoding and decoding over an abstract alphabet of symbol ids.

It imports nothing from the rest of bpe_core and does no I/O; docs/architecture.md describes the
trainer and the encoder, and why they are written for mypyc.
"""

import sys

from bpe_core.engine.alphabet import Alphabet
from bpe_core.engine.chunk_counts import ChunkCounts
from bpe_core.engine.encoder import Decoder, Encoder
from bpe_core.engine.mirror import mirror_tokens
from bpe_core.engine.trainer import TIE_HF, TIE_LARGEST, TIE_RULES, TIE_SMALLEST, Trainer, train

ENGINE_MODULES = ("alphabet", "chunk_counts", "encoder", "heap", "long_encoder", "mirror", "pairs", "trainer")


def is_compiled() -> bool:
    """True when every engine module was loaded from a mypyc-compiled extension module."""
    return all(not (sys.modules[f"{__name__}.{module}"].__file__ or ".py").endswith(".py") for module in ENGINE_MODULES)


__all__ = [
    "Alphabet",
    "ChunkCounts",
    "Decoder",
    "Encoder",
    "TIE_HF",
    "TIE_LARGEST",
    "TIE_RULES",
    "TIE_SMALLEST",
    "Trainer",
    "is_compiled",
    "mirror_tokens",
    "train",
]
