"""BPE training on very long single chunks (whole genomes), where per-merge cost must not grow with length.

Data: the E. coli K-12 MG1655 genome (one 4,639,675 bp record) as ONE chunk over A=0 C=1 G=2 T=3,
vocab 4096 (4092 merges), with `bpe_core.engine.train` directly; prefixes of 0.5, 1, 2, 4 Mbp and
the whole genome show how time grows with length. In the same run: Hugging Face tokenizers on the
genome cut into 10 kb lines (it has no way to take one 4.6 Mbp chunk), the 10 Mbp tandem repeat
of tandem_repeat_stress.fa.gz as one chunk, and the compiled engine against its pure-Python
sources (BPE_CORE_PURE=1) on the 1 Mbp prefix.

Each measurement is a fresh interpreter; the child times reading the FASTA, mapping bases to ids
and training (imports excluded), and separately the training call alone; the parent samples the
RSS of the child's process tree every ~10 ms. Prints the tables and writes them to the "Long
sequences" section of docs/benchmarks.md. It asserts nothing about timings.

    .venv/bin/python benchmarks/train_long.py [--repeats N]
"""

import argparse
import gzip
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import ChildJob, Summary, markdown_table, ratio, seconds_text

GENOME = Path("/work/shared/data/dna/ecoli_k12_mg1655.fa.gz")
TANDEM_REPEATS = Path("/work/shared/data/dna/tandem_repeat_stress.fa.gz")
BASES = b"ACGT"
BASE_TO_ID = bytes.maketrans(BASES, bytes(range(len(BASES))))
VOCAB_SIZE = 4096
NUM_MERGES = VOCAB_SIZE - len(BASES)
PREFIX_BASE_PAIRS = (500_000, 1_000_000, 2_000_000, 4_000_000)
WHOLE = 0  # prefix length meaning "the whole genome"
HF_LINE_LENGTH = 10_000
PURE_CHECK_BASE_PAIRS = 1_000_000
TANDEM_TIMEOUT_SECONDS = 300.0
SECTION_HEADING = "## Long sequences (benchmarks/train_long.py)"


# ---------------------------------------------------------------------------------------------
# children


def read_fasta_records(path: Path) -> list[tuple[str, str]]:
    """(header, sequence) for each record of a gzipped FASTA file, lines joined."""
    records: list[tuple[str, list[str]]] = []
    with gzip.open(path, "rt") as handle:
        for line in handle:
            line = line.strip()
            if line.startswith(">"):
                records.append((line[1:], []))
            elif line:
                records[-1][1].append(line)
    return [(header, "".join(lines)) for header, lines in records]


def read_genome(path: Path) -> str:
    """The single record of a FASTA file: header line dropped, lines joined."""
    with gzip.open(path, "rt") as handle:
        lines = handle.read().split("\n")
    if not lines[0].startswith(">") or any(line.startswith(">") for line in lines[1:]):
        raise ValueError(f"{path}: expected exactly one FASTA record")
    return "".join(line.strip() for line in lines[1:])


def base_ids(sequence: str) -> list[int]:
    encoded = sequence.encode("ascii").translate(BASE_TO_ID)
    if encoded and max(encoded) >= len(BASES):
        raise ValueError("sequence holds symbols other than A, C, G, T")
    return list(encoded)


def train_one_chunk(symbols: list[int]) -> tuple[float, int]:
    from bpe_core import engine

    started = time.perf_counter()
    trainer = engine.train(len(BASES), [symbols], [1], NUM_MERGES)
    return time.perf_counter() - started, len(trainer.merges)


def genome_with_bpe_core(args: list[str]) -> dict[str, Any]:
    prefix_length = int(args[0])
    from bpe_core import engine

    started = time.perf_counter()
    genome = read_genome(GENOME)
    sequence = genome[:prefix_length] if prefix_length else genome
    symbols = base_ids(sequence)
    train_seconds, merges = train_one_chunk(symbols)
    return {
        "seconds": time.perf_counter() - started,
        "train_seconds": train_seconds,
        "base_pairs": len(sequence),
        "merges": merges,
        "compiled": engine.is_compiled(),
        "bpe_core_location": engine.__file__,
        "engine_build": _common.engine_build_stamp(),
    }


def genome_with_hf_tokenizers(args: list[str]) -> dict[str, Any]:
    from tokenizers import Tokenizer, models, trainers

    started = time.perf_counter()
    genome = read_genome(GENOME)
    lines = [genome[start : start + HF_LINE_LENGTH] for start in range(0, len(genome), HF_LINE_LENGTH)]
    tokenizer = Tokenizer(models.BPE())
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, initial_alphabet=list("ACGT"), show_progress=False)
    train_started = time.perf_counter()
    tokenizer.train_from_iterator(lines, trainer)
    finished = time.perf_counter()
    return {
        "seconds": finished - started,
        "train_seconds": finished - train_started,
        "base_pairs": len(genome),
        "lines": len(lines),
        "vocab_size": tokenizer.get_vocab_size(),
    }


