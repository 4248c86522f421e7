"""FASTA and FASTQ readers (Biopython's fast parsers), plain or gzip, files, globs or directories.

Each record becomes a `Record` that keeps its provenance (file and record id). Errors name the
file and the record: malformed FASTQ, a FASTA file with no records or with text before the first
header (Biopython only warns about that), unreadable files.
"""

import gzip
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from bpe_core.components import Source
from bpe_core.errors import BpeError
from bpe_core.files import expand_paths, file_source

FASTA_SUFFIXES = (".fa", ".fasta", ".fna", ".ffn", ".faa", ".frn", ".fa.gz", ".fasta.gz", ".fna.gz")
FASTQ_SUFFIXES = (".fq", ".fastq", ".fq.gz", ".fastq.gz")


@dataclass(frozen=True)
class Record:
    """One sequence with where it came from."""

    source: str
    id: str
    sequence: str

    def __str__(self) -> str:
        return self.sequence


def _open(path: str) -> IO[str]:
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rt", encoding="ascii", errors="strict")
        return open(path, encoding="ascii", errors="strict")
    except OSError as error:
        raise BpeError(f"cannot read {path}: {error.strerror or error}") from error


class _SequenceReader:
    name = ""
    suffixes: tuple[str, ...] = ()

    def __init__(self, options: dict[str, Any]) -> None:
        if options:
            raise BpeError(f"reader {self.name!r} has no option {sorted(options)[0]!r}; allowed: none")
        self._sources: list[Source] = []

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[Record]:
        for path in expand_paths(paths, self.suffixes):
            if path == "-":
                raise BpeError(f"reader {self.name!r} reads files, not standard input")
            self._sources.append(file_source(path))
            yield from self._records_as_named(path)

    def _records_as_named(self, path: str) -> Iterator[Record]:
        """A file named as FASTA is read as FASTA and one named as FASTQ as FASTQ, whichever DNA
        reader the tokenizer names: a tokenizer trained on reads encodes genomes, and the FASTA
        that decoding FASTQ writes encodes back to the same ids."""
        if isinstance(self, FastqReader) and path.endswith(FASTA_SUFFIXES):
            return FastaReader({})._records(path)
        if isinstance(self, FastaReader) and path.endswith(FASTQ_SUFFIXES):
            return FastqReader({})._records(path)
        return self._records(path)

    def _records(self, path: str) -> Iterator[Record]:
        raise NotImplementedError

    def sources(self) -> list[Source]:
        return list(self._sources)


class FastaReader(_SequenceReader):
    """Records of FASTA files; sequence lines are joined, whitespace removed."""

    name = "fasta"
    suffixes = FASTA_SUFFIXES

    def _records(self, path: str) -> Iterator[Record]:
        from Bio.SeqIO.FastaIO import SimpleFastaParser  # imported on use: Biopython is slow to import

        count = 0
        with _open(path) as handle:
            first = ""
            while not first.strip():
                first = handle.readline()
                if not first:
                    break
            if first.strip() and not first.startswith(">"):
                raise BpeError(f"{path}: not FASTA: text before the first '>' header: {first.strip()[:60]!r}")
            handle.seek(0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # Biopython warns about text before the first '>'
                    for title, sequence in SimpleFastaParser(handle):  # type: ignore[no-untyped-call]
                        count += 1
                        record_id = title.split(None, 1)[0] if title.strip() else f"#{count}"
                        yield Record(path, record_id, "".join(sequence.split()))
            except Warning as warning:
                raise BpeError(f"{path}: not FASTA: {warning} (text before the first '>' header)") from None
            except UnicodeDecodeError as error:
                raise BpeError(f"{path}, after record {count}: not a text file ({error.reason} at byte {error.start})") from None
            except (ValueError, EOFError, OSError) as error:
                raise BpeError(f"{path}, after record {count}: {error}") from None
        if count == 0:
            raise BpeError(f"{path}: no FASTA records (no line starts with '>')")


class FastqReader(_SequenceReader):
    """Records of FASTQ files (the reads; qualities are checked, then dropped)."""

    name = "fastq"
    suffixes = FASTQ_SUFFIXES

    def _records(self, path: str) -> Iterator[Record]:
        from Bio.SeqIO.QualityIO import FastqGeneralIterator  # imported on use: Biopython is slow to import

        count = 0
        last = "the start of the file"
        with _open(path) as handle:
            try:
                for title, sequence, quality in FastqGeneralIterator(handle):
                    count += 1
                    last = f"record {count} ({title.split(None, 1)[0] if title else 'no id'})"
                    if not sequence:
                        raise ValueError("empty sequence")
                    if any(ch.isspace() for ch in sequence):
                        raise ValueError("whitespace inside the sequence")
                    bad = next((ch for ch in quality if not "!" <= ch <= "~"), None)
                    if bad is not None:
                        raise ValueError(f"quality character {bad!r} is not a printable ASCII score ('!' to '~')")
                    yield Record(path, title.split(None, 1)[0] if title else f"#{count}", sequence)
            except UnicodeDecodeError as error:
                raise BpeError(f"{path}, after {last}: not a text file ({error.reason} at byte {error.start})") from None
            except (ValueError, EOFError, OSError) as error:
                where = f"record {count + 1}" if "record" not in last else f"after {last}"
                raise BpeError(f"{path}, {where}: malformed FASTQ: {error}") from None
        if count == 0:
            raise BpeError(f"{path}: no FASTQ records")
