"""The Python API reference runs and stays complete.

Every example in docs/api.md is a doctest, run against the installed package on the shared data
and the samples shipped in bpe_core, in a temporary working directory: what the page shows is
what the package prints. The page must have an entry (a heading and an example that uses it) for
every name in `bpe_core.__all__` and every public method and property of the classes users get
back (`Tokenizer`, `Counts`, the `TextStream` of `decode_stream`), so a new public method without
documentation fails here. Markdown fences are blanked before parsing (a closing fence right after
an output line would otherwise read as part of the expected output).
"""

import dataclasses
import doctest
import re
from pathlib import Path

import pytest

import bpe_core
from bpe_core.pipeline import TextStream

ROOT = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    """The shared data: `../shared/data` from the project root, as for the whole suite, or from
    the nearest directory above it that has one (a git worktree can sit a level deeper)."""
    for parent in ROOT.parents:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared" / "data"
    return ROOT.parent / "shared" / "data"


DATA_DIR = shared_data()
API_DOC = ROOT / "docs" / "api.md"
FENCE = re.compile(r"^```.*$", re.MULTILINE)
# the classes whose public members users call, with the name their headings use
DOCUMENTED_CLASSES = {"Tokenizer": bpe_core.Tokenizer, "Counts": bpe_core.Counts, "TextStream": TextStream}


def api_doctest() -> doctest.DocTest:
    """docs/api.md as one doctest; DATA (the shared data) and CONFIGS (the repository's configs)
    are the only names it gets from outside."""
    text = FENCE.sub("", API_DOC.read_text(encoding="utf-8"))  # blank lines keep line numbers
    names = {"DATA": DATA_DIR, "CONFIGS": ROOT / "configs"}
    return doctest.DocTestParser().get_doctest(text, names, "docs/api.md", str(API_DOC), 0)


def headings() -> list[str]:
    return [line for line in API_DOC.read_text(encoding="utf-8").splitlines() if line.startswith("#")]


def example_sources() -> str:
    return "\n".join(example.source for example in api_doctest().examples)


def public_members(cls: type) -> list[str]:
    """Methods, properties and dataclass fields a user reaches on an instance."""
    members = {name for name, value in vars(cls).items() if callable(value) or isinstance(value, property)}
    if dataclasses.is_dataclass(cls):
        members |= {item.name for item in dataclasses.fields(cls)}
    return sorted(name for name in members if not name.startswith("_"))


def test_api_examples_run_on_the_installed_package_and_print_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert DATA_DIR.is_dir(), f"the shared data {DATA_DIR} is missing"
    monkeypatch.chdir(tmp_path)  # examples write files (save, to_hf, counts) here
    test = api_doctest()
    assert len(test.examples) > 50
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
    assert Path(bpe_core.__file__).resolve().parent != ROOT / "bpe_core", "the doctests must run the installed package"


def test_api_examples_hide_nothing() -> None:
    """No example is skipped and no directive relaxes what it must print, beyond eliding long output."""
    directives = re.findall(r"#\s*doctest:\s*(.*)", API_DOC.read_text(encoding="utf-8"))
    options = {option.strip() for line in directives for option in line.split(",")}
    assert options <= {"+ELLIPSIS", "+NORMALIZE_WHITESPACE"}, options


@pytest.mark.parametrize("name", bpe_core.__all__)
def test_every_exported_name_has_an_entry_with_an_example(name: str) -> None:
    qualified = f"bpe_core.{name}"
    assert any(re.search(rf"`{re.escape(qualified)}\b", heading) for heading in headings()), f"no heading for {qualified}"
    assert re.search(rf"{re.escape(qualified)}\b", example_sources()), f"no example uses {qualified}"


@pytest.mark.parametrize(
    "owner, member", [(owner, member) for owner, cls in DOCUMENTED_CLASSES.items() for member in public_members(cls)]
)
def test_every_public_method_and_property_has_an_entry_with_an_example(owner: str, member: str) -> None:
    qualified = f"{owner}.{member}"
    assert any(re.search(rf"`{re.escape(qualified)}\b", heading) for heading in headings()), f"no heading for {qualified}"
    assert re.search(rf"\.{re.escape(member)}\b", example_sources()), f"no example uses .{member}"
