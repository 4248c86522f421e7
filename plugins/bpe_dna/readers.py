"""FASTA and FASTQ readers, plain or gzip, files, globs or directories: Biopython's parsers, but for
FASTQ's plain four-line records, cut out of blocks of text (`bpe_dna.fastq`).

Each record becomes a `Record` that keeps its provenance (file and record id). Errors name the
file and the record: malformed FASTQ, a FASTA file with no records or with text before the first
header (Biopython only warns about that), unreadable files.
"""

import gzip
import io
import re
import warnings
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, Any, NamedTuple

from bpe_core.contract import Source, check_options
from bpe_core.errors import BpeError
from bpe_core.files import HashedFile, expand_paths, read_failure
from bpe_dna.fastq import fastq_tuples

FASTA_SUFFIXES = (".fa", ".fasta", ".fna", ".ffn", ".faa", ".frn", ".fa.gz", ".fasta.gz", ".fna.gz")
FASTQ_SUFFIXES = (".fq", ".fastq", ".fq.gz", ".fastq.gz")


class Record(NamedTuple):
    """One sequence with where it came from (a named tuple: workers are sent tens of thousands of
    reads, and a tuple pickles much faster than a frozen dataclass). `id` is the header's first
    word; `description` the whole header (id and description, as `bpe encode --keep-description`
    keeps it), or "" when it is the id alone."""

    source: str
    id: str
    sequence: str
    description: str = ""

    def __str__(self) -> str:
        return self.sequence


# one regex search a block of reads (`_sound`), and a read (`_check_read`) only to name the bad one
WHITESPACE = re.compile(r"\s")  # what str.isspace calls whitespace
NOT_A_SCORE = re.compile(r"[^!-~]")
READ_ERRORS = (OSError, EOFError, zlib.error)  # what reading a file, gzip or not, can raise
# The longest FASTA record read by default (letters): human chromosome 1 (249 Mbp) fits; a record
# is held whole, and training keeps about 20 bytes per letter (docs/benchmarks.md, train_long.py).
MAX_RECORD_LENGTH = 1 << 28
LINE_PIECE = 1 << 20  # characters of a line read at once, so one huge line cannot fill memory


def _open(hashed: HashedFile) -> IO[str]:
    """Text over a file whose bytes are hashed as they are read. Headers may hold any UTF-8 (a
    UTF-8 byte order mark is dropped); what a sequence may hold is the pretokenizer's policy."""
    # GzipFile or BufferedReader: typeshed has no common type of the two that TextIOWrapper takes
    binary: Any = gzip.GzipFile(fileobj=hashed, mode="rb") if hashed.path.endswith(".gz") else io.BufferedReader(hashed)
    return io.TextIOWrapper(binary, encoding="utf-8-sig", errors="strict")


def _not_ascii(path: str, record_id: str, sequence: str) -> str:
    position = next(index for index, letter in enumerate(sequence) if not letter.isascii())
    return f"{path}, record {record_id}: {sequence[position]!r} at position {position + 1} is not a nucleotide letter"


def _not_text(path: str, where: str, error: UnicodeDecodeError) -> BpeError:
    byte = error.object[error.start : error.start + 1]
    return BpeError(f"{path}, {where}: not a UTF-8 text file (byte 0x{byte.hex()}: {error.reason})")


