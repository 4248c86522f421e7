"""Plugins: components come from pluggy plugins found through the `bpe_core` entry-point group,
built-in and third-party alike.

Names are unique per kind (a clash names both plugins), an unknown name lists the known ones,
BPE_CORE_DISABLE_PLUGIN_AUTOLOAD=1 loads only the plugins shipped in bpe-core, and a plugin that
fails to import is a clean error. Every built-in component refuses an unknown option with the one
message `bpe_core.contract.check_options` gives. The example third-party plugin
(examples/bpe-protein) is installed for real into a temporary directory and used through the
`bpe` command.
"""

import base64
import importlib.metadata
import json
import shutil
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pluggy
import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, bpe_env, run_bpe
from helpers.dna import single_sequence, translate
from helpers.paths import EXAMPLES_DIR, LAMBDA_PATH
from helpers.text import training_text

import bpe_core
from bpe_core import BpeError, hookspecs
from bpe_core.contract import check_options
from bpe_core.hookspecs import hookimpl
from bpe_core.plugins import HOOKS, Registry, entry_points, registry

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
PROTEIN_VOCAB = 200
DISABLE = {"BPE_CORE_DISABLE_PLUGIN_AUTOLOAD": "1"}


# ---------------------------------------------------------------- in-memory plugins


def returning(value: object, hook_name: str) -> Callable[[], object]:
    def hook() -> object:
        return value

    hook.__name__ = hook_name
    return hookimpl(hook)


def plugin_module(name: str, **hooks: object) -> types.ModuleType:
    """A plugin module whose hooks return the given dicts (name -> factory)."""
    module = types.ModuleType(name)
    for hook_name, provided in hooks.items():
        setattr(module, hook_name, returning(provided, hook_name))
    return module


def manager_with(*plugins: tuple[str, types.ModuleType]) -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    for name, module in plugins:
        manager.register(module, name=name)
    return manager


class UpperNormalizer:
    name = "upper"

    def normalize(self, text: str) -> str:
        return text.upper()


def test_registry_builds_components_of_in_memory_plugins() -> None:
    module = plugin_module("shouting", bpe_core_normalizers={"upper": lambda options: UpperNormalizer()})
    components = Registry(manager_with(("shouting", module)), {"shouting": ("bpe-shouting", "0.3.0")})
    assert components.names("normalizer") == ["upper"]
    assert components.normalizer("upper", {}).normalize("abc") == "ABC"
    assert components.plugin_of("normalizer", "upper") == "shouting"
    (info,) = components.plugins()
    assert (info.name, info.distribution, info.version) == ("shouting", "bpe-shouting", "0.3.0")
    assert info.components["normalizer"] == ["upper"]
    assert components.plugin_versions() == {"shouting": "0.3.0"}


@pytest.mark.parametrize(
    ("hook", "kind"),
    [
        ("bpe_core_pretokenizers", "pretokenizer"),
        ("bpe_core_readers", "reader"),
        ("bpe_core_decoders", "decoder"),
        ("bpe_core_normalizers", "normalizer"),
    ],
)
def test_duplicate_component_names_fail_naming_both_plugins(hook: str, kind: str) -> None:
    first = plugin_module("bpe_alpha", **{hook: {"shared": object, "only-alpha": object}})
    second = plugin_module("bpe_beta", **{hook: {"only-beta": object, "shared": object}})
    manager = manager_with(("alpha", first), ("beta", second))
    with pytest.raises(BpeError) as error:
        Registry(manager, {})
    message = str(error.value)
    assert kind in message and "'shared'" in message and "'alpha'" in message and "'beta'" in message


def test_the_same_name_for_different_kinds_is_no_clash() -> None:
    module = plugin_module("bpe_same", bpe_core_pretokenizers={"same": object}, bpe_core_decoders={"same": object})
    components = Registry(manager_with(("same", module)), {})
    assert components.names("pretokenizer") == ["same"] and components.names("decoder") == ["same"]


def test_hook_that_returns_no_dict_is_an_error_naming_the_plugin() -> None:
    module = plugin_module("bpe_sloppy", bpe_core_readers=["text"])
    with pytest.raises(BpeError) as error:
        Registry(manager_with(("sloppy", module)), {})
    assert "'sloppy'" in str(error.value) and "bpe_core_readers" in str(error.value)


