"""Faults, issue 36 item 3: the real `bpe` command with its standard streams closed or failing, and
interrupted with Ctrl-C.

The promises of docs/cli.md: a command that needs a closed stream (standard output for ids,
standard input for `-`) exits 2 with one `error:` line saying so; one that does not need it does
its whole job, and nothing meant for the stream ends up in an output file. A reader that leaves
the pipe ends the command quietly, as Unix tools end (status 141, as a shell shows SIGPIPE), with
nothing on stderr: no traceback, no "Exception ignored". With standard error closed the exit status
still tells, and nothing meant for it goes to standard output. Ctrl-C (SIGINT to the process group,
as a terminal sends it) gives one line, exit 130, and leaves the previous output as it was.
"""

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.cli_runner import BPE, assert_clean_error, assert_ok, bpe_env, run_bpe, run_bpe_prepared
from helpers.outputs import snapshot, stray_temporary_files
from helpers.paths import DOCS_PATH
from helpers.text import GPT2_CONFIG, docs_text, training_text

PREVIOUS = b"the previous output, which an interrupted run must leave as it was\n"


@pytest.fixture(scope="module")
def inputs(workdir: Path) -> Path:
    """Training text, a corpus, a small text tokenizer, the corpus's ids and decoded text."""
    (workdir / "docs.txt").write_text(training_text(), encoding="utf-8", newline="")
    (workdir / "corpus.txt").write_text(docs_text()[200_000:1_200_000], encoding="utf-8", newline="")
    assert_ok(
        run_bpe(
            "train", GPT2_CONFIG, "docs.txt", "-o", "tok.json", "--set", "trainer.vocab_size=400", "-q", cwd=workdir
        )
    )
    assert_ok(run_bpe("encode", "-t", "tok.json", "corpus.txt", "-o", "corpus.ids", "-q", cwd=workdir))
    return workdir


def closing(*descriptors: int) -> Callable[[], None]:
    """In the child before it starts: close these of its standard streams."""

    def close() -> None:
        for descriptor in descriptors:
            os.close(descriptor)

    return close


# ---------------------------------------------------------------------------------------------
# standard output closed, or its reader gone


@pytest.mark.parametrize(
    "arguments",
    [
        ("encode", "-t", "tok.json", "corpus.txt"),
        ("encode", "-t", "tok.json", "corpus.txt", "--format", "bin", "-o", "-"),
        ("decode", "-t", "tok.json", "corpus.ids"),
        ("inspect", "tok.json"),
        ("--version",),
    ],
    ids=["encode", "encode bin", "decode", "inspect", "version"],
)
def test_closed_standard_output_is_one_error_when_the_command_writes_there(
    inputs: Path, arguments: tuple[str, ...]
) -> None:
    before = snapshot(inputs)
    result = run_bpe_prepared(*arguments, cwd=inputs, prepare=closing(1))
    assert_clean_error(result, "cannot write standard output", "closed")
    assert snapshot(inputs) == before


def test_closed_standard_output_does_not_matter_to_a_command_writing_a_file(inputs: Path, tmp_path: Path) -> None:
    """The output file opened first would get descriptor 1 if nothing held it: the report line
    (without -q) must not end up in it."""
    result = run_bpe_prepared(
        "encode", "-t", inputs / "tok.json", inputs / "corpus.txt", "-o", "out.ids", cwd=tmp_path, prepare=closing(1)
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "out.ids").read_bytes() == (inputs / "corpus.ids").read_bytes()


@pytest.mark.parametrize(
    "arguments",
    [("encode", "-t", "tok.json", "corpus.txt"), ("decode", "-t", "tok.json", "corpus.ids")],
    ids=["encode", "decode"],
)
def test_a_reader_that_leaves_the_pipe_ends_the_command_quietly(inputs: Path, arguments: tuple[str, ...]) -> None:
    """`bpe encode ... | head -c 10`: the reader takes a few bytes and leaves long before the
    output (megabytes, far more than a pipe holds) is written."""
    process = subprocess.Popen(
        [str(BPE), *arguments], cwd=inputs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=bpe_env()
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10)
    process.stdout.close()
    stderr = process.stderr.read().decode("utf-8")
    assert process.wait(timeout=60) == 141, stderr
    assert stderr == ""


# ---------------------------------------------------------------------------------------------
# standard input closed


@pytest.mark.parametrize(
    "arguments",
    [("encode", "-t", "tok.json", "-"), ("encode", "-t", "tok.json"), ("decode", "-t", "tok.json", "-")],
    ids=["encode -", "encode", "decode -"],
)
def test_closed_standard_input_is_one_error_saying_so(inputs: Path, arguments: tuple[str, ...]) -> None:
    before = snapshot(inputs)
    result = run_bpe_prepared(*arguments, "-o", "out.txt", cwd=inputs, prepare=closing(0))
    assert_clean_error(result, "cannot read standard input", "closed")
    assert snapshot(inputs) == before


