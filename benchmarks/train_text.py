"""Byte-level BPE training on text: bpe-core against Hugging Face tokenizers and rustbpe.

Corpus: the Python 3.11 documentation as plain text (11 MB), decompressed once into a temporary
directory, plus prefixes of 1, 2, 4 and 8 MB cut at a newline. Every tool splits with the GPT-2
pattern and learns byte-level merges up to the same vocabulary size. Each run is a fresh
interpreter; the child times the work from reading the file to the last merge (not start-up or
imports); the parent samples the RSS of the child's whole process tree every ~10 ms.

Prints the tables and writes them to the "Training on text" section of docs/benchmarks.md.
It does not check the merges against each other (the test suite does that) and asserts nothing.

    .venv/bin/python benchmarks/train_text.py [--repeats N]
"""

import argparse
import gzip
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import GPT2_PATTERN, ChildJob, Summary, markdown_table, ratio, seconds_text

CORPUS = Path("/work/shared/data/text/python-3.11-docs.txt.gz")
PREFIX_MEGABYTES = (1, 2, 4, 8)
MAIN_VOCAB_SIZES = (8192, 32768)
SWEEP_VOCAB_SIZES = (4096, 8192, 16384, 32768)
SIZE_SWEEP_VOCAB = 8192
TOOLS = ("bpe-core", "hf-tokenizers", "rustbpe")
SECTION_HEADING = "## Training on text (benchmarks/train_text.py)"
FULL = "full"


# ---------------------------------------------------------------------------------------------
# children: each times reading the file plus training, nothing else


def train_with_bpe_core(args: list[str]) -> dict[str, Any]:
    path, vocab_size = args[0], int(args[1])
    import bpe_core
    import bpe_core.training as training
    from bpe_core import engine

    # Wrapping the counting step where training looks it up splits our time into counting and the rest.
    counting_seconds: list[float] = []
    count_chunks = training.count_chunks

    def timed_count_chunks(*call_args: Any, **call_kwargs: Any) -> Any:
        started = time.perf_counter()
        counts = count_chunks(*call_args, **call_kwargs)
        counting_seconds.append(time.perf_counter() - started)
        return counts

    training.count_chunks = timed_count_chunks

    config = {
        "name": "bench-text",
        "input": {"reader": "text"},
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": vocab_size},
    }
    started = time.perf_counter()
    tokenizer = bpe_core.train(config, [path], progress=False)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "counting_seconds": sum(counting_seconds) if counting_seconds else None,
        "vocab_size": tokenizer.vocab_size,
        "merges": len(tokenizer.merges),
        "unique_chunks": tokenizer.provenance.get("unique_chunks"),
        "compiled": engine.is_compiled(),
        "bpe_core_location": bpe_core.__file__,
        "engine_build": _common.engine_build_stamp(),
    }


def train_with_hf_tokenizers(args: list[str]) -> dict[str, Any]:
    path, vocab_size = args[0], int(args[1])
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    started = time.perf_counter()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train([path], trainer)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "vocab_size": tokenizer.get_vocab_size()}


def train_with_rustbpe(args: list[str]) -> dict[str, Any]:
    path, vocab_size = args[0], int(args[1])
    import rustbpe  # type: ignore[import-untyped]

    started = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        whole_text = handle.read()
    tokenizer = rustbpe.Tokenizer()
    tokenizer.train_from_iterator(iter([whole_text]), vocab_size, pattern=GPT2_PATTERN)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "vocab_size": tokenizer.vocab_size}


CHILD_TASKS = {
    "bpe-core": train_with_bpe_core,
    "hf-tokenizers": train_with_hf_tokenizers,
    "rustbpe": train_with_rustbpe,
}


# ---------------------------------------------------------------------------------------------
# parent


def prepare_corpus(work_dir: Path) -> dict[str, Path]:
    """The corpus as plain text, and its prefixes of 1, 2, 4, 8 MB (10**6 bytes) cut at a newline."""
    full_path = work_dir / "python-docs-full.txt"
    with gzip.open(CORPUS, "rb") as compressed, open(full_path, "wb") as plain:
        shutil.copyfileobj(compressed, plain)
    data = full_path.read_bytes()
    paths = {FULL: full_path}
    for megabytes in PREFIX_MEGABYTES:
        cut = data.rfind(b"\n", 0, megabytes * 10**6) + 1
        prefix_path = work_dir / f"python-docs-{megabytes}mb.txt"
        prefix_path.write_bytes(data[:cut])
        paths[f"{megabytes} MB"] = prefix_path
    return paths


