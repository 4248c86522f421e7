"""The compiled counting loop for byte-level training: a built-in pattern's scanner splits the
text and each chunk's UTF-8 bytes (the packed symbols training needs) are counted in a
`ChunkCounts` as a range of the text's encoding, with no Python string per chunk.

A mypyc kernel like the scanner: no pluggy, no `regex`, no I/O. It counts what
`Scanner.split` gives, chunk for chunk (the tests compare them).
"""

from mypy_extensions import i64

from bpe_core.engine.chunk_counts import PADDING, ChunkCounts
from bpe_text.scanner import Scanner


def count_text(scanner: Scanner, text: str, counts: ChunkCounts) -> None:
    """Add the UTF-8 bytes of each of the text's chunks to `counts` (lone surrogates as
    "surrogatepass" encodes them, three bytes each)."""
    data = text.encode("utf-8", "surrogatepass") + PADDING
    size: i64 = len(text)
    ascii = len(data) - len(PADDING) == size
    start: i64 = 0
    byte_start: i64 = 0
    while start < size:
        end = scanner.chunk_end(text, start, size)
        if ascii:
            byte_end = byte_start + end - start
        else:
            byte_end = byte_start
            for index in range(start, end):
                code = ord(text[index])
                byte_end += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
        counts.add(data, byte_start, byte_end, 1)
        start = end
        byte_start = byte_end