def tandem_repeat_with_bpe_core(args: list[str]) -> dict[str, Any]:
    from bpe_core import engine

    started = time.perf_counter()
    header, sequence = max(read_fasta_records(TANDEM_REPEATS), key=lambda record: len(record[1]))
    symbols = base_ids(sequence)
    train_seconds, merges = train_one_chunk(symbols)
    return {
        "seconds": time.perf_counter() - started,
        "train_seconds": train_seconds,
        "record": header,
        "base_pairs": len(sequence),
        "merges": merges,
        "compiled": engine.is_compiled(),
        "engine_build": _common.engine_build_stamp(),
    }


CHILD_TASKS = {
    "genome-bpe-core": genome_with_bpe_core,
    "genome-hf-tokenizers": genome_with_hf_tokenizers,
    "tandem-bpe-core": tandem_repeat_with_bpe_core,
}


# ---------------------------------------------------------------------------------------------
# parent


def megabase_label(summary: Summary) -> str:
    return f"{summary.best['base_pairs'] / 1e6:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement; the fastest counts")
    options = parser.parse_args()
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()

    prefix_lengths = (*PREFIX_BASE_PAIRS, WHOLE)
    with tempfile.TemporaryDirectory(prefix="bpe-bench-long-") as temporary:
        work_dir = Path(temporary)
        print("E. coli prefixes, bpe-core engine, one chunk, and HF tokenizers on 10 kb lines")
        genome_jobs: dict[str, ChildJob] = {
            f"bpe-core {length or 'whole'}": ChildJob("genome-bpe-core", (str(length),)) for length in prefix_lengths
        }
        genome_jobs["hf-tokenizers whole"] = ChildJob("genome-hf-tokenizers")
        genome_jobs["bpe-core pure 1M"] = ChildJob(
            "genome-bpe-core", (str(PURE_CHECK_BASE_PAIRS),), env={"BPE_CORE_PURE": "1"}
        )
        genome = _common.run_interleaved(script, genome_jobs, options.repeats, work_dir, best_by="train_seconds")
        print("tandem repeat, bpe-core engine, one chunk")
        tandem = _common.run_interleaved(
            script,
            {"tandem": ChildJob("tandem-bpe-core", timeout_seconds=TANDEM_TIMEOUT_SECONDS)},
            options.repeats,
            work_dir,
            best_by="train_seconds",
        )["tandem"]

    ours_whole = genome["bpe-core whole"]
    compiled_1m = genome[f"bpe-core {PURE_CHECK_BASE_PAIRS}"]
    pure_1m = genome["bpe-core pure 1M"]
    hf_whole = genome["hf-tokenizers whole"]

    # growth with length
    growth_rows = []
    previous: Summary | None = None
    first = genome[f"bpe-core {PREFIX_BASE_PAIRS[0]}"]
    for length in prefix_lengths:
        summary = genome[f"bpe-core {length or 'whole'}"]
        base_pairs = summary.best["base_pairs"]
        if previous is None:
            step_columns = ["", "", ""]
        else:
            length_factor = ratio(base_pairs, previous.best["base_pairs"])
            time_factor = ratio(summary.seconds("train_seconds"), previous.seconds("train_seconds"))
            step_columns = [
                f"{length_factor:.2f}x",
                f"{time_factor:.2f}x",
                f"{math.log(time_factor) / math.log(length_factor):.2f}",
            ]
        growth_rows.append(
            [
                megabase_label(summary),
                f"{summary.seconds('train_seconds'):.2f}",
                f"{summary.seconds():.2f}",
                str(summary.best["merges"]),
                f"{summary.peak_tree_mb:.0f}",
                *step_columns,
                f"{summary.seconds('train_seconds') / base_pairs * 1e6:.2f}",
            ]
        )
        previous = summary
    growth_table = markdown_table(
        [
            "Mbp",
            "train s",
            "total s (read + map + train)",
            "merges",
            "peak MB",
            "length vs previous",
            "train time vs previous",
            "exponent",
            "train µs per bp",
        ],
        growth_rows,
    )
    overall_length = ratio(ours_whole.best["base_pairs"], first.best["base_pairs"])
    overall_time = ratio(ours_whole.seconds("train_seconds"), first.seconds("train_seconds"))
    growth_summary = (
        f"From {megabase_label(first)} to {megabase_label(ours_whole)} Mbp the length grows {overall_length:.2f}x "
        f"and the training time {overall_time:.2f}x (exponent {math.log(overall_time) / math.log(overall_length):.2f}; "
        "1.00 is linear)."
    )

    peer_table = markdown_table(
        [
            "tool",
            "input",
            "train s",
            "total s",
            "peak MB (process tree)",
            "train / bpe-core train",
            "total / bpe-core total",
        ],
        [
            [
                "bpe-core",
                f"1 chunk of {ours_whole.best['base_pairs']:,} bp",
                f"{ours_whole.seconds('train_seconds'):.2f}",
                f"{ours_whole.seconds():.2f}",
                f"{ours_whole.peak_tree_mb:.0f}",
                "1.00",
                "1.00",
            ],
            [
                "hf-tokenizers",
                f"{hf_whole.best['lines']} lines of {HF_LINE_LENGTH:,} bp",
                f"{hf_whole.seconds('train_seconds'):.2f}",
                f"{hf_whole.seconds():.2f}",
                f"{hf_whole.peak_tree_mb:.0f}",
                f"{ratio(hf_whole.seconds('train_seconds'), ours_whole.seconds('train_seconds')):.2f}",
                f"{ratio(hf_whole.seconds(), ours_whole.seconds()):.2f}",
            ],
        ],
    )

    mode_rows = []
    for name, summary in (("compiled", compiled_1m), ("pure (BPE_CORE_PURE=1)", pure_1m)):
        mode_rows.append(
            [
                name,
                str(summary.best["compiled"]),
                f"{summary.seconds('train_seconds'):.2f}",
                f"{summary.peak_tree_mb:.0f}",
                f"{ratio(summary.seconds('train_seconds'), compiled_1m.seconds('train_seconds')):.1f}",
            ]
        )
    mode_table = markdown_table(
        [
            "engine",
            "engine.is_compiled()",
            f"train s ({PURE_CHECK_BASE_PAIRS / 1e6:g} Mbp)",
            "peak MB",
            "time / compiled",
        ],
        mode_rows,
    )
    if not compiled_1m.best["compiled"] or pure_1m.best["compiled"]:
        mode_table += (
            "\n\nWARNING: the engine did not load in the expected mode; this factor is not compiled against pure."
        )

    if tandem.best:
        tandem_table = markdown_table(
            [
                "record",
                "bp",
                "train s",
                "total s",
                "merges learned",
                "peak MB (process tree)",
                "peak MB (main, kernel)",
            ],
            [
                [
                    tandem.best["record"],
                    f"{tandem.best['base_pairs']:,}",
                    seconds_text(tandem, "train_seconds"),
                    seconds_text(tandem),
                    str(tandem.best["merges"]),
                    f"{tandem.peak_tree_mb:.0f}",
                    f"{tandem.peak_main_mb:.0f}",
                ]
            ],
        )
        if tandem.best["merges"] < NUM_MERGES:
            tandem_table += (
                f"\n\nOnly {tandem.best['merges']} of {NUM_MERGES} merges: the repeat collapses into a single token "
                "before the vocabulary is full, so no pair is left to merge."
            )
    else:
        tandem_table = (
            f"Stopped after {TANDEM_TIMEOUT_SECONDS:.0f} s without finishing "
            f"(peak {tandem.peak_tree_mb:.0f} MB up to then)."
        )

    notes = [
        f"bpe-core: `bpe_core.engine.train(4, [ids], [1], num_merges={NUM_MERGES})`, the whole sequence as one "
        "chunk, A=0 C=1 G=2 T=3, default tie-break (smallest pair), min_frequency 1.",
        f"HF tokenizers: `Tokenizer(models.BPE())`, no pre-tokenizer, `train_from_iterator` over the genome cut "
        f"into {HF_LINE_LENGTH:,} bp lines, `BpeTrainer(vocab_size={VOCAB_SIZE}, initial_alphabet=list('ACGT'))`. "
        "It does not count pairs across line boundaries, so its input is not identical to ours.",
        f"Train s: the training call alone; total s: reading the gzipped FASTA, mapping bases to ids (or cutting "
        f"lines) and training. Fastest of {options.repeats} runs by train time, each in a fresh interpreter "
        "(imports excluded).",
        "Peak MB: highest sum of RSS over the child's process tree sampled every ~10 ms (no worker processes "
        "here), highest of the runs; it includes the decoded genome and the Python list of ids.",
        f"Exponent: log(time ratio) / log(length ratio) between consecutive rows. Tandem repeat: the longest "
        f"record of `{TANDEM_REPEATS.name}` (a 125 bp unit repeated 80,000 times), stopped after "
        f"{TANDEM_TIMEOUT_SECONDS:.0f} s if unfinished.",
    ]
    _common.publish_report(
        SECTION_HEADING,
        command=f".venv/bin/python benchmarks/train_long.py --repeats {options.repeats}",
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=ours_whole.best,
        peers=["tokenizers"],
        summaries=[*genome.values(), tandem],
        blocks=[
            f"### E. coli K-12 MG1655 as one chunk, vocab {VOCAB_SIZE}",
            growth_table,
            growth_summary,
            "### Against Hugging Face tokenizers (whole genome)",
            peer_table,
            f"### Tandem repeat as one chunk, vocab {VOCAB_SIZE}",
            tandem_table,
            "### Compiled against pure-Python engine",
            mode_table,
        ],
        notes=notes,
    )


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
