"""Faults on a Dask cluster: a run either gives exactly a local run's result or ends in one clean
error, and a failed run writes nothing.

A worker killed mid-run is replaced and its tasks rerun (counting: test_scaleout.py); a scheduler
that goes away, or an address that never answers, is one error within a bounded time; a worker
without a plugin the work needs is named with the plugin before any task runs. The clusters are
real: a LocalCluster of worker processes, and a scheduler and a worker in processes of their own
for the scheduler that is killed.
"""

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import distributed
import pytest
from helpers.cli_runner import BPE, BpeRun, assert_clean_error, assert_ok, bpe_env, run_bpe
from helpers.text import GPT2_CONFIG as GPT2

import bpe_core
from bpe_core.config import parse_runner
from bpe_core.corpus.shards import ShardOptions, encode_to_shards
from bpe_core.errors import BpeError
from bpe_core.runners import dask as dask_runner

SITE_PLUGIN = """\
from bpe_core.hookspecs import hookimpl
from bpe_text.readers import TextReader


@hookimpl
def bpe_core_readers():
    return {"site-text": TextReader.from_options}
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.LocalCluster]:
    """A LocalCluster of two worker processes (a killed one is restarted by its nanny)."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.CRITICAL
    ) as local:
        yield local


@pytest.fixture(scope="module")
def corpus(docs_text: str, docs_slice_path: Path, workdir: Path) -> dict[str, Path]:
    """2 MB of the documentation as one plain file (two byte ranges on two workers), all of it
    (long enough to be caught mid-run), the slice, and a small tokenizer trained on the slice."""
    part = workdir / "docs-2mb.txt"
    part.write_text(docs_text[:2_000_000], encoding="utf-8", newline="")
    whole = workdir / "docs.txt"
    whole.write_text(docs_text, encoding="utf-8", newline="")
    assert_ok(
        run_bpe("train", GPT2, docs_slice_path, "-o", "tok.json", "--set", "trainer.vocab_size=1000", "-q", cwd=workdir)
    )
    return {"part": part, "whole": whole, "slice": docs_slice_path, "tokenizer": workdir / "tok.json"}


def test_a_worker_killed_while_encoding_shards_leaves_exactly_the_local_shards(cluster, corpus, tmp_path):
    tokenizer = bpe_core.load(corpus["tokenizer"])
    options = ShardOptions(eos_id=tokenizer.special_ids["<|endoftext|>"])
    files = [str(corpus["part"])]
    local = encode_to_shards(tokenizer, files, str(tmp_path / "local"), options, parse_runner({}, "test"))
    runner = parse_runner({"kind": "dask", "address": cluster.scheduler_address, "range_bytes": 1 << 20}, "test")
    result: dict[str, object] = {}

    def encode() -> None:
        try:
            result["index"] = encode_to_shards(tokenizer, files, str(tmp_path / "dask"), options, runner)
        except BaseException as error:  # noqa: BLE001 (reported by the assertion below)
            result["error"] = error

    with distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        encoding = threading.Thread(target=encode)
        encoding.start()
        victim = _busy_worker(client, "encode_range_task", encoding)
        os.kill(pids[victim], signal.SIGKILL)
        encoding.join(timeout=300)
    assert not encoding.is_alive()
    assert "error" not in result, result.get("error")
    assert result["index"] == local
    shard = local["shards"][0]["shard"]
    assert (tmp_path / "dask" / shard).read_bytes() == (tmp_path / "local" / shard).read_bytes()
    assert sorted(path.name for path in (tmp_path / "dask").iterdir()) == sorted([shard, "index.json"])
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dask", "local"]  # no staging left


def _busy_worker(client: distributed.Client, prefix: str, running: threading.Thread) -> str:
    """The address of a worker running a task whose key starts with `prefix`, as soon as one does."""
    deadline = time.monotonic() + 120
    while running.is_alive() and time.monotonic() < deadline:
        for worker, keys in client.processing().items():
            if any(str(key).startswith(prefix) for key in keys):
                return worker
        time.sleep(0.005)
    raise AssertionError(f"no {prefix} task was seen running")


