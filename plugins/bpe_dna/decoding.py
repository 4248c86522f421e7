"""DNA decoders: symbols back to a sequence, and sequences to FASTA files.

FASTA is written as `>NAME` then the sequence in lines of 60 letters, each record ending with a
newline; a name ending in `.gz` is gzip-compressed. Qualities are not encoded, so decoded FASTQ
reads become FASTA records too.
"""

import gzip
import io
from collections.abc import Iterable, Sequence
from itertools import chain, groupby, repeat
from operator import getitem
from typing import IO, Any

from bpe_core.contract import check_options
from bpe_core.files import atomic_output
from bpe_dna.readers import FASTA_SUFFIXES

LINE = 60


def _write_records(handle: IO[str], records: Iterable[tuple[str, Any]]) -> None:
    for name, document in records:
        sequence = str(document)
        handle.write(f">{name}\n")
        for start in range(0, len(sequence), LINE):
            handle.write(sequence[start : start + LINE] + "\n")


def write_records(records: Iterable[tuple[str, Any]], path: str) -> None:
    """(name, sequence) records as a FASTA file, atomically (gzip for a name ending in .gz)."""
    if not path.endswith(".gz"):
        with atomic_output(path) as handle:
            _write_records(handle, records)
        return
    # no file name or time in the gzip header: the same records give the same bytes
    with atomic_output(path, binary=True) as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as packed:
        with io.TextIOWrapper(packed, encoding="ascii", newline="") as handle:
            _write_records(handle, records)


class _FastaWriter:
    """What both DNA decoders write: one FASTA record per document (`bpe decode -o x.fa`)."""

    record_suffixes = FASTA_SUFFIXES

    def write(self, document: Any, path: str) -> None:
        write_records([("decoded", document)], path)

    def write_records(self, records: Iterable[tuple[str, Any]], path: str) -> None:
        write_records(records, path)


class NucleotideDecoder(_FastaWriter):
    """Each symbol is one letter."""

    name = "dna"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("decoder", self.name, options, ())

    def decode(self, symbols: Sequence[int], alphabet: list[str]) -> str:
        # each label is one ASCII letter, so one byte-to-byte translation spells the sequence
        letters = "".join(alphabet).encode("ascii").ljust(256, b"?")
        return bytes(symbols).translate(letters).decode("ascii")


class KmerDecoder(_FastaWriter):
    """k-mers back to the sequence: a chunk's first k-mer gives k letters, each next one the
    `stride` letters it adds; single letters and N-padded tails give their letters."""

    name = "dna-kmers"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("decoder", self.name, options, ("k", "stride", "padded"))
        self.k = int(options.get("k", 6))
        self.stride = int(options.get("stride", self.k))
        self.padded = bool(options.get("padded", False))
        self.alphabet: list[str] = []
        self.tables: tuple[list[bool], list[str], list[str]] = ([], [], [])

    def decode(self, symbols: Sequence[int], alphabet: list[str]) -> str:
        is_kmer, letters, added = self._tables(alphabet)
        pieces: list[str] = []
        for in_kmers, run in groupby(symbols, is_kmer.__getitem__):
            # a run of k-mers: the first gives all its letters, each later one the letters it adds
            spellings = chain([letters], repeat(added if in_kmers else letters))
            pieces.extend(map(getitem, spellings, run))
        return "".join(pieces)

    def _tables(self, alphabet: list[str]) -> tuple[list[bool], list[str], list[str]]:
        """Per symbol, made once per alphabet: whether it is a k-mer (an N-padded tail is not),
        its letters, and the letters it adds after another k-mer (its last `stride`)."""
        if alphabet is not self.alphabet:
            k = self.k
            tails = [self.padded and len(label) == k and "N" in label for label in alphabet]
            is_kmer = [len(label) == k and not tail for label, tail in zip(alphabet, tails)]
            letters = [label.rstrip("N") if tail else label for label, tail in zip(alphabet, tails)]
            self.tables = (is_kmer, letters, [label[k - self.stride :] for label in alphabet])
            self.alphabet = alphabet
        return self.tables
