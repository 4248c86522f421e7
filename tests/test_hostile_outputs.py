"""Hostile input, issue 12 classes 9 (decode), 10 (outputs) and 15 (small ones).

Each case runs the installed `bpe` with its time and memory bounded and asserts the promise of
docs/cli.md: exit status 2, one `error: ...` line naming the file or key, no traceback, and no
output created or changed (a snapshot of the working directory before and after). Where the right
outcome is a result, not an error (ids that make invalid UTF-8 decode with U+FFFD, as tiktoken's
`errors="replace"`), the result is checked against an independent computation of it.
"""

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import tiktoken
from helpers.cli_runner import BPE, BpeRun, assert_fails_cleanly, assert_ok, bpe_env, run_bpe_bounded, train_with_bpe
from helpers.dna import DNABERT2_CONFIG
from helpers.midi import REMI_BPE_CONFIG, pop909_paths
from helpers.outputs import snapshot
from helpers.paths import CONFIGS_DIR, DOCS_PATH, LAMBDA_PATH
from helpers.text import training_text
from hypothesis import given
from hypothesis import strategies as st

import bpe_core
from bpe_core.errors import BpeError

MEMORY_MB = 1024
SURROGATE_IDS = [72, 237, 160, 128]  # "H", then ED A0 80: the UTF-8 form of the lone surrogate U+D800


@pytest.fixture(scope="module")
def tokenizers_and_ids(workdir: Path) -> Path:
    """The module's workdir holding a small text tokenizer, DNA and MIDI tokenizers, and their ids files."""
    (workdir / "docs.txt").write_text(training_text(), encoding="utf-8", newline="")
    train_with_bpe(
        CONFIGS_DIR / "gpt2-style.yaml", ["docs.txt"], Path("text.json"), {"trainer.vocab_size": 400}, workdir
    )
    dna_settings = {"trainer.vocab_size": 300, "pretokenizer.iupac": "error"}
    train_with_bpe(DNABERT2_CONFIG, [LAMBDA_PATH], Path("dna.json"), dna_settings, workdir)
    songs = workdir / "songs"
    songs.mkdir()
    for path in pop909_paths()[:3]:
        shutil.copy(path, songs / path.name)
    train_with_bpe(REMI_BPE_CONFIG, ["songs"], Path("midi.json"), {"trainer.vocab_size": 500}, workdir)
    assert_ok(
        run_bpe_bounded(
            "encode", "-t", "midi.json", songs / pop909_paths()[0].name, "-o", "song.ids", "-q", cwd=workdir
        )
    )
    assert_ok(run_bpe_bounded("export", "-t", "text.json", "--format", "hf", "-o", "tokenizer.json", cwd=workdir))
    (workdir / "surrogate.ids").write_text(" ".join(map(str, SURROGATE_IDS)) + "\n", encoding="ascii")
    (workdir / "hello.ids").write_text("72 101 108 108 111\n", encoding="ascii")
    return workdir


@pytest.fixture()
def scratch(tokenizers_and_ids: Path, tmp_path: Path) -> Path:
    """A fresh directory holding copies of the module's tokenizers and ids files."""
    for path in tokenizers_and_ids.iterdir():
        if path.is_file():
            shutil.copy(path, tmp_path / path.name)
    return tmp_path


@pytest.fixture(scope="module")
def text_tokenizer(tokenizers_and_ids: Path) -> bpe_core.Tokenizer:
    return bpe_core.load(str(tokenizers_and_ids / "text.json"))


def failed_without_changes(scratch: Path, *args: object, fragments: tuple[str, ...], timeout: float = 60) -> str:
    """Run `bpe` on a hostile input: a clean error holding the fragments, and no file changed."""
    return assert_fails_cleanly(*args, cwd=scratch, fragments=fragments, timeout=timeout, memory_mb=MEMORY_MB)


# ---------------------------------------------------------------------------------------------
# class 9: decode


@pytest.mark.both_modes
def test_decode_of_a_lone_surrogate_gives_replacement_characters_on_standard_output(scratch: Path) -> None:
    result = run_bpe_bounded("decode", "-t", "text.json", "surrogate.ids", cwd=scratch, memory_mb=MEMORY_MB)
    assert assert_ok(result) == bytes(SURROGATE_IDS).decode("utf-8", "replace")