def megabytes_of(path: Path) -> float:
    return path.stat().st_size / 10**6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement; the fastest counts")
    options = parser.parse_args()
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()

    with tempfile.TemporaryDirectory(prefix="bpe-bench-text-") as temporary:
        work_dir = Path(temporary)
        corpus = prepare_corpus(work_dir)
        sizes = {name: megabytes_of(path) for name, path in corpus.items()}
        prefix_sizes = ", ".join(f"{sizes[f'{mb} MB']:.2f}" for mb in PREFIX_MEGABYTES)
        print(f"corpus: {CORPUS.name}, {sizes[FULL]:.2f} MB; prefixes {prefix_sizes} MB")

        # (tool, corpus name, vocab size); the main table is the full-file part of the vocab sweep
        jobs: dict[tuple[str, str, int], ChildJob] = {}
        for vocab_size in SWEEP_VOCAB_SIZES:
            for tool in TOOLS:
                jobs[(tool, FULL, vocab_size)] = ChildJob(tool, (str(corpus[FULL]), str(vocab_size)))
        for megabytes in PREFIX_MEGABYTES:
            for tool in TOOLS:
                name = f"{megabytes} MB"
                jobs[(tool, name, SIZE_SWEEP_VOCAB)] = ChildJob(tool, (str(corpus[name]), str(SIZE_SWEEP_VOCAB)))
        results = _common.run_interleaved(
            script, jobs, options.repeats, work_dir, label=lambda key: f"{key[0]} {key[1]} vocab {key[2]}"
        )

    mismatched = [
        f"{tool} {name} vocab {vocab}: got {summary.best.get('vocab_size')}"
        for (tool, name, vocab), summary in results.items()
        if summary.best.get("vocab_size") != vocab
    ]

    main_rows = []
    for vocab_size in MAIN_VOCAB_SIZES:
        ours = results[("bpe-core", FULL, vocab_size)]
        for tool in TOOLS:
            summary = results[(tool, FULL, vocab_size)]
            main_rows.append(
                [
                    tool,
                    str(vocab_size),
                    seconds_text(summary),
                    f"{summary.peak_tree_mb:.0f}",
                    f"{summary.peak_main_mb:.0f}",
                    f"{ratio(summary.seconds(), ours.seconds()):.2f}",
                ]
            )
    main_table = markdown_table(
        ["tool", "vocab", "seconds", "peak MB (process tree)", "peak MB (main process)", "time / bpe-core time"],
        main_rows,
    )

    size_names = [f"{mb} MB" for mb in PREFIX_MEGABYTES] + [FULL]
    smallest = size_names[0]

    def at_size(tool: str, name: str) -> Summary:
        return results[(tool, name, SIZE_SWEEP_VOCAB)]

    size_rows = []
    for name in size_names:
        ours, hf, rust = (at_size(tool, name) for tool in TOOLS)
        size_rows.append(
            [
                f"{sizes[name]:.2f}",
                f"{ours.seconds():.2f}",
                f"{ratio(sizes[name], sizes[smallest]):.1f}x",
                f"{ratio(ours.seconds(), at_size('bpe-core', smallest).seconds()):.1f}x",
                f"{hf.seconds():.2f}",
                f"{ratio(hf.seconds(), at_size('hf-tokenizers', smallest).seconds()):.1f}x",
                f"{rust.seconds():.2f}",
                f"{ratio(rust.seconds(), at_size('rustbpe', smallest).seconds()):.1f}x",
                f"{ratio(hf.seconds(), ours.seconds()):.2f}",
                f"{ratio(rust.seconds(), ours.seconds()):.2f}",
                f"{ours.peak_tree_mb:.0f} / {hf.peak_tree_mb:.0f} / {rust.peak_tree_mb:.0f}",
            ]
        )
    size_table = markdown_table(
        [
            "MB",
            "bpe-core s",
            "size vs 1 MB",
            "bpe-core time vs 1 MB",
            "HF s",
            "HF time vs 1 MB",
            "rustbpe s",
            "rustbpe time vs 1 MB",
            "HF / bpe-core",
            "rustbpe / bpe-core",
            "peak MB (ours / HF / rustbpe)",
        ],
        size_rows,
    )

    vocab_rows = []
    first_vocab = SWEEP_VOCAB_SIZES[0]
    for vocab_size in SWEEP_VOCAB_SIZES:
        ours, hf, rust = (results[(tool, FULL, vocab_size)] for tool in TOOLS)
        counting = ours.best.get("counting_seconds")
        vocab_rows.append(
            [
                str(vocab_size),
                f"{ours.seconds():.2f}",
                f"{ratio(ours.seconds(), results[('bpe-core', FULL, first_vocab)].seconds()):.2f}x",
                f"{counting:.2f}" if counting is not None else "n/a",
                f"{ours.seconds() - counting:.2f}" if counting is not None else "n/a",
                f"{hf.seconds():.2f}",
                f"{ratio(hf.seconds(), results[('hf-tokenizers', FULL, first_vocab)].seconds()):.2f}x",
                f"{rust.seconds():.2f}",
                f"{ratio(rust.seconds(), results[('rustbpe', FULL, first_vocab)].seconds()):.2f}x",
                f"{ratio(hf.seconds(), ours.seconds()):.2f}",
                f"{ratio(rust.seconds(), ours.seconds()):.2f}",
            ]
        )
    vocab_table = markdown_table(
        [
            "vocab",
            "bpe-core s",
            f"vs {first_vocab}",
            "of which counting s",
            "rest (symbols, merges) s",
            "HF s",
            f"HF vs {first_vocab}",
            "rustbpe s",
            f"rustbpe vs {first_vocab}",
            "HF / bpe-core",
            "rustbpe / bpe-core",
        ],
        vocab_rows,
    )

    notes = [
        f"Corpus `{CORPUS.name}` decompressed to {sizes[FULL]:.2f} MB of plain text; prefixes cut at a newline "
        f"({prefix_sizes} MB). GPT-2 split pattern, "
        "byte-level, no special tokens.",
        "bpe-core: `bpe_core.train(config, [path], progress=False)` with the `text` reader and `gpt2` "
        "pretokenizer, workers = all cores. HF: `tokenizer.train([path], BpeTrainer(...))` with a GPT-2 `Split` "
        "then `ByteLevel(use_regex=False)`. rustbpe: `train_from_iterator(iter([whole_text]), vocab, pattern=GPT2)`.",
        f"Seconds: fastest of {options.repeats} runs, each in a fresh interpreter, timed inside the child from just "
        "before reading the file to the end of training (interpreter start-up and imports excluded).",
        "Peak MB (process tree): highest sum of RSS over the child and its worker processes, sampled every ~10 ms, "
        "highest of the runs; forked workers share copy-on-write pages with their parent, so the sum counts "
        "shared pages more than once. Peak MB (main process): the child's own `ru_maxrss`, workers excluded.",
        "Counting: time inside bpe-core's `count_chunks` (reading, pretokenizing and counting unique chunks in "
        "forked workers); rest: mapping unique chunks to symbols, building the trainer and merging.",
    ]
    if mismatched:
        notes.append("Vocabulary size differed from the request: " + "; ".join(mismatched))
    _common.publish_report(
        SECTION_HEADING,
        command=f".venv/bin/python benchmarks/train_text.py --repeats {options.repeats}",
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=results[("bpe-core", FULL, SIZE_SWEEP_VOCAB)].best,
        peers=["tokenizers", "rustbpe"],
        summaries=list(results.values()),
        blocks=[
            f"### Full corpus ({sizes[FULL]:.2f} MB)",
            main_table,
            f"### Time against corpus size (vocab {SIZE_SWEEP_VOCAB})",
            size_table,
            f"### Time against vocabulary size (full corpus, {sizes[FULL]:.2f} MB)",
            vocab_table,
        ],
        notes=notes,
    )


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
