"""What the short commands import: `bpe --version` and `bpe --help` only the command line's
grammar, `bpe encode` of one line only what encoding needs (the tokenizer's own plugin, no YAML,
progress bar, worker processes, training or other domain), and `import bpe_core` none of its
public names until one is used.

Each command runs in a fresh interpreter with this one's environment (so BPE_CORE_PURE carries
over), which reports the modules the command imported beyond those it started with. How long
the imports take is measured in commit messages, not here: a test on time fails on a busy machine.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli_runner import bpe_env, train_with_bpe
from helpers.paths import CONFIGS_DIR
from helpers.text import training_text

import bpe_core

# run by a fresh interpreter: `bpe ARGS...` (argv[2:]) in this process, then its exit status and
# the modules it imported, as JSON, to the file argv[1]
REPORTER = """
import json, sys
started = set(sys.modules)
from bpe_core.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as exit:
    status = exit.code
with open(sys.argv[1], "w") as report:
    json.dump({"status": status, "imported": sorted(set(sys.modules) - started)}, report)
"""
# what `bpe --version` and `bpe --help` may import of bpe-core: the command line and its grammar
GRAMMAR = {
    "bpe_core",
    "bpe_core.pure_mode",
    "bpe_core.version",
    "bpe_core.cli",
    "bpe_core.arguments",
    "bpe_core.idfiles",
    "bpe_core.errors",
    "bpe_core.streams",
}
# libraries that no short command uses (multiprocessing: one line forks no worker)
UNUSED_LIBRARIES = (
    "yaml",
    "tqdm",
    "dask",
    "distributed",
    "numpy",
    "torch",
    "mido",
    "Bio",
    "multiprocessing",
    "concurrent.futures",
)
# what only the grammar does without: the engine, the plugins and how they are found
GRAMMAR_WITHOUT = ("bpe_core.engine", "bpe_text", "bpe_dna", "bpe_midi", "pluggy", "regex", "importlib.metadata")
# the DNA and MIDI plugins' components (their packages load: that is how plugins are found)
OTHER_DOMAINS = (
    "bpe_dna.pretokenizers",
    "bpe_dna.readers",
    "bpe_dna.decoding",
    "bpe_midi.events",
    "bpe_midi.reader",
    "bpe_midi.decoding",
    "bpe_midi.song",
    "bpe_midi.smf",
)
# what loading a tokenizer and encoding do without: regex (compiled scanners read the built-in
# patterns), importlib.metadata (the entry points are read directly), and what only writing,
# exporting, pages and error messages need
LOADING_WITHOUT = (
    "regex",
    "importlib.metadata",
    "tempfile",
    "difflib",
    "bpe_core.visual",
    "bpe_core.formats.hf",
    "bpe_core.formats.tiktoken",
)
# the framework's work that encoding does not do
OTHER_WORK = (
    "bpe_core.config_yaml",
    "bpe_core.training",
    "bpe_core.plan",
    "bpe_core.surgery",
    "bpe_core.inspection",
    "bpe_core.demo",
)


def under(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    """The modules that are one of `packages` or inside one."""
    return [module for module in modules if any(module == top or module.startswith(top + ".") for top in packages)]


def run_reported(*args: object, cwd: Path, stdin: bytes = b"") -> tuple[int, list[str], bytes]:
    """`bpe ARGS...` in a fresh interpreter: its exit status, the modules it imported, its stdout."""
    report = cwd / "imported.json"
    completed = subprocess.run(
        [sys.executable, "-c", REPORTER, str(report), *map(str, args)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=bpe_env(),
        timeout=600,
        check=False,
    )
    assert report.exists(), completed.stderr.decode("utf-8", "replace")
    reported = json.loads(report.read_text(encoding="utf-8"))
    return reported["status"], reported["imported"], completed.stdout


@pytest.fixture(scope="module")
def text_tokenizer(workdir: Path) -> Path:
    """configs/gpt2-style.yaml trained with `bpe train` on the documentation's start, vocabulary 300."""
    (workdir / "docs.txt").write_text(training_text(), encoding="utf-8", newline="")
    return train_with_bpe(
        CONFIGS_DIR / "gpt2-style.yaml", ["docs.txt"], workdir / "gpt2.json", {"trainer.vocab_size": 300}, workdir
    )


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("encode", "--help")])
def test_version_and_help_import_only_the_command_line_grammar(args: tuple[str, ...], tmp_path: Path) -> None:
    status, imported, stdout = run_reported(*args, cwd=tmp_path)
    assert status == 0
    assert b"bpe" in stdout
    assert set(under(imported, ("bpe_core",))) <= GRAMMAR
    assert not under(imported, UNUSED_LIBRARIES + GRAMMAR_WITHOUT)


def test_encoding_a_line_imports_its_own_plugin_and_nothing_it_does_not_use(
    text_tokenizer: Path, tmp_path: Path
) -> None:
    line = "Encoding one line must not pay for training, YAML or MIDI.\n"
    status, imported, stdout = run_reported("encode", "-t", text_tokenizer, cwd=tmp_path, stdin=line.encode("utf-8"))
    assert status == 0
    assert stdout.decode("utf-8").split() == [str(token) for token in bpe_core.load(text_tokenizer).encode(line)]
    assert "bpe_text.pretokenizers" in imported  # the tokenizer's own pretokenizer, through its plugin
    assert not under(imported, UNUSED_LIBRARIES)
    assert not under(imported, OTHER_DOMAINS)
    assert not under(imported, OTHER_WORK)


def test_loading_a_tokenizer_and_encoding_import_neither_regex_nor_importlib_metadata(
    text_tokenizer: Path, tmp_path: Path
) -> None:
    script = (
        "import json, sys; started = set(sys.modules); import bpe_core; "
        f"ids = bpe_core.load({str(text_tokenizer)!r}).encode('Loading pays for what it uses.'); "
        "print(json.dumps([ids, sorted(set(sys.modules) - started)]))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, env=bpe_env(), timeout=600, check=True
    )
    ids, imported = json.loads(completed.stdout)
    assert ids == bpe_core.load(text_tokenizer).encode("Loading pays for what it uses.")
    assert not under(imported, LOADING_WITHOUT + UNUSED_LIBRARIES + OTHER_DOMAINS + OTHER_WORK)


def test_importing_bpe_core_imports_each_public_name_when_it_is_first_used(tmp_path: Path) -> None:
    script = (
        "import json, sys; started = set(sys.modules); import bpe_core; "
        "before = sorted(m for m in set(sys.modules) - started if m.startswith('bpe_')); load = bpe_core.load; "
        "print(json.dumps([before, load.__module__, 'bpe_core.loading' in sys.modules]))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, env=bpe_env(), timeout=600, check=True
    )
    before, module, loaded = json.loads(completed.stdout)
    assert before == ["bpe_core", "bpe_core.pure_mode", "bpe_core.version"]
    assert (module, loaded) == ("bpe_core.loading", True)


def test_every_public_name_resolves_and_is_listed_by_dir() -> None:
    for name in bpe_core.__all__:
        assert getattr(bpe_core, name) is not None
        assert name in dir(bpe_core)
    with pytest.raises(AttributeError, match="no_such_name"):
        bpe_core.no_such_name  # noqa: B018
