"""The rules of the test suite itself, read with `ast` (nothing is imported or run):

- every test that uses hypothesis carries the `both_modes` marker, so that the pure run
  (`pytest -m both_modes`, see the Makefile's test-pure) repeats every property test. A test
  uses hypothesis when its decorators or its body refer to a name that comes from hypothesis:
  `@given` on the test, `given(...)` applied inside it, a strategy (`st.text()`), or a module-level
  strategy, helper or fixture that does any of these, here or in tests/helpers/.
- the marker is on the test itself, its class or its module (`pytestmark`): a mark on one
  parameter would leave the test's other cases out of the pure run.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
HELPERS_DIR = TESTS_DIR / "helpers"
PURE_MARKER = "both_modes"
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def referenced_names(node: ast.AST) -> set[str]:
    """The names `node` reads from outside (`st` in `st.text()`, `given` in `@given(...)`): every
    name read under it, less those it binds itself (a local `channels` is not the module's)."""
    read = {child.id for child in ast.walk(node) if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)}
    bound = {
        child.id for child in ast.walk(node) if isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Load)
    }
    bound |= {child.arg for child in ast.walk(node) if isinstance(child, ast.arg)}
    return read - bound


def hypothesis_names(tree: ast.Module, helper_names: dict[str, set[str]]) -> set[str]:
    """The module-level names of `tree` that lead to hypothesis: what it imports from hypothesis
    (or, from a helpers module, a name that leads there), then every module-level assignment,
    function or class that refers to one of those, until nothing more is added."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hypothesis":
                    found.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
            for alias in node.names:
                from_hypothesis = module.split(".")[0] == "hypothesis"
                helper_name = alias.name in helper_names.get(module, set())
                helper_module = bool(helper_names.get(f"{module}.{alias.name}"))  # from helpers import strategies
                if from_hypothesis or helper_name or helper_module:
                    found.add(alias.asname or alias.name)
    definitions: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for bound in ast.walk(target):
                    if isinstance(bound, ast.Name):
                        definitions[bound.id] = node
    grew = True
    while grew:
        grew = False
        for name, definition in definitions.items():
            if name not in found and referenced_names(definition) & found:
                found.add(name)
                grew = True
    return found


def helpers_hypothesis_names() -> dict[str, set[str]]:
    """For each helpers module (`helpers.interop`), the names it defines that lead to hypothesis."""
    names: dict[str, set[str]] = {}
    for path in sorted(HELPERS_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        names[f"helpers.{path.stem}"] = hypothesis_names(tree, {})
    return names


def marks_pure(expression: ast.expr) -> bool:
    """`pytest.mark.both_modes` (called or not), or a list or tuple holding it."""
    if isinstance(expression, ast.List | ast.Tuple):
        return any(marks_pure(element) for element in expression.elts)
    if isinstance(expression, ast.Call):
        expression = expression.func
    return (
        isinstance(expression, ast.Attribute)
        and expression.attr == PURE_MARKER
        and isinstance(expression.value, ast.Attribute)
        and expression.value.attr == "mark"
    )


def pytestmark_is_pure(body: list[ast.stmt]) -> bool:
    """A module or class body that sets `pytestmark` to the pure marker (or a list holding it)."""
    for node in body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return marks_pure(node.value)
    return False


def collected_tests(tree: ast.Module) -> Iterator[tuple[str, FunctionNode, bool]]:
    """(pytest's name for it, the test function, whether its class or module marks it for the
    pure run) for each test function and each test method of a Test class."""
    module_pure = pytestmark_is_pure(tree.body)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            yield node.name, node, module_pure
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            class_pure = (
                module_pure
                or pytestmark_is_pure(node.body)
                or any(marks_pure(decorator) for decorator in node.decorator_list)
            )
            for method in node.body:
                if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) and method.name.startswith("test"):
                    yield f"{node.name}::{method.name}", method, class_pure


def uses_hypothesis(test: FunctionNode, names: set[str]) -> bool:
    """Its decorators, body or fixtures (arguments named like a module-level fixture) lead to hypothesis."""
    arguments = {argument.arg for argument in test.args.args}
    return bool((referenced_names(test) | arguments) & names)


def unmarked_hypothesis_tests(source: str, helper_names: dict[str, set[str]]) -> list[str]:
    """The tests in `source` that use hypothesis and do not carry the pure marker."""
    tree = ast.parse(source)
    names = hypothesis_names(tree, helper_names)
    return [
        name
        for name, test, inherited in collected_tests(tree)
        if uses_hypothesis(test, names)
        and not inherited
        and not any(marks_pure(decorator) for decorator in test.decorator_list)
    ]


HELPER_NAMES = helpers_hypothesis_names()
TEST_FILES = sorted(TESTS_DIR.glob("test_*.py"))


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda path: path.name)
def test_every_hypothesis_test_carries_the_pure_marker(path: Path) -> None:
    unmarked = unmarked_hypothesis_tests(path.read_text(encoding="utf-8"), HELPER_NAMES)
    assert not unmarked, (
        f"{path.name}: these tests use hypothesis but are not marked {PURE_MARKER}, so the pure run"
        f" (pytest -m {PURE_MARKER}) leaves them out: {', '.join(unmarked)}"
    )


# The rule on small sources, so that a checker that finds nothing is not mistaken for a clean suite.
GIVEN_INSIDE = """
from hypothesis import given
from hypothesis import strategies as st

short_text = st.text(max_size=5)


def check(tokenizer):
    given(text=short_text)(lambda text: None)()


class TestRoundTrip:
    def test_inner_given(self):
        given(text=st.text())(lambda text: None)()

    def test_through_a_helper(self):
        check(None)

    def test_plain(self):
        assert 1 + 1 == 2


@given(text=short_text)
def test_decorated(text):
    pass
"""


def test_the_rule_finds_given_inside_a_test_through_a_helper_and_on_the_test() -> None:
    assert unmarked_hypothesis_tests(GIVEN_INSIDE, {}) == [
        "TestRoundTrip::test_inner_given",
        "TestRoundTrip::test_through_a_helper",
        "test_decorated",
    ]


def test_the_rule_accepts_the_marker_on_the_test_its_class_or_its_module() -> None:
    on_tests = GIVEN_INSIDE.replace("class TestRoundTrip:", "@pytest.mark.both_modes\nclass TestRoundTrip:")
    on_tests = on_tests.replace("@given(text=short_text)", "@pytest.mark.both_modes\n@given(text=short_text)")
    assert unmarked_hypothesis_tests(on_tests, {}) == []
    assert unmarked_hypothesis_tests("pytestmark = [pytest.mark.both_modes]\n" + GIVEN_INSIDE, {}) == []


def test_the_rule_follows_a_strategy_imported_from_a_helpers_module() -> None:
    source = "from helpers.interop import unicode_text\n\ndef test_round_trip():\n    unicode_text.example()\n"
    assert unmarked_hypothesis_tests(source, {"helpers.interop": {"unicode_text"}}) == ["test_round_trip"]
    assert "unicode_text" in HELPER_NAMES["helpers.interop"]
    source = "from helpers import strategies\n\ndef test_chunks():\n    strategies.chunk_shapes(None)\n"
    assert unmarked_hypothesis_tests(source, HELPER_NAMES) == ["test_chunks"]
