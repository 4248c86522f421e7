"""FASTQ records as Biopython's `FastqGeneralIterator` gives them, (title, sequence, quality),
without importing Biopython for the common four-line records (the import alone would be a large
share of a `bpe encode` of reads): they are cut out of large blocks of text a column at a time, as fast as
Biopython's parser reads them, and come in lists, so that the reader checks a block at once.

The first record that is not plainly four lines (a sequence or quality wrapped over several
lines, a blank line, a damaged record) goes to Biopython itself, from that record to the end of
the file, so what is accepted, what comes out and the errors raised are exactly Biopython's.
This module does not check letters or scores; the reader does.
"""

import io
import itertools
import operator
from collections.abc import Iterator
from typing import IO, cast

BLOCK_CHARACTERS = 1 << 22  # text read at once: 4 M characters hold about 12,000 reads of 150 bp
LAST = operator.itemgetter(-1)  # a line's last character: Biopython's rstrip takes off any space there
Tuples = list[tuple[str, str, str]]


def fastq_tuples(handle: IO[str], block_characters: int = BLOCK_CHARACTERS) -> Iterator[Tuples]:
    """(title, sequence, quality) for each record of the text `handle`, as FastqGeneralIterator
    gives them, in lists: one per block of text, and one per record once Biopython reads."""
    pending = ""  # text from the start of a record that a block cut off
    while True:
        block = handle.read(block_characters)
        at_end = not block
        text = pending + block
        lines = text.split("\n")
        # the last piece is a line only at the end of the file, and only if it holds something
        complete = len(lines) if at_end and lines[-1] else len(lines) - 1
        # whole records whose next line is known: all of them at the end, else all but the last
        records = complete // 4 if at_end else max(0, complete - 1) // 4
        plain = _plain_records(lines, records, at_end and 4 * records == complete)
        if plain is None:
            plain = []
            while len(plain) < records and (record := _plain_record(lines, 4 * len(plain), complete)) is not None:
                plain.append(record)
        if plain:
            yield plain
        start = 4 * len(plain)
        if at_end and start == complete:
            return
        if at_end or len(plain) < records:
            # a record that is not plain four lines: Biopython reads the rest of the file
            # (a record a list, so that the records before an error all reach the caller first)
            for record in _biopython_from("\n".join(lines[start:]), handle):
                yield [record]
            return
        pending = "\n".join(lines[start:])


def _plain_records(lines: list[str], records: int, last: bool) -> Tuples | None:
    """The first `records` records of `lines` if each is plain four lines (see `_plain_record`)
    with a bare '+' line and no space at any line's end, checked a column at a time (the sequences
    are checked to hold something before their last characters are taken); else None."""
    end = 4 * records
    titles, sequences, pluses, qualities = (lines[column:end:4] for column in range(4))
    if (
        not all(map(str.startswith, titles, itertools.repeat("@")))
        or not (last or lines[end][:1] == "@")
        or not all(sequences)
        or any(map(str.startswith, sequences, itertools.repeat("+")))
        or pluses.count("+") != records
        or list(map(len, sequences)) != list(map(len, qualities))
        or any(map(str.__contains__, sequences, itertools.repeat(" ")))
        or any(map(str.__contains__, sequences, itertools.repeat("\t")))
        or any(map(str.isspace, {*map(LAST, titles), *map(LAST, sequences), *map(LAST, qualities)}))
    ):
        return None
    return list(zip([title[1:] for title in titles], sequences, qualities))


def _plain_record(lines: list[str], start: int, complete: int) -> tuple[str, str, str] | None:
    """The record of lines[start : start + 4] if Biopython reads exactly those four lines as one
    record (else None): the title line starts with '@', the sequence line holds something and does
    not start with '+', the '+' line repeats the title or nothing, sequence and quality are as long
    as each other, and the next line starts a record (or there is none: the first `complete`
    lines are the whole file)."""
    title, sequence, plus, quality = lines[start : start + 4]
    if start + 4 < complete and lines[start + 4][:1] != "@":
        return None
    if title[:1] != "@" or sequence[:1] in ("", "+") or plus[:1] != "+":
        return None
    title = title[1:].rstrip()
    sequence = sequence.rstrip()
    quality = quality.rstrip()
    second_title = plus[1:].rstrip()
    if (second_title and second_title != title) or len(sequence) != len(quality):
        return None
    if " " in sequence or "\t" in sequence:  # Biopython's error
        return None
    return title, sequence, quality


def _biopython_from(head: str, handle: IO[str]) -> Iterator[tuple[str, str, str]]:
    """FastqGeneralIterator over `head`, the text from a record's start, and then the rest of
    `handle` (head's last line completed from it first, so no line is cut in two)."""
    from Bio.SeqIO.QualityIO import FastqGeneralIterator  # imported on use: Biopython is slow to import

    head += handle.readline()
    # the handle is read only as _Resumed reads it: read(0), readline() and iteration
    return FastqGeneralIterator(cast(IO[str], _Resumed(head, handle)))


class _Resumed:
    """A text handle that reads `head`, then the rest of `handle`: what FastqGeneralIterator calls."""

    def __init__(self, head: str, handle: IO[str]) -> None:
        self._lines = itertools.chain(io.StringIO(head), handle)

    def read(self, size: int = -1) -> str:
        """Only read(0) is called, to check that the handle is text."""
        if size != 0:
            raise ValueError("a resumed FASTQ handle is read by lines")
        return ""

    def readline(self) -> str:
        return next(self._lines, "")

    def __iter__(self) -> Iterator[str]:
        return self._lines