@pytest.mark.both_modes
def test_decode_of_a_lone_surrogate_to_a_file_writes_replacement_characters(scratch: Path) -> None:
    assert_ok(
        run_bpe_bounded("decode", "-t", "text.json", "surrogate.ids", "-o", "out.txt", cwd=scratch, memory_mb=MEMORY_MB)
    )
    assert (scratch / "out.txt").read_bytes() == bytes(SURROGATE_IDS).decode("utf-8", "replace").encode("utf-8")


@pytest.mark.both_modes
def test_decode_errors_strict_refuses_ids_that_are_not_utf8_naming_the_line_and_byte(scratch: Path) -> None:
    (scratch / "two.ids").write_text("72 105\n72 237 160 128\n", encoding="ascii")
    failed_without_changes(
        scratch, "decode", "-t", "text.json", "two.ids", "--errors", "strict", "-o", "out.txt",
        fragments=("two.ids, line 2", "not make valid UTF-8", "byte 1", "id 237"),
    )  # fmt: skip


@pytest.mark.both_modes
def test_python_decode_keeps_lone_surrogates_by_default_and_replaces_or_refuses_them_on_request(
    text_tokenizer: bpe_core.Tokenizer,
) -> None:
    text = "a\ud800b"
    data = text.encode("utf-8", "surrogatepass")  # ids a model may emit: encode itself repairs the str
    ids = text_tokenizer.encode_bytes(data)
    assert text_tokenizer.decode(ids) == text
    assert text_tokenizer.decode(ids, errors="replace") == data.decode("utf-8", "replace")
    assert text_tokenizer.decode(ids, errors="ignore") == "ab"
    with pytest.raises(BpeError, match="not make valid UTF-8"):
        text_tokenizer.decode(ids, errors="strict")
    with pytest.raises(BpeError, match="roundtrip, replace, strict, ignore"):
        text_tokenizer.decode(ids, errors="surrogateescape")


@pytest.fixture(scope="module")
def tiktoken_peer(text_tokenizer: bpe_core.Tokenizer) -> tiktoken.Encoding:
    """tiktoken holding the same token bytes and special tokens under the same ids."""
    special = set(text_tokenizer.special_ids.values())
    return tiktoken.Encoding(
        "peer",
        pat_str=r"\S+|\s+",
        mergeable_ranks={
            text_tokenizer.token_bytes(token): token
            for token in range(text_tokenizer.vocab_size)
            if token not in special
        },
        special_tokens=dict(text_tokenizer.special_ids),
    )


@pytest.mark.both_modes
@given(ids=st.lists(st.integers(0, 399), max_size=40))
def test_any_ids_decode_with_replace_exactly_as_tiktoken_does(
    text_tokenizer: bpe_core.Tokenizer, tiktoken_peer: tiktoken.Encoding, ids: list[int]
) -> None:
    """Random model output: the same text as tiktoken's decode(errors="replace") over the same
    token bytes, and text that always encodes to UTF-8."""
    decoded = text_tokenizer.decode(ids, errors="replace")
    assert decoded == tiktoken_peer.decode(ids, errors="replace")
    decoded.encode("utf-8")  # no lone surrogate left


IDS_FILES: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "decode-ids-not-utf8": (b"72 \xff\xfe 101\n", ("bad.ids, line 1", "not UTF-8")),
    "decode-ids-utf16": ("72 101\n".encode("utf-16"), ("bad.ids, line 1", "not UTF-8")),
    "decode-ids-arabic-indic-digits": ("72 \u0661\u0660\u0661\n".encode(), ("bad.ids, line 1", "ASCII digits")),
    "decode-ids-underscore": (b"72\n1_0\n", ("bad.ids, line 2", "'1_0'", "ASCII digits")),
    "decode-ids-plus-sign": (b"+20\n", ("bad.ids, line 1", "'+20'", "ASCII digits")),
    "decode-ids-minus-sign": (b"72 -1\n", ("bad.ids, line 1", "'-1'", "ASCII digits")),
    "decode-ids-fullwidth-digits": ("\uff17\uff12\n".encode(), ("bad.ids, line 1", "ASCII digits")),
    "decode-ids-5000-digits": (b"1" * 5000 + b"\n", ("bad.ids, line 1", "5000 digits", "too large")),
    "decode-ids-5000-letters": (b"x" * 5000 + b"\n", ("bad.ids, line 1", "not a token id")),
}


