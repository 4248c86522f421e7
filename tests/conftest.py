"""Shared fixtures: the shared real data, read once.

Where the data is (beside the project, never inside it) is said once, in helpers/paths.py; a
missing data file is a test failure, not a skip. The suite tests the installed package
(compiled, or pure with BPE_CORE_PURE=1), never the source tree; see test_build.py.

Which tests the pure run repeats is said by a marker, not decided here: `make test-pure` runs
`pytest -m both_modes` with BPE_CORE_PURE=1 (see the markers in pyproject.toml);
test_suite_rules.py checks that every property test carries the marker.
"""

import os
from pathlib import Path

import pytest
from helpers import text
from helpers.dna import fasta_records
from helpers.midi import pop909_paths
from helpers.paths import DOCS_PATH, ECOLI_PATH, TANDEM_PATH, require
from hypothesis import HealthCheck, settings

# deadline=None: the pure engine and the naive reference are slow, and CI machines vary
settings.register_profile(
    "bpe",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "bpe"))

NUCLEOTIDE_IDS = {"A": 0, "C": 1, "G": 2, "T": 3}


@pytest.fixture(scope="session", autouse=True)
def own_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What the suite builds and keeps (kept specs, the text plugin's tables) goes to a folder of
    its own, for this process and the commands it runs: never the user's, never stale."""
    os.environ["BPE_CORE_CACHE"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def workdir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty directory for one test module, named after it: where the module's fixtures write the
    files its tests share (each test that writes files of its own takes `tmp_path`)."""
    return tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_"))


@pytest.fixture(scope="session")
def docs_path() -> Path:
    """The Python 3.11 documentation sources, gzipped (11 MB of text)."""
    return require(DOCS_PATH)


@pytest.fixture(scope="session")
def docs_text() -> str:
    """The whole documentation text, newlines untouched (as the text reader delivers it)."""
    return text.docs_text()


@pytest.fixture(scope="session")
def docs_slice_path(docs_text: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 400,000 characters of the documentation, as a plain UTF-8 file."""
    path = tmp_path_factory.mktemp("docs") / "docs-slice.txt"
    path.write_text(docs_text[:400_000], encoding="utf-8", newline="")
    return path


@pytest.fixture(scope="session")
def songs() -> list[Path]:
    """The 909 POP909 songs, in file-name order."""
    return pop909_paths()


@pytest.fixture(scope="session")
def ecoli_genome() -> str:
    """The E. coli K-12 MG1655 chromosome: one record, 4.6 Mbp of A, C, G, T."""
    records = fasta_records(ECOLI_PATH)
    assert len(records) == 1
    ((_, sequence),) = records
    assert set(sequence) <= set(NUCLEOTIDE_IDS)
    return sequence


@pytest.fixture(scope="session")
def tandem_repeat() -> str:
    """The stress file's 10 Mbp record: one 125 bp unit repeated 80,000 times."""
    sequence = max((sequence for _, sequence in fasta_records(TANDEM_PATH)), key=len)
    assert len(sequence) == 125 * 80_000
    assert set(sequence) <= set(NUCLEOTIDE_IDS)
    return sequence
