"""Library use: the Python API fails as the command line does, and a tokenizer may be shared.

Every public call given a missing file, a directory, an unreadable file or an id out of range
raises a BpeError whose message is the one `bpe` prints (never a bare OSError or KeyError); a
tokenizer shared by threads gives each the ids one thread alone gets, from its first call on;
and a tokenizer loaded before a fork (multiprocessing's fork start method, or os.fork) works in
the children as in the parent, as tiktoken's does.
"""

import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG, fasta_records
from helpers.midi import REMI_BPE_CONFIG, pop909_paths
from helpers.paths import LAMBDA_PATH
from helpers.processes import child_processes
from helpers.text import GPT2_CONFIG, paragraphs

import bpe_core
from bpe_core import BpeError, batching
from bpe_core.corpus.streaming import corpus_reader
from bpe_core.data import TokenShards

THREADS = 8


# ---------------------------------------------------------------- errors, as the command line gives them


@pytest.fixture(scope="module")
def text_files(workdir: Path, docs_text: str) -> Path:
    """A small text, a tokenizer trained on it, its shard set, and the bad paths each case uses."""
    (workdir / "small.txt").write_text(docs_text[:100_000], encoding="utf-8", newline="")
    assert_ok(
        run_bpe(
            "train", GPT2_CONFIG, "small.txt", "-o", "tok.json", "--set", "trainer.vocab_size=500", "-q", cwd=workdir
        )
    )
    assert_ok(run_bpe("encode", "-t", "tok.json", "small.txt", "--format", "bin", "-o", "shards/", "-q", cwd=workdir))
    (workdir / "folder").mkdir()
    (workdir / "folder" / "note.md").write_text("not a tokenizer\n")
    os.symlink("loop-b", workdir / "loop-a")  # unreadable for everyone, root too: ELOOP
    os.symlink("loop-a", workdir / "loop-b")
    (workdir / "bad.ids").write_text("5 7 1000000\n")
    return workdir


def _unreadable(directory: Path) -> str:
    """A file that cannot be opened: no read permission (or, for root, whom permissions do not
    stop, a symbolic link loop)."""
    if os.geteuid() == 0:
        return "loop-a"
    path = directory / "locked.json"
    path.write_text("{}")
    path.chmod(0)
    return path.name


def _in(directory: Path, call: Callable[[], object]) -> BpeError:
    """The BpeError that `call` raises with `directory` as the working directory."""
    before = os.getcwd()
    os.chdir(directory)
    try:
        with pytest.raises(BpeError) as raised:
            call()
    finally:
        os.chdir(before)
    return raised.value


API_AND_CLI = {
    "a missing tokenizer": (lambda: bpe_core.load("missing.json"), ["encode", "-t", "missing.json", "small.txt"]),
    "a folder for a tokenizer": (lambda: bpe_core.load("folder"), ["encode", "-t", "folder", "small.txt"]),
    "a missing tokenizer.json": (
        lambda: bpe_core.from_hf("missing.json"),
        ["import", "--format", "hf", "missing.json", "-o", "x.json"],
    ),
    "a missing config": (lambda: bpe_core.train("missing.yaml", ["small.txt"]), ["train", "missing.yaml", "small.txt"]),
    "a folder for a config": (lambda: bpe_core.train("folder", ["small.txt"]), ["train", "folder", "small.txt"]),
    "a missing input": (
        lambda: bpe_core.train(GPT2_CONFIG, ["missing.txt"], progress=False),
        ["train", GPT2_CONFIG, "missing.txt"],
    ),
    "a missing counts file": (
        lambda: bpe_core.train(GPT2_CONFIG, counts=["missing.counts"], progress=False),
        ["train", GPT2_CONFIG, "--from-counts", "missing.counts"],
    ),
    "a missing counts file to merge": (
        lambda: bpe_core.load_counts("missing.counts"),
        ["count", "--merge", "missing.counts", "-o", "x.counts"],
    ),
    "a folder without a shard index": (lambda: TokenShards("folder", 16, 0), ["decode", "-t", "tok.json", "folder/"]),
}


@pytest.mark.parametrize("case", list(API_AND_CLI))
def test_the_api_raises_the_error_the_command_line_prints(text_files, case):
    call, arguments = API_AND_CLI[case]
    error = _in(text_files, call)
    line = assert_clean_error(run_bpe(*arguments, cwd=text_files))
    assert str(error) in line, (str(error), line)


def test_decoding_ids_out_of_range_is_the_error_decode_prints(text_files):
    tokenizer = bpe_core.load(text_files / "tok.json")
    line = assert_clean_error(run_bpe("decode", "-t", "tok.json", "bad.ids", cwd=text_files), "bad.ids, line 1")
    for call in (
        lambda: tokenizer.decode([5, 7, 1_000_000]),
        lambda: tokenizer.decode_bytes([1_000_000]),
        lambda: tokenizer.token_bytes(1_000_000),
        lambda: tokenizer.token_symbols(1_000_000),
    ):
        with pytest.raises(BpeError) as raised:
            call()
        assert line.endswith(str(raised.value))
    for ids in ([-1], [2**70], [tokenizer.vocab_size]):
        with pytest.raises(BpeError, match=f"token id {ids[0]} is not in this tokenizer"):
            tokenizer.decode(ids)


