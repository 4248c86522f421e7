"""Plugins see the engine only through the framework's contract: nothing under plugins/ or
examples/ imports `bpe_core.engine` (a third-party plugin has no other door either)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def engine_imports(path: Path) -> list[str]:
    """Each import of bpe_core.engine (or of a module under it) in a Python file, as written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("bpe_core.engine")]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.startswith("bpe_core.engine"):
                found.append(node.module)
            elif node.module == "bpe_core" and any(alias.name == "engine" for alias in node.names):
                found.append("bpe_core.engine")
    return found


def test_no_plugin_or_example_imports_the_engine() -> None:
    files = sorted([*(ROOT / "plugins").rglob("*.py"), *(ROOT / "examples").rglob("*.py")])
    assert len(files) > 20  # the built-in plugins and the example plugin are there
    offenders = {str(path.relative_to(ROOT)): names for path in files if (names := engine_imports(path))}
    assert offenders == {}


def test_the_check_finds_an_engine_import(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text("from bpe_core.engine.encode.encoder import Encoder\nfrom bpe_core import engine\n")
    assert engine_imports(plugin) == ["bpe_core.engine.encode.encoder", "bpe_core.engine"]
