"""The `text` reader: each file is one document, streamed in blocks so no file is held whole.

Paths may be files, globs, directories (read recursively, in sorted order), `.gz` files, or `-`
for standard input. Text must be UTF-8; an undecodable file is an error that names it.

Both readers can also read a byte range of a plain file (`range_documents`), so a cluster can
count one large file in parallel tasks. Ranges lie on a grid of `step` bytes; each range starts
at the boundary found near its grid point (the last place in a small window after it where the
pretokenizer allows a cut, for `text`; the first line start, for `jsonl`) and ends at the next
grid point's boundary. Both neighbours compute a boundary the same way from the file alone, so
the ranges tile the file exactly; a grid point with no boundary in its window is skipped (the
range before it runs on).

Both take documents from memory too (`memory_text`): a `str` or UTF-8 `bytes` is one document,
as one line of a JSON Lines file is.
"""

import codecs
import gzip
import io
import json
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, TextIO

from bpe_core.contract import Source, StreamedText, check_options
from bpe_core.errors import BpeError
from bpe_core.files import HashedFile, expand_paths, file_source, read_failure

BLOCK_CHARS = 1 << 16  # bytes read at once: blocks of megabytes fragmented the heap (see chunking.BATCH_CHARS)
BOUNDARY_WINDOW = 1 << 20  # bytes after a grid point searched for a range boundary

# where to cut bytes that start at a grid point: the cut's offset into them, or None
Cutter = Callable[[bytes, int], "int | None"]


READ_ERRORS = (OSError, EOFError, zlib.error)  # what reading a file, gzip or not, can raise


def open_text(path: str) -> tuple[TextIO, HashedFile | None]:
    """A text stream over a file, gzip or not, or standard input for `-`; with the file's bytes
    hashed as they are read (None for standard input)."""
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline=""), None
    hashed = HashedFile(path)
    # GzipFile or BufferedReader: typeshed has no common type of the two that TextIOWrapper takes
    binary: Any = gzip.GzipFile(fileobj=hashed, mode="rb") if path.endswith(".gz") else io.BufferedReader(hashed)
    return io.TextIOWrapper(binary, encoding="utf-8", newline=""), hashed


