"""Faults, issue 36 item 2: resources that run out while the real `bpe` command runs.

The promise of docs/cli.md: each command does its whole job, or exits 2 with one `error:` line
that says what ran out and where (the file being written), never a traceback; the previous
output stays as it was, and no temporary file is left. Each fault is made for the command's
process alone, before it starts: the file size limit (RLIMIT_FSIZE, as `ulimit -f`), a full
filesystem (a small tmpfs mounted for the test, and /dev/full), few file descriptors
(RLIMIT_NOFILE), little memory (RLIMIT_AS) and a cache folder that cannot be written.
"""

import errno
import resource
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.cli_runner import BPE, BpeRun, assert_clean_error, assert_ok, bpe_env, run_bpe, run_bpe_prepared
from helpers.outputs import snapshot, stray_temporary_files
from helpers.text import GPT2_CONFIG, docs_text, training_text

import bpe_core

PREVIOUS = b"the previous output, which a failed run must leave as it was\n"

# Each writing command, as (name, arguments, output): OUT/ stands for the directory written into.
COMMANDS = [
    (
        "train",
        ("train", GPT2_CONFIG, "docs.txt", "-o", "OUT/tok.json", "--set", "trainer.vocab_size=400", "-q"),
        "tok.json",
    ),
    ("count", ("count", GPT2_CONFIG, "docs.txt", "-o", "OUT/docs.counts", "-q"), "docs.counts"),
    ("encode ids", ("encode", "-t", "tok.json", "corpus.txt", "-o", "OUT/corpus.ids", "-q"), "corpus.ids"),
    (
        "encode bin",
        ("encode", "-t", "tok.json", "corpus.txt", "--format", "bin", "-o", "OUT/corpus.bin", "-q"),
        "corpus.bin",
    ),
    (
        "encode shards",
        ("encode", "-t", "tok.json", "corpus.txt", "docs.txt", "--format", "bin", "-o", "OUT/shards/", "-q"),
        "shards",
    ),
    ("decode", ("decode", "-t", "tok.json", "corpus.ids", "-o", "OUT/decoded.txt"), "decoded.txt"),
    ("trim", ("trim", "tok.json", "--vocab-size", "350", "-o", "OUT/trimmed.json"), "trimmed.json"),
    ("export hf", ("export", "-t", "tok.json", "--format", "hf", "-o", "OUT/hf/"), "hf"),
    ("export tiktoken", ("export", "-t", "tok.json", "--format", "tiktoken", "-o", "OUT/tok.tiktoken"), "tok.tiktoken"),
]
COMMAND_NAMES = [name for name, _, _ in COMMANDS]


def into(arguments: tuple[object, ...], directory: str) -> list[object]:
    """The command's arguments with its output in `directory`."""
    return [
        str(argument).replace("OUT/", f"{directory}/") if isinstance(argument, str) else argument
        for argument in arguments
    ]


@pytest.fixture(scope="module")
def inputs(workdir: Path) -> Path:
    """Training text, a corpus to encode, a tiny and a large text, a small text tokenizer and the
    corpus's ids."""
    (workdir / "docs.txt").write_text(training_text(), encoding="utf-8", newline="")
    (workdir / "corpus.txt").write_text(docs_text()[200_000:600_000], encoding="utf-8", newline="")
    (workdir / "tiny.txt").write_text(docs_text()[:2_000], encoding="utf-8", newline="")
    (workdir / "large.txt").write_text(docs_text()[:3_000_000], encoding="utf-8", newline="")
    assert_ok(
        run_bpe(
            "train", GPT2_CONFIG, "docs.txt", "-o", "tok.json", "--set", "trainer.vocab_size=400", "-q", cwd=workdir
        )
    )
    assert_ok(run_bpe("encode", "-t", "tok.json", "corpus.txt", "-o", "corpus.ids", "-q", cwd=workdir))
    return workdir


def copy_inputs(inputs: Path, destination: Path) -> None:
    for path in inputs.iterdir():
        if path.is_file():
            shutil.copy(path, destination / path.name)


def put_previous_output(directory: Path, output: str, inputs: Path) -> None:
    """What a run writing `output` into `directory` must leave as it was if it fails: a file of
    its own (never read by the command), or, for a shard directory, a whole shard set."""
    if output == "shards":
        assert_ok(
            run_bpe(
                "encode",
                "-t",
                "tok.json",
                "tiny.txt",
                "--format",
                "bin",
                "-o",
                f"{directory / 'shards'}/",
                "-q",
                cwd=inputs,
            )
        )
    elif output == "hf":
        (directory / "hf").mkdir()
        (directory / "hf" / "tokenizer.json").write_bytes(PREVIOUS)
    else:
        (directory / output).write_bytes(PREVIOUS)


