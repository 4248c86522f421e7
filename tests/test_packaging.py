"""Packaging, as users install: `python -m build` with build isolation makes an sdist and, from it,
a wheel carrying the compiled engine and kernels; that wheel installs in a fresh virtual environment
with the runtime dependencies only, and `bpe demo` runs there. Without a working C compiler the
build gives a pure-Python wheel with one warning; BPE_CORE_PURE=1 gives one on purpose.

Slow (two builds and a fresh venv), so it runs once, in the compiled run; not marked both_modes.
pip, in the isolated build and in the fresh venv, finds packages as this machine's pip config says.
"""

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import bpe_core

SOURCE_TREE = Path(__file__).resolve().parents[1]
COMPILED_MODULES = [
    "bpe_core/engine/alphabet",
    "bpe_core/engine/decoder",
    "bpe_core/engine/heap",
    "bpe_core/engine/tables",
    "bpe_core/engine/encode/buckets",
    "bpe_core/engine/encode/encoder",
    "bpe_core/engine/encode/id_lists",
    "bpe_core/engine/encode/kernel",
    "bpe_core/engine/encode/pair_ranks",
    "bpe_core/engine/encode/range_cache",
    "bpe_core/engine/encode/recover",
    "bpe_core/engine/encode/unit_sides",
    "bpe_core/engine/encode/units",
    "bpe_core/engine/encode/windows",
    "bpe_core/engine/train/chunk_counts",
    "bpe_core/engine/train/groups",
    "bpe_core/engine/train/mirror",
    "bpe_core/engine/train/pair_heap",
    "bpe_core/engine/train/pairs",
    "bpe_core/engine/train/picky",
    "bpe_core/engine/train/trainer",
    "bpe_text/packing",
    "bpe_text/scanner",
    "bpe_midi/smf",
    "bpe_midi/grammars",
]
SAMPLES = [
    "bpe_core/samples/us-founding-texts.txt",
    "bpe_core/samples/lambda_phage.fa.gz",
    "bpe_core/samples/pop909/001.mid",
    "bpe_core/samples/pop909/LICENSE",
]
# what only the tests, the benchmarks or the extras need: never installed by the wheel alone (numpy
# is not among them: Biopython, a runtime dependency, requires it)
NOT_RUNTIME = [
    "pytest",
    "hypothesis",
    "mypy",
    "transformers",
    "tokenizers",
    "dask",
    "distributed",
    "rustbpe",
    "torch",
]
BUILD_ARTIFACTS = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.so", ".hypothesis", ".mypy_cache", ".pytest_cache"
)


