"""The compiled encoding loop for byte-level text: a built-in pattern's scanner splits the text
and each chunk goes to the engine as a byte range of the text's UTF-8 (`Encoder.encode_range`),
so a chunk that was seen before costs a scan and a lookup, with no Python string per chunk and
no Python object per byte.

A mypyc kernel like the scanner: no pluggy, no `regex`, no I/O. It encodes what `Scanner.split`
gives, chunk for chunk (the tests compare them).
"""

from mypy_extensions import i64

from bpe_core.engine.chunk_counts import PADDING
from bpe_core.engine.encoder import Encoder
from bpe_text.scanner import Scanner


def encode_text(scanner: Scanner, text: str, encoder: Encoder, wide: list[int]) -> list[int]:
    """The ids of the text's chunks, one after the other (lone surrogates as "surrogatepass"
    encodes them, three bytes each). `wide`: where the text's runs of non-ASCII characters
    start and end (start, end, start, end, ...), so only chunks that touch one count their
    UTF-8 bytes character by character."""
    data = text.encode("utf-8", "surrogatepass") + PADDING
    size: i64 = len(text)
    runs: i64 = len(wide)
    run: i64 = 0
    next_wide: i64 = wide[0] if runs > 0 else size  # the first non-ASCII character at or after `start`
    encoder.prepare_ranges()
    cache = encoder.range_cache
    assert cache is not None
    ids: list[int] = []
    start: i64 = 0
    byte_start: i64 = 0
    while start < size:
        end = scanner.chunk_end(text, start, size)
        if next_wide >= end:
            byte_end = byte_start + end - start
        else:
            byte_end = byte_start
            for index in range(start, end):
                code = ord(text[index])
                byte_end += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
            while run < runs and wide[run + 1] <= end:
                run += 2
            next_wide = size if run >= runs else max(i64(wide[run]), end)
        if not cache.extend_found(data, byte_start, byte_end, ids):  # the cache first: no call more per chunk
            encoder.encode_range(data, byte_start, byte_end, ids)
        start = end
        byte_start = byte_end
    return ids