def assert_failed_leaving_all_as_it_was(
    result: BpeRun, directory: Path, before: dict[str, bytes], *fragments: str
) -> None:
    assert_clean_error(result, *fragments)
    assert snapshot(directory) == before, "a failed run changed the previous output or left a file"
    assert not stray_temporary_files(directory)


def limit(kind: int, value: int) -> Callable[[], None]:
    """In the child before it starts: set the resource limit `kind` to `value`."""

    def set_limit() -> None:
        resource.setrlimit(kind, (value, value))

    return set_limit


# ---------------------------------------------------------------------------------------------
# a full disk: the file size limit, a full filesystem


@pytest.mark.parametrize(("name", "arguments", "output"), COMMANDS, ids=COMMAND_NAMES)
def test_the_file_size_limit_is_one_error_naming_the_output_and_the_previous_output_stays(
    inputs: Path, tmp_path: Path, name: str, arguments: tuple[object, ...], output: str
) -> None:
    copy_inputs(inputs, tmp_path)
    (tmp_path / "out").mkdir()
    put_previous_output(tmp_path / "out", output, inputs)
    before = snapshot(tmp_path)
    result = run_bpe_prepared(*into(arguments, "out"), cwd=tmp_path, prepare=limit(resource.RLIMIT_FSIZE, 2048))
    assert_failed_leaving_all_as_it_was(
        result, tmp_path, before, "cannot write out/", output, "file size limit reached"
    )


