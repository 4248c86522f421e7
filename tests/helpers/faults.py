"""Faults for the kill and concurrent-writer tests: running the installed `bpe` and killing it
(SIGKILL or SIGTERM, the main process or its whole process group) at a chosen moment, finding the
processes a run left behind, and what an output holds, file or directory, for comparing it with
the old and the new output byte for byte.

How many kill moments a test tries is chosen here: `BPE_CORE_FAULTS=full` (`make faults`) takes
every one; by default (`make test`) a few, drawn from the same seeded list, so a failure found
by the full loop is found again by asking for it.
"""

import os
import random
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from helpers.cli_runner import BPE, assert_ok, bpe_env, run_bpe, train_with_bpe
from helpers.midi import REMI_BPE_CONFIG, pop909_paths
from helpers.processes import living_processes
from helpers.text import GPT2_CONFIG, docs_text

FULL = os.environ.get("BPE_CORE_FAULTS") == "full"
TEMPORARY_PREFIXES = (".tmp-", ".old-")


def sampled(items: Sequence[object], count: int, seed: int) -> list[object]:
    """All of `items` under BPE_CORE_FAULTS=full; else `count` of them, chosen by `seed`."""
    if FULL or len(items) <= count:
        return list(items)
    chosen = sorted(random.Random(seed).sample(range(len(items)), count))
    return [items[index] for index in chosen]


def kill_moments(duration: float, count: int, seed: int) -> list[float]:
    """`count` moments (seconds after the start) spread over a run of `duration` seconds and a
    little past it: one drawn at random in each of `count` equal slices, so that each phase of
    the run (start-up, work, writing, exit) is hit."""
    draw = random.Random(seed)
    span = duration * 1.05
    return [span * (slot + draw.random()) / count for slot in range(count)]


@dataclass(frozen=True)
class Killed:
    """One run killed at a moment: whether the signal came before it ended, its exit status,
    its stderr, and the processes of its session still alive afterwards (orphaned workers)."""

    signalled: bool
    returncode: int
    stderr: str
    survivors: frozenset[int]


def session_processes(session: int) -> set[int]:
    """The living processes (zombies excluded) whose session id is `session` (Linux, /proc)."""
    return {pid for pid, fields in living_processes() if int(fields[3]) == session}


def start_bpe(args: Sequence[object], cwd: Path, stderr: object = subprocess.DEVNULL) -> "subprocess.Popen[bytes]":
    """`bpe ARGS` started in a session of its own (its workers share it), output discarded."""
    return subprocess.Popen(
        [str(BPE), *map(str, args)],
        cwd=cwd,
        env=bpe_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,  # type: ignore[arg-type]
        start_new_session=True,
    )


def run_and_kill(args: Sequence[object], cwd: Path, moment: float, signum: int, group: bool) -> Killed:
    """Run `bpe ARGS` in `cwd` and send `signum` at `moment` seconds to its main process, or to
    its whole process group with `group`; then wait for it, and up to 10 seconds for its session
    to empty. Survivors are killed (so no test leaves a process behind) and reported."""
    with tempfile.TemporaryFile() as errors:
        process = start_bpe(args, cwd, stderr=errors)
        signalled = False
        try:
            process.wait(timeout=moment)
        except subprocess.TimeoutExpired:
            signalled = True
            if group:
                os.killpg(process.pid, signum)
            else:
                process.send_signal(signum)
        try:
            returncode = process.wait(timeout=120)
        except subprocess.TimeoutExpired:  # a SIGTERM that did not end it: the test fails on it
            os.killpg(process.pid, signal.SIGKILL)
            returncode = process.wait()
            signalled = False
        deadline = time.monotonic() + 10
        while (survivors := session_processes(process.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in survivors:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        errors.seek(0)
        stderr = errors.read().decode("utf-8", errors="replace")
    return Killed(signalled, returncode, stderr, frozenset(survivors))


def timed_run(args: Sequence[object], cwd: Path) -> float:
    """Seconds one whole run of `bpe ARGS` takes, which must succeed."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as errors:
        process = start_bpe(args, cwd, stderr=errors)
        returncode = process.wait(timeout=600)
        errors.seek(0)
        assert returncode == 0, f"bpe {' '.join(map(str, args))}: exit {returncode}\n{errors.read().decode()}"
    return time.monotonic() - started


def contents(path: Path) -> dict[str, bytes] | bytes | None:
    """What an output holds: a file's bytes, a directory's files (relative name -> bytes), or None
    when it does not exist."""
    if path.is_dir():
        return {str(item.relative_to(path)): item.read_bytes() for item in sorted(path.rglob("*")) if item.is_file()}
    if path.is_file():
        return path.read_bytes()
    return None


def leftovers(directory: Path) -> list[str]:
    """The temporary files and directories an interrupted write may leave, anywhere under
    `directory` (relative names)."""
    return sorted(
        str(path.relative_to(directory)) for path in directory.rglob("*") if path.name.startswith(TEMPORARY_PREFIXES)
    )


def age(directory: Path, names: Sequence[str], seconds: float) -> None:
    """Set back the times of these leftovers (and what they hold) by `seconds`: as an old
    kill's would be."""
    then = time.time() - seconds
    for name in names:
        path = directory / name
        for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
            os.utime(item, (then, then), follow_symlinks=False)


def common_inputs(workdir: Path, text_part: int) -> list[str]:
    """What the kill and writer tests both read, made in `workdir`: three slices of `text_part`
    characters of the documentation (docs0-2.txt), a text tokenizer trained on the first
    (text.json), six POP909 songs (songs/), a MIDI tokenizer (midi.json) and the six songs' ids
    (six-songs.ids), whose lines it returns."""
    text = docs_text()
    for number in range(3):
        part = text[number * text_part : (number + 1) * text_part]
        (workdir / f"docs{number}.txt").write_text(part, encoding="utf-8", newline="")
    train_with_bpe(GPT2_CONFIG, ["docs0.txt"], Path("text.json"), {"trainer.vocab_size": 500}, workdir)
    songs = workdir / "songs"
    songs.mkdir()
    for path in pop909_paths()[:6]:
        (songs / path.name).write_bytes(path.read_bytes())
    train_with_bpe(REMI_BPE_CONFIG, ["songs"], Path("midi.json"), {"trainer.vocab_size": 600}, workdir)
    assert_ok(run_bpe("encode", "-t", "midi.json", "songs", "-o", "six-songs.ids", "-q", cwd=workdir))
    return (workdir / "six-songs.ids").read_text(encoding="ascii").splitlines(keepends=True)
