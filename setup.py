"""Build: compiles bpe_core/engine (and plugins' kernel modules) with mypyc when the wheel is built.

Falls back to the pure-Python engine, with one warning, when no working C compiler is found;
BPE_CORE_PURE=1 skips the compile on purpose. It does not decide what is packaged: that is
pyproject.toml.
"""

import glob
import os
import sys
import tempfile
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

# the engine, and plugins' kernel modules (never hook implementations)
COMPILED = sorted(
    path for path in glob.glob("bpe_core/engine/**/*.py", recursive=True) if not path.endswith("__init__.py")
) + [
    "plugins/bpe_text/scanner.py",
    "plugins/bpe_text/packing.py",
    "plugins/bpe_midi/smf.py",
    "plugins/bpe_midi/grammars.py",
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

    def build_extensions(self) -> None:
        problem = self.compiler_problem()
        if problem is None:
            super().build_extensions()
            return
        self.extensions = []
        self.distribution.ext_modules = []
        print(
            f"warning: bpe-core: no working C compiler ({problem}), so the engine is installed as pure "
            "Python: same results, several times slower. For the compiled engine, install gcc or clang "
            "and the Python headers, then reinstall.",
            file=sys.stderr,
        )

    def compiler_problem(self) -> str | None:
        """Why the C compiler cannot build an extension module (None if it can). Asked first, so an
        error in the real compile is reported as what it is, not taken for a missing compiler."""
        with tempfile.TemporaryDirectory() as directory:
            probe = Path(directory) / "probe.c"
            probe.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
            try:
                self.compiler.compile([str(probe)], output_dir=directory)
            except COMPILER_ERRORS as error:
                reason = str(error)
                if "exit status" in reason:  # the message holds the whole command line: keep what went wrong
                    reason = "exit status " + reason.rpartition("exit status ")[2].rstrip(".")
                command = getattr(self.compiler, "compiler_so", None) or ["the C compiler"]
                return f"{command[0]}: {reason}"
        return None


setup(ext_modules=[], distclass=CompiledDistribution, cmdclass={"build_ext": MypycBuildExt})