# ---------------------------------------------------------------------------------------------
# standard error closed


def test_closed_standard_error_keeps_the_exit_status_and_standard_output_clean(inputs: Path) -> None:
    failed = run_bpe_prepared("encode", "-t", "tok.json", "missing.txt", cwd=inputs, prepare=closing(2))
    assert failed.returncode == 2
    assert failed.output == b"", "the error line went to standard output"
    encoded = run_bpe_prepared("encode", "-t", "tok.json", "corpus.txt", cwd=inputs, prepare=closing(2))
    assert encoded.returncode == 0
    assert encoded.output == (inputs / "corpus.ids").read_bytes()


def test_a_reader_of_standard_error_that_left_does_not_change_the_exit_status(inputs: Path) -> None:
    """`bpe ... 2>&1 | head -c 0`: the error line cannot be written (EPIPE) and is dropped."""
    process = subprocess.Popen(
        [str(BPE), "encode", "-t", "tok.json", "missing.txt"], cwd=inputs, stderr=subprocess.PIPE, env=bpe_env()
    )
    assert process.stderr is not None
    process.stderr.close()  # before the command starts to write
    assert process.wait(timeout=60) == 2


def test_closed_standard_output_and_error_still_write_the_output_file_whole(inputs: Path, tmp_path: Path) -> None:
    result = run_bpe_prepared(
        "encode", "-t", inputs / "tok.json", inputs / "corpus.txt", "-o", "out.ids", cwd=tmp_path, prepare=closing(1, 2)
    )
    assert result.returncode == 0
    assert (tmp_path / "out.ids").read_bytes() == (inputs / "corpus.ids").read_bytes()
    assert stray_temporary_files(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# Ctrl-C

INTERRUPTED = [
    ("encode ids", ("encode", "-t", "tok.json", DOCS_PATH, "-o", "out/docs.ids", "-q", "--workers", "2"), "docs.ids"),
    (
        "encode shards",
        ("encode", "-t", "tok.json", DOCS_PATH, "corpus.txt", "--format", "bin", "-o", "out/shards/", "-q"),
        "shards",
    ),
    (
        "train",
        (
            "train",
            GPT2_CONFIG,
            DOCS_PATH,
            "-o",
            "out/tok.json",
            "--set",
            "trainer.vocab_size=30000",
            "-q",
            "--workers",
            "2",
        ),
        "tok.json",
    ),
    ("count", ("count", GPT2_CONFIG, DOCS_PATH, "-o", "out/docs.counts", "-q", "--workers", "2"), "docs.counts"),
]


def under_way(process: "subprocess.Popen[bytes]", directory: Path) -> bool:
    """Whether a run is surely at work: writing (a temporary file or staging directory is there)
    or reading its input (train and count write only at the end)."""
    if stray_temporary_files(directory):
        return True
    try:
        descriptors = os.listdir(f"/proc/{process.pid}/fd")
    except OSError:  # it ended
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{process.pid}/fd/{descriptor}") == str(DOCS_PATH):
                return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize(("name", "arguments", "output"), INTERRUPTED, ids=[name for name, _, _ in INTERRUPTED])
def test_ctrl_c_is_one_line_exit_130_and_the_previous_output_stays(
    inputs: Path, tmp_path: Path, name: str, arguments: tuple[object, ...], output: str
) -> None:
    for path in ("tok.json", "corpus.txt"):
        (tmp_path / path).write_bytes((inputs / path).read_bytes())

    def previous_output() -> dict[str, bytes]:
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        (tmp_path / "out").mkdir()
        if output == "shards":
            shards = ("encode", "-t", "tok.json", "corpus.txt", "--format", "bin", "-o", "out/shards/", "-q")
            assert_ok(run_bpe(*shards, cwd=tmp_path))
        else:
            (tmp_path / "out" / output).write_bytes(PREVIOUS)
        return snapshot(tmp_path / "out")

    for _ in range(3):  # a busy machine may let the run end between the check and the signal: again
        before = previous_output()
        process = subprocess.Popen(
            [str(BPE), *map(str, arguments)],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=bpe_env(),
            start_new_session=True,  # a process group of its own, which Ctrl-C reaches whole
        )
        while process.poll() is None and not under_way(process, tmp_path / "out"):
            time.sleep(0.002)
        assert process.poll() is None, f"the run ended before it could be interrupted: {process.communicate()[1]!r}"
        try:
            os.killpg(process.pid, signal.SIGINT)
            break
        except ProcessLookupError:  # it ended meanwhile (whole): interrupt another run
            process.communicate(timeout=60)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, f"the run was not interrupted (exit {process.returncode}): {stderr.decode()}"
    assert stderr.decode("utf-8") == "error: interrupted\n"
    assert snapshot(tmp_path / "out") == before
    assert stray_temporary_files(tmp_path / "out") == []
