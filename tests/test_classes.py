"""The text scanners' class table and case folds, kept between processes in the cache folder.

A kept or shipped table must be exactly the table built from `regex` (a process reads it instead
of building it); a damaged file is built again and repaired; with no usable folder nothing is kept
and the tables are still right.
"""

import hashlib
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import regex

from bpe_core.contract import cache_folder
from bpe_text import classes

DIGESTS = (
    "import hashlib; from bpe_text import classes; "
    "print(hashlib.sha256(classes.class_table()).hexdigest(), sorted(classes.case_folds().items()))"
)


def digests_in_a_fresh_process(folder) -> str:
    environment = {**os.environ, "BPE_CORE_CACHE": str(folder)}
    return subprocess.run(
        [sys.executable, "-c", DIGESTS], env=environment, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def nothing_shipped(tmp_path, monkeypatch):
    """No shipped tables: what is kept comes from the cache folder or is built."""
    monkeypatch.setattr(classes, "SHIPPED", str(tmp_path / "shipped"))


def test_the_regex_version_read_without_importing_it_is_regexs_own():
    assert classes.regex_version() == regex.__version__


def test_the_shipped_tables_are_the_tables_built_from_the_installed_regex():
    for name, build in (("classes", classes.build_class_table), ("folds", classes.build_case_folds)):
        shipped = Path(classes.SHIPPED) / classes.kept_file_name(name)
        assert shipped.is_file(), f"no {name} table shipped for regex {regex.__version__}: run ship_tables"
        stored = shipped.read_bytes()
        assert zlib.decompress(stored[32:]) == build() and hashlib.sha256(build()).digest() == stored[:32]


def test_a_first_process_reads_the_shipped_tables_and_keeps_nothing(tmp_path):
    built = classes.build_class_table()
    folds = classes.build_case_folds()
    expected = f"{hashlib.sha256(built).hexdigest()} {sorted(classes.case_folds().items())}\n"
    assert len(folds) > 0
    assert digests_in_a_fresh_process(tmp_path) == expected
    assert list(tmp_path.iterdir()) == []


def test_a_later_process_reads_the_kept_tables_which_equal_the_tables_built_from_regex(
    tmp_path, monkeypatch, nothing_shipped
):
    monkeypatch.setenv("BPE_CORE_CACHE", str(tmp_path / "cache"))
    calls = []

    def build() -> bytes:
        calls.append(1)
        return classes.build_class_table()

    built = classes.kept("classes", build)
    assert built == classes.build_class_table() and calls == [1]
    (kept,) = (tmp_path / "cache").iterdir()
    written = kept.stat().st_mtime_ns
    assert classes.kept("classes", build) == built and calls == [1]  # read, not rebuilt
    assert kept.stat().st_mtime_ns == written
    assert classes.case_folds()[0x17F] == ord("s")  # the folds go beyond ASCII: under (?i) the long s is an s


@pytest.mark.parametrize("damage", [b"", b"not a kept table", "truncate", "flip"])
def test_a_damaged_kept_file_is_built_again_and_repaired(tmp_path, monkeypatch, damage, nothing_shipped):
    monkeypatch.setenv("BPE_CORE_CACHE", str(tmp_path))
    built = classes.kept("classes", classes.build_class_table)
    (path,) = [item for item in tmp_path.iterdir() if item.is_file()]
    good = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "flip":  # still a valid zlib stream? then the checksum catches it
        path.write_bytes(good[:32] + bytes([good[32] ^ 1]) + good[33:])
    else:
        path.write_bytes(damage)
    calls = []

    def build() -> bytes:
        calls.append(1)
        return classes.build_class_table()

    assert classes.kept("classes", build) == built
    assert calls == [1]
    assert path.read_bytes() == good
    assert classes.kept("classes", build) == built and calls == [1]


def test_without_a_usable_folder_nothing_is_kept_and_the_tables_are_still_built(tmp_path, monkeypatch, nothing_shipped):
    monkeypatch.setenv("BPE_CORE_CACHE", "")
    assert cache_folder() is None
    assert classes.kept("classes", classes.build_class_table) == classes.build_class_table()
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setenv("BPE_CORE_CACHE", str(blocked / "bpe-core"))
    assert classes.kept("folds", classes.build_case_folds) == classes.build_case_folds()
    assert sorted(tmp_path.iterdir()) == [blocked]


def test_the_default_folder_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("BPE_CORE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == str(tmp_path / "bpe-core")
