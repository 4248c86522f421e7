"""Running the installed `bpe` command in tests, text mode, plainly or bounded in time and memory
(for hostile inputs). The framework-layer tests run it in bytes with helpers.framework."""

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
        [str(BPE), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=bpe_env(),
        timeout=timeout,
        check=False,
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


def _limit_memory(megabytes: int) -> None:
    """In the child before exec: cap its address space, so a blow-up is a MemoryError, not a dead machine."""
    import resource

    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_bpe_bounded(
    *args: object, cwd: Path, timeout: float = 60, memory_mb: int = 2048
) -> subprocess.CompletedProcess[str]:
    """Run `bpe` with its time and address space bounded: for hostile inputs that could hang or explode.

    A run that exceeds `timeout` raises subprocess.TimeoutExpired (the test fails naming the case).
    """
    return subprocess.run(
        [str(BPE), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        # one malloc arena: each thread's arena reserves 64 MB of address space, which would make
        # the bound depend on which threads happen to allocate (tqdm's monitor, pool feeders)
        env={**bpe_env(), "MALLOC_ARENA_MAX": "1"},
        timeout=timeout,
        check=False,
        preexec_fn=lambda: _limit_memory(memory_mb),
    )


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (relative path -> content): to assert a failed run changed nothing."""
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()
    }


def assert_fails_cleanly(
    *args: object, cwd: Path, fragments: tuple[str, ...] = (), timeout: float = 60, memory_mb: int = 2048
) -> str:
    """Run `bpe` bounded on a bad input: one clean `error:` line holding each fragment, and no file
    under `cwd` created or changed."""
    before = snapshot(cwd)
    line = assert_clean_error(run_bpe_bounded(*args, cwd=cwd, timeout=timeout, memory_mb=memory_mb), *fragments)
    assert snapshot(cwd) == before, "a failed run created or changed a file"
    return line
