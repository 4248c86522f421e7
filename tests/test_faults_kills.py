"""Killed at any moment (issue 36, item 1): each `bpe` command that writes is killed, by SIGKILL or
SIGTERM, sent to its main process or to its whole process group (its worker processes too), at
moments spread over a whole run of it. Each time:

- the output is the previous one or the new one, whole: byte for byte one of a reference run's
  (a tokenizer file's training time aside), never a mix or a torn file;
- SIGTERM ends the run and leaves no temporary file; SIGKILL may leave `.tmp-*` files or
  directories beside the output, and nothing else;
- no process of the run is left behind (a worker whose parent was killed ends too);
- the next run succeeds and writes the new output whole, whatever the kill left;
- leftovers of killed runs are cleaned by a run that starts once they are a minute old.

`make faults` (BPE_CORE_FAULTS=full) tries every moment; `make test` a few of them per command.
"""

import json
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import faults
from helpers.cli_runner import train_with_bpe
from helpers.text import GPT2_CONFIG

# per command: this many moments for each signal and target (main process, process group)
MOMENTS = 6
SAMPLED = 3  # of the 4 * MOMENTS kill points, the ones `make test` tries
TEXT_PART = 120_000  # characters of each text input


@dataclass(frozen=True)
class Command:
    """A command that writes `output` (relative to the run's directory): `old` writes the output
    that is there before each kill, `new` is the command killed. `{data}` in an argument is the
    directory of the shared inputs."""

    old: tuple[str, ...]
    new: tuple[str, ...]
    output: str


TRAIN = ("train", str(GPT2_CONFIG), "{data}/docs0.txt", "{data}/docs1.txt", "-q", "-o", "tok.json")
ENCODE = ("encode", "-t", "{data}/text.json", "-q")
ALL_TEXT = ("{data}/docs0.txt", "{data}/docs1.txt", "{data}/docs2.txt")
COMMANDS = {
    "train": Command(
        (*TRAIN, "--set", "trainer.vocab_size=300"),
        (*TRAIN, "--set", "trainer.vocab_size=600", "--workers", "2"),
        "tok.json",
    ),
    "count": Command(
        ("count", str(GPT2_CONFIG), "{data}/docs2.txt", "-q", "-o", "text.counts"),
        ("count", str(GPT2_CONFIG), *ALL_TEXT, "-q", "-o", "text.counts", "--workers", "2"),
        "text.counts",
    ),
    "encode-ids": Command(
        (*ENCODE, "{data}/docs2.txt", "-o", "out.ids"), (*ENCODE, *ALL_TEXT, "-o", "out.ids"), "out.ids"
    ),
    "encode-ids-workers": Command(
        (*ENCODE, "{data}/docs2.txt", "-o", "out.ids"),
        (*ENCODE, *ALL_TEXT, "-o", "out.ids", "--workers", "2"),
        "out.ids",
    ),
    "encode-bin-file": Command(
        (*ENCODE, "{data}/docs2.txt", "-o", "out.bin"), (*ENCODE, *ALL_TEXT, "-o", "out.bin"), "out.bin"
    ),
    "encode-shards": Command(
        (*ENCODE, "{data}/docs2.txt", "--format", "bin", "-o", "shards/"),
        (*ENCODE, *ALL_TEXT, "--format", "bin", "-o", "shards/", "--workers", "2"),
        "shards",
    ),
    "encode-windows": Command(
        (*ENCODE, "{data}/docs2.txt", "-o", "windows/", "--max-length", "64"),
        (*ENCODE, *ALL_TEXT, "-o", "windows/", "--max-length", "64", "--eos", "<|endoftext|>"),
        "windows",
    ),
    "decode-midi-files": Command(
        ("decode", "-t", "{data}/midi.json", "{data}/two-songs.ids", "-o", "songs/"),
        ("decode", "-t", "{data}/midi.json", "{data}/six-songs.ids", "-o", "songs/"),
        "songs",
    ),
    "trim": Command(
        ("trim", "{data}/text.json", "--vocab-size", "300", "-q", "-o", "trimmed.json"),
        ("trim", "{data}/text.json", "--vocab-size", "450", "-q", "-o", "trimmed.json"),
        "trimmed.json",
    ),
    "export-hf-file": Command(
        ("export", "-t", "{data}/small.json", "--format", "hf", "-o", "hf.json"),
        ("export", "-t", "{data}/text.json", "--format", "hf", "-o", "hf.json"),
        "hf.json",
    ),
    "export-hf-folder": Command(
        ("export", "-t", "{data}/small.json", "--format", "hf", "-o", "hf/"),
        ("export", "-t", "{data}/text.json", "--format", "hf", "-o", "hf/"),
        "hf",
    ),
    "export-tiktoken": Command(
        ("export", "-t", "{data}/small.json", "--format", "tiktoken", "-o", "text.tiktoken"),
        ("export", "-t", "{data}/text.json", "--format", "tiktoken", "-o", "text.tiktoken"),
        "text.tiktoken",
    ),
}
KILL_POINTS = [
    (signum, group) for signum in (signal.SIGKILL, signal.SIGTERM) for group in (False, True)
]  # fmt: skip


@pytest.fixture(scope="module")
def data(workdir: Path) -> Path:
    """The inputs every command reads: three slices of the documentation, a text tokenizer (and
    a smaller one with other special tokens), a MIDI tokenizer and ids files of two and of six songs."""
    lines = faults.common_inputs(workdir, TEXT_PART)
    # other special tokens: an export of it writes other `transformers` files beside tokenizer.json
    small = {"trainer.vocab_size": 300, "special_tokens.tokens": '["<s>", "</s>", "<|endoftext|>"]'}
    train_with_bpe(GPT2_CONFIG, ["docs0.txt"], Path("small.json"), small, workdir)
    assert len(lines) == 6
    (workdir / "two-songs.ids").write_text("".join(lines[:2]), encoding="ascii")
    return workdir


