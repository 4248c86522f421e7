"""Scale-out: counting and encoding with the local runner and on Dask, overhead and client memory.

Data: the Python docs of ../shared/data/text as one plain 11 MB file, and the same text four
and eight times over in one 44 MB and one 88 MB file. Each is counted (gpt2 pipeline) and encoded to shards (a gpt2
tokenizer of 8192 tokens trained here on the docs) by:

- `local`: the process pool of one machine, 2 workers (the client reads all text itself);
- `dask 1` and `dask 2`: a LocalCluster of 1 or 2 worker processes started in the child before
  the clock starts (its start-up is shown on its own), submitted to by address.

Per run it prints the time, the text the client read, the bytes the client received (the
pickled counts or shard statistics Dask hands back), and the client's own peak RSS (VmHWM of
the client process: Dask workers and forked workers are not in it; the process-tree peak, which
includes them, is shown too). On this 2-core machine the point is overhead and memory, not
speed: the client's memory must not grow with the corpus. Every run's counts (and shards) are
checked equal to the local runner's. Writes the "Scale-out" section of docs/benchmarks.md.

    .venv/bin/python benchmarks/scaleout.py [--repeats N]
"""

import argparse
import gzip
import hashlib
import pickle
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import ChildJob, markdown_table, ratio

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS = REPO_ROOT.parent / "shared" / "data" / "text" / "python-3.11-docs.txt.gz"
CONFIG = REPO_ROOT / "configs" / "gpt2-style.yaml"
VOCAB_SIZE = 8192
COPIES = (1, 4, 8)
RUNNERS = {"local": ("local", 2), "dask 1": ("dask", 1), "dask 2": ("dask", 2)}
SECTION_HEADING = "## Scale-out (benchmarks/scaleout.py)"


# ---------------------------------------------------------------------------------------------
# children


def _cluster(kind: str, workers: int) -> tuple[Any, dict[str, Any], float]:
    """A started LocalCluster (or None) and the runner settings that use it."""
    if kind == "local":
        return None, {"kind": "local", "workers": workers}, 0.0
    import logging

    import distributed

    started = time.perf_counter()
    cluster = distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.CRITICAL
    )
    return cluster, {"kind": "dask", "address": cluster.scheduler_address}, time.perf_counter() - started


def count_child(args: list[str]) -> dict[str, Any]:
    kind, workers, corpus = args[0], int(args[1]), args[2]
    import bpe_core

    cluster, runner, startup = _cluster(kind, workers)
    started = time.perf_counter()
    counts = bpe_core.count(str(CONFIG), [corpus], runner=runner, progress=False)
    seconds = time.perf_counter() - started
    received = len(pickle.dumps(counts, protocol=5)) if kind == "dask" else 0
    digest = hashlib.sha256(pickle.dumps(sorted(counts.chunks.items()))).hexdigest()
    if cluster is not None:
        cluster.close()
    return {
        "seconds": seconds,
        "startup_seconds": startup,
        "bytes": Path(corpus).stat().st_size,
        "unique_chunks": len(counts.chunks),
        "received_bytes": received,
        "client_read_bytes": Path(corpus).stat().st_size if kind == "local" else 0,
        "digest": digest,
    }


def encode_child(args: list[str]) -> dict[str, Any]:
    kind, workers, corpus, tokenizer_path, directory = args[0], int(args[1]), args[2], args[3], args[4]
    import bpe_core
    from bpe_core.config import parse_runner
    from bpe_core.corpus.shards import ShardOptions, encode_to_shards

    tokenizer = bpe_core.load(tokenizer_path)
    cluster, runner, startup = _cluster(kind, workers)
    started = time.perf_counter()
    index = encode_to_shards(
        tokenizer, [corpus], directory, ShardOptions(), parse_runner(runner, "benchmark"), progress=False
    )
    seconds = time.perf_counter() - started
    if cluster is not None:
        cluster.close()
    shard = Path(directory) / index["shards"][0]["shard"]
    return {
        "seconds": seconds,
        "startup_seconds": startup,
        "bytes": Path(corpus).stat().st_size,
        "tokens": index["tokens"],
        "received_bytes": len(pickle.dumps([(index["documents"], index["tokens"])])) if kind == "dask" else 0,
        "client_read_bytes": Path(corpus).stat().st_size if kind == "local" else 0,
        "digest": file_digest(shard),
    }


