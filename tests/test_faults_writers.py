"""Two writers at once (issue 36, item 5): two `bpe` runs that write the same output, started
together, both succeed and leave one run's whole output, never a mix: one ids file, one tokenizer,
one shard set, one directory of decoded files. And the step that puts a set of files in place
(`files.staged_directory`), raced by many processes at once, always leaves one whole set and
(where the system exchanges names in one step) never a moment without one.

`make faults` (BPE_CORE_FAULTS=full) races many pairs; `make test` a few.
"""

import json
import multiprocessing
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import faults
from helpers.text import GPT2_CONFIG

from bpe_core.files import staged_directory

PAIRS = 24  # races per command under BPE_CORE_FAULTS=full
SAMPLED_PAIRS = 3
TEXT_PART = 100_000

ENCODE = ("encode", "-t", "{data}/text.json", "-q")
TRAIN = ("train", str(GPT2_CONFIG), "{data}/docs0.txt", "-q", "-o", "tok.json")
# per output: the two commands raced on it (each as long as the other, so they end together)
RACES = {
    "encode-ids": (
        (*ENCODE, "{data}/docs0.txt", "-o", "out.ids"),
        (*ENCODE, "{data}/docs1.txt", "-o", "out.ids"),
        "out.ids",
    ),
    "train": ((*TRAIN, "--set", "trainer.vocab_size=500"), (*TRAIN, "--set", "trainer.vocab_size=501"), "tok.json"),
    "encode-shards": (
        (*ENCODE, "{data}/docs0.txt", "{data}/docs1.txt", "--format", "bin", "-o", "shards/"),
        (*ENCODE, "{data}/docs1.txt", "{data}/docs2.txt", "--format", "bin", "-o", "shards/"),
        "shards",
    ),
    "decode-midi-files": (
        ("decode", "-t", "{data}/midi.json", "{data}/songs-a.ids", "-o", "songs/"),
        ("decode", "-t", "{data}/midi.json", "{data}/songs-b.ids", "-o", "songs/"),
        "songs",
    ),
}


@pytest.fixture(scope="module")
def data(workdir: Path) -> Path:
    """Three equal slices of the documentation, a text tokenizer, a MIDI tokenizer and ids files
    of two sets of three songs."""
    lines = faults.common_inputs(workdir, TEXT_PART)
    (workdir / "songs-a.ids").write_text("".join(lines[:3]), encoding="ascii")
    (workdir / "songs-b.ids").write_text("".join(lines[3:]), encoding="ascii")
    return workdir


def arguments(command: tuple[str, ...], data: Path) -> list[str]:
    return [argument.replace("{data}", str(data)) for argument in command]


def comparable(content: Any) -> Any:
    """A tokenizer file without its training time (which differs from run to run); else as is."""
    if isinstance(content, bytes) and content.startswith(b"{"):
        document = json.loads(content)
        if isinstance(document, dict) and isinstance(document.get("provenance"), dict):
            document["provenance"].pop("seconds", None)
            return document
    return content


@pytest.mark.parametrize("name", list(RACES))
def test_two_runs_writing_one_output_at_once_leave_one_runs_whole_output(name: str, data: Path, tmp_path: Path) -> None:
    first, second, output = RACES[name]
    commands = [arguments(first, data), arguments(second, data)]
    expected = []
    for number, command in enumerate(commands):
        reference = tmp_path / f"reference-{number}"
        reference.mkdir()
        faults.timed_run(command, reference)
        expected.append(comparable(faults.contents(reference / output)))
    assert expected[0] != expected[1]
    run = tmp_path / "run"
    run.mkdir()
    draw = random.Random(name)
    winners = []
    for pair in faults.sampled(range(PAIRS), SAMPLED_PAIRS, seed=len(name)):
        # the one started first alternates; the other follows within 50 ms
        order = commands if pair % 2 == 0 else commands[::-1]
        processes = [faults.start_bpe(order[0], run, stderr=subprocess.PIPE)]
        time.sleep(draw.uniform(0, 0.05))
        processes.append(faults.start_bpe(order[1], run, stderr=subprocess.PIPE))
        for process in processes:
            _, errors = process.communicate(timeout=600)
            assert process.returncode == 0, f"pair {pair}: exit {process.returncode}\n{errors.decode()}"
        found = comparable(faults.contents(run / output))
        assert found in expected, f"pair {pair}: the output is neither run's whole output"
        winners.append(expected.index(found))
        assert faults.leftovers(run) == [], f"pair {pair}: temporary files left: {faults.leftovers(run)}"
        assert sorted(path.name for path in run.iterdir()) == [output]


# the set-replacing step itself, raced by processes -----------------------------------------------

FILES_PER_SET = 5


def write_sets(target: str, writer: int, rounds: int) -> None:
    """In a forked process: put `rounds` sets of files in place of `target`, each file saying
    which writer and round made it, the index listing them."""
    for round_number in range(rounds):
        tag = f"{writer}-{round_number}"
        with staged_directory(target, target) as staging:
            names = [f"{tag}-{number}.bin" for number in range(FILES_PER_SET)]
            for name in names:
                Path(staging, name).write_text(tag, encoding="ascii")
            Path(staging, "index.json").write_text(json.dumps({"tag": tag, "files": names}), encoding="ascii")


def whole_set(directory: Path) -> str:
    """The tag of the set in `directory`, which must be whole: its index and exactly the files it lists."""
    index = json.loads((directory / "index.json").read_text(encoding="ascii"))
    assert sorted(path.name for path in directory.iterdir()) == sorted([*index["files"], "index.json"])
    for name in index["files"]:
        assert (directory / name).read_text(encoding="ascii") == index["tag"]
    return str(index["tag"])


@pytest.mark.parametrize("writers", [2, 4])
def test_sets_put_in_place_by_racing_processes_leave_one_whole_set_and_never_none(writers: int, tmp_path: Path) -> None:
    target = tmp_path / "target"
    write_sets(str(target), -1, 1)
    rounds = 200 if faults.FULL else 40
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=write_sets, args=(str(target), writer, rounds)) for writer in range(writers)]
    for process in processes:
        process.start()
    missing = 0
    looks = 0
    while any(process.is_alive() for process in processes):
        looks += 1
        if not os.path.exists(target / "index.json"):
            missing += 1
    for process in processes:
        process.join()
        assert process.exitcode == 0
    assert missing == 0, f"no set in place at {missing} of {looks} looks"
    tag = whole_set(target)
    assert tag.endswith(f"-{rounds - 1}")  # some writer's last set
    assert [path.name for path in tmp_path.iterdir()] == ["target"]  # no staging or retired set left
