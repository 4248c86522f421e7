"""Running the installed `bpe` command in tests, text mode: one place for the DNA and MIDI tests."""

import os
import subprocess
import sys
from pathlib import Path

BPE = Path(sys.executable).parent / "bpe"


def bpe_env() -> dict[str, str]:
    """This environment, so BPE_CORE_PURE carries over to the `bpe` subprocess."""
    return dict(os.environ)


def run_bpe(*args: object, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the installed `bpe` console script (never the source tree: cwd is a temporary directory)."""
    return subprocess.run(
        [str(BPE), *map(str, args)], cwd=cwd, capture_output=True, text=True, env=bpe_env(), timeout=timeout, check=False
    )


def assert_ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}, stderr:\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result.stdout


def assert_clean_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit status 2, exactly one `error: ...` line on stderr holding each fragment, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, f"exit {result.returncode}, stderr:\n{result.stderr}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), f"expected one error line, got:\n{result.stderr}"
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]