@pytest.mark.parametrize(
    "call",
    [
        lambda path: bpe_core.load(path),
        lambda path: bpe_core.from_hf(path),
        lambda path: bpe_core.from_tiktoken(path, pattern="gpt2"),
        lambda path: bpe_core.train(path, ["small.txt"], progress=False),
        lambda path: bpe_core.train(GPT2_CONFIG, [path], progress=False),
        lambda path: bpe_core.count(GPT2_CONFIG, [path], progress=False),
        lambda path: bpe_core.load_counts(path),
        lambda path: bpe_core.train(GPT2_CONFIG, counts=[path], progress=False),
    ],
    ids=["load", "from_hf", "from_tiktoken", "train-config", "train-input", "count", "load_counts", "train-counts"],
)
def test_every_reading_call_names_a_file_it_cannot_open(text_files, call):
    unreadable = _unreadable(text_files)
    for path in (unreadable, "missing.json", "small.txt/inside.json"):
        error = _in(text_files, lambda: call(path))  # noqa: B023 (called at once)
        assert path in str(error)


def test_every_writing_call_names_a_place_it_cannot_write(text_files, tmp_path):
    tokenizer = bpe_core.load(text_files / "tok.json")
    counts = bpe_core.count(GPT2_CONFIG, [text_files / "small.txt"], progress=False)
    blocked = text_files / "small.txt"  # a file where a folder should be
    for write, path in [
        (tokenizer.save, tmp_path),  # a folder where the file should be
        (tokenizer.save, blocked / "tok.json"),
        (tokenizer.save, tmp_path / "no" / "such" / "tok.json"),
        (tokenizer.to_hf, blocked / "hf"),
        (tokenizer.to_tiktoken, blocked / "tok.tiktoken"),
        (tokenizer.to_tiktoken, tmp_path),
        (counts.save, str(blocked / "x.counts")),
    ]:
        with pytest.raises(BpeError) as raised:
            write(path)
        assert str(path).split("/")[-1] in str(raised.value) or "small.txt" in str(raised.value), raised.value
    assert sorted(tmp_path.iterdir()) == []


