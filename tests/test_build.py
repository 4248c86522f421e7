"""The build under test: the installed package (not the source tree), in the mode the run asks for,
and compiled and pure engines giving identical results.

`make test` runs the whole suite with BPE_CORE_EXPECT_COMPILED=1 (the mypyc build must really be
in use), then the tests marked both_modes, these among them, with BPE_CORE_PURE=1 (the engine's
.py sources must be).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.modes import PURE

import bpe_core
import bpe_text
from bpe_core import engine

pytestmark = pytest.mark.both_modes

TESTS_DIR = Path(__file__).resolve().parent
SOURCE_TREE = TESTS_DIR.parent
SOURCE_PACKAGE = SOURCE_TREE / "bpe_core"
SOURCE_PLUGINS = SOURCE_TREE / "plugins"
EXPECT_COMPILED = os.environ.get("BPE_CORE_EXPECT_COMPILED") == "1"


def engine_module_files():
    return {module: sys.modules[f"bpe_core.engine.{module}"].__file__ for module in engine.ENGINE_MODULES}


def is_inside(path, directory):
    return Path(path).resolve().is_relative_to(directory.resolve())


def test_the_installed_package_is_under_test_not_the_source_tree():
    assert not is_inside(bpe_core.__file__, SOURCE_PACKAGE), bpe_core.__file__
    assert not is_inside(bpe_text.__file__, SOURCE_PLUGINS), bpe_text.__file__
    for module, path in engine_module_files().items():
        assert not is_inside(path, SOURCE_PACKAGE), (module, path)


def test_the_engine_runs_in_the_mode_this_run_asks_for():
    assert not (EXPECT_COMPILED and PURE), "BPE_CORE_EXPECT_COMPILED=1 and BPE_CORE_PURE=1 contradict each other"
    files = engine_module_files()
    from_extensions = {module: path.endswith(".so") for module, path in files.items()}
    if EXPECT_COMPILED:
        assert engine.is_compiled()
        assert all(from_extensions.values()), files
    elif PURE:
        assert not engine.is_compiled()
        assert all(path.endswith(".py") for path in files.values()), files
    else:
        assert engine.is_compiled() == all(from_extensions.values()), files


def test_python_started_in_the_source_tree_runs_its_engine_and_the_installed_kernels_alike(tmp_path):
    """`python` in a clone imports the clone's bpe_core, which has no compiled engine, while the
    text plugin comes installed and compiled: both must then be one kind, and encoding works."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, naïve café, 日本語のテキスト\n" * 200, encoding="utf-8")
    code = textwrap.dedent(
        """
        import sys
        import bpe_core, bpe_text.packing
        from bpe_core import engine
        tok = bpe_core.train("configs/gpt2-style.yaml", [sys.argv[1]], {"trainer.vocab_size": 300})
        assert tok.decode(tok.encode("naïve café 日本語")) == "naïve café 日本語"
        engine_module = sys.modules["bpe_core.engine." + engine.ENGINE_MODULES[0]]
        print(bpe_core.__file__, engine_module.__file__, bpe_text.packing.__file__)
        """
    )
    environment = {key: value for key, value in os.environ.items() if key != "BPE_CORE_PURE"}
    result = subprocess.run(
        [sys.executable, "-c", code, str(corpus)], cwd=SOURCE_TREE, env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    package, engine_file, kernel_file = result.stdout.split()
    assert is_inside(package, SOURCE_PACKAGE), package
    assert engine_file.endswith(".so") == kernel_file.endswith(".so"), (engine_file, kernel_file)


def test_bpe_version_names_the_engine_mode():
    console_script = Path(sys.executable).parent / "bpe"
    assert console_script.exists(), f"no console script {console_script}"
    result = subprocess.run([str(console_script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert bpe_core.__version__ in output
    if engine.is_compiled():
        assert "compiled with mypyc" in output and "pure Python" not in output
    else:
        assert "pure Python" in output and "compiled with mypyc" not in output
    if EXPECT_COMPILED:
        assert "compiled with mypyc" in output
    if PURE:
        assert "pure Python" in output


# One script, run once with BPE_CORE_PURE=1 and once without, from an empty working directory so
# the source tree cannot be imported. It prints everything the engine decided, as JSON.
MODE_PROBE = textwrap.dedent(
    """
    import gzip, json, random, sys
    import bpe_core
    from bpe_core import engine

    docs_path, ecoli_path, tandem_path = sys.argv[1:4]

    def fasta_records(path):
        records, name = {}, None
        for line in gzip.open(path, "rt"):
            line = line.strip()
            if line.startswith(">"):
                name = line[1:]
                records[name] = []
            elif line:
                records[name].append(line)
        return ["".join(lines) for lines in records.values()]

    with gzip.open(docs_path, "rt", encoding="utf-8", newline="") as handle:
        docs = handle.read(600_000)
    with open("slice.txt", "w", encoding="utf-8", newline="") as handle:
        handle.write(docs[:400_000])
    probe = docs[400_000:600_000] + "emoji 😀 ünïcode 中文 \\ud800 lone"

    out = {
        "compiled": engine.is_compiled(),
        "bpe_core": bpe_core.__file__,
        "engine_files": [sys.modules["bpe_core.engine." + m].__file__ for m in engine.ENGINE_MODULES],
    }
    for pretokenizer in ("gpt2", "o200k"):
        for tie in ("smallest", "largest"):
            tok = bpe_core.train(
                {"input": {"reader": "text"}, "pretokenizer": {"name": pretokenizer},
                 "trainer": {"vocab_size": 1000, "tie_break": tie}},
                ["slice.txt"], workers=1,
            )
            ids = tok.encode(probe)
            assert tok.decode(ids) == probe.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            out["text", pretokenizer, tie] = [tok.merges, tok.merge_counts, ids]

    genome = fasta_records(ecoli_path)[0][:150_000]
    dna = ["ACGT".index(base) for base in genome]
    for tie in (engine.TIE_SMALLEST, engine.TIE_LARGEST):
        trainer = engine.train(4, [dna], [1], 500, tie_break=tie)
        encoder = engine.Encoder(4, trainer.merges)
        out["dna", tie] = [
            trainer.merges, trainer.merge_counts, trainer.segments(),
            encoder.encode_symbols(dna[3:20_003]), [encoder.encode_symbols(dna[i:i + 60]) for i in range(0, 6000, 60)],
        ]

    tandem = max(fasta_records(tandem_path), key=len)
    unit = ["ACGT".index(base) for base in tandem[:125]]
    trainer = engine.train(4, [unit * 800, unit[:50], unit[50:]], [1, 2**40, 3], 10_000,
                           max_token_length=64, tie_break=engine.TIE_LARGEST)
    out["tandem"] = [trainer.merges, trainer.merge_counts, trainer.segments()]

    rng = random.Random(7)
    chunks = [[rng.randrange(300) for _ in range(rng.randrange(0, 40))] for _ in range(3000)]
    weights = [rng.choice([1, 2, 3, 2**40, 2**45 + 1]) for _ in chunks]
    trainer = engine.train(300, chunks, weights, 2000, min_frequency=2)
    out["random"] = [trainer.merges, trainer.merge_counts, trainer.segments()]

    print(json.dumps({key if isinstance(key, str) else repr(key): value for key, value in out.items()}))
    """
)


def run_probe(pure, tmp_path, docs_path):
    data = docs_path.parent.parent
    environment = {key: value for key, value in os.environ.items() if key != "BPE_CORE_PURE"}
    if pure:
        environment["BPE_CORE_PURE"] = "1"
    workdir = tmp_path / ("pure" if pure else "default")
    workdir.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            MODE_PROBE,
            str(docs_path),
            str(data / "dna" / "ecoli_k12_mg1655.fa.gz"),
            str(data / "dna" / "tandem_repeat_stress.fa.gz"),
        ],
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.mark.slow
def test_compiled_and_pure_engines_give_identical_merges_and_ids(tmp_path, docs_path):
    pure = run_probe(True, tmp_path, docs_path)
    default = run_probe(False, tmp_path, docs_path)
    for run in (pure, default):
        assert not is_inside(run.pop("bpe_core"), SOURCE_PACKAGE)
    assert pure.pop("compiled") is False
    assert all(path.endswith(".py") for path in pure.pop("engine_files"))
    compiled = default.pop("compiled")
    default_files = default.pop("engine_files")
    if EXPECT_COMPILED:
        assert compiled is True
        assert all(path.endswith(".so") for path in default_files)
    assert pure.keys() == default.keys()
    for key in pure:
        assert pure[key] == default[key], f"{key}: pure and default ({'compiled' if compiled else 'pure'}) differ"