@pytest.mark.parametrize(
    ("kind", "name", "known", "closest"),
    [
        ("pretokenizer", "gtp2", ["cl100k", "gpt2", "o200k", "regex", "whitespace"], "gpt2"),
        ("reader", "jsnol", ["jsonl", "text"], "jsonl"),
        ("decoder", "txt", ["text"], "text"),
        ("normalizer", "nfkx", ["lowercase", "nfc", "nfd", "nfkc", "nfkd"], None),
    ],
)
def test_unknown_component_lists_the_known_ones_and_the_closest(
    kind: str, name: str, known: list[str], closest: str | None
) -> None:
    with pytest.raises(BpeError) as error:
        registry().build(kind, name, {})
    message = str(error.value)
    assert kind in message and repr(name) in message
    for other in known:
        assert other in message
    if closest is not None:
        assert f"did you mean {closest!r}" in message


def test_unknown_name_with_nothing_close_still_lists_the_known_ones() -> None:
    with pytest.raises(BpeError) as error:
        registry().pretokenizer("qqqq-zzzz-xyz", {})
    assert "gpt2" in str(error.value) and "did you mean" not in str(error.value)


# ---------------------------------------------------------------- the built-in plugin


def test_entry_points_are_those_importlib_metadata_finds_in_every_group() -> None:
    """bpe-core reads entry_points.txt itself (importlib.metadata costs a process more than loading
    a large tokenizer); on this environment's every group it finds the same entry points, with
    the same distribution names and versions."""
    groups = importlib.metadata.entry_points().groups
    assert {"bpe_core", "console_scripts"} <= groups
    for group in groups:
        theirs = sorted(
            (found.name, found.value, found.dist.metadata["Name"], found.dist.version)
            for found in importlib.metadata.entry_points(group=group)
            if found.dist is not None
        )
        ours = sorted((found.name, found.value, found.distribution, found.version) for found in entry_points(group))
        assert ours == theirs, group


def test_builtin_text_plugin_is_registered_through_the_entry_point_group() -> None:
    (entry_point,) = [entry for entry in importlib.metadata.entry_points(group="bpe_core") if entry.name == "text"]
    assert entry_point.value == "bpe_text"
    assert entry_point.dist is not None and entry_point.dist.metadata["Name"] == "bpe-core"
    info = next(info for info in registry().plugins() if info.name == "text")
    assert (info.module, info.distribution, info.version) == (
        "bpe_text",
        "bpe-core",
        importlib.metadata.version("bpe-core"),
    )
    assert set(info.components["pretokenizer"]) >= {"gpt2", "cl100k", "o200k", "regex", "whitespace"}
    assert set(info.components["reader"]) >= {"text", "jsonl"}
    assert set(info.components["normalizer"]) >= {"nfc", "nfkc", "lowercase"}


BUILTIN_COMPONENTS = [
    (kind, name)
    for info in registry().plugins()
    if info.distribution == "bpe-core"
    for kind in HOOKS
    for name in info.components[kind]
]


@pytest.mark.parametrize("kind, name", BUILTIN_COMPONENTS)
def test_every_builtin_component_refuses_an_unknown_option_naming_it_and_the_allowed_ones(kind: str, name: str) -> None:
    with pytest.raises(BpeError) as refused:
        registry().build(kind, name, {"no_such_option": 1})
    assert str(refused.value).startswith(f"{kind} {name!r} has no option 'no_such_option'; allowed: ")


def test_builtin_components_of_every_kind_are_checked_for_unknown_options() -> None:
    assert {kind for kind, _ in BUILTIN_COMPONENTS} == set(HOOKS)


def test_option_check_names_the_first_unknown_in_sorted_order_and_lists_the_allowed_as_given() -> None:
    with pytest.raises(BpeError) as refused:
        check_options("pretokenizer", "lines", {"zeta": 1, "alpha": 2, "k": 3}, ("k", "canonical"))
    assert str(refused.value) == "pretokenizer 'lines' has no option 'alpha'; allowed: k, canonical"
    with pytest.raises(BpeError, match="^reader 'lines' has no option 'x'; allowed: none$"):
        check_options("reader", "lines", {"x": 1}, iter(()))
    check_options("pretokenizer", "lines", {"k": 3}, iter(["k"]))  # a known option, from a one-pass iterable