def test_a_shard_that_cannot_be_read_is_an_error_naming_it(text_files, tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    for entry in (text_files / "shards").iterdir():
        (shards / entry.name).write_bytes(entry.read_bytes())
    data = TokenShards(shards, 16, 0)
    shard = next(path for path in shards.iterdir() if path.suffix == ".bin")
    shard.unlink()  # after the index was read: the item is read from a file that went away
    os.symlink(shard.name, shard)  # a link to itself: unreadable, root too
    with pytest.raises(BpeError, match=shard.name):
        data[0]


# ---------------------------------------------------------------- threads


@pytest.fixture(scope="module", params=["text", "dna", "midi"])
def shared_case(request, tmp_path_factory, docs_text):
    """A saved tokenizer of each domain (packed byte-level text; DNA with its special tokens
    first; MIDI, whose alphabet is too large to pack) and real documents for it."""
    directory = tmp_path_factory.mktemp(f"shared-{request.param}")
    if request.param == "text":
        corpus = directory / "train.txt"
        corpus.write_text(docs_text[:400_000], encoding="utf-8", newline="")
        tokenizer = bpe_core.train(GPT2_CONFIG, [corpus], {"trainer.vocab_size": 2000}, progress=False)
        documents = paragraphs(docs_text[400_000:600_000])
    elif request.param == "dna":
        tokenizer = bpe_core.train(DNABERT2_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": 400}, progress=False)
        genome = fasta_records(LAMBDA_PATH)[0][1]
        documents = [genome[start : start + 997] for start in range(0, len(genome) // 2, 997)]
    else:
        songs = directory / "songs"
        songs.mkdir()
        for path in pop909_paths()[:6]:
            (songs / path.name).symlink_to(path)
        tokenizer = bpe_core.train(REMI_BPE_CONFIG, [songs], {"trainer.vocab_size": 500}, progress=False)
        documents = list(corpus_reader(tokenizer).documents(sorted(map(str, songs.iterdir())), strict=True))
    tokenizer.save(directory / "tok.json")
    return directory / "tok.json", documents


def _comparable(decoded: object) -> object:
    """A decoded document as a value that compares by content (a MIDI file: its tracks)."""
    tracks = getattr(decoded, "tracks", None)
    return decoded if tracks is None else [list(track) for track in tracks]


@pytest.mark.both_modes
def test_a_tokenizer_shared_by_eight_threads_gives_each_the_ids_of_one_thread(shared_case):
    """A freshly loaded tokenizer (nothing built lazily yet), 8 threads starting at once, each
    encoding, batch-encoding and decoding every document, in its own order."""
    path, documents = shared_case
    alone = bpe_core.load(path)
    expected = [alone.encode(document) for document in documents]
    decoded = [_comparable(alone.decode(ids)) for ids in expected]
    shared = bpe_core.load(path)
    start = threading.Barrier(THREADS)
    failures: list[str] = []

    def work(number: int) -> None:
        shift = number * len(documents) // THREADS
        order = list(range(shift, len(documents))) + list(range(shift))
        start.wait()
        try:
            for step, index in enumerate(order):
                if (step + number) % 3 == 0:
                    if shared.encode(documents[index]) != expected[index]:
                        failures.append(f"thread {number}: encode of document {index}")
                elif (step + number) % 3 == 1:
                    batch = slice(index, index + 2)
                    if shared.encode_batch(documents[batch]) != expected[batch]:
                        failures.append(f"thread {number}: encode_batch of documents {index}, {index + 1}")
                elif _comparable(shared.decode(expected[index])) != decoded[index]:
                    failures.append(f"thread {number}: decode of document {index}")
        except Exception as error:  # noqa: BLE001 (reported below)
            failures.append(f"thread {number}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=work, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


# ---------------------------------------------------------------- fork

FORKED: dict[str, object] = {}  # what forked children inherit: the tokenizer and the documents


def _encode_in_child(indices: range) -> list[list[int]]:
    tokenizer, documents = FORKED["tokenizer"], FORKED["documents"]
    return [tokenizer.encode(documents[index]) for index in indices]


@pytest.mark.both_modes
def test_a_tokenizer_loaded_before_a_fork_works_in_the_children(shared_case, monkeypatch):
    """In workers of a fork Pool, and in a child of os.fork that runs a batch on worker processes
    of its own while the parent's are up (they are the parent's: the child must not use them)."""
    monkeypatch.setattr(batching, "FEW_DOCUMENTS", 1)  # every batch goes to the worker processes
    monkeypatch.setattr(batching, "MIN_CHARACTERS_PER_WORKER", 1)
    monkeypatch.setattr(batching, "MIN_TEXT_PROCESSES", 2)
    path, documents = shared_case
    tokenizer = bpe_core.load(path)
    FORKED.update(tokenizer=tokenizer, documents=documents)
    expected = [tokenizer.encode(document) for document in documents]
    assert tokenizer.encode_batch(documents, workers=2) == expected  # the parent's worker process is up now
    middle = len(documents) // 2
    with multiprocessing.get_context("fork").Pool(2) as pool:
        halves = pool.map(_encode_in_child, [range(middle), range(middle, len(documents))])
    assert halves[0] + halves[1] == expected

    def in_the_child() -> tuple[list[list[int]], list[Any], int]:
        tokenizer.close()  # the parent's workers are not the child's to stop
        ids = tokenizer.encode_batch(documents, workers=2)
        return ids, [_comparable(tokenizer.decode(each)) for each in ids[:5]], len(child_processes())

    received = _in_forked_child(in_the_child)
    assert received is not None, "the child failed"
    ids, decoded, workers_of_the_child = received
    assert ids == expected
    assert workers_of_the_child == 1  # its batch ran on a worker of its own
    assert decoded == [_comparable(tokenizer.decode(each)) for each in expected[:5]]
    assert tokenizer.encode_batch(documents, workers=2) == expected  # the parent's workers still answer it alone
    tokenizer.close()


@pytest.mark.both_modes
def test_a_fork_while_another_thread_encodes_gives_a_child_that_encodes(shared_case):
    """The thread that is encoding at the fork does not exist in the child: nothing it held, and
    nothing it was half-way through, may stop or change the child's own encoding."""
    path, documents = shared_case
    tokenizer = bpe_core.load(path)
    expected = [tokenizer.encode(document) for document in documents[:8]]
    stop = threading.Event()

    def keep_encoding() -> None:
        while not stop.is_set():
            for document in documents[:8]:
                tokenizer.encode(document)

    busy = threading.Thread(target=keep_encoding)
    busy.start()
    try:
        for _ in range(10):
            received = _in_forked_child(lambda: [tokenizer.encode(document) for document in documents[:8]], alarm=20)
            assert received == expected
    finally:
        stop.set()
        busy.join()


def _in_forked_child(work: Callable[[], Any], alarm: int = 0) -> Any:
    """What `work` returns in a child forked now (sent back pickled), or None if the child failed;
    with `alarm`, a child stuck that many seconds (on a lock) ends."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(reader)
            signal.alarm(alarm)
            os.write(writer, pickle.dumps(work()))
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        received = answer.read()
    os.waitpid(child, 0)
    return pickle.loads(received) if received else None
