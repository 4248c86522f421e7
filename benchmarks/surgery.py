"""Compression of grown vocabularies on held-back data: SuperBPE's superword stage against plain BPE
at the same vocabulary, and vocabularies extended to new data (text, and a genome of another species).

- Superword: the shared Python docs, the first 90% (cut at a newline) to train, the last 10% held
  back. Plain BPE is configs/gpt2-style.yaml trained to V; SuperBPE is the same trained to 80% of V
  (the transition point) and continued to V with configs/superbpe-stage2.yaml (`--from`), whose
  pretokenizer lets merges cross single spaces. Measured: tokens per byte of the held-back text.
- Extension, text: a tokenizer trained on the US founding texts shipped in bpe_core/samples,
  extended (`--from`, all old ids kept) on the docs' training part; compression on the held-back docs.
- Extension, DNA: configs/dnabert2-style.yaml trained on the phage lambda genome, extended on the
  first 90% of the E. coli genome; compression on the last 10% of E. coli.

Prints the tables and writes the "Growing vocabularies" section of docs/benchmarks.md. The
numbers are counts, the same on any machine, but for stage 2's seconds: a run while other
processes keep the machine busy is run again. Asserts nothing.

    .venv/bin/python benchmarks/surgery.py [--vocab-sizes 16384 32768]
"""

import argparse
import gzip
import tempfile
import time
from pathlib import Path

import _common
from _common import REPO_ROOT, markdown_table

import bpe_core
from bpe_core import engine

DATA = REPO_ROOT.parent / "shared" / "data"
DOCS = DATA / "text" / "python-3.11-docs.txt.gz"
LAMBDA = DATA / "dna" / "lambda_phage.fa.gz"
ECOLI = DATA / "dna" / "ecoli_k12_mg1655.fa.gz"
CONFIGS = REPO_ROOT / "configs"
FOUNDING = REPO_ROOT / "bpe_core" / "samples" / "us-founding-texts.txt"
SECTION_HEADING = "## Growing vocabularies (benchmarks/surgery.py)"
TRANSITION = 0.8


def split_docs(directory: Path) -> tuple[Path, str]:
    """The docs' training part as a file, and the held-back text."""
    with gzip.open(DOCS, "rt", encoding="utf-8", newline="") as handle:
        text = handle.read()
    cut = text.index("\n", int(len(text) * 0.9)) + 1
    train = directory / "docs-train.txt"
    train.write_text(text[:cut], encoding="utf-8", newline="")
    return train, text[cut:]


def superword_rows(train: Path, held_back: str, vocab_sizes: list[int]) -> list[list[str]]:
    size = len(held_back.encode("utf-8"))
    rows = []
    for vocab_size in vocab_sizes:
        plain = bpe_core.train(CONFIGS / "gpt2-style.yaml", [train], {"trainer.vocab_size": vocab_size}, progress=False)
        transition = int(vocab_size * TRANSITION)
        stage1 = bpe_core.train(
            CONFIGS / "gpt2-style.yaml", [train], {"trainer.vocab_size": transition}, progress=False
        )
        started = time.perf_counter()
        stage2 = bpe_core.train(
            CONFIGS / "superbpe-stage2.yaml", [train], {"trainer.vocab_size": vocab_size}, progress=False, base=stage1
        )
        seconds = time.perf_counter() - started
        plain_tokens, super_tokens = len(plain.encode_ordinary(held_back)), len(stage2.encode_ordinary(held_back))
        superwords = sum(1 for token in stage2.merged_ids() if b" " in stage2.token_bytes(token).strip(b" "))
        rows.append(
            [
                f"{vocab_size:,}",
                f"{transition:,}",
                f"{plain_tokens / size:.4f}",
                f"{super_tokens / size:.4f}",
                f"{1 - super_tokens / plain_tokens:.1%}",
                f"{superwords:,}",
                f"{seconds:.1f}",
            ]
        )
        print(rows[-1])
    return rows