class _SequenceReader:
    name = ""
    suffixes: tuple[str, ...] = ()

    def __init__(self, options: dict[str, Any]) -> None:
        check_options("reader", self.name, options, ("max_length",) if self.name == "fasta" else ())
        self.max_length = options.get("max_length", MAX_RECORD_LENGTH)
        if (
            isinstance(self.max_length, bool)
            or not isinstance(self.max_length, int)
            or not 1 <= self.max_length <= 1 << 40
        ):
            raise BpeError(
                f"input.max_length: expected a number of letters from 1 to {1 << 40}, got {self.max_length!r}"
            )
        self._sources: list[Source] = []

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[Record]:
        for path in expand_paths(paths, self.suffixes):
            if path == "-":
                raise BpeError(f"reader {self.name!r} reads files, not standard input")
            hashed = HashedFile(path)
            try:
                yield from self._records_as_named(path, _open(hashed))
                self._sources.append(hashed.source())
            except READ_ERRORS as error:
                raise read_failure(path, error) from None
            except MemoryError:
                raise BpeError(
                    f"{path}: out of memory reading its records (a record too long for this machine?)"
                ) from None
            finally:
                hashed.close()

    def memory_documents(self, items: Iterable[Any]) -> Iterator[Record]:
        """Records from memory: a sequence (`str`, ASCII `bytes`, a Biopython `Seq`) or a
        `SeqRecord` (its id kept). Whitespace is removed as from a FASTA record's lines."""
        for index, item in enumerate(items):
            where = f"documents[{index}]"
            record_id = f"#{index + 1}"
            description = ""
            if isinstance(item, Record):
                record_id = item.id
                description = item.description
                item = item.sequence
            elif hasattr(item, "seq") and hasattr(item, "id"):  # a SeqRecord
                record_id = str(item.id)
                description = _header(record_id, str(getattr(item, "description", "")))
                item = item.seq
            if isinstance(item, (bytes, bytearray, memoryview)):
                item = bytes(item).decode("latin-1")  # not ASCII: refused below, naming the letter
            elif not isinstance(item, str) and type(item).__name__ in ("Seq", "MutableSeq"):
                item = str(item)
            if not isinstance(item, str):
                raise BpeError(f"{where}: a {type(item).__name__}, not a sequence (give str, bytes or a SeqRecord)")
            sequence = "".join(item.split())
            if len(sequence) > self.max_length:
                raise BpeError(
                    f"{where}, record {record_id}: longer than {self.max_length} letters (input.max_length); "
                    "split the record or raise max_length if memory allows"
                )
            if not sequence.isascii():
                raise BpeError(_not_ascii(where, record_id, sequence))
            yield Record(where, record_id, sequence, description)

    def _records_as_named(self, path: str, handle: IO[str]) -> Iterator[Record]:
        """A file named as FASTA is read as FASTA and one named as FASTQ as FASTQ, whichever DNA
        reader the tokenizer names: a tokenizer trained on reads encodes genomes, and the FASTA
        that decoding FASTQ writes encodes back to the same ids."""
        if isinstance(self, FastqReader) and path.endswith(FASTA_SUFFIXES):
            return FastaReader({"max_length": self.max_length})._records(path, handle)
        if isinstance(self, FastaReader) and path.endswith(FASTQ_SUFFIXES):
            return FastqReader({})._records(path, handle)
        return self._records(path, handle)

    def _records(self, path: str, handle: IO[str]) -> Iterator[Record]:
        raise NotImplementedError

    def sources(self) -> list[Source]:
        return list(self._sources)


