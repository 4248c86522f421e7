"""DNA decoders: symbols back to a sequence, and sequences to FASTA files.

FASTA is written as `>NAME` then the sequence in lines of 60 letters, each record ending with a
newline; a name ending in `.gz` is gzip-compressed. Qualities are not encoded, so decoded FASTQ
reads become FASTA records too.
"""

import gzip
import io
from collections.abc import Iterable
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

    def decode(self, symbols: list[int], alphabet: list[str]) -> str:
        return "".join(alphabet[symbol] for symbol in symbols)


class KmerDecoder(_FastaWriter):
    """k-mers back to the sequence: a chunk's first k-mer gives k letters, each next one the
    `stride` letters it adds; single letters and N-padded tails give their letters."""

    name = "dna-kmers"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("decoder", self.name, options, ("k", "stride", "padded"))
        self.k = int(options.get("k", 6))
        self.stride = int(options.get("stride", self.k))
        self.padded = bool(options.get("padded", False))

    def decode(self, symbols: list[int], alphabet: list[str]) -> str:
        k = self.k
        stride = self.stride
        pieces: list[str] = []
        in_kmers = False
        for symbol in symbols:
            label = alphabet[symbol]
            tail = self.padded and len(label) == k and "N" in label
            if len(label) == k and not tail:
                pieces.append(label[k - stride :] if in_kmers else label)
                in_kmers = True
            else:
                pieces.append(label.rstrip("N") if tail else label)
                in_kmers = False
        return "".join(pieces)
