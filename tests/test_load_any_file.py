"""Any tokenizer file wherever one is read: `bpe_core.load` and `bpe ... -t` take our own files,
Hugging Face `tokenizer.json` (or a folder holding one) and the published `.tiktoken`
vocabularies alike, told apart by content as `bpe import` tells them, and give tiktoken's ids.
Another `.tiktoken` file is one error that says how to give its pattern."""

import gzip
import shutil
from pathlib import Path

import pytest
import tiktoken
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.interop import PUBLISHED_SPECIAL_TOKENS, published_vocabulary_path, read_ranks, tiktoken_encoding
from helpers.patterns import PUBLISHED_PATTERNS
from helpers.text import docs_text

import bpe_core
from bpe_core import BpeError


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """cl100k_base as a .tiktoken file (plain and gzip), the same bytes under a name that does not
    say, our own file, a Hugging Face tokenizer.json and a model folder holding it."""
    folder = tmp_path_factory.mktemp("any-file")
    packed = published_vocabulary_path("cl100k")
    plain = folder / "cl100k_base.tiktoken"
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    unnamed = folder / "vocabulary"
    shutil.copy(plain, unnamed)
    imported = bpe_core.from_tiktoken(plain)
    imported.save(folder / "cl100k.json")
    (folder / "model").mkdir()
    imported.to_hf(folder / "model" / "tokenizer.json")
    return {
        "tiktoken": plain,
        "tiktoken.gz": packed,
        "unnamed": unnamed,
        "ours": folder / "cl100k.json",
        "hf": folder / "model" / "tokenizer.json",
        "hf folder": folder / "model",
    }


def cl100k() -> tiktoken.Encoding:
    """tiktoken's cl100k_base, from the same file (no download)."""
    ranks = read_ranks(published_vocabulary_path("cl100k"))
    return tiktoken_encoding("cl100k_base", ranks, PUBLISHED_PATTERNS["cl100k"], PUBLISHED_SPECIAL_TOKENS["cl100k"])


@pytest.fixture(scope="module")
def text() -> str:
    return docs_text()[:50_000] + "<|endoftext|>"


def test_load_reads_every_kind_of_file_with_tiktokens_ids(files: dict[str, Path], text: str) -> None:
    expected = cl100k().encode(text, allowed_special="all")
    for kind, path in files.items():
        tokenizer = bpe_core.load(path)
        assert tokenizer.vocab_size == 100277, kind
        assert tokenizer.encode(text, allowed_special="all") == expected, kind
        assert tokenizer.decode(expected) == text, kind


def test_the_command_line_encodes_with_every_kind_of_file(files: dict[str, Path], text: str, tmp_path: Path) -> None:
    (tmp_path / "text.txt").write_text(text, encoding="utf-8")
    expected = " ".join(map(str, cl100k().encode(text, allowed_special="all")))
    for kind in ("tiktoken", "tiktoken.gz", "hf", "hf folder"):
        result = run_bpe("encode", "-t", files[kind], "text.txt", "--allow-special", cwd=tmp_path)
        assert assert_ok(result).split() == expected.split(), kind


def test_another_tiktoken_file_is_one_error_saying_how_to_give_its_pattern(
    files: dict[str, Path], tmp_path: Path
) -> None:
    lines = files["tiktoken"].read_bytes().splitlines(keepends=True)
    mine = tmp_path / "mine.tiktoken"
    mine.write_bytes(b"".join(lines[:1000]))
    with pytest.raises(BpeError, match=r"is not one of the published tiktoken vocabularies .*--pattern gpt2\|cl100k"):
        bpe_core.load(mine)
    (tmp_path / "text.txt").write_text("hello", encoding="utf-8")
    result = run_bpe("encode", "-t", mine, "text.txt", cwd=tmp_path)
    assert_clean_error(result, "mine.tiktoken", "bpe import", "--pattern", "from_tiktoken")
    # with the pattern, imported once, it is an ordinary tokenizer file
    imported = run_bpe("import", mine, "--pattern", "cl100k", "-o", "mine.json", cwd=tmp_path)
    assert_ok(imported)
    assert bpe_core.load(tmp_path / "mine.json").vocab_size == 1000
    damaged = tmp_path / "damaged.tiktoken"
    damaged.write_bytes(lines[0] + b"not base64 here\n")
    with pytest.raises(BpeError, match=r"damaged.tiktoken.*line 2"):
        bpe_core.load(damaged)


def test_a_published_vocabularys_name_as_the_pattern_is_its_pattern(files: dict[str, Path], text: str) -> None:
    """`pattern="cl100k_base"` read as a regex would match only that word and encode every other
    text to nothing; it is cl100k's pattern, from the library and from `bpe import` alike."""
    text = text.removesuffix("<|endoftext|>")  # the unpublished file has no special tokens
    expected = cl100k().encode_ordinary(text)
    unpublished = files["tiktoken"].parent / "renamed-unpublished.tiktoken"
    unpublished.write_bytes(files["tiktoken"].read_bytes() + b"\n")  # another digest: only the pattern says
    for path in (files["tiktoken"], unpublished):
        tokenizer = bpe_core.from_tiktoken(path, pattern="cl100k_base")
        assert tokenizer.spec.pretokenizer.name == "cl100k", path
        assert tokenizer.encode(text) == expected, path
    imported = run_bpe("import", unpublished, "--pattern", "cl100k_base", "-o", "named.json", cwd=unpublished.parent)
    assert_ok(imported)
    assert bpe_core.load(unpublished.parent / "named.json").encode(text) == expected