@pytest.mark.parametrize("content, fragments", list(IDS_FILES.values()), ids=list(IDS_FILES))
def test_decode_refuses_an_ids_file_that_holds_anything_but_ascii_digit_ids(
    scratch: Path, content: bytes, fragments: tuple[str, ...]
) -> None:
    (scratch / "bad.ids").write_bytes(content)
    line = failed_without_changes(scratch, "decode", "-t", "text.json", "bad.ids", "-o", "out.txt", fragments=fragments)
    assert len(line) < 200, f"the message echoes the whole input: {len(line)} characters"


# ---------------------------------------------------------------------------------------------
# class 10: outputs

OUTPUT_COMMANDS: dict[str, tuple[str, ...]] = {
    "train": ("train", str(CONFIGS_DIR / "gpt2-style.yaml"), "docs.txt", "-q", "--set", "trainer.vocab_size=260"),
    "count": ("count", str(CONFIGS_DIR / "gpt2-style.yaml"), "docs.txt", "-q"),
    "encode": ("encode", "-t", "text.json", "docs.txt", "-q", "--format", "ids"),  # -o DIR/ alone means shards
    "decode": ("decode", "-t", "text.json", "hello.ids"),
    "decode-midi": ("decode", "-t", "midi.json", "song.ids"),
    "export-tiktoken": ("export", "-t", "text.json", "--format", "tiktoken"),
    "import": ("import", "--format", "hf", "tokenizer.json"),
}


@pytest.mark.parametrize(
    "command", list(OUTPUT_COMMANDS.values()), ids=[f"output-directory-{name}" for name in OUTPUT_COMMANDS]
)
def test_an_existing_directory_as_output_is_a_clean_error_naming_it(scratch: Path, command: tuple[str, ...]) -> None:
    (scratch / "target").mkdir()
    (scratch / "target" / "keep.txt").write_text("kept\n")
    failed_without_changes(scratch, *command, "-o", "target", fragments=("target", "is a directory"))


@pytest.mark.parametrize(
    "command", [OUTPUT_COMMANDS["train"], OUTPUT_COMMANDS["encode"], OUTPUT_COMMANDS["decode-midi"]],
    ids=["output-missing-directory-train", "output-missing-directory-encode", "output-missing-directory-decode-midi"],
)  # fmt: skip
def test_an_output_in_a_missing_directory_is_a_clean_error_before_any_work(
    scratch: Path, command: tuple[str, ...]
) -> None:
    failed_without_changes(
        scratch, *command, "-o", "missing/out", fragments=("missing/out", "missing", "does not exist")
    )


@pytest.mark.parametrize("path", ["/sys/song.mid", "/proc/song.mid"], ids=["midi-decode-read-only", "midi-decode-proc"])
def test_decoding_midi_to_a_path_that_cannot_be_written_is_a_clean_error(scratch: Path, path: str) -> None:
    failed_without_changes(scratch, "decode", "-t", "midi.json", "song.ids", "-o", path, fragments=(path,))


def test_decoding_midi_replaces_the_output_whole(scratch: Path) -> None:
    (scratch / "song.mid").write_bytes(b"old")
    assert_ok(run_bpe_bounded("decode", "-t", "midi.json", "song.ids", "-o", "song.mid", cwd=scratch))
    assert (scratch / "song.mid").read_bytes()[:4] == b"MThd"
    assert not [path.name for path in scratch.iterdir() if path.name.startswith(".tmp")]


def test_an_output_that_is_a_fifo_is_written_in_place_not_replaced(scratch: Path) -> None:
    """`-o /dev/null` or a named pipe: replacing it by a rename would destroy it (as root: the device)."""
    fifo = scratch / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = run_bpe_bounded("decode", "-t", "text.json", "hello.ids", "-o", "pipe", cwd=scratch)
    reader.join(timeout=30)
    assert_ok(result)
    assert received == [b"Hello"]
    assert fifo.is_fifo()


def _encode_shards(scratch: Path, *names: str) -> BpeRun:
    return run_bpe_bounded("encode", "-t", "text.json", *names, "--format", "bin", "-o", "shards/", "-q", cwd=scratch)


