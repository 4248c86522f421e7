"""The compiled core: training, encoding and decoding over an abstract alphabet of symbol ids.

It imports nothing from the rest of bpe_core and does no I/O; see DESIGN.md's engine rules.
With BPE_CORE_PURE=1 in the environment, the engine's Python sources are imported even where
compiled modules are installed beside them, so one installation can run in both modes.
"""

import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Sequence

ENGINE_MODULES = ("alphabet", "encoder", "heap", "pairs", "trainer")


class _SourceFinder:
    """Finds bpe_core.engine submodules as .py sources, ahead of the compiled extension modules."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, module = fullname.rpartition(".")
        if package != __name__ or module not in ENGINE_MODULES:
            return None
        source = os.path.join(os.path.dirname(__file__), module + ".py")
        return importlib.util.spec_from_file_location(fullname, source)


if os.environ.get("BPE_CORE_PURE") == "1":
    sys.meta_path.insert(0, _SourceFinder())

from bpe_core.engine.alphabet import Alphabet  # noqa: E402
from bpe_core.engine.encoder import Decoder, Encoder  # noqa: E402
from bpe_core.engine.trainer import TIE_LARGEST, TIE_RULES, TIE_SMALLEST, Trainer, train  # noqa: E402


def is_compiled() -> bool:
    """True when every engine module was loaded from a mypyc-compiled extension module."""
    return all(
        not (sys.modules[f"{__name__}.{module}"].__file__ or ".py").endswith(".py") for module in ENGINE_MODULES
    )


__all__ = ["Alphabet", "Decoder", "Encoder", "TIE_LARGEST", "TIE_RULES", "TIE_SMALLEST", "Trainer", "is_compiled", "train"]
