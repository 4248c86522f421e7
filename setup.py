"""Build: compiles bpe_core/engine (and plugins' kernel modules) with mypyc when the wheel is built.

Falls back to the pure-Python engine, with one warning, when no working C compiler is found;
BPE_CORE_PURE=1 skips the compile on purpose. It does not decide what is packaged: that is
pyproject.toml.
"""

import glob
import os
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

# the engine, and plugins' kernel modules (never hook implementations)
COMPILED = sorted(path for path in glob.glob("bpe_core/engine/*.py") if not path.endswith("__init__.py")) + [
    "plugins/bpe_text/scanner.py",
    "plugins/bpe_midi/smf.py",
]

# mypy reads the compiled modules' parent packages (bpe_core/__init__.py imports the whole
# framework, and so pluggy, yaml, ...), which the isolated build environment does not have.
# Their errors are not the build's business (tests/test_typing.py runs mypy --strict on them);
# the compiled modules themselves and what they import (librt, mypy_extensions) are still checked.
MYPY_OPTIONS = ["--follow-imports=silent"]

COMPILER_ERRORS = (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError)

PURE = os.environ.get("BPE_CORE_PURE") == "1"


class CompiledDistribution(Distribution):
    """A wheel with compiled modules is platform-specific even though its extensions are made
    only when build_ext runs (so the sdist and metadata steps never run mypyc)."""

    def has_ext_modules(self) -> bool:
        return not PURE


# the commands that build the wheel or install it; sdist and the metadata steps never run mypyc
BUILD_COMMANDS = {"build", "build_ext", "bdist_wheel", "install", "develop", "editable_wheel"}


class MypycBuildExt(build_ext):
    """Runs mypyc, then compiles its C; without a working C compiler, keeps the pure engine."""

    def finalize_options(self) -> None:
        if not PURE and not self.distribution.ext_modules and BUILD_COMMANDS & set(self.distribution.commands):
            from mypyc.build import mypycify

            self.distribution.ext_modules = mypycify(MYPY_OPTIONS + COMPILED, opt_level="3", debug_level="0")
        super().finalize_options()

    def run(self) -> None:
        try:
            super().run()
        except COMPILER_ERRORS as error:
            self.keep_pure(error)

    def keep_pure(self, error: Exception) -> None:
        # a half-built set of modules would import and then fail: leave none
        for extension in self.extensions:
            Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
        self.extensions = []
        self.distribution.ext_modules = []
        # the error holds the whole compiler command line: keep its tail, which says what went wrong
        reason = str(error).rpartition("]")[2].strip(" '.")
        compiler = getattr(self.compiler, "compiler_so", None) or ["the C compiler"]
        print(
            f"warning: bpe-core: no working C compiler ({compiler[0]}: {reason}), so the engine is installed as pure "
            "Python: same results, several times slower. For the compiled engine, install gcc or clang "
            "and the Python headers, then reinstall.",
            file=sys.stderr,
        )


setup(ext_modules=[], distclass=CompiledDistribution, cmdclass={"build_ext": MypycBuildExt})
