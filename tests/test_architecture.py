"""The house rules of the source tree, read with `ast` (nothing is imported or run) or checked by
the linters on bpe_core/ (engine included) and plugins/:

- no module imports another in a circle, not even inside a function or under TYPE_CHECKING;
- no private name (a leading underscore) is imported from, or read on, another module's objects;
- code stays readable rather than short: no module over 700 lines (past that, split it by concern
  into a subpackage), one statement per line (ruff's E701, E702 and E703, and no parallel
  assignment of unrelated values, `a, b = x, y`, a swap `a, b = b, a` aside), and
  `ruff format --check` clean;
- no dead code: `vulture` at 80% confidence reports nothing;
- docs/architecture.md names every framework module, and every module it names exists, and its
  layers hold: each framework module is in one, and imports only its own layer and those below;
- docs/plugins.md lists exactly the optional abilities that bpe_core/contract.py declares.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "bpe_core": ROOT / "bpe_core",
    **{name: ROOT / "plugins" / name for name in ("bpe_text", "bpe_dna", "bpe_midi")},
}
MAX_LINES = 700
# what the linters check: the framework (engine included) and the built-in plugins
LINTED = ["bpe_core", "plugins"]


def module_files() -> dict[str, Path]:
    """Dotted module name -> source file, for the framework and the built-in plugins."""
    modules = {}
    for package, directory in PACKAGES.items():
        for path in sorted(directory.rglob("*.py")):
            parts = [package, *path.relative_to(directory).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = module_files()
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in MODULES.items()}


def imported_modules(name: str) -> set[str]:
    """The project modules `name` imports anywhere in its source (functions and TYPE_CHECKING too).
    `from package import module` counts as importing the module."""
    found: set[str] = set()
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {module for module in found if module in MODULES and module != name}


def import_cycle() -> list[str] | None:
    """One circle of imports, or None."""
    graph = {name: imported_modules(name) for name in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_no_module_imports_another_in_a_circle() -> None:
    cycle = import_cycle()
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_engine_imports_nothing_from_the_rest_and_the_framework_no_plugin() -> None:
    for name in MODULES:
        imported = imported_modules(name)
        if name.startswith("bpe_core.engine"):
            assert all(module.startswith("bpe_core.engine") for module in imported), (name, imported)
        elif name.startswith("bpe_core"):
            assert not any(module.startswith(("bpe_text", "bpe_dna", "bpe_midi")) for module in imported), (
                name,
                imported,
            )


def private_definitions(tree: ast.Module) -> set[str]:
    """Private names a module defines: globals, functions, classes, class attributes and `self._x`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def private_uses(name: str) -> list[str]:
    """Private names of other project modules that `name` imports or reads."""
    own = private_definitions(TREES[name])
    others = set().union(*(private_definitions(tree) for module, tree in TREES.items() if module != name))
    uses = []
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
            uses += [f"from {node.module} import {alias.name}" for alias in node.names if alias.name.startswith("_")]
        elif isinstance(node, ast.Import):
            uses += [alias.name for alias in node.names if any(part.startswith("_") for part in alias.name.split("."))]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if node.attr in others and node.attr not in own:
                uses.append(f"line {node.lineno}: .{node.attr}")
    return uses


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_is_imported_or_read_across_modules(name: str) -> None:
    assert private_uses(name) == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_over_700_lines(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines: split it by concern"


def parallel_assignments(tree: ast.Module) -> list[str]:
    """`a, b = x, y` statements: a tuple of values assigned to a tuple of targets, which is two
    statements on one line; a swap or rotation (the targets are the values, reordered) is one."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Tuple):
            continue
        for target in node.targets:
            if not isinstance(target, ast.Tuple):
                continue
            targets = sorted(ast.unparse(element) for element in target.elts)
            values = sorted(ast.unparse(element) for element in node.value.elts)
            if targets != values:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_parallel_assignment_of_unrelated_values(name: str) -> None:
    assert parallel_assignments(TREES[name]) == [], "one assignment a line"


def run_linter(*command: str) -> subprocess.CompletedProcess[str]:
    """A linter run as a module of this Python, from the project root."""
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_one_statement_per_line() -> None:
    result = run_linter("ruff", "check", "--select", "E701,E702,E703", *LINTED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_the_source_as_it_is() -> None:
    result = run_linter("ruff", "format", "--check", *LINTED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_vulture_finds_no_dead_code() -> None:
    result = run_linter("vulture", *LINTED, "--min-confidence", "80")
    assert result.returncode == 0, result.stdout + result.stderr


def architecture_names() -> set[str]:
    """The module paths docs/architecture.md names in backquotes (`tokenizer.py`, `formats/hf.py`)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return set(re.findall(r"`([\w/]+\.py)`", text))


def framework_paths() -> set[str]:
    """Every framework module, as a path below bpe_core/ (package __init__ files aside)."""
    directory = PACKAGES["bpe_core"]
    return {str(path.relative_to(directory)) for path in directory.rglob("*.py") if path.name != "__init__.py"}


def test_architecture_names_every_framework_module() -> None:
    missing = framework_paths() - architecture_names()
    assert not missing, f"docs/architecture.md does not name {sorted(missing)}"


def test_every_module_architecture_names_exists() -> None:
    plugin_paths = {str(path.relative_to(ROOT / "plugins")) for path in (ROOT / "plugins").rglob("*.py")}
    unknown = {name for name in architecture_names() - framework_paths() - plugin_paths if not (ROOT / name).is_file()}
    assert not unknown, f"docs/architecture.md names modules that do not exist: {sorted(unknown)}"


def contract_abilities() -> list[str]:
    """The names in contract.ABILITIES, read from the source."""
    for node in TREES["bpe_core.contract"].body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "ABILITIES" for target in node.targets
        ):
            assert isinstance(node.value, ast.Tuple)
            return [element.id for element in node.value.elts if isinstance(element, ast.Name)]
    raise AssertionError("bpe_core/contract.py defines no ABILITIES")


def test_plugins_doc_lists_exactly_the_contract_abilities() -> None:
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = text.split("## Optional abilities", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
    assert sorted(listed) == sorted(contract_abilities())


def documented_layers() -> list[set[str]]:
    """The framework's layers as docs/architecture.md lists them, top first, as module names."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in re.findall(r"^\d+\. \*\*[\w ]+\*\*: (.+)$", section, flags=re.MULTILINE):
        names = re.findall(r"`([\w.]+)`", line)
        layers.append({"bpe_core" if name == "bpe_core" else f"bpe_core.{name}" for name in names})
    return layers


def test_every_framework_module_is_in_one_documented_layer() -> None:
    layers = documented_layers()
    assert len(layers) >= 4
    listed = [name for layer in layers for name in layer]
    framework = {name for name in MODULES if name.startswith("bpe_core") and not name.startswith("bpe_core.engine")}
    assert sorted(listed) == sorted(set(listed)), "a module is listed in two layers"
    assert set(listed) == framework


def test_every_import_follows_the_documented_layers() -> None:
    """The arrows of docs/architecture.md: a module imports its own layer and the ones below."""
    layer_of = {name: depth for depth, layer in enumerate(documented_layers()) for name in layer}
    upward = [
        f"{name} -> {target}"
        for name in layer_of
        for target in sorted(imported_modules(name))
        if target in layer_of and layer_of[target] < layer_of[name]
    ]
    assert not upward, f"imports against docs/architecture.md's layers: {upward}"
