"""`trainer.parity` from a config: its validation, and group-parity training end to end on real
genomes (the engine's exactness is tests/test_parity.py's).

Each species is a group: the start of its genome trains, a held-back stretch after it is its dev
set. One group trains exactly the merges of plain BPE on the same file; several groups bring the
species' dev costs closer together than plain BPE does at the same vocabulary.
"""

import json
from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, run_bpe
from helpers.dna import fasta_records
from helpers.paths import CHR17_PATH, ECOLI_PATH, LAMBDA_PATH

import bpe_core
from bpe_core.evaluation import gini
from bpe_core.training import check_config

STRETCH = 4_000  # base pairs of each dev stretch
# base pairs each species trains on at most: E. coli ten times the others, as plain BPE would favour it
TRAIN = {"lambda": 40_000, "human": 30_000, "ecoli": 400_000}
VOCAB = 300


def dna_config(parity: dict | None = None) -> dict:
    trainer: dict = {"vocab_size": VOCAB}
    if parity is not None:
        trainer["parity"] = parity
    return {
        "name": "dna-parity",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides", "case": "fold", "n": "split", "iupac": "split"},
        "trainer": trainer,
    }


@pytest.fixture(scope="module")
def genomes(workdir: Path) -> dict[str, dict[str, str]]:
    """{species: {"train": path, "dev": path}}: the first TRAIN base pairs (or all but the dev
    stretch: 36 kb of the 40 kb of human) train, the STRETCH after them is the dev set."""
    parts: dict[str, dict[str, str]] = {}
    for species, path in (("lambda", LAMBDA_PATH), ("human", CHR17_PATH), ("ecoli", ECOLI_PATH)):
        ((_, sequence),) = fasta_records(path)
        sequence = sequence.upper()
        cut = min(TRAIN[species], len(sequence) - STRETCH)
        parts[species] = {}
        for part, (start, end) in {"train": (0, cut), "dev": (cut, cut + STRETCH)}.items():
            written = workdir / f"{species}-{part}.fa"
            written.write_text(f">{species}-{part}\n{sequence[start:end]}\n", encoding="ascii")
            parts[species][part] = str(written)
    return parts


def parity_option(genomes: dict[str, dict[str, str]], species: list[str], **options: int) -> dict:
    return {
        "groups": {name: [genomes[name]["train"]] for name in species},
        "dev": {name: [genomes[name]["dev"]] for name in species},
        **options,
    }


def dev_costs(tokenizer: bpe_core.Tokenizer, genomes: dict[str, dict[str, str]]) -> list[int]:
    """The tokens of each species' dev stretch."""
    return [len(tokenizer.encode(fasta_records(Path(parts["dev"]))[0][1])) for parts in genomes.values()]


@pytest.mark.both_modes
def test_one_group_trains_the_merges_of_plain_bpe(genomes):
    plain = bpe_core.train(dna_config(), [genomes["lambda"]["train"]], progress=False)
    parity = bpe_core.train(dna_config(parity_option(genomes, ["lambda"], warmup_merges=10)), progress=False)
    assert parity.merges == plain.merges
    assert parity.config["trainer"]["parity"]["groups"] == {"lambda": [genomes["lambda"]["train"]]}


@pytest.mark.both_modes
def test_species_costs_come_closer_than_with_plain_bpe(genomes):
    species = list(genomes)
    files = [genomes[name]["train"] for name in species]
    plain = bpe_core.train(dna_config(), files, progress=False)
    parity = bpe_core.train(dna_config(parity_option(genomes, species)), progress=False)
    window = bpe_core.train(dna_config(parity_option(genomes, species, window=20)), progress=False)
    assert parity.vocab_size == plain.vocab_size == window.vocab_size == VOCAB
    assert gini(dev_costs(parity, genomes)) < gini(dev_costs(plain, genomes))
    assert gini(dev_costs(window, genomes)) < gini(dev_costs(plain, genomes))
    for tokenizer in (parity, window):
        sequence = fasta_records(Path(genomes["human"]["dev"]))[0][1]
        assert tokenizer.decode(tokenizer.encode(sequence)) == sequence


