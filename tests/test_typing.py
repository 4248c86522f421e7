"""The house style's typing rule: `mypy --strict` passes on the framework and the built-in plugins
(the engine and the kernels must type-check anyway, or mypyc refuses to compile them)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_passes_on_bpe_core_and_plugins() -> None:
    targets = ["bpe_core", "plugins/bpe_text", "plugins/bpe_dna", "plugins/bpe_midi"]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
