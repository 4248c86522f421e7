"""bpe-core: byte-pair encoding for any sequence (text, DNA, music) with a compiled engine.

>>> import bpe_core
>>> tok = bpe_core.train("configs/gpt2-style.yaml", ["corpus.txt"], {"trainer.vocab_size": 8192})
>>> tok.decode(tok.encode("hello world"))
'hello world'

The public names are imported on first use: importing any module of the package runs this file
first (`bpe --version`, a plugin reading `bpe_core.contract`), and none of them should pay for
the whole framework. It does not import the engine, YAML, the plugins or `importlib.metadata`
(the version is a literal in `version.py`, which the build reads too).
"""

import importlib
from typing import TYPE_CHECKING, Any

from bpe_core import pure_mode  # noqa: F401  (first: BPE_CORE_PURE=1 must act before compiled modules load)
from bpe_core.version import VERSION as __version__

if TYPE_CHECKING:
    from bpe_core.counts import Counts, load_counts, sum_counts
    from bpe_core.errors import BpeError
    from bpe_core.loading import from_hf, from_tiktoken, load
    from bpe_core.surgery import trim
    from bpe_core.tokenizer import Tokenizer
    from bpe_core.training import count, train

# each public name and the module that defines it
PUBLIC_MODULES = {
    "BpeError": "bpe_core.errors",
    "Counts": "bpe_core.counts",
    "Tokenizer": "bpe_core.tokenizer",
    "count": "bpe_core.training",
    "from_hf": "bpe_core.loading",
    "from_tiktoken": "bpe_core.loading",
    "load": "bpe_core.loading",
    "load_counts": "bpe_core.counts",
    "sum_counts": "bpe_core.counts",
    "train": "bpe_core.training",
    "trim": "bpe_core.surgery",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (and kept here after it)."""
    if name not in PUBLIC_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(PUBLIC_MODULES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "BpeError",
    "Counts",
    "Tokenizer",
    "__version__",
    "count",
    "from_hf",
    "from_tiktoken",
    "load",
    "load_counts",
    "sum_counts",
    "train",
    "trim",
]