def text_extension_row(train: Path, held_back: str) -> list[str]:
    config = CONFIGS / "gpt2-style.yaml"
    base = bpe_core.train(config, [FOUNDING], {"trainer.vocab_size": 4096}, progress=False)
    extended = bpe_core.train(config, [train], {"trainer.vocab_size": 8192}, progress=False, base=base)
    size = len(held_back.encode("utf-8"))
    before, after = len(base.encode_ordinary(held_back)), len(extended.encode_ordinary(held_back))
    return ["text: US founding texts -> + Python docs", "4,096 -> 8,192", f"{size / before:.2f}", f"{size / after:.2f}"]


def dna_extension_row(directory: Path) -> list[str]:
    config = CONFIGS / "dnabert2-style.yaml"
    with gzip.open(ECOLI, "rt", encoding="ascii") as handle:
        sequence = "".join(line.strip() for line in handle if not line.startswith(">"))
    cut = int(len(sequence) * 0.9)
    train = directory / "ecoli-train.fa"
    train.write_text(">ecoli_first_90\n" + sequence[:cut] + "\n", encoding="ascii")
    held_back = sequence[cut:]
    base = bpe_core.train(config, [LAMBDA], {"trainer.vocab_size": 1024}, progress=False)
    extended = bpe_core.train(config, [train], {"trainer.vocab_size": 4096}, progress=False, base=base)
    before, after = len(base.encode(held_back)), len(extended.encode(held_back))
    return [
        "DNA: phage lambda -> + E. coli (first 90%)",
        "1,024 -> 4,096",
        f"{len(held_back) / before:.2f}",
        f"{len(held_back) / after:.2f}",
    ]


def method_notes() -> list[str]:
    """The docstring's list of what each table measures, a note per item."""
    items = __doc__.split("\n\n")[1].removeprefix("- ").split("\n- ")
    return [" ".join(line.strip() for line in item.splitlines()) for item in items]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[16384, 32768])
    args = parser.parse_args()
    started = time.perf_counter()
    load_at_start = _common.load_average()
    # counts, the same on any machine; only "stage 2 s" is a time, so a busy run is run again
    for attempt in range(_common.BUSY_RERUNS + 1):
        marks = _common.cpu_marks()
        with tempfile.TemporaryDirectory(prefix="bpe-bench-surgery-") as temporary:
            directory = Path(temporary)
            train, held_back = split_docs(directory)
            superword = superword_rows(train, held_back, args.vocab_sizes)
            extension = [text_extension_row(train, held_back), dna_extension_row(directory)]
        other_cores = _common.other_cores_since(marks)
        if other_cores <= _common.BUSY_CORES or attempt == _common.BUSY_RERUNS:
            break
        print(f"busy machine: other processes used {other_cores:.2f} cores; running it again")
    command = f".venv/bin/python benchmarks/surgery.py --vocab-sizes {' '.join(map(str, args.vocab_sizes))}"
    _common.publish_report(
        SECTION_HEADING,
        command=command,
        started=started,
        load_at_start=load_at_start,
        bpe_core_result={"compiled": engine.is_compiled(), "bpe_core_location": bpe_core.__file__},
        peers=[],
        summaries=[],
        facts=[
            ("BUSY: " if other_cores > _common.BUSY_CORES else "")
            + f"run in this process: other processes used {other_cores:.2f} cores meanwhile; run {attempt + 1} "
            f"time(s) (again while above {_common.BUSY_CORES} cores, at most {_common.BUSY_RERUNS} more times)"
        ],
        blocks=[
            "### SuperBPE against plain BPE at the same vocabulary (held-back 10% of the Python docs)",
            markdown_table(
                [
                    "vocab",
                    "transition",
                    "plain BPE tokens/byte",
                    "SuperBPE tokens/byte",
                    "fewer tokens",
                    "superword tokens",
                    "stage 2 s",
                ],
                superword,
            ),
            "### Extension: compression on held-back data before and after (all old ids kept)",
            markdown_table(["vocabulary", "vocab", "symbols/token before", "after"], extension),
        ],
        notes=method_notes(),
    )


if __name__ == "__main__":
    main()
