"""The class table and case-folding map the compiled scanners use, computed from `regex` itself
so that a scanner and the pattern agree on every code point (including unassigned ones and
surrogates). Built once per process, in about a tenth of a second.
"""

from functools import cache

import regex

from bpe_text.scanner import LETTER, LOWERISH, NUMBER, SPACE, UPPERISH

CLASSES = (
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (UPPERISH, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (LOWERISH, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
)
CONTRACTION_LETTERS = "sdmtlvre"


def every_code_point() -> str:
    """Every code point in order, lone surrogates included: its UTF-32 bytes laid out byte column
    by byte column, then decoded (milliseconds, where joining 1.1 million `chr`s takes a third of
    a second; not cached, so the 4.4 MB go once the tables are built)."""
    size = 0x110000
    utf32 = bytearray(4 * size)
    utf32[0::4] = bytes(range(256)) * (size // 256)
    utf32[1::4] = b"".join(bytes([middle]) * 256 for middle in range(256)) * (size // 65536)
    utf32[2::4] = b"".join(bytes([plane]) * 65536 for plane in range(size // 65536))
    return utf32.decode("utf-32-le", "surrogatepass")


@cache
def class_table() -> bytes:
    """One byte per code point (0..0x10FFFF) with the class bits set."""
    every = every_code_point()
    combined = 0
    for bit, pattern in CLASSES:
        marks = bytearray(0x110000)
        for match in regex.finditer(pattern + "+", every):
            marks[match.start() : match.end()] = b"\x01" * (match.end() - match.start())
        # each byte is 0 or 1, so shifting the whole number moves bit 0 of every byte in place
        combined |= int.from_bytes(marks, "little") << (bit.bit_length() - 1)
    return combined.to_bytes(0x110000, "little")


@cache
def case_folds() -> dict[int, int]:
    """Code point -> the contraction letter it matches under (?i), as `regex` decides."""
    every = every_code_point()
    folds: dict[int, int] = {}
    for letter in CONTRACTION_LETTERS:
        for match in regex.finditer(f"(?i:{letter})", every):
            folds[match.start()] = ord(letter)
    return folds
