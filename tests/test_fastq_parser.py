"""The FASTQ reader's block parser (`bpe_dna.fastq`) reads exactly what Biopython's
FastqGeneralIterator reads: the same records, then the same error at the same place.

Data: the 10,000 phage lambda reads of ../shared/data/dna, the same reads rewritten with wrapped
lines, '+' lines that repeat the title and Windows line ends, and Biopython's eight malformed
FASTQ files; then any text made of FASTQ-like lines (hypothesis), cut into blocks of any size.
"""

import gzip
import io
import itertools
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO

import pytest
from Bio.SeqIO.QualityIO import FastqGeneralIterator
from helpers.paths import DNA_DIR
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_dna.fastq import BLOCK_CHARACTERS, fastq_tuples

READS = DNA_DIR / "lambda_reads_1.fq.gz"
MALFORMED = sorted((DNA_DIR / "malformed").glob("*.fastq"))
BLOCK_SIZES = (1 << 22, 4096, 97, 1)


def outcome(parse: object, text: str) -> tuple[list[tuple[str, str, str]], str | None]:
    """The records a parser gives on `text` (read through universal newlines, as the reader
    does) and the error it stops with, as 'Type: message'."""
    records: list[tuple[str, str, str]] = []
    handle = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
    try:
        for record in parse(handle):  # type: ignore[operator]
            records.append(record)
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return records, f"{type(error).__name__}: {error}"
    return records, None


def in_blocks(handle: IO[str], block_characters: int) -> Iterator[tuple[str, str, str]]:
    """fastq_tuples' records one by one."""
    return itertools.chain.from_iterable(fastq_tuples(handle, block_characters))


def assert_parsed_as_biopython(text: str) -> None:
    expected = outcome(FastqGeneralIterator, text)
    for block in BLOCK_SIZES:
        assert outcome(partial(in_blocks, block_characters=block), text) == expected, block


def lambda_reads() -> str:
    with gzip.open(READS, "rt") as handle:
        return handle.read()


def test_the_lambda_reads_parse_as_biopython_parses_them() -> None:
    text = lambda_reads()
    records, error = outcome(partial(in_blocks, block_characters=BLOCK_CHARACTERS), text)
    assert error is None and len(records) == 10_000
    assert (records, error) == outcome(FastqGeneralIterator, text)


def test_reads_with_repeated_titles_and_windows_line_ends_parse_as_biopython() -> None:
    records, _ = outcome(FastqGeneralIterator, lambda_reads()[:200_000])
    text = "".join(f"@{title}\r\n{sequence}\r\n+{title}\r\n{quality}\r\n" for title, sequence, quality in records)
    assert_parsed_as_biopython(text)


def test_wrapped_records_go_to_biopython_from_the_first_one_and_still_parse_alike() -> None:
    records, _ = outcome(FastqGeneralIterator, lambda_reads()[:200_000])
    plain = "".join(f"@{title}\n{sequence}\n+\n{quality}\n" for title, sequence, quality in records[:300])
    wrapped = "".join(
        f"@{title}\n{sequence[:60]}\n{sequence[60:]}\n+\n{quality[:60]}\n{quality[60:]}\n"
        for title, sequence, quality in records[300:]
    )
    assert_parsed_as_biopython(plain + wrapped)


@pytest.mark.parametrize("path", MALFORMED, ids=lambda path: path.name)
def test_malformed_files_give_biopythons_records_and_error(path: Path) -> None:
    """(Biopython passes a NUL in a score; the reader's own check refuses it.)"""
    assert_parsed_as_biopython(path.read_text())


FASTQ_LINES = st.sampled_from(
    ["@r1", "@r2 x", "@", "+", "+r1", "+r2 x", "ACGT", "ACGTN", "AC GT", "IIII", "IIIII", "@III", "+II", "", "  ", "!"]
)


@pytest.mark.both_modes
@settings(max_examples=400, deadline=None)
@given(st.lists(FASTQ_LINES, max_size=24), st.booleans())
def test_any_fastq_like_text_parses_as_biopython(lines: list[str], final_newline: bool) -> None:
    assert_parsed_as_biopython("\n".join(lines) + ("\n" if final_newline and lines else ""))


@pytest.mark.both_modes
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text("ACGTN", min_size=1, max_size=12), st.booleans()), max_size=12))
def test_plain_records_in_any_blocks_parse_as_biopython(reads: list[tuple[str, bool]]) -> None:
    text = "".join(
        f"@read{number}\n{sequence}\n+{f'read{number}' if repeated else ''}\n{'@' * len(sequence)}\n"
        for number, (sequence, repeated) in enumerate(reads)
    )
    assert_parsed_as_biopython(text)