def run(*command: object, cwd: Path, timeout: float = 900, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("BPE_CORE_PURE", "BPE_CORE_EXPECT_COMPILED")}
    env.update(environment)
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
    assert result.returncode == 0, (
        f"{command} exited {result.returncode}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    return result


def wheel_without_isolation(source: Path, dist: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    """`python -m build --wheel --no-isolation` of `source` into `dist`: this environment has the
    build's requirements, so only what `environment` changes (the compiler, BPE_CORE_PURE) differs."""
    return run(
        sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, source, cwd=source.parent,
        **environment,
    )  # fmt: skip


def source_copy(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """The project as a fresh clone has it (no build directory, no compiled modules beside the sources)."""
    source = tmp_path_factory.mktemp(name) / "bpe-core"
    shutil.copytree(SOURCE_TREE, source, ignore=BUILD_ARTIFACTS)
    return source


def only(paths: list[Path]) -> Path:
    assert len(paths) == 1, paths
    return paths[0]


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def extension_modules(names: set[str]) -> set[str]:
    """The compiled modules in a wheel, as paths without the platform suffix (`bpe_text/scanner`)."""
    return {name.split(".")[0] for name in names if name.endswith(".so") and "__mypyc" not in name}


@pytest.fixture(scope="module")
def isolated_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build`: the sdist, then the wheel built from that sdist, each in an isolated environment."""
    source = source_copy(tmp_path_factory, "isolated-build")
    dist = source.parent / "dist"
    run(sys.executable, "-m", "build", "--outdir", dist, source, cwd=source.parent)
    return dist


@pytest.fixture(scope="module")
def fresh_venv(isolated_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with the wheel installed, and its dependencies resolved by pip."""
    venv = tmp_path_factory.mktemp("fresh-venv") / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=venv.parent)
    run(
        venv / "bin" / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        only(list(isolated_build.glob("*.whl"))),
        cwd=venv.parent,
    )
    return venv


def test_the_sdist_holds_everything_the_build_needs(isolated_build: Path) -> None:
    with tarfile.open(only(list(isolated_build.glob("*.tar.gz")))) as archive:
        names = {name.partition("/")[2] for name in archive.getnames()}
    for needed in [
        "setup.py",
        "pyproject.toml",
        "README.md",
        "configs/gpt2-style.yaml",
        "examples/bpe-protein/pyproject.toml",
    ]:
        assert needed in names, needed
    for module in COMPILED_MODULES:
        source = module if module.startswith("bpe_core/") else f"plugins/{module}"
        assert source + ".py" in names, module
    for sample in SAMPLES:
        assert sample in names, sample
    assert not [name for name in names if name.endswith((".so", ".c"))], "compiled output in the sdist"


def test_the_wheel_carries_the_compiled_engine_kernels_and_samples(isolated_build: Path) -> None:
    wheel = only(list(isolated_build.glob("*.whl")))
    assert f"-cp{sys.version_info.major}{sys.version_info.minor}-" in wheel.name, wheel.name
    names = wheel_names(wheel)
    assert extension_modules(names) == set(COMPILED_MODULES)
    # the Python sources stay beside them: BPE_CORE_PURE=1 at run time imports those
    assert {module + ".py" for module in COMPILED_MODULES} <= names
    assert set(SAMPLES) <= names


def test_the_wheel_installs_a_compiled_bpe_with_the_runtime_dependencies_only(fresh_venv: Path) -> None:
    version = run(fresh_venv / "bin" / "bpe", "--version", cwd=fresh_venv).stdout
    assert version.strip() == f"bpe-core {bpe_core.__version__} (engine: compiled with mypyc)"
    installed = run(fresh_venv / "bin" / "python", "-m", "pip", "list", "--format=freeze", cwd=fresh_venv).stdout
    names = {line.partition("==")[0].lower() for line in installed.splitlines()}
    assert {"bpe-core", "pluggy", "regex", "pyyaml", "tqdm", "biopython", "mido", "librt"} <= names
    assert not names & set(NOT_RUNTIME), names & set(NOT_RUNTIME)


def test_bpe_demo_runs_in_the_fresh_venv(fresh_venv: Path, tmp_path: Path) -> None:
    output = run(fresh_venv / "bin" / "bpe", "demo", cwd=tmp_path, timeout=300).stdout
    assert "(round trip exact: True)" in output  # text
    assert "decode round trip exact: True" in output  # DNA
    assert "decoded back to a MIDI file" in output  # MIDI
    assert list(tmp_path.iterdir()) == [], "the demo wrote into the working directory"


def test_without_a_c_compiler_the_wheel_is_pure_python_with_one_warning(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    source = source_copy(tmp_path_factory, "no-compiler")
    dist = source.parent / "dist"
    build = wheel_without_isolation(source, dist, CC="/bin/false")
    warnings = [line for line in (build.stdout + build.stderr).splitlines() if line.startswith("warning: bpe-core")]
    assert len(warnings) == 1, warnings
    assert "no working C compiler" in warnings[0] and "pure Python" in warnings[0]
    names = wheel_names(only(list(dist.glob("*.whl"))))
    assert extension_modules(names) == set()
    assert not [name for name in names if name.endswith(".so")]
    assert {module + ".py" for module in COMPILED_MODULES} <= names

    site = source.parent / "site"
    with zipfile.ZipFile(only(list(dist.glob("*.whl")))) as archive:
        archive.extractall(site)
    # the extracted wheel first on the path, this environment's dependencies after it
    version = run(
        sys.executable,
        "-c",
        "import sys; from bpe_core.cli import main; sys.exit(main(['--version']))",
        cwd=site,
        PYTHONPATH=str(site),
    )
    assert "(engine: pure Python)" in version.stdout


def test_bpe_core_pure_builds_a_pure_python_wheel_for_any_platform(tmp_path_factory: pytest.TempPathFactory) -> None:
    source = source_copy(tmp_path_factory, "pure-build")
    dist = source.parent / "dist"
    wheel_without_isolation(source, dist, BPE_CORE_PURE="1")
    wheel = only(list(dist.glob("*.whl")))
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    assert not [name for name in wheel_names(wheel) if name.endswith(".so")]
