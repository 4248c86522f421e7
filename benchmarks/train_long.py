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

Scale (its own section): the whole training path (`bpe_core.train` with a FASTA config:
reader, dna-nucleotides, counting, trainer) on ONE sequence of 4.6, 20 and 60 Mbp by default
(`--sizes` in Mbp), reporting peak bytes per base pair of the training process's RSS (the
sequence as read included) and seconds, the growth exponent of time (least-squares slope of
log t over log n) and the largest size whose measured bytes/bp fit in 20 GB, with the command
that runs it. The sequences are built from the shipped genomes, deterministically: E. coli,
then phage lambda, then the chr17 part (upper-cased, N dropped), then copies of E. coli, each
rotated by a random offset and with 1% of its bases substituted at random (random.Random(15)),
until the length is reached; so no stretch is an exact repeat of another. Hugging Face trains
on the same sequence in 10 kb lines in the same run, by default on E. coli alone (`--hf-up-to`,
in Mbp: on 60 Mbp it takes minutes a run, too long for `make bench`).

    .venv/bin/python benchmarks/train_long.py [--repeats N] [--sizes 4.6,20,60] [--hf-up-to 5] [--scale-only]
"""

import argparse
import gzip
import math
import random
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
SCALE_HEADING = "## One long sequence at scale: memory and time (benchmarks/train_long.py)"
LAMBDA = Path("/work/shared/data/dna/lambda_phage.fa.gz")
CHR17_PART = Path("/work/shared/data/dna/human_chr17_part_softmasked.fa.gz")
DEFAULT_SIZES_MBP = (4.6, 20.0, 60.0)
MUTATION_SEED = 15
MUTATED_SHARE = 0.01
MEMORY_BUDGET_BYTES = 20 * 10**9
FASTA_LINE = 60


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
    """The single record of a FASTA file (gzipped or not): header line dropped, lines joined."""
    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as handle:
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


def long_sequence(base_pairs: int) -> bytes:
    """E. coli, lambda, the chr17 part, then rotated copies of E. coli with 1% of bases
    substituted (seeded), cut at `base_pairs` (at most E. coli's length: E. coli alone)."""
    ecoli = read_genome(GENOME).upper().encode("ascii")
    parts = [ecoli, read_genome(LAMBDA).upper().encode("ascii")]
    parts.append(read_genome(CHR17_PART).upper().replace("N", "").encode("ascii"))
    rng = random.Random(MUTATION_SEED)
    total = sum(len(part) for part in parts)
    while total < base_pairs:
        offset = rng.randrange(len(ecoli))
        copy = bytearray(ecoli[offset:] + ecoli[:offset])
        for _ in range(int(len(copy) * MUTATED_SHARE)):
            where = rng.randrange(len(copy))
            copy[where] = rng.choice([base for base in BASES if base != copy[where]])
        parts.append(bytes(copy))
        total += len(copy)
    return b"".join(parts)[:base_pairs]


def write_long_fasta(path: Path, base_pairs: int) -> None:
    sequence = long_sequence(base_pairs)
    with path.open("wb") as out:
        out.write(f">long_{base_pairs} built by benchmarks/train_long.py\n".encode())
        for start in range(0, len(sequence), FASTA_LINE):
            out.write(sequence[start : start + FASTA_LINE] + b"\n")


def long_with_bpe_core(args: list[str]) -> dict[str, Any]:
    """The whole path: bpe_core.train on the FASTA file (reader, pretokenizer, counting, trainer)."""
    import bpe_core
    from bpe_core import engine

    path = args[0]
    config = {
        "name": "long",
        "input": {"reader": "fasta", "paths": [path]},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": VOCAB_SIZE, "min_frequency": 1},
    }
    started, cpu_started = time.perf_counter(), time.process_time()
    tokenizer = bpe_core.train(config, workers=1, progress=False)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu_started,
        "base_pairs": int(tokenizer.provenance["symbols"]),
        "merges": len(tokenizer.merges),
        "compiled": engine.is_compiled(),
        "bpe_core_location": engine.__file__,
        "engine_build": _common.engine_build_stamp(),
    }


