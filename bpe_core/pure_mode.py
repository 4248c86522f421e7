"""BPE_CORE_PURE=1 at run time: import the Python sources of compiled modules (the engine and
plugins' kernels) even where mypyc-compiled modules are installed beside them, so one
installation can run in both modes. Imported first by bpe_core/__init__.py.

The same happens, unasked, when this bpe_core is a source tree with no compiled engine (Python
started in a clone, beside an installed compiled bpe-core): the installed plugins' compiled
kernels would otherwise meet the source tree's pure engine and refuse its objects ("Encoder
object expected; got Encoder").
"""

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

PACKAGES = ("bpe_core.", "bpe_text.", "bpe_midi.")


class SourceFinder:
    """Finds a module's .py source when the regular finder would load a compiled extension."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(PACKAGES):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (
            spec is None
            or spec.origin is None
            or not spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
        ):
            return None
        source = os.path.join(os.path.dirname(spec.origin), fullname.rpartition(".")[2] + ".py")
        if not os.path.exists(source):
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def engine_is_compiled() -> bool:
    """Whether this bpe_core's engine has compiled modules beside its sources."""
    engine = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine", "encode")
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return any(name.startswith("encoder.") and name.endswith(suffixes) for name in os.listdir(engine))


pure = os.environ.get("BPE_CORE_PURE") == "1" or not engine_is_compiled()
if pure and not any(isinstance(finder, SourceFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, SourceFinder())
