"""Build: compiles bpe_core/engine (and plugins' kernel modules) with mypyc; BPE_CORE_PURE=1 skips it."""

import glob
import os

from setuptools import setup

# the engine, and plugins' kernel modules (never hook implementations)
COMPILED = sorted(path for path in glob.glob("bpe_core/engine/*.py") if not path.endswith("__init__.py")) + [
    "plugins/bpe_text/scanner.py",
    "plugins/bpe_midi/smf.py",
]

ext_modules = []
if os.environ.get("BPE_CORE_PURE") != "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED, opt_level="3", debug_level="0")

setup(ext_modules=ext_modules)