def arguments(command: tuple[str, ...], data: Path) -> list[str]:
    return [argument.replace("{data}", str(data)) for argument in command]


def comparable(content: Any) -> Any:
    """An output's contents for comparing runs: a tokenizer file's training time left out (the
    only thing two runs of a command write differently)."""
    if isinstance(content, dict):
        return {name: comparable(value) for name, value in content.items()}
    if isinstance(content, bytes) and content.startswith(b"{"):
        try:
            document = json.loads(content)
        except ValueError:  # torn: compared as it is, and it equals neither reference
            return content
        if isinstance(document, dict) and isinstance(document.get("provenance"), dict):
            document["provenance"].pop("seconds", None)
        return document
    return content


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


@dataclass
class References:
    """A command's previous and new outputs as reference runs wrote them, and how long a whole run takes."""

    old_path: Path
    old: Any
    new: Any
    seconds: float


def references(name: str, data: Path, directory: Path) -> References:
    command = COMMANDS[name]
    old_run = directory / "old"
    new_run = directory / "new"
    old_run.mkdir()
    new_run.mkdir()
    faults.timed_run(arguments(command.old, data), old_run)
    seconds = faults.timed_run(arguments(command.new, data), new_run)
    old = faults.contents(old_run / command.output)
    new = faults.contents(new_run / command.output)
    assert old is not None and new is not None and comparable(old) != comparable(new)
    return References(old_run / command.output, comparable(old), comparable(new), seconds)


def kill_points(name: str, seconds: float) -> list[tuple[float, int, bool]]:
    """Every (moment, signal, group) the full loop tries for a command; the sample `make test` tries."""
    seed = sum(map(ord, name))
    points = [
        (moment, signum, group)
        for number, (signum, group) in enumerate(KILL_POINTS)
        for moment in faults.kill_moments(seconds, MOMENTS, seed + number)
    ]
    return faults.sampled(points, SAMPLED, seed)  # type: ignore[return-value]


def restore(source: Path, target: Path) -> None:
    remove(target)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy2(source, target)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_killed_command_leaves_the_old_output_or_the_new_one_whole_and_the_next_run_succeeds(
    name: str, data: Path, tmp_path: Path
) -> None:
    command = COMMANDS[name]
    expected = references(name, data, tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    output = run / command.output
    new_args = arguments(command.new, data)
    outcomes: list[str] = []
    for moment, signum, group in kill_points(name, expected.seconds):
        where = f"{signal.Signals(signum).name} to the {'process group' if group else 'main process'} at {moment:.2f} s"
        restore(expected.old_path, output)
        before = set(faults.leftovers(run))
        killed = faults.run_and_kill(new_args, run, moment, signum, group)
        assert not killed.survivors, f"{where}: processes {sorted(killed.survivors)} outlived the run"
        assert "Traceback" not in killed.stderr, f"{where}:\n{killed.stderr}"
        if killed.signalled and signum == signal.SIGTERM:
            assert killed.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM), f"{where}:\n{killed.stderr}"
        elif not killed.signalled:
            assert killed.returncode == 0, f"{where}: exit {killed.returncode}\n{killed.stderr}"
        found = comparable(faults.contents(output))
        assert found in (expected.old, expected.new), f"{where}: the output is neither the old one nor the new one"
        outcomes.append("new" if found == expected.new else "old")
        left = set(faults.leftovers(run)) - before
        if signum == signal.SIGTERM or not killed.signalled:
            assert not left, f"{where}: temporary files left: {sorted(left)}"
        strangers = {path.name for path in run.iterdir()} - {command.output} - set(faults.leftovers(run))
        assert not strangers, f"{where}: unexpected files {sorted(strangers)}"
        assert faults.timed_run(new_args, run) >= 0  # the next run succeeds...
        assert comparable(faults.contents(output)) == expected.new, f"after {where}: the next run's output differs"
    # ...and leftovers of killed runs are ignored until they are old enough, then cleaned
    left = faults.leftovers(run)
    faults.age(run, [name for name in left if "/" not in name], 120)
    faults.timed_run(new_args, run)
    assert faults.leftovers(run) == [], f"leftovers not cleaned by a later run: {faults.leftovers(run)} ({outcomes})"
    assert comparable(faults.contents(output)) == expected.new


SIGNAL_IN_FORK_HOOK = """
import os, signal, sys
from bpe_core.files import unwind_on_termination

def busy():  # a signal sent from a fork hook is handled inside it, at the next bytecode
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(1000):
        pass

os.register_at_fork(after_in_parent=busy)
with unwind_on_termination():
    try:
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        for _ in range(10**7):
            pass
    finally:
        print("cleaned up", file=sys.stderr)
print("not ended", file=sys.stderr)
"""


def test_a_sigterm_handled_while_a_worker_is_forked_still_ends_the_run_cleaning_up(tmp_path: Path) -> None:
    # an exception raised in a fork hook is printed and dropped: the signal must not be lost
    ended = subprocess.run(
        [sys.executable, "-c", SIGNAL_IN_FORK_HOOK], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ended.returncode == 128 + signal.SIGTERM, ended.stderr
    assert ended.stderr == "cleaned up\n"
