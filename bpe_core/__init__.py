"""bpe-core: byte-pair encoding for any sequence (text, DNA, music) with a compiled engine.

>>> import bpe_core
>>> tok = bpe_core.train("configs/gpt2-style.yaml", ["corpus.txt"], {"trainer.vocab_size": 8192})
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from importlib.metadata import PackageNotFoundError, version

from bpe_core import pure_mode  # noqa: F401  (first: BPE_CORE_PURE=1 must act before compiled modules load)
from bpe_core.counts import Counts, load_counts, sum_counts
from bpe_core.errors import BpeError
from bpe_core.loading import from_hf, from_tiktoken, load
from bpe_core.surgery import trim
from bpe_core.tokenizer import Tokenizer
from bpe_core.training import count, train

try:
    __version__ = version("bpe-core")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

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