class FastaReader(_SequenceReader):
    """Records of FASTA files; sequence lines are joined, whitespace removed."""

    name = "fasta"
    suffixes = FASTA_SUFFIXES

    def _records(self, path: str, handle: IO[str]) -> Iterator[Record]:
        from Bio.SeqIO.FastaIO import SimpleFastaParser  # imported on use: Biopython is slow to import

        count = 0
        with handle:
            first = ""
            try:
                while not first.strip():
                    first = handle.readline()
                    if not first:
                        break
            except UnicodeDecodeError as error:
                raise _not_text(path, "at the start", error) from None
            except READ_ERRORS as error:
                raise read_failure(path, error) from None
            if first.strip() and not first.startswith(">"):
                raise BpeError(f"{path}: not FASTA: text before the first '>' header: {first.strip()[:60]!r}")
            handle.seek(0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # Biopython warns about text before the first '>'
                    for title, sequence in SimpleFastaParser(self._bounded_lines(path, handle)):  # type: ignore[no-untyped-call]
                        count += 1
                        record_id = title.split(None, 1)[0] if title.strip() else f"#{count}"
                        sequence = "".join(sequence.split())
                        if not sequence.isascii():  # upper-casing could turn 'ß' or 'ſ' into IUPAC letters
                            raise BpeError(_not_ascii(path, record_id, sequence))
                        yield Record(path, record_id, sequence, _header(record_id, title))
            except Warning as warning:
                raise BpeError(f"{path}: not FASTA: {warning} (text before the first '>' header)") from None
            except UnicodeDecodeError as error:
                raise _not_text(path, f"after record {count}", error) from None
            except READ_ERRORS as error:
                raise read_failure(path, error) from None
            except ValueError as error:
                raise BpeError(f"{path}, after record {count}: {error}") from None
        if count == 0:
            raise BpeError(f"{path}: no FASTA records (no line starts with '>')")

    def _bounded_lines(self, path: str, handle: IO[str]) -> Iterator[str]:
        """The file's lines for the parser, long sequence lines in pieces, stopping with an error
        once a record grows past `max_length` letters (before it is held whole)."""
        length = 0
        title = ""
        at_line_start = True
        while line := handle.readline(LINE_PIECE):
            if at_line_start and line[0] == ">":
                while not line.endswith("\n") and len(line) <= self.max_length:
                    more = handle.readline(LINE_PIECE)  # a header is one line, however long
                    if not more:
                        break
                    line += more
                title = line[1:].strip()
                length = 0
            else:
                if not at_line_start and line[0] == ">":
                    line = line[1:]  # never a header; the '>' is no nucleotide and fails later
                    yield " >"
                length += len(line)
                if length > self.max_length:
                    record = title.split(None, 1)[0] if title else "after the last header"
                    raise BpeError(
                        f"{path}, record {record}: longer than {self.max_length} letters (input.max_length); "
                        "split the record or raise max_length if memory allows"
                    )
            at_line_start = line.endswith("\n")
            yield line


class FastqReader(_SequenceReader):
    """Records of FASTQ files (the reads; qualities are checked, then dropped)."""

    name = "fastq"
    suffixes = FASTQ_SUFFIXES

    def _records(self, path: str, handle: IO[str]) -> Iterator[Record]:
        count = 0
        last = "the start of the file"
        with handle:
            try:
                for records in fastq_tuples(handle):
                    if not _sound(records):
                        for number, (title, sequence, quality) in enumerate(records, start=count + 1):
                            last = f"record {number} ({_read_id(title) or 'no id'})"
                            _check_read(path, number, title, sequence, quality)
                    for title, sequence, _ in records:
                        count += 1
                        record_id = _read_id(title) or f"#{count}"
                        yield Record(path, record_id, sequence, _header(record_id, title))
                    last = f"record {count} ({_read_id(title) or 'no id'})"
            except UnicodeDecodeError as error:
                raise _not_text(path, f"after {last}", error) from None
            except READ_ERRORS as error:
                raise read_failure(path, error) from None
            except ValueError as error:
                where = f"record {count + 1}" if "record" not in last else f"after {last}"
                raise BpeError(f"{path}, {where}: malformed FASTQ: {error}") from None
        if count == 0:
            raise BpeError(f"{path}: no FASTQ records")


def _header(record_id: str, title: str) -> str:
    """A record's whole header when it says more than its id ("" when it is the id alone, as most
    reads' are: nothing more to keep)."""
    title = title.strip()
    return title if title and title != record_id else ""


def _read_id(title: str) -> str:
    """A read's id: its title's first word ('' for no title)."""
    return title.split(None, 1)[0] if title else ""


def _sound(records: list[tuple[str, str, str]]) -> bool:
    """Whether every read of a block passes `_check_read`, checked for the block at once."""
    sequences = "".join([sequence for _, sequence, _ in records])
    qualities = "".join([quality for _, _, quality in records])
    return (
        all([sequence for _, sequence, _ in records])
        and sequences.isascii()
        and not WHITESPACE.search(sequences)
        and not NOT_A_SCORE.search(qualities)
    )


def _check_read(path: str, number: int, title: str, sequence: str, quality: str) -> None:
    """Raise on a read that is empty, holds a letter that is not ASCII or whitespace, or a score
    that is not printable ASCII (a ValueError is named by the caller as malformed FASTQ)."""
    if not sequence:
        raise ValueError("empty sequence")
    if not sequence.isascii():
        raise BpeError(_not_ascii(path, _read_id(title) or f"#{number}", sequence))
    if WHITESPACE.search(sequence):
        raise ValueError("whitespace inside the sequence")
    bad = NOT_A_SCORE.search(quality)
    if bad is not None:
        raise ValueError(f"quality character {bad.group()!r} is not a printable ASCII score ('!' to '~')")
