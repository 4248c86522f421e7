"""The reference pages run and stay complete: docs/api.md and docs/config.md.

Every example in docs/api.md is a doctest, run against the installed package on the shared data
and the samples shipped in bpe_core, in a temporary working directory: what the page shows is
what the package prints. The page must have an entry (a heading and an example that uses it) for
every name in `bpe_core.__all__` and every public method and property of the classes users get
back (`Tokenizer`, `Counts`, the `TextStream` of `decode_stream`), so a new public method without
documentation fails here. Markdown fences are blanked before parsing (a closing fence right after
an output line would otherwise read as part of the expected output).

docs/config.md must have a row for every config key, every allowed value of the keys with a fixed
choice, and every option each built-in component accepts (as the component's own error for an
unknown option lists them), so an option added in code and not in the docs fails here.
"""

import dataclasses
import doctest
import re
from pathlib import Path

import pytest
from helpers.paths import CONFIGS_DIR, DATA_DIR, PROJECT_ROOT

import bpe_core
from bpe_core.config import RUNNER_KINDS, SECTIONS, SPECIAL_POSITIONS
from bpe_core.engine import TIE_RULES
from bpe_core.plugins import registry
from bpe_core.tokenizer import TextStream

API_DOC = PROJECT_ROOT / "docs" / "api.md"
FENCE = re.compile(r"^```.*$", re.MULTILINE)
# the classes whose public members users call, with the name their headings use
DOCUMENTED_CLASSES = {"Tokenizer": bpe_core.Tokenizer, "Counts": bpe_core.Counts, "TextStream": TextStream}


def api_doctest() -> doctest.DocTest:
    """docs/api.md as one doctest; DATA (the shared data) and CONFIGS (the repository's configs)
    are the only names it gets from outside."""
    text = FENCE.sub("", API_DOC.read_text(encoding="utf-8"))  # blank lines keep line numbers
    names = {"DATA": DATA_DIR, "CONFIGS": CONFIGS_DIR}
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
    assert Path(bpe_core.__file__).resolve().parent != PROJECT_ROOT / "bpe_core", (
        "the doctests must run the installed package"
    )


def test_api_examples_hide_nothing() -> None:
    """No example is skipped and no directive relaxes what it must print, beyond eliding long output."""
    directives = re.findall(r"#\s*doctest:\s*(.*)", API_DOC.read_text(encoding="utf-8"))
    options = {option.strip() for line in directives for option in line.split(",")}
    assert options <= {"+ELLIPSIS", "+NORMALIZE_WHITESPACE"}, options


@pytest.mark.parametrize("name", bpe_core.__all__)
def test_every_exported_name_has_an_entry_with_an_example(name: str) -> None:
    qualified = f"bpe_core.{name}"
    assert any(re.search(rf"`{re.escape(qualified)}\b", heading) for heading in headings()), (
        f"no heading for {qualified}"
    )
    assert re.search(rf"{re.escape(qualified)}\b", example_sources()), f"no example uses {qualified}"


@pytest.mark.parametrize(
    "owner, member", [(owner, member) for owner, cls in DOCUMENTED_CLASSES.items() for member in public_members(cls)]
)
def test_every_public_method_and_property_has_an_entry_with_an_example(owner: str, member: str) -> None:
    qualified = f"{owner}.{member}"
    assert any(re.search(rf"`{re.escape(qualified)}\b", heading) for heading in headings()), (
        f"no heading for {qualified}"
    )
    assert re.search(rf"\.{re.escape(member)}\b", example_sources()), f"no example uses .{member}"


CONFIG_DOC = PROJECT_ROOT / "docs" / "config.md"


def config_rows() -> list[list[str]]:
    """The cells of every table row in docs/config.md."""
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in CONFIG_DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]


def accepted_options(kind: str, name: str) -> list[str]:
    """The options a component accepts, as its error for an unknown option lists them."""
    with pytest.raises(bpe_core.BpeError) as refused:
        registry().build(kind, name, {"no_such_option": 1})
    allowed = re.search(r"allowed: (.*)$", str(refused.value))
    assert allowed is not None, f"{kind} {name!r} does not say which options it allows: {refused.value}"
    return [] if allowed.group(1) == "none" else allowed.group(1).split(", ")


BUILTIN_COMPONENTS = [
    (kind, name)
    for plugin in registry().plugins()
    if plugin.distribution == "bpe-core"
    for kind in ("pretokenizer", "reader", "normalizer")
    for name in plugin.components[kind]
]


@pytest.mark.parametrize("kind, name", BUILTIN_COMPONENTS)
def test_config_md_lists_every_option_of_each_builtin_component(kind: str, name: str) -> None:
    rows = [row for row in config_rows() if len(row) > 2 and row[1] == kind and f"`{name}`" in row[0]]
    assert rows, f"docs/config.md has no row for the {kind} {name!r}"
    missing = [option for option in accepted_options(kind, name) if f"`{option}" not in rows[0][2]]
    assert not missing, f"docs/config.md does not list the {kind} {name!r} options {missing}"


@pytest.mark.parametrize(
    "key", [f"{section}.{key}" if section else key for section, keys in SECTIONS.items() for key in keys]
)
def test_config_md_lists_every_key(key: str) -> None:
    """A key, or for a section (input, trainer, ...) its keys, each has a row in the Keys table."""
    assert any(row[0] == f"`{key}`" or row[0].startswith(f"`{key}.") for row in config_rows()), f"no row for {key}"


@pytest.mark.parametrize(
    "key, allowed",
    [("trainer.tie_break", TIE_RULES), ("special_tokens.position", SPECIAL_POSITIONS), ("runner.kind", RUNNER_KINDS)],
)
def test_config_md_lists_every_allowed_value(key: str, allowed: tuple[str, ...]) -> None:
    row = next(row for row in config_rows() if row[0] == f"`{key}`")
    assert all(f"`{value}`" in row[1] for value in allowed), f"{key}: {row[1]} does not list all of {allowed}"
