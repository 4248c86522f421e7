"""Running the installed `bpe` command in tests, plainly or bounded in time and memory (for hostile
inputs), and the checks every CLI test makes of a run: it succeeded, or it failed with one clean
`error:` line and changed no file.

A run's stdout is kept as bytes (`BpeRun.output`: binary ids, decoded text byte for byte) and read
as text on demand (`BpeRun.stdout`); stderr is text. Nothing is translated: a `\r\n` the command
writes is a `\r\n` here.
"""

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from helpers.outputs import snapshot

BPE = Path(sys.executable).parent / "bpe"


@dataclass(frozen=True)
class BpeRun:
    """What one `bpe` run did: its exit status, its stdout as bytes, its stderr as text."""

    returncode: int
    output: bytes
    stderr: str

    @property
    def stdout(self) -> str:
        """stdout as UTF-8 text (for output that is text: ids, tokens, decoded documents, reports)."""
        return self.output.decode("utf-8")


def bpe_env(**extra: str) -> dict[str, str]:
    """The environment for `bpe` subprocesses: this one (so BPE_CORE_PURE carries over) plus `extra`."""
    return {**os.environ, **extra}


def _run(
    args: tuple[object, ...],
    cwd: Path,
    stdin: bytes | None,
    timeout: float,
    env: dict[str, str],
    before_exec: Callable[[], None] | None = None,
) -> BpeRun:
    completed = subprocess.run(
        [str(BPE), *map(str, args)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env,
        timeout=timeout,
        check=False,
        preexec_fn=before_exec,
    )
    return BpeRun(completed.returncode, completed.stdout, completed.stderr.decode("utf-8"))


def run_bpe(*args: object, cwd: Path, stdin: bytes | None = None, timeout: float = 600, **env: str) -> BpeRun:
    """Run the installed `bpe` console script (never the source tree: cwd is a temporary directory),
    with `env` added to this environment (PYTHONPATH for a plugin installed in a test directory)."""
    return _run(args, cwd, stdin, timeout, bpe_env(**env))


def run_bpe_prepared(
    *args: object, cwd: Path, prepare: Callable[[], None], stdin: bytes | None = None, timeout: float = 60, **env: str
) -> BpeRun:
    """Run `bpe` with `prepare` called in the child before it starts (a resource limit set, a
    standard stream closed); one malloc arena, as in `run_bpe_bounded`, so a memory limit means
    the same whichever threads allocate. A run that exceeds `timeout` raises TimeoutExpired."""
    return _run(args, cwd, stdin, timeout, bpe_env(MALLOC_ARENA_MAX="1", **env), before_exec=prepare)


def assert_ok(result: BpeRun, binary: bool = False) -> str:
    """The command succeeded with no traceback; returns its stdout as text (empty for binary output,
    which `result.output` holds)."""
    assert result.returncode == 0, f"exit {result.returncode}, stderr:\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return "" if binary else result.stdout


def assert_clean_error(result: BpeRun, *fragments: str) -> str:
    """Exit status 2, exactly one `error: ...` line on stderr holding each fragment, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, f"exit {result.returncode}, stderr:\n{result.stderr}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), f"expected one error line, got:\n{result.stderr}"
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]


def train_with_bpe(
    config: object, inputs: Sequence[object], output: Path, settings: Mapping[str, object], cwd: Path
) -> Path:
    """`bpe train CONFIG INPUTS... -o OUTPUT -q --set KEY=VALUE...`, which must succeed: the
    tokenizer a fixture builds with the command line. Returns `output`."""
    overrides = [argument for key, value in settings.items() for argument in ("--set", f"{key}={value}")]
    assert_ok(run_bpe("train", config, *inputs, "-o", output, "-q", *overrides, cwd=cwd))
    return output


def _limit_memory(megabytes: int) -> None:
    """In the child before exec: cap its address space, so a blow-up is a MemoryError, not a dead machine."""
    import resource

    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_bpe_bounded(*args: object, cwd: Path, timeout: float = 60, memory_mb: int = 2048) -> BpeRun:
    """Run `bpe` with its time and address space bounded: for hostile inputs that could hang or explode.

    A run that exceeds `timeout` raises subprocess.TimeoutExpired (the test fails naming the case).
    """
    # one malloc arena: each thread's arena reserves 64 MB of address space, which would make
    # the bound depend on which threads happen to allocate (tqdm's monitor, pool feeders)
    env = bpe_env(MALLOC_ARENA_MAX="1")
    return _run(args, cwd, None, timeout, env, before_exec=lambda: _limit_memory(memory_mb))


def assert_fails_cleanly(
    *args: object, cwd: Path, fragments: tuple[str, ...] = (), timeout: float = 60, memory_mb: int = 2048
) -> str:
    """Run `bpe` bounded on a bad input: one clean `error:` line holding each fragment, and no file
    under `cwd` created or changed."""
    before = snapshot(cwd)
    line = assert_clean_error(run_bpe_bounded(*args, cwd=cwd, timeout=timeout, memory_mb=memory_mb), *fragments)
    assert snapshot(cwd) == before, "a failed run created or changed a file"
    return line
