"""Helpers for the DNA tests: an independent reading of the shared genomes and reads (their paths
are in helpers.paths) and independent re-statements of DNA facts (complement, k-mer order, window
counts, the standard genetic code). The DNA tests run the `bpe` command with helpers.cli_runner.

Nothing here imports bpe_core or Biopython: expected values in the tests must not come from the
code under test. Expected values are computed by the plainest possible code.
"""

import gzip
from functools import lru_cache
from pathlib import Path

from helpers.paths import CHR17_PATH, CONFIGS_DIR, ECOLI_PATH, LAMBDA_PATH, READS_PATH, TANDEM_PATH, require

FASTA_PATHS = (LAMBDA_PATH, ECOLI_PATH, CHR17_PATH, TANDEM_PATH)
DNABERT2_CONFIG = CONFIGS_DIR / "dnabert2-style.yaml"
NT_6MER_CONFIG = CONFIGS_DIR / "nt-6mer.yaml"
DNABERT_6MER_CONFIG = CONFIGS_DIR / "dnabert-6mer.yaml"

BASES = "ACGT"
IUPAC = "RYKMSWBDHV"
BERT_SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
# IUPAC complement (Cornish-Bowden 1985): A-T, C-G, R-Y, K-M, B-V, D-H; S, W, N are their own.
COMPLEMENT = {
    "A": "T", "C": "G", "G": "C", "T": "A", "N": "N",
    "R": "Y", "Y": "R", "K": "M", "M": "K", "S": "S", "W": "W", "B": "V", "V": "B", "D": "H", "H": "D",
}  # fmt: skip


def _open_text(path: Path):  # type: ignore[no-untyped-def]
    return gzip.open(path, "rt", encoding="ascii") if path.name.endswith(".gz") else open(path, encoding="ascii")


@lru_cache(maxsize=8)
def fasta_records(path: Path) -> tuple[tuple[str, str], ...]:
    """(first word of the header, sequence) for each record, in file order, lines joined."""
    records: list[tuple[str, list[str]]] = []
    with _open_text(require(path)) as handle:
        for line in handle:
            line = line.strip()
            if line.startswith(">"):
                records.append((line[1:].split()[0], []))
            elif line:
                assert records, f"{path}: sequence before the first header"
                records[-1][1].append(line)
    return tuple((name, "".join(lines)) for name, lines in records)


@lru_cache(maxsize=2)
def fastq_reads(path: Path = READS_PATH) -> tuple[tuple[str, str], ...]:
    """(first word of the title, sequence) for each 4-line FASTQ record."""
    with _open_text(require(path)) as handle:
        lines = handle.read().splitlines()
    assert len(lines) % 4 == 0
    reads = []
    for index in range(0, len(lines), 4):
        title, sequence, plus, quality = lines[index : index + 4]
        assert title.startswith("@") and plus.startswith("+") and len(sequence) == len(quality)
        reads.append((title[1:].split()[0], sequence))
    return tuple(reads)


def single_sequence(path: Path) -> str:
    (record,) = fasta_records(path)
    return record[1]


def write_fasta(path: Path, records: list[tuple[str, str]], width: int = 70) -> Path:
    with open(path, "w", encoding="ascii") as handle:
        for name, sequence in records:
            handle.write(f">{name}\n")
            handle.writelines(sequence[start : start + width] + "\n" for start in range(0, len(sequence), width))
    return path


def ecoli_slice(length: int) -> str:
    """The first `length` bases of the E. coli genome, read no further than needed."""
    with gzip.open(require(ECOLI_PATH), "rt", encoding="ascii") as handle:
        handle.readline()
        text = handle.read(length * 2).replace("\n", "")
    return text[:length]


def reverse_complement(sequence: str) -> str:
    return "".join(COMPLEMENT[letter] for letter in reversed(sequence.upper()))


def kmer_index(kmer: str) -> int:
    """The rank of a k-mer among all 4^k k-mers in A < C < G < T lexicographic order."""
    index = 0
    for letter in kmer:
        index = index * 4 + BASES.index(letter)
    return index


def window_count(length: int, size: int, overlap: int) -> int:
    """How many windows of `size` stepping by size - overlap cover `length` letters."""
    if length <= size:
        return 1
    step = size - overlap
    return 1 + -(-(length - size) // step)


# The standard genetic code (NCBI translation table 1), codon -> amino acid, '*' for stop.
GENETIC_CODE = {
    "TTT": "F", "TTC": "F", "TTA": "L", "TTG": "L",
    "CTT": "L", "CTC": "L", "CTA": "L", "CTG": "L",
    "ATT": "I", "ATC": "I", "ATA": "I", "ATG": "M",
    "GTT": "V", "GTC": "V", "GTA": "V", "GTG": "V",
    "TCT": "S", "TCC": "S", "TCA": "S", "TCG": "S",
    "CCT": "P", "CCC": "P", "CCA": "P", "CCG": "P",
    "ACT": "T", "ACC": "T", "ACA": "T", "ACG": "T",
    "GCT": "A", "GCC": "A", "GCA": "A", "GCG": "A",
    "TAT": "Y", "TAC": "Y", "TAA": "*", "TAG": "*",
    "CAT": "H", "CAC": "H", "CAA": "Q", "CAG": "Q",
    "AAT": "N", "AAC": "N", "AAA": "K", "AAG": "K",
    "GAT": "D", "GAC": "D", "GAA": "E", "GAG": "E",
    "TGT": "C", "TGC": "C", "TGA": "*", "TGG": "W",
    "CGT": "R", "CGC": "R", "CGA": "R", "CGG": "R",
    "AGT": "S", "AGC": "S", "AGA": "R", "AGG": "R",
    "GGT": "G", "GGC": "G", "GGA": "G", "GGG": "G",
}  # fmt: skip


def translate(dna: str, frame: int) -> str:
    """The amino acids of `dna` read from `frame` (0, 1 or 2) with the standard genetic code."""
    return "".join(GENETIC_CODE[dna[index : index + 3]] for index in range(frame, len(dna) - 2, 3))