@pytest.fixture
def scheduler_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A scheduler in a process of its own (so that it can be killed) with one worker; both are
    ended, with their process groups, after the test."""
    dask = Path(sys.executable).parent / "dask"
    address_file = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    scheduler = subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", address_file],
        **quiet,
    )
    worker = subprocess.Popen(
        [dask, "worker", "--scheduler-file", address_file, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
        **quiet,
    )
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)  # the file is written whole, but let its writer finish
        yield scheduler, json.loads(address_file.read_text())["address"]
    finally:
        for process in (worker, scheduler):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=30)


def test_the_scheduler_killed_mid_encoding_is_one_clean_error_and_the_old_shards_stay(
    scheduler_process, corpus, tmp_path
):
    scheduler, address = scheduler_process
    common = ["encode", "-t", corpus["tokenizer"], "--format", "bin", "-o", "shards/", "-q"]
    assert_ok(run_bpe(*common, corpus["slice"], cwd=tmp_path))  # the previous shard set
    before = {path.name: path.read_bytes() for path in (tmp_path / "shards").iterdir()}
    with distributed.Client(address, timeout="30s") as client:
        client.wait_for_workers(1, timeout=60)
        run = subprocess.Popen(
            [BPE, *map(str, common), str(corpus["whole"]), "--address", address],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=bpe_env(),
        )
        deadline = time.monotonic() + 120
        while not any(client.processing().values()) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert run.poll() is None, run.communicate()[1].decode()
    scheduler.kill()
    killed = time.monotonic()
    _, stderr = run.communicate(timeout=120)
    assert time.monotonic() - killed < 30
    line = assert_clean_error(
        BpeRun(run.returncode, b"", stderr.decode("utf-8")),
        f"lost the Dask scheduler at {address}",
        "no output was written",
    )
    assert "in the middle of the run" in line
    time.sleep(1)  # a task still running on the orphaned worker may not leave anything behind either
    assert sorted(path.name for path in tmp_path.iterdir()) == ["scheduler.json", "shards"]
    assert {path.name: path.read_bytes() for path in (tmp_path / "shards").iterdir()} == before


def test_an_address_that_accepts_but_never_answers_is_an_error_within_the_connect_timeout(
    corpus, tmp_path, monkeypatch
):
    silent = socket.create_server(("127.0.0.1", 0))  # the kernel accepts; nobody ever speaks
    address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
    monkeypatch.setattr(dask_runner, "CONNECT_SECONDS", 2)
    started = time.monotonic()
    with silent, pytest.raises(BpeError, match=f"cannot reach the Dask scheduler at {address} \\(waited 2 s\\)"):
        bpe_core.count(GPT2, [corpus["slice"]], runner={"kind": "dask", "address": address}, progress=False)
    assert time.monotonic() - started < 10
    assert list(tmp_path.iterdir()) == []


def test_a_worker_without_a_plugin_the_work_needs_is_named_with_the_plugin(cluster, corpus, tmp_path):
    """The client has a plugin (on its PYTHONPATH) that the workers lack: counting and encoding
    both stop before any task, naming the plugin, the component and a worker."""
    site = tmp_path / "site"
    info = site / "bpe_site_text-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bpe-site-text\nVersion: 0.0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[bpe_core]\nsitetext = bpe_site_text\n", encoding="utf-8")
    (site / "bpe_site_text.py").write_text(SITE_PLUGIN, encoding="utf-8")
    config = tmp_path / "site.yaml"
    config.write_text(
        json.dumps({"input": {"reader": "site-text"}, "pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 300}})
    )
    workers = cluster.scheduler_info["workers"]
    with_plugin = {"PYTHONPATH": str(site)}
    assert_ok(run_bpe("train", config, corpus["slice"], "-o", "tok.json", "-q", cwd=tmp_path, **with_plugin))
    runs = [
        run_bpe("count", config, corpus["slice"], "-o", "x.counts", "--address", cluster.scheduler_address, "-q",
                cwd=tmp_path, **with_plugin),
        run_bpe("encode", "-t", "tok.json", corpus["slice"], "--format", "bin", "-o", "shards/", "--address",
                cluster.scheduler_address, "-q", cwd=tmp_path, **with_plugin),
    ]  # fmt: skip
    for result in runs:
        line = assert_clean_error(result, "cannot load plugin 'sitetext'", "reader 'site-text'", "every worker")
        assert any(f"Dask worker {worker} " in line for worker in workers), line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["site", "site.yaml", "tok.json"]
