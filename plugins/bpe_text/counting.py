"""The compiled counting loop for byte-level training: a built-in pattern's scanner splits the
text and each chunk's UTF-8 bytes (the packed symbols training needs) are counted in a
`ChunkCounts` as a range of the text's encoding, with no Python string per chunk.

A mypyc kernel like the scanner: no pluggy, no `regex`, no I/O. It counts what
`Scanner.split` gives, chunk for chunk (the tests compare them).
"""

from mypy_extensions import i64

from bpe_core.engine import PADDING, ChunkCounts
from bpe_text.encoding import ByteOffsets
from bpe_text.scanner import Scanner


def count_text(scanner: Scanner, text: str, counts: ChunkCounts) -> None:
    """Add the UTF-8 bytes of each of the text's chunks to `counts` (lone surrogates as
    "surrogatepass" encodes them, three bytes each)."""
    data = text.encode("utf-8", "surrogatepass") + PADDING
    offsets = ByteOffsets(text, data)
    size: i64 = len(text)
    start: i64 = 0
    byte_start: i64 = 0
    while start < size:
        end = scanner.chunk_end(text, start, size)
        byte_end = end + offsets.extra if end <= offsets.plain_until else offsets.at(end)
        counts.add(data, byte_start, byte_end, 1)
        start = end
        byte_start = byte_end