def test_a_failed_encode_into_a_shard_directory_keeps_the_previous_set_whole(scratch: Path) -> None:
    (scratch / "a.txt").write_text("first text\n")
    (scratch / "b.txt").write_text("second text\n")
    assert_ok(_encode_shards(scratch, "a.txt", "b.txt"))
    (scratch / "a.txt").write_text("new text for the first shard\n")
    (scratch / "b.txt").write_text("a special token <|endoftext|> in the second file fails\n")
    failed_without_changes(
        scratch, "encode", "-t", "text.json", "a.txt", "b.txt", "--format", "bin", "-o", "shards/", "-q",
        fragments=("b.txt", "<|endoftext|>"),
    )  # fmt: skip


def test_a_new_shard_set_replaces_the_previous_one_whole(scratch: Path, text_tokenizer: bpe_core.Tokenizer) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (scratch / name).write_text(f"text of {name}\n")
    assert_ok(_encode_shards(scratch, "a.txt", "b.txt", "c.txt"))
    (scratch / "a.txt").write_text("only one input now\n")
    assert_ok(_encode_shards(scratch, "a.txt"))
    assert sorted(path.name for path in (scratch / "shards").iterdir()) == ["00000-a.txt.bin", "index.json"]
    ids = text_tokenizer.encode("only one input now\n")
    assert (scratch / "shards" / "00000-a.txt.bin").read_bytes() == b"".join(
        token.to_bytes(2, "little") for token in ids
    )
    assert not [path.name for path in scratch.iterdir() if path.name.startswith((".tmp", ".old"))]


@pytest.mark.parametrize("stranger", ["notes.md", "index.json"], ids=["shards-foreign-file", "shards-foreign-index"])
def test_a_directory_that_holds_other_files_is_never_replaced_by_shards(scratch: Path, stranger: str) -> None:
    (scratch / "a.txt").write_text("text\n")
    (scratch / "shards").mkdir()
    (scratch / "shards" / stranger).write_text('{"format": "something else"}\n')
    failed_without_changes(
        scratch,
        "encode",
        "-t",
        "text.json",
        "a.txt",
        "--format",
        "bin",
        "-o",
        "shards/",
        "-q",
        fragments=("shards/", stranger),
    )


def _terminated_mid_write(scratch: Path, args: list[str], watched: Callable[[], list[Path]], signum: int) -> int:
    """Start `bpe`, wait until its temporary output exists and holds data, send the signal; the exit status."""
    process = subprocess.Popen(
        [str(BPE), *args], cwd=scratch, env=bpe_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while not any(path.stat().st_size > 0 for path in watched() if path.is_file()):
            assert process.poll() is None, f"bpe ended before the test could signal it: {process.stderr.read()!r}"  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "no temporary output appeared"
            time.sleep(0.01)
        process.send_signal(signum)
        return process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()


@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGHUP], ids=["signal-sigterm-output-file", "signal-sighup-output-file"]
)
def test_a_terminating_signal_removes_the_temporary_output_and_keeps_the_old_one(scratch: Path, signum: int) -> None:
    (scratch / "out.ids").write_text("previous output\n")
    status = _terminated_mid_write(
        scratch,
        ["encode", "-t", "text.json", str(DOCS_PATH), "-o", "out.ids", "--workers", "2", "-q"],
        lambda: list(scratch.glob(".tmp-*")),
        signum,
    )
    assert status == 128 + signum
    assert not list(scratch.glob(".tmp-*"))
    assert (scratch / "out.ids").read_text() == "previous output\n"


def test_sigterm_while_writing_shards_removes_the_new_set_and_keeps_the_old_one(scratch: Path) -> None:
    (scratch / "a.txt").write_text("first text\n")
    assert_ok(_encode_shards(scratch, "a.txt"))
    before = snapshot(scratch / "shards")
    status = _terminated_mid_write(
        scratch,
        ["encode", "-t", "text.json", str(DOCS_PATH), "--format", "bin", "-o", "shards/", "-q"],
        lambda: [path for staging in scratch.glob(".tmp-shards-*") for path in staging.glob(".tmp-*")],
        signal.SIGTERM,
    )
    assert status == 128 + signal.SIGTERM
    assert not [path.name for path in scratch.iterdir() if path.name.startswith((".tmp", ".old"))]
    assert snapshot(scratch / "shards") == before


# ---------------------------------------------------------------------------------------------
# class 15: small ones