def test_trained_tokenizer_records_the_versions_of_the_plugins_it_uses(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.txt"
    corpus.write_text(training_text()[:50_000], encoding="utf-8")
    config = {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 300}}
    tokenizer = bpe_core.train(config, [corpus], workers=1, progress=False)
    assert tokenizer.plugins == {"text": importlib.metadata.version("bpe-core")}
    tokenizer.save(tmp_path / "tok.json")
    assert json.loads((tmp_path / "tok.json").read_text(encoding="utf-8"))["plugins"] == tokenizer.plugins


# ---------------------------------------------------------------- third-party plugins, installed for real


def fake_distribution(site: Path, name: str, entry_points: str, module_source: str | None = None) -> None:
    """A minimal installed distribution: METADATA and entry_points.txt in a .dist-info directory."""
    info = site / f"{name.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[bpe_core]\n{entry_points}\n", encoding="utf-8")
    if module_source is not None:
        module = entry_points.split("=")[1].strip()
        (site / f"{module}.py").write_text(module_source, encoding="utf-8")


def test_plugin_that_fails_to_import_is_a_clean_error_naming_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_distribution(site, "bpe-broken", "broken = bpe_broken_plugin", "import no_such_module_anywhere\n")
    result = run_bpe("plugins", cwd=tmp_path, PYTHONPATH=str(site))
    assert_clean_error(result, "'broken'", "bpe_broken_plugin")
    # a built-ins-only run never imports it
    assert "broken" not in assert_ok(run_bpe("plugins", cwd=tmp_path, PYTHONPATH=str(site), **DISABLE))


def test_installed_plugin_clashing_with_a_builtin_name_fails_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    source = (
        "from bpe_core.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def bpe_core_pretokenizers():\n"
        "    return {'gpt2': lambda options: None}\n"
    )
    fake_distribution(site, "bpe-impostor", "impostor = bpe_impostor_plugin", source)
    result = run_bpe("plugins", cwd=tmp_path, PYTHONPATH=str(site))
    assert_clean_error(result, "'gpt2'", "'text'", "'impostor'")


@pytest.fixture(scope="module")
def protein_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/bpe-protein installed with pip into a directory of its own (a copy is built, so
    no build artifacts land in the repository)."""
    root = tmp_path_factory.mktemp("protein-plugin")
    source = root / "bpe-protein"
    shutil.copytree(
        EXAMPLES_DIR / "bpe-protein", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    site = root / "site"
    install = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
            "--no-build-isolation", "--no-index", "--target", str(site), str(source),
        ],
        capture_output=True,
        text=True,
        env=bpe_env(PIP_NO_INPUT="1"),
        timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    assert (site / "bpe_protein").is_dir()
    return site


@pytest.fixture(scope="module")
def protein_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Phage lambda's genome translated in three frames, one peptide (split at stops) per line."""
    genome = single_sequence(LAMBDA_PATH)
    assert len(genome) == 48_502 and set(genome) <= set("ACGT")
    peptides = [peptide for frame in range(3) for peptide in translate(genome, frame).split("*") if peptide]
    assert set("".join(peptides)) <= set(AMINO_ACIDS)
    directory = tmp_path_factory.mktemp("proteins")
    (directory / "proteins.txt").write_text("".join(peptide + "\n" for peptide in peptides), encoding="utf-8")
    (directory / "longest.txt").write_text(max(peptides, key=len) + "\n", encoding="utf-8")
    (directory / "protein.yaml").write_text(
        "name: lambda-proteins\n"
        "input:\n  reader: protein-lines\n  paths: [proteins.txt]\n"
        "pretokenizer:\n  name: protein\n"
        f"trainer:\n  vocab_size: {PROTEIN_VOCAB}\n"
        "output: protein.json\n",
        encoding="utf-8",
    )
    return directory


@pytest.fixture(scope="module")
def protein_tokenizer(protein_site: Path, protein_corpus: Path) -> Path:
    assert_ok(run_bpe("train", "protein.yaml", "-q", cwd=protein_corpus, PYTHONPATH=str(protein_site)))
    return protein_corpus / "protein.json"


def test_plugins_command_lists_the_installed_protein_plugin_and_its_components(
    protein_site: Path, tmp_path: Path
) -> None:
    stdout = assert_ok(run_bpe("plugins", cwd=tmp_path, PYTHONPATH=str(protein_site)))
    blocks = {block.split()[0]: block for block in _plugin_blocks(stdout)}
    assert set(blocks) >= {"protein", "text"}
    protein = blocks["protein"]
    assert "bpe-protein" in protein.splitlines()[0] and "0.1.0" in protein.splitlines()[0]
    assert "pretokenizers: protein" in protein
    assert "readers: protein-lines" in protein
    assert "decoders: protein" in protein