@pytest.fixture()
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted at tmp_path/full for this test (skipped where mounting is not permitted)."""
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(
            "mounting a tmpfs needs root (CAP_SYS_ADMIN), which this run lacks; the file size limit and "
            "/dev/full tests reach the same error path "
            f"({mounted.stderr.decode(errors='replace').strip()})"
        )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory: Path) -> None:
    """Fill the filesystem of `directory` to its last byte."""
    with open(directory / "filler", "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC


@pytest.mark.parametrize(("name", "arguments", "output"), COMMANDS, ids=COMMAND_NAMES)
def test_a_full_filesystem_is_one_error_saying_disk_full_and_the_previous_output_stays(
    inputs: Path, tmp_path: Path, small_filesystem: Path, name: str, arguments: tuple[object, ...], output: str
) -> None:
    copy_inputs(inputs, tmp_path)
    put_previous_output(small_filesystem, output, inputs)
    fill(small_filesystem)
    before = snapshot(tmp_path)
    result = run_bpe_prepared(*into(arguments, "full"), cwd=tmp_path, prepare=lambda: None)
    assert_failed_leaving_all_as_it_was(result, tmp_path, before, "cannot write full/", output, "disk full")


def test_writing_to_dev_full_says_disk_full_for_a_file_and_for_standard_output(inputs: Path, tmp_path: Path) -> None:
    copy_inputs(inputs, tmp_path)
    to_file = run_bpe("encode", "-t", "tok.json", "corpus.txt", "-o", "/dev/full", "-q", cwd=tmp_path)
    assert_clean_error(to_file, "cannot write /dev/full", "disk full")
    for arguments in (
        ("encode", "-t", "tok.json", "corpus.txt"),
        ("decode", "-t", "tok.json", "corpus.ids"),
        ("inspect", "tok.json"),
    ):
        with open("/dev/full", "wb") as full:
            completed = subprocess.run(
                [str(BPE), *arguments],
                cwd=tmp_path,
                stdout=full,
                stderr=subprocess.PIPE,
                env=bpe_env(),
                timeout=60,
                check=False,
            )
        assert_clean_error(BpeRun(completed.returncode, b"", completed.stderr.decode()), "disk full")
    assert not stray_temporary_files(tmp_path)


# ---------------------------------------------------------------------------------------------
# few file descriptors, little memory: a success with the right output, or one error line


def sweep(
    inputs: Path, tmp_path: Path, arguments: tuple[object, ...], output: str, kind: int, values: list[int], said: str
) -> list[int]:
    """Run the command under each limit in `values`: each run succeeds with the output an
    unlimited run gives, or fails with one error line holding `said` and leaves no file. Returns
    the limits it failed under."""
    copy_inputs(inputs, tmp_path)
    (tmp_path / "free").mkdir()
    assert_ok(run_bpe(*into(arguments, "free"), cwd=tmp_path))
    expected = (tmp_path / "free" / output).read_bytes()
    failed = []
    for value in values:
        (tmp_path / "out").mkdir()
        result = run_bpe_prepared(*into(arguments, "out"), cwd=tmp_path, prepare=limit(kind, value))
        if result.returncode == 0:
            assert "Traceback" not in result.stderr
            assert (tmp_path / "out" / output).read_bytes() == expected, f"a different output under the limit {value}"
        else:
            assert_clean_error(result, said)
            assert not list((tmp_path / "out").iterdir()), f"a failed run under the limit {value} left files"
            failed.append(value)
        shutil.rmtree(tmp_path / "out")
    return failed


ENCODE_IN_WORKERS = ("encode", "-t", "tok.json", "corpus.txt", "-o", "OUT/corpus.ids", "-q", "--workers", "2")
COUNT_IN_WORKERS = ("count", GPT2_CONFIG, "large.txt", "-o", "OUT/large.counts", "-q", "--workers", "3")


@pytest.mark.parametrize(
    ("arguments", "output"),
    [(ENCODE_IN_WORKERS, "corpus.ids"), (COUNT_IN_WORKERS, "large.counts")],
    ids=["encode", "count"],
)
def test_few_file_descriptors_give_the_output_or_one_error_saying_too_many_open_files(
    inputs: Path, tmp_path: Path, arguments: tuple[object, ...], output: str
) -> None:
    """Around the number the worker processes' pipes need: some runs start fewer workers than
    asked before the limit, which once left the started ones waiting forever (a hang)."""
    failed = sweep(
        inputs,
        tmp_path,
        arguments,
        output,
        resource.RLIMIT_NOFILE,
        [8, 12, 16, 17, 18, 20, 64],
        "too many open files",
    )
    assert failed, "no limit was low enough to fail: the error path is not tested"
    assert 64 not in failed


@pytest.mark.parametrize(
    ("arguments", "output"),
    [(ENCODE_IN_WORKERS, "corpus.ids"), (COUNT_IN_WORKERS, "large.counts")],
    ids=["encode", "count"],
)
def test_little_memory_gives_the_output_or_one_error_saying_memory_ran_out(
    inputs: Path, tmp_path: Path, arguments: tuple[object, ...], output: str
) -> None:
    """From too little to start the workers' threads, through too little to read the tokenizer,
    to enough."""
    megabytes = [20, 35, 40, 45, 50, 60, 1024]
    failed = sweep(
        inputs, tmp_path, arguments, output, resource.RLIMIT_AS, [size << 20 for size in megabytes], "memory"
    )
    assert 20 << 20 in failed
    assert 1024 << 20 not in failed


# ---------------------------------------------------------------------------------------------
# a cache folder that cannot be written: the same results, only slower


@pytest.fixture(scope="module")
def kept_tokenizer(inputs: Path) -> Path:
    """A tokenizer file large enough for its spec to be kept in the cache folder: a Hugging Face
    export (our own file is read every time, never kept)."""
    trained = inputs / "large" / "trained.json"
    path = inputs / "large" / "tokenizer.json"
    trained.parent.mkdir()
    assert_ok(
        run_bpe("train", GPT2_CONFIG, "large.txt", "-o", trained, "--set", "trainer.vocab_size=20000", "-q", cwd=inputs)
    )
    assert_ok(run_bpe("export", "-t", trained, "--format", "hf", "-o", path, cwd=inputs))
    assert path.stat().st_size > 1 << 18
    return path


@pytest.mark.parametrize("cache", ["a file", "a folder under a file", "a read-only filesystem"])
def test_an_unwritable_cache_folder_changes_nothing_but_the_time(
    inputs: Path, kept_tokenizer: Path, tmp_path: Path, cache: str
) -> None:
    copy_inputs(inputs, tmp_path)
    writable = tmp_path / "writable-cache"
    writable.mkdir()
    expected = assert_ok(
        run_bpe("encode", "-t", kept_tokenizer, "corpus.txt", cwd=tmp_path, BPE_CORE_CACHE=str(writable))
    )
    assert list(writable.iterdir()), "the cache folder is not used: this test tests nothing"
    if cache == "a read-only filesystem":
        folder = tmp_path / "read-only"
        folder.mkdir()
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True, check=False
        )
        if mounted.returncode != 0:
            pytest.skip(
                "mounting a read-only tmpfs needs root (CAP_SYS_ADMIN), which this run lacks; "
                "a file as the cache folder reaches the same unwritable-cache path"
            )
    else:
        (tmp_path / "cache-file").write_bytes(b"not a folder\n")
        folder = tmp_path / "cache-file" if cache == "a file" else tmp_path / "cache-file" / "bpe-core"
    try:
        for _ in range(2):  # the second run would read what the first kept
            assert (
                assert_ok(
                    run_bpe("encode", "-t", kept_tokenizer, "corpus.txt", cwd=tmp_path, BPE_CORE_CACHE=str(folder))
                )
                == expected
            )
        trained = tmp_path / "trained.json"
        assert_ok(
            run_bpe(
                "train",
                GPT2_CONFIG,
                "docs.txt",
                "-o",
                trained,
                "--set",
                "trainer.vocab_size=400",
                "-q",
                cwd=tmp_path,
                BPE_CORE_CACHE=str(folder),
            )
        )
        assert bpe_core.load(str(trained)).merges == bpe_core.load(str(inputs / "tok.json")).merges
    finally:
        if cache == "a read-only filesystem":
            subprocess.run(["umount", "-l", str(folder)], check=False)
