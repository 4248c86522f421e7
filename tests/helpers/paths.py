"""Where the project and the shared real data are: every path the tests read, defined once.

The shared data lives beside the project (`../shared/data` from the project root), never inside
it; its README.md says what each file is and where it comes from. A missing data file is a test
failure, not a skip: `require` names the file and that README.

Nothing here reads the data (helpers.dna, helpers.midi and the fixtures in conftest.py do), and
the configurations one domain's tests use are named in that domain's helpers.
"""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CONFIGS_DIR = PROJECT_ROOT / "configs"
EXAMPLES_DIR = PROJECT_ROOT / "examples"

DATA_DIR = PROJECT_ROOT.parent / "shared" / "data"
DOCS_PATH = DATA_DIR / "text" / "python-3.11-docs.txt.gz"
DNA_DIR = DATA_DIR / "dna"
LAMBDA_PATH = DNA_DIR / "lambda_phage.fa.gz"
ECOLI_PATH = DNA_DIR / "ecoli_k12_mg1655.fa.gz"
CHR17_PATH = DNA_DIR / "human_chr17_part_softmasked.fa.gz"
TANDEM_PATH = DNA_DIR / "tandem_repeat_stress.fa.gz"
READS_PATH = DNA_DIR / "lambda_reads_1.fq.gz"
MALFORMED_DIR = DNA_DIR / "malformed"
POP909_DIR = DATA_DIR / "midi" / "pop909"
# shipped with the benchmarks (with their license): the Debian Reference in Japanese and German
BENCHMARK_TEXTS = [
    PROJECT_ROOT / "benchmarks" / "data" / "tuning" / f"debian-reference.{language}.txt.gz" for language in ("ja", "de")
]


def require(path: Path) -> Path:
    """`path`, which must exist: a missing data file fails the test, saying where the data is described."""
    assert path.exists(), f"shared test data {path} is missing (see {DATA_DIR / 'README.md'})"
    return path