def _plugin_blocks(stdout: str) -> list[str]:
    """The `bpe plugins` output cut into one block per plugin (a header line, then indented lines)."""
    blocks: list[str] = []
    for line in stdout.splitlines():
        if line and not line.startswith(" "):
            blocks.append(line)
        elif blocks:
            blocks[-1] += "\n" + line
    return blocks


def test_protein_tokenizer_trains_through_the_plugins_entry_point(protein_tokenizer: Path) -> None:
    data = json.loads(protein_tokenizer.read_text(encoding="utf-8"))
    assert data["alphabet"] == list(AMINO_ACIDS)
    assert data["pretokenizer"]["name"] == "protein"
    assert len(base64.b64decode(data["merges"])) == 8 * (PROTEIN_VOCAB - len(AMINO_ACIDS))  # two 32-bit ids a merge
    assert data["plugins"] == {"protein": "0.1.0"}
    assert data["provenance"]["symbols"] == sum(
        len(line) for line in (protein_tokenizer.parent / "proteins.txt").read_text(encoding="utf-8").splitlines()
    )


def test_protein_sequence_encodes_and_decodes_exactly(protein_site: Path, protein_tokenizer: Path) -> None:
    directory = protein_tokenizer.parent
    sequence = (directory / "longest.txt").read_text(encoding="utf-8").strip()
    ids = directory / "longest.ids"
    assert_ok(
        run_bpe(
            "encode", "-t", protein_tokenizer, "longest.txt", "-o", ids, cwd=directory, PYTHONPATH=str(protein_site)
        )
    )
    (line,) = ids.read_text(encoding="utf-8").splitlines()
    tokens = [int(token) for token in line.split()]
    assert all(0 <= token < PROTEIN_VOCAB for token in tokens)
    assert len(tokens) < len(sequence)  # merges were learned and used
    decoded = run_bpe("decode", "-t", protein_tokenizer, ids, cwd=directory, PYTHONPATH=str(protein_site))
    assert assert_ok(decoded) == sequence
    shown = assert_ok(
        run_bpe(
            "encode",
            "-t",
            protein_tokenizer,
            "longest.txt",
            "--format",
            "tokens",
            cwd=directory,
            PYTHONPATH=str(protein_site),
        )
    )
    assert shown.split() and "".join(shown.split()) == sequence


def test_protein_plugin_does_not_load_when_autoload_is_disabled(protein_site: Path, tmp_path: Path) -> None:
    stdout = assert_ok(run_bpe("plugins", cwd=tmp_path, PYTHONPATH=str(protein_site), **DISABLE))
    headers = [block.splitlines()[0] for block in _plugin_blocks(stdout)]
    assert "text" in [header.split()[0] for header in headers]
    assert all("(bpe-core " in header for header in headers), headers
    assert "protein" not in stdout


def test_training_with_the_protein_pretokenizer_and_autoload_disabled_is_a_clean_error(
    protein_site: Path, protein_corpus: Path, tmp_path: Path
) -> None:
    output = tmp_path / "protein.json"
    result = run_bpe(
        "train", protein_corpus / "protein.yaml", "-o", output, cwd=tmp_path, PYTHONPATH=str(protein_site), **DISABLE
    )
    assert_clean_error(result, "protein.yaml", "unknown pretokenizer 'protein'", "gpt2")
    assert not output.exists()


def test_protein_tokenizer_with_autoload_disabled_names_the_missing_plugin(
    protein_site: Path, protein_tokenizer: Path, tmp_path: Path
) -> None:
    result = run_bpe(
        "encode",
        "-t",
        protein_tokenizer,
        protein_tokenizer.parent / "longest.txt",
        cwd=tmp_path,
        PYTHONPATH=str(protein_site),
        **DISABLE,
    )
    assert_clean_error(result, "protein.json", "'protein'", "not installed")


def test_disabling_autoload_in_process_keeps_the_builtins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BPE_CORE_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry.cache_clear()
    try:
        names = [info.name for info in registry().plugins()]
        assert "text" in names
        assert all(info.distribution == "bpe-core" for info in registry().plugins())
    finally:
        monkeypatch.delenv("BPE_CORE_DISABLE_PLUGIN_AUTOLOAD")
        registry.cache_clear()