def test_an_encode_error_names_its_record_once(scratch: Path) -> None:
    (scratch / "iupac.fa").write_text(">r1\nACGT\n>r2\nACGTRYACGT\n")
    line = failed_without_changes(
        scratch, "encode", "-t", "dna.json", "iupac.fa", "-o", "out.ids", fragments=("iupac.fa, record r2",)
    )
    assert line.count("iupac.fa") == 1


@pytest.mark.parametrize(
    "prefix, suffix",
    [(b"a" * 3_000_000, ""), (b"a" * 3_000_000, ".gz"), (b"a" * ((1 << 20) - 1) + "\u00e9".encode(), "")],
    ids=[
        "utf8-error-offset-in-file",
        "utf8-error-offset-in-gzip",
        "utf8-error-offset-after-a-character-split-by-a-block",
    ],
)
def test_a_utf8_error_names_its_byte_offset_in_the_file(scratch: Path, prefix: bytes, suffix: str) -> None:
    import gzip

    data = prefix + b"\xff tail\n"
    path = scratch / f"bad.txt{suffix}"
    path.write_bytes(gzip.compress(data) if suffix else data)
    failed_without_changes(
        scratch,
        "encode",
        "-t",
        "text.json",
        path.name,
        "-o",
        "out.ids",
        fragments=(path.name, f"at byte {len(prefix)})"),
    )


@pytest.mark.parametrize("command", ["train", "encode"], ids=["input-dev-zero-train", "input-dev-zero-encode"])
def test_dev_zero_as_input_is_not_a_regular_file(scratch: Path, command: str) -> None:
    args = ("train", CONFIGS_DIR / "gpt2-style.yaml", "/dev/zero", "-o", "out.json") if command == "train" else (
        "encode", "-t", "text.json", "/dev/zero", "-o", "out.ids")  # fmt: skip
    failed_without_changes(
        scratch, *args, fragments=("/dev/zero", "not a regular file", "character device"), timeout=30
    )


def test_a_fifo_as_input_is_not_a_regular_file(scratch: Path) -> None:
    os.mkfifo(scratch / "pipe")
    failed_without_changes(
        scratch,
        "train",
        CONFIGS_DIR / "gpt2-style.yaml",
        "pipe",
        "-o",
        "out.json",
        fragments=("pipe", "not a regular file", "FIFO"),
        timeout=30,
    )


def test_dev_zero_as_tokenizer_file_is_not_a_regular_file(scratch: Path) -> None:
    failed_without_changes(
        scratch, "decode", "-t", "/dev/zero", "hello.ids", fragments=("/dev/zero", "not a regular file"), timeout=30
    )


@pytest.mark.parametrize("value", ["-3", "0", "two", "1" * 5000])
@pytest.mark.parametrize("command", ["train", "count", "encode"])
def test_workers_must_be_a_positive_number_in_every_command(scratch: Path, command: str, value: str) -> None:
    args = {
        "train": ("train", CONFIGS_DIR / "gpt2-style.yaml", "docs.txt", "-o", "out.json"),
        "count": ("count", CONFIGS_DIR / "gpt2-style.yaml", "docs.txt", "-o", "out.counts"),
        "encode": ("encode", "-t", "text.json", "docs.txt", "-o", "out.ids"),
    }[command]
    line = failed_without_changes(scratch, *args, "--workers", value, fragments=("--workers", "1 or more"))
    assert len(line) < 200


@pytest.mark.parametrize(
    "name",
    ["../escaped", "sub/name", "..", "a\\b"],
    ids=["config-name-parent", "config-name-subdirectory", "config-name-dotdot", "config-name-backslash"],
)
def test_a_config_name_that_is_a_path_is_refused(scratch: Path, name: str) -> None:
    config = (CONFIGS_DIR / "gpt2-style.yaml").read_text().replace("output: ", "# output: ")
    run_in = scratch / "run"
    run_in.mkdir()
    (run_in / "config.yaml").write_text(config.replace("name: text-gpt2-32k", f"name: {name!r}", 1))
    assert f"name: {name!r}" in (run_in / "config.yaml").read_text(), "the config's name line was not found"
    failed_without_changes(
        scratch, "train", "run/config.yaml", "docs.txt", "-q", fragments=("name", "not a plain name")
    )