@pytest.mark.parametrize(
    ("parity", "message"),
    [
        ("fr.txt", "trainer.parity: expected a mapping"),
        ({"groups": {"fr": ["fr.txt"]}}, "trainer.parity.dev: missing"),
        ({"groups": {"fr": ["fr.txt"]}, "dev": {"de": ["de.txt"]}}, "trainer.parity.dev.de: not a group"),
        ({"groups": {"fr": ["a"], "de": ["b"]}, "dev": {"fr": ["c"]}}, "no dev files for group 'de'"),
        ({"groups": {"fr": []}, "dev": {"fr": ["c"]}}, "trainer.parity.groups.fr: no files"),
        ({"groups": {}, "dev": {}}, "trainer.parity.groups: no groups"),
        ({"groups": {"fr": ["a"]}, "dev": {"fr": ["b"]}, "window": 0}, "trainer.parity.window: must be at least 1"),
        ({"groups": {"fr": ["a"]}, "dev": {"fr": ["b"]}, "warmup_merges": -1}, "trainer.parity.warmup_merges"),
        ({"groups": {"fr": ["a"]}, "dev": {"fr": ["b"]}, "widow": 5}, "did you mean 'window'"),
    ],
)
def test_a_bad_parity_section_is_named(parity, message):
    with pytest.raises(bpe_core.BpeError, match=message):
        check_config(dna_config(parity))


def test_parity_takes_no_files_counts_or_documents(genomes, tmp_path):
    """They would not be read: the groups' files are the training input."""
    config = dna_config(parity_option(genomes, ["lambda"]))
    with pytest.raises(bpe_core.BpeError, match="trainer.parity: .* give no documents"):
        bpe_core.train(config, documents=["ACGT"], progress=False)
    files = [genomes["human"]["train"], genomes["lambda"]["train"]]
    for given, named in ((files, "human-train.fa and 1 more"), (files[1:], "lambda-train.fa")):
        with pytest.raises(bpe_core.BpeError, match=f"trainer.parity: .* give no files \\(.*{named}\\)"):
            bpe_core.train(config, given, progress=False)
        with pytest.raises(bpe_core.BpeError, match="trainer.parity: .* give no files"):
            check_config(config, files=given)
    written = tmp_path / "parity.yaml"
    written.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    result = run_bpe("train", written, files[0], "-o", "never.json", "-q", cwd=tmp_path)
    assert_clean_error(result, "trainer.parity", "give no files", "human-train.fa")
    assert not (tmp_path / "never.json").exists()


def test_a_config_file_names_group_files_relative_to_itself(tmp_path, genomes):
    for species in ("lambda", "human"):
        for part in ("train", "dev"):
            (tmp_path / f"{species}-{part}.fa").write_text(Path(genomes[species][part]).read_text())
    config = tmp_path / "parity.yaml"
    config.write_text(
        "input: {reader: fasta}\n"
        "pretokenizer: {name: dna-nucleotides, case: fold, n: split, iupac: split}\n"
        "trainer:\n"
        "  vocab_size: 40\n"
        "  parity:\n"
        "    groups: {lambda: [lambda-train.fa], human: [human-train.fa]}\n"
        "    dev: {lambda: [lambda-dev.fa], human: [human-dev.fa]}\n"
    )
    assert "2 input path(s) in 2 parity groups" in check_config(config)
    tokenizer = bpe_core.train(config, progress=False)
    assert tokenizer.vocab_size == 40
    assert tokenizer.provenance["unique_chunks"] == 2  # the two training sequences: dev chunks are no training input
    assert [item["path"] for item in tokenizer.provenance["inputs"]] == [
        str(tmp_path / "lambda-train.fa"),
        str(tmp_path / "human-train.fa"),
    ]


def test_a_group_file_outside_the_config_directory_is_refused(tmp_path):
    config = tmp_path / "parity.yaml"
    config.write_text(
        "input: {reader: fasta}\n"
        "pretokenizer: {name: dna-nucleotides}\n"
        "trainer: {parity: {groups: {a: [../a.fa]}, dev: {a: [a-dev.fa]}}}\n"
    )
    with pytest.raises(bpe_core.BpeError, match=r"trainer\.parity\.groups\.a\[0\] '\.\./a\.fa' is outside"):
        check_config(config)