def file_digest(path: Path) -> str:
    """SHA-256 of a file read in blocks (reading it whole would show in the client's peak)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def train_child(args: list[str]) -> dict[str, Any]:
    import bpe_core

    started = time.perf_counter()
    tokenizer = bpe_core.train(str(CONFIG), [args[0]], {"trainer.vocab_size": VOCAB_SIZE}, progress=False)
    tokenizer.save(args[1])
    return {"seconds": time.perf_counter() - started}


CHILD_TASKS = {"count": count_child, "encode": encode_child, "train": train_child}


# ---------------------------------------------------------------------------------------------
# parent


def megabytes(count: float) -> str:
    return f"{count / 1e6:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement; the fastest counts")
    options = parser.parse_args()
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()
    with tempfile.TemporaryDirectory(prefix="bpe-bench-scaleout-") as temporary:
        work_dir = Path(temporary)
        corpora = {f"docs ({times}x)": work_dir / f"docs{times}.txt" for times in COPIES}
        for times in COPIES:  # streamed: this process stays small
            with open(corpora[f"docs ({times}x)"], "wb") as out:
                for _ in range(times):
                    with gzip.open(DOCS, "rb") as handle:
                        shutil.copyfileobj(handle, out)
        tokenizer = work_dir / "gpt2-8k.json"
        _common.run_child(script, ChildJob("train", (str(corpora["docs (1x)"]), str(tokenizer))), work_dir)

        jobs: dict[tuple[str, str, str], ChildJob] = {}
        for corpus, path in corpora.items():
            for name, (kind, workers) in RUNNERS.items():
                jobs[("count", corpus, name)] = ChildJob("count", (kind, str(workers), str(path)))
                shards = work_dir / f"shards-{len(jobs)}"
                jobs[("encode", corpus, name)] = ChildJob(
                    "encode", (kind, str(workers), str(path), str(tokenizer), str(shards))
                )
        results = _common.run_interleaved(script, jobs, options.repeats, work_dir, label=" / ".join)

    rows = []
    mismatches = []
    for (work, corpus, name), summary in results.items():
        best = summary.best
        local = results[(work, corpus, "local")]
        if best["digest"] != local.best["digest"]:
            mismatches.append(f"{work} {corpus} {name}")
        rows.append(
            [
                work,
                corpus,
                name,
                f"{summary.seconds():.2f}",
                f"{best['startup_seconds']:.2f}" if name != "local" else "",
                f"{best['bytes'] / 1e6 / summary.seconds():.1f}",
                f"{ratio(summary.seconds(), local.seconds()):.2f}",
                megabytes(best["client_read_bytes"]),
                megabytes(best["received_bytes"]) if name != "local" else "",
                f"{summary.peak_main_mb:.0f}",
                f"{summary.peak_tree_mb:.0f}",
            ]
        )
    table = markdown_table(
        [
            "work",
            "corpus",
            "runner",
            "seconds",
            "cluster start s",
            "MB/s",
            "time / local",
            "text read by client MB",
            "received by client MB",
            "client peak MB",
            "process tree peak MB",
        ],
        rows,
    )

    def growth(work: str, name: str) -> str:
        peaks = [results[(work, f"docs ({times}x)", name)].peak_main_mb for times in COPIES]
        return f"{name} " + " -> ".join(f"{peak:.0f}" for peak in peaks) + " MB"

    one_worker = results[("count", f"docs ({COPIES[-1]}x)", "dask 1")]
    per_worker = one_worker.best["bytes"] / one_worker.seconds()
    terabyte_hours = 1e12 / (100 * per_worker) / 3600
    _common.publish_report(
        SECTION_HEADING,
        command=f".venv/bin/python benchmarks/scaleout.py --repeats {options.repeats}",
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=None,
        peers=["dask", "distributed"],
        summaries=list(results.values()),
        facts=[
            "every run's counts and shards are identical to the local runner's"
            if not mismatches
            else f"MISMATCH with the local runner: {', '.join(mismatches)}"
        ],
        blocks=[
            table,
            "Client peak memory for 11, 44 and 88 MB of text: counting "
            + "; ".join(growth("count", name) for name in RUNNERS)
            + "; encoding "
            + "; ".join(growth("encode", name) for name in RUNNERS)
            + ".",
            f"Counting throughput of one Dask worker on the 88 MB file: {per_worker / 1e6:.1f} MB/s, so 1 TB on "
            f"100 such workers takes about {terabyte_hours:.2f} h of counting (see docs/scaleout.md for the "
            "estimate's terms).",
        ],
    )


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
