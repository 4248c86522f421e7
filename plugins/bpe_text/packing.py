"""The compiled packing loop for byte-level text: a built-in pattern's scanner splits the text,
and each chunk becomes a byte range of the text's UTF-8 (its packed symbols), recorded by its
end, so a document's chunks become data (`contract.PackedChunks`) with no Python string per chunk.

A mypyc kernel like the scanner: no pluggy, no `regex`, no I/O, no engine. It packs what
`Scanner.split` gives, chunk for chunk (the tests compare them).
"""

from typing import Final

from librt.strings import BytesWriter, read_i64_le, write_i32_le
from librt.vecs import append, vec
from mypy_extensions import i32, i64

from bpe_core.contract import PACKED_LIMIT, PACKING_PADDING
from bpe_text.scanner import Scanner

# the high bit of each byte of a word: a word of ASCII has none of them set
HIGH_BITS: Final[i64] = -0x7F7F7F7F7F7F7F80  # 0x8080808080808080 as a signed 64-bit word
NO_RUN: Final[i64] = 1 << 62  # `ByteOffsets.plain_until` when no run is left


def pack_texts(scanner: Scanner, texts: list[str]) -> tuple[bytes, bytes, list[int]]:
    """The texts' chunks packed (`PackedChunks`' symbols, ends and documents): the texts' UTF-8,
    made and read for runs of wide characters once, joined; the scanner is told where each text
    ends, so no chunk crosses two. A text holding a surrogate raises UnicodeEncodeError before
    any is scanned: the caller repairs such texts (`pretokenizers.well_formed`) and packs again,
    so text without one costs no search for them."""
    joined = "".join(texts)  # a single text is joined to itself, not copied
    data = joined.encode("utf-8") + PACKING_PADDING
    if len(data) - len(PACKING_PADDING) >= PACKED_LIMIT:
        raise ValueError(f"texts of {len(data) - len(PACKING_PADDING)} bytes of UTF-8 are too many to pack at once")
    offsets = ByteOffsets(joined, data)
    ends = BytesWriter()
    documents: list[int] = []
    chunks: i64 = 0
    start: i64 = 0
    for text in texts:
        size: i64 = start + len(text)  # where this text ends in `joined`
        while start < size:
            end = scanner.chunk_end(joined, start, size)
            byte_end = end + offsets.extra if end <= offsets.plain_until else offsets.at(end)
            write_i32_le(ends, i32(byte_end))
            chunks += 1
            start = end
        documents.append(chunks)
    return data, ends.getvalue(), documents


class ByteOffsets:
    """Where character offsets of a text fall in its UTF-8, asked in rising order: found from the
    runs of characters of one UTF-8 width before them (`wide_runs`), with no character counted."""

    wide: vec[i64]
    runs: i64
    run: i64  # the first run (its offset in `wide`) that does not end at or before the last offset asked
    extra: i64  # the bytes past one per character of the runs before it
    # where that run starts (no run left: past any text): an offset up to it is itself plus
    # `extra`, which a caller adds itself, without a call to `at`
    plain_until: i64

    def __init__(self, text: str, data: bytes) -> None:
        """`data`: the text's UTF-8, then PACKING_PADDING."""
        self.wide = vec[i64]() if text.isascii() else wide_runs(data, len(data) - len(PACKING_PADDING))
        self.runs = len(self.wide)
        self.run = 0
        self.extra = 0
        self.plain_until = self.wide[0] if self.runs > 0 else NO_RUN

    def at(self, character: i64) -> i64:
        """The byte offset of a character offset (no lower than the last one asked)."""
        wide = self.wide
        run = self.run
        while run < self.runs and wide[run + 1] <= character:
            self.extra += (wide[run + 1] - wide[run]) * (wide[run + 2] - 1)
            run += 3
        self.run = run
        self.plain_until = wide[run] if run < self.runs else NO_RUN
        offset = character + self.extra
        if run < self.runs and wide[run] < character:  # inside a run
            offset += (character - wide[run]) * (wide[run + 2] - 1)
        return offset


def wide_runs(data: bytes, end: i64) -> vec[i64]:
    """The runs of characters of one UTF-8 width above one in a text, read from its UTF-8
    `data[:end]` (8 readable bytes past it), as (start, end, width) triples, the offsets in
    characters: ASCII is skipped a word at a time, other bytes are read as UTF-8 lead bytes. Not
    a regex over the text, which makes a
    Python object per run; a vec, not a list: the caller reads it once per chunk, and a list's
    items are boxed."""
    runs = vec[i64]()
    high_bits: i64 = HIGH_BITS  # unboxed once: mypyc keeps a literal this large as a Python int
    position: i64 = 0  # a byte offset where a character starts
    character: i64 = 0  # that character's offset
    width: i64 = 1  # the width of the run being read (1: ASCII, no run)
    while position < end:
        if width == 1 and position + 8 <= end and read_i64_le(data, position) & high_bits == 0:
            position += 8
            character += 8
            continue
        lead: i64 = data[position]
        step: i64 = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if step != width:
            if width > 1:
                runs = append(runs, character)
                runs = append(runs, width)
            if step > 1:
                runs = append(runs, character)
            width = step
        position += step
        character += 1
    if width > 1:
        runs = append(runs, character)
        runs = append(runs, width)
    return runs