def text_blocks(path: str, read: Callable[[Source], None] | None = None) -> Iterator[str]:
    """The file's text in blocks of at most a million characters, newlines untouched; `read` gets
    the file's provenance once all of it has been read. Bytes are decoded here, so an encoding
    error names its byte offset in the file (for `.gz`, in the uncompressed data), not in a block."""
    handle, hashed = open_text(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with handle:
        try:
            while data := handle.buffer.read(BLOCK_CHARS):
                block = _decode(path, data, offset, decoder, final=False)
                offset += len(data)
                if block:
                    yield block
            _decode(path, b"", offset, decoder, final=True)  # a character cut off at the end
            if hashed is not None and read is not None:
                read(hashed.source())
        except READ_ERRORS as error:
            raise read_failure(path, error) from None
        finally:
            if hashed is not None:
                hashed.close()


def splittable(path: str) -> bool:
    """A file whose byte ranges can be read on their own: plain, not compressed or a stream."""
    return path != "-" and not path.endswith(".gz") and os.path.isfile(path)


def _decode(path: str, data: bytes, offset: int, decoder: "codecs.IncrementalDecoder", final: bool) -> str:
    """`data`, the bytes at `offset`, decoded; an error names its offset (the decoder's bytes
    held back from the block before come first in what it decodes)."""
    held = len(decoder.getstate()[0])
    try:
        return decoder.decode(data, final)
    except UnicodeDecodeError as error:
        raise BpeError(f"{path} is not valid UTF-8 ({error.reason} at byte {offset - held + error.start})") from error


def text_cutter(path: str, safe_cut: Callable[[str], int]) -> Cutter:
    """Boundaries where the pretokenizer allows a cut (the last one in the window)."""

    def cut(data: bytes, offset: int) -> int | None:
        skip = 0
        while skip < min(len(data), 4) and 0x80 <= data[skip] < 0xC0:  # to the start of a character
            skip += 1
        text = _decode(path, data[skip:], offset + skip, codecs.getincrementaldecoder("utf-8")(), final=False)
        position = safe_cut(text)
        return skip + len(text[:position].encode("utf-8")) if position > 0 else None

    return cut


def line_cutter(data: bytes, offset: int) -> int | None:
    """Boundaries at the first line start."""
    newline = data.find(b"\n")
    return newline + 1 if newline >= 0 else None


def byte_range(path: str, start: int, step: int, cutter: Cutter) -> tuple[int, int]:
    """The bytes [begin, end) the range at grid point `start` owns; begin == end for none."""
    size = os.path.getsize(path)
    with open(path, "rb") as handle:

        def boundary(offset: int) -> int | None:
            if offset <= 0 or offset >= size:
                return min(max(offset, 0), size)
            handle.seek(offset)
            found = cutter(handle.read(min(step, BOUNDARY_WINDOW)), offset)
            return None if found is None else offset + found

        begin = boundary(start)
        if begin is None:
            return size, size
        end: int | None = None
        point = start
        while end is None:
            point += step
            end = boundary(point)
        return begin, end


def range_blocks(path: str, begin: int, end: int) -> Iterator[str]:
    """The text of bytes [begin, end) of a file, in blocks."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as handle:
        handle.seek(begin)
        offset = begin
        while offset < end:
            data = handle.read(min(BLOCK_CHARS, end - offset))
            if not data:
                break
            offset += len(data)
            block = _decode(path, data, offset - len(data), decoder, final=offset >= end)
            if block:
                yield block


def memory_text(items: Iterable[Any]) -> Iterator[str]:
    """Text documents from memory: each item a `str`, UTF-8 `bytes`, or a list or tuple of them
    (a batch, as Hugging Face's `train_from_iterator` takes them)."""
    for index, item in enumerate(items):
        if isinstance(item, (list, tuple)):
            for inner, part in enumerate(item):
                yield _memory_document(part, f"documents[{index}][{inner}]")
        else:
            yield _memory_document(item, f"documents[{index}]")


def _memory_document(item: Any, where: str) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, (bytes, bytearray, memoryview)):
        try:
            return bytes(item).decode("utf-8")
        except UnicodeDecodeError as error:
            raise BpeError(f"{where}: not valid UTF-8 (byte {error.start}: {error.reason})") from None
    raise BpeError(f"{where}: a {type(item).__name__}, not text (give str or UTF-8 bytes)")


class TextReader:
    """Each file is one document; files are delivered as blocks, never loaded whole."""

    name = "text"

    def __init__(self) -> None:
        self._read: dict[str, Source] = {}  # files read to the end, hashed while they were read
        self._ranged: dict[str, IO[bytes]] = {}  # files read in ranges: hashed only when asked

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "TextReader":
        check_options("reader", cls.name, options, ())
        return cls()

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[StreamedText]:
        for path in expand_paths(paths):
            yield StreamedText(path, lambda path=path: text_blocks(path, self._finished))  # type: ignore[misc]

    memory_documents = staticmethod(memory_text)

    def _finished(self, source: Source) -> None:
        self._read[source.path] = source

    splittable = staticmethod(splittable)
    range_fragments = True  # a file is one document: its ranges are fragments of it

    def range_documents(
        self, path: str, start: int, step: int, safe_cut: Callable[[str], int]
    ) -> Iterator[StreamedText]:
        """The text of the byte range at grid point `start` (see the module docstring)."""
        if start == 0:
            self._ranged[path] = _open_for_hash(path)
        begin, end = byte_range(path, start, step, text_cutter(path, safe_cut))
        if begin < end:
            yield StreamedText(f"{path}, bytes {begin}-{end}", lambda: range_blocks(path, begin, end))

    def sources(self) -> list[Source]:
        return [*self._read.values(), *_ranged_sources(self._ranged)]


def _open_for_hash(path: str) -> IO[bytes]:
    """A file read in ranges, opened before any range is used: the whole file is hashed through
    this handle only if provenance is asked for (counting), and the file cannot vanish meanwhile."""
    try:
        return open(path, "rb")
    except OSError as error:
        raise read_failure(path, error) from None


def _ranged_sources(handles: dict[str, IO[bytes]]) -> list[Source]:
    sources = [file_source(path, handle) for path, handle in handles.items()]
    handles.clear()
    return sources


class JsonlReader:
    """One document per line of JSON Lines files: the string in `field` (default "text").

    A line that is not a JSON object with that string field is an error naming the file and line;
    blank lines are skipped.
    """

    name = "jsonl"

    def __init__(self, field: str) -> None:
        self.field = field
        self._read: dict[str, Source] = {}  # files read to the end, hashed while they were read
        self._ranged: dict[str, IO[bytes]] = {}  # files read in ranges: hashed only when asked

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "JsonlReader":
        check_options("reader", cls.name, options, ("field",))
        field = options.get("field", "text")
        if not isinstance(field, str) or not field:
            raise BpeError(f"input.field: expected the name of a JSON field, got {field!r}")
        return cls(field)

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[str]:
        for path in expand_paths(paths):
            handle, hashed = open_text(path)
            with handle:
                line_number = 0
                try:
                    for line_number, line in enumerate(handle, start=1):
                        if line.strip():
                            yield self._document(f"{path}, line {line_number}", line)
                    if hashed is not None:
                        self._read[path] = hashed.source()
                except UnicodeDecodeError as error:
                    raise BpeError(f"{path}, line {line_number + 1}: not valid UTF-8 ({error.reason})") from error
                except READ_ERRORS as error:
                    raise read_failure(path, error) from None
                finally:
                    if hashed is not None:
                        hashed.close()

    memory_documents = staticmethod(memory_text)
    splittable = staticmethod(splittable)
    range_fragments = False  # a range holds whole lines, each a document of its own

    def range_documents(self, path: str, start: int, step: int, safe_cut: Callable[[str], int]) -> Iterator[str]:
        """The documents on the lines of the byte range at grid point `start` (errors name the
        line's byte offset: its number would need the whole file before it)."""
        if start == 0:
            self._ranged[path] = _open_for_hash(path)
        begin, end = byte_range(path, start, step, line_cutter)
        offset = begin
        with open(path, "rb") as handle:
            handle.seek(begin)
            while offset < end:
                raw = handle.readline()
                where = f"{path}, line at byte {offset}"
                offset += len(raw)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise BpeError(f"{where}: not valid UTF-8 ({error.reason})") from error
                if line.strip():
                    yield self._document(where, line)

    def _document(self, where: str, line: str) -> str:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise BpeError(f"{where}: invalid JSON ({error.msg} at column {error.colno})") from None
        except RecursionError:
            raise BpeError(
                f"{where}: JSON nested too deeply (Python's limit is about {sys.getrecursionlimit()} levels)"
            ) from None
        if not isinstance(record, dict):
            raise BpeError(f"{where}: expected a JSON object, got {type(record).__name__}")
        if self.field not in record:
            raise BpeError(f"{where}: no field {self.field!r} (fields: {', '.join(sorted(record))})")
        value = record[self.field]
        if not isinstance(value, str):
            raise BpeError(f"{where}: field {self.field!r} is {type(value).__name__}, not a string")
        return value

    def sources(self) -> list[Source]:
        return [*self._read.values(), *_ranged_sources(self._ranged)]