def long_with_hf_tokenizers(args: list[str]) -> dict[str, Any]:
    from tokenizers import Tokenizer, models, trainers

    started = time.perf_counter()
    genome = read_genome(Path(args[0]))
    lines = [genome[start : start + HF_LINE_LENGTH] for start in range(0, len(genome), HF_LINE_LENGTH)]
    del genome
    tokenizer = Tokenizer(models.BPE())
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, initial_alphabet=list("ACGT"), show_progress=False)
    tokenizer.train_from_iterator(lines, trainer)
    return {"seconds": time.perf_counter() - started, "base_pairs": sum(len(line) for line in lines)}


CHILD_TASKS = {
    "long-bpe-core": long_with_bpe_core,
    "long-hf-tokenizers": long_with_hf_tokenizers,
    "genome-bpe-core": genome_with_bpe_core,
    "genome-hf-tokenizers": genome_with_hf_tokenizers,
    "tandem-bpe-core": tandem_repeat_with_bpe_core,
}


# ---------------------------------------------------------------------------------------------
# parent


def megabase_label(summary: Summary) -> str:
    return f"{summary.best['base_pairs'] / 1e6:.2f}"


def growth_exponent(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of log(seconds) over log(length): 1.0 is linear."""
    xs = [math.log(length) for length, _ in points]
    ys = [math.log(seconds) for _, seconds in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread else float("nan")


def scale(sizes_mbp: list[float], repeats: int, script: Path, hf_up_to_mbp: float) -> None:
    """The whole training path on one long sequence per size: bytes/bp at peak, seconds, exponent;
    Hugging Face on the sizes up to `hf_up_to_mbp`."""
    started = time.perf_counter()
    load_at_start = _common.load_average()
    sizes = [int(size * 1e6) if size != DEFAULT_SIZES_MBP[0] else len(read_genome(GENOME)) for size in sizes_mbp]
    with tempfile.TemporaryDirectory(prefix="bpe-bench-scale-") as temporary:
        work_dir = Path(temporary)
        jobs: dict[str, ChildJob] = {}
        for size in sizes:
            path = work_dir / f"long_{size}.fa"
            write_long_fasta(path, size)
            jobs[f"bpe-core {size}"] = ChildJob("long-bpe-core", (str(path),))
            if size <= hf_up_to_mbp * 1e6:
                jobs[f"hf-tokenizers {size}"] = ChildJob("long-hf-tokenizers", (str(path),))
        print(f"one long sequence, whole training path, sizes {', '.join(f'{size:,}' for size in sizes)} bp")
        results = _common.run_interleaved(script, jobs, repeats, work_dir)
    with_hf = any(key.startswith("hf-tokenizers") for key in results)
    rows = []
    points, cpu_points = [], []
    for size in sizes:
        ours = results[f"bpe-core {size}"]
        per_bp = ours.peak_tree_mb * _common.MEGABYTE / size
        points.append((float(size), ours.seconds()))
        cpu_points.append((float(size), float(ours.best["cpu_seconds"])))
        row = [f"{size / 1e6:.2f}", f"{ours.seconds():.2f}", f"{ours.best['cpu_seconds']:.2f}"]
        row += [f"{ours.peak_tree_mb:.0f}", f"{per_bp:.1f}"]
        row.append(str(ours.best["merges"]))
        if f"hf-tokenizers {size}" in results:
            hf = results[f"hf-tokenizers {size}"]
            row += [
                f"{hf.seconds():.2f}",
                f"{hf.peak_tree_mb:.0f}",
                f"{hf.peak_tree_mb * _common.MEGABYTE / size:.1f}",
                f"{ratio(hf.seconds(), ours.seconds()):.2f}",
            ]
        elif with_hf:
            row += ["not run"] * 4
        rows.append(row)
    headers = ["Mbp", "bpe-core s", "bpe-core CPU s", "bpe-core peak MB", "bpe-core bytes/bp", "merges"]
    if with_hf:
        headers += ["HF s (10 kb lines)", "HF peak MB", "HF bytes/bp", "HF s / bpe-core s"]
    largest = sizes[-1]
    per_bp_largest = results[f"bpe-core {largest}"].peak_tree_mb * _common.MEGABYTE / largest
    fits = int(MEMORY_BUDGET_BYTES / per_bp_largest)
    exponent = growth_exponent(points) if len(points) > 1 else float("nan")
    cpu_exponent = growth_exponent(cpu_points) if len(cpu_points) > 1 else float("nan")
    fits_mbp = math.floor(fits / 1e6)
    blocks = [
        markdown_table(headers, rows),
        f"Growth exponent of bpe-core's time (least-squares slope of log t over log n, "
        f"{len(points)} sizes): {exponent:.2f} in wall seconds, {cpu_exponent:.2f} in CPU seconds "
        "(1.00 is linear; CPU seconds are what other work on the machine skews least).",
        f"Largest size that fits in 20 GB at the {per_bp_largest:.1f} bytes/bp measured at "
        f"{largest / 1e6:.1f} Mbp: about {fits_mbp:,} Mbp. Run it with "
        f"`.venv/bin/python benchmarks/train_long.py --scale-only --repeats 1 --sizes {fits_mbp}`.",
    ]
    if len(sizes) > 1:
        below = sizes[-2]
        grown_mb = results[f"bpe-core {largest}"].peak_tree_mb - results[f"bpe-core {below}"].peak_tree_mb
        marginal = grown_mb * _common.MEGABYTE / (largest - below)
        chromosome_1 = 248_956_422
        peak_bytes = results[f"bpe-core {largest}"].peak_tree_mb * _common.MEGABYTE
        projected = peak_bytes + marginal * (chromosome_1 - largest)
        blocks.append(
            f"Each base pair added from {below / 1e6:.1f} to {largest / 1e6:.1f} Mbp cost {marginal:.1f} bytes "
            f"at peak; at that rate human chromosome 1 ({chromosome_1 / 1e6:.0f} Mbp) would peak at about "
            f"{projected / 1e9:.1f} GB, {projected / chromosome_1:.1f} bytes/bp."
        )
    notes = [
        "bpe-core: `bpe_core.train` with `reader: fasta`, `dna-nucleotides` (defaults), vocab "
        f"{VOCAB_SIZE}, min_frequency 1, workers=1: reading, counting and training, one chunk.",
        "Peak MB: the highest polled sum of RSS over the child's process tree (interpreter and imports "
        "included); bytes/bp divides it by the sequence's length.",
        "Sequence: E. coli, lambda, the chr17 part (upper case, N dropped), then copies of E. coli rotated by "
        f"a random offset with {MUTATED_SHARE:.0%} of bases substituted (random.Random({MUTATION_SEED})), "
        "cut at the size; 4.6 Mbp is E. coli alone.",
        f"HF tokenizers: the same sequence in {HF_LINE_LENGTH:,} bp lines, `BpeTrainer(vocab_size={VOCAB_SIZE})`.",
    ]
    first = results[f"bpe-core {sizes[0]}"]
    _common.publish_report(
        SCALE_HEADING,
        command=f".venv/bin/python benchmarks/train_long.py --scale-only --repeats {repeats} "
        f"--sizes {','.join(f'{size:g}' for size in sizes_mbp)} --hf-up-to {hf_up_to_mbp:g}",
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=first.best,
        peers=["tokenizers"] if with_hf else [],
        summaries=list(results.values()),
        blocks=blocks,
        notes=notes,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement; the fastest counts")
    parser.add_argument(
        "--sizes",
        default=",".join(f"{size:g}" for size in DEFAULT_SIZES_MBP),
        help="comma-separated lengths in Mbp for the scale section (4.6 means E. coli exactly)",
    )
    parser.add_argument("--scale-only", action="store_true", help="only the scale section")
    parser.add_argument(
        "--hf-up-to", type=float, default=5.0, help="Hugging Face only on sizes up to this many Mbp (0: none)"
    )
    options = parser.parse_args()
    script = Path(__file__).resolve()
    scale([float(size) for size in options.sizes.split(",")], options.repeats, script, options.hf_up_to)
    if options.scale_only:
        return
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
