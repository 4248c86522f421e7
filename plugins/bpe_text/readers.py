"""The `text` reader: each file is one document, streamed in blocks so no file is held whole.

Paths may be files, globs, directories (read recursively, in sorted order), `.gz` files, or `-`
for standard input. Text must be UTF-8; an undecodable file is an error that names it.
"""

import gzip
import io
import json
import sys
from collections.abc import Iterator
from typing import IO, Any

from bpe_core.components import Source, StreamedText
from bpe_core.errors import BpeError
from bpe_core.files import expand_paths, file_source

BLOCK_CHARS = 1 << 20


def open_text(path: str) -> IO[str]:
    """A text stream over a file, gzip or not, or standard input for `-`."""
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline="")
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rt", encoding="utf-8", newline="")
        return open(path, encoding="utf-8", newline="")
    except OSError as error:
        raise BpeError(f"cannot read {path}: {error.strerror or error}") from error


def text_blocks(path: str) -> Iterator[str]:
    """The file's text in blocks of about a million characters, newlines untouched."""
    with open_text(path) as handle:
        try:
            while block := handle.read(BLOCK_CHARS):
                yield block
        except UnicodeDecodeError as error:
            raise BpeError(f"{path} is not valid UTF-8 ({error.reason} at byte {error.start} of a block)") from error
        except (OSError, EOFError) as error:
            raise BpeError(f"cannot read {path}: {error}") from error


class TextReader:
    """Each file is one document; files are delivered as blocks, never loaded whole."""

    name = "text"

    def __init__(self) -> None:
        self._sources: list[Source] = []

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "TextReader":
        if options:
            raise BpeError(f"reader 'text' has no option {sorted(options)[0]!r}; allowed: none")
        return cls()

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[StreamedText]:
        for path in expand_paths(paths):
            if path != "-":
                self._sources.append(file_source(path))
            yield StreamedText(path, lambda path=path: text_blocks(path))  # type: ignore[misc]

    def sources(self) -> list[Source]:
        return list(self._sources)


class JsonlReader:
    """One document per line of JSON Lines files: the string in `field` (default "text").

    A line that is not a JSON object with that string field is an error naming the file and line;
    blank lines are skipped.
    """

    name = "jsonl"

    def __init__(self, field: str) -> None:
        self.field = field
        self._sources: list[Source] = []

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "JsonlReader":
        unknown = sorted(set(options) - {"field"})
        if unknown:
            raise BpeError(f"reader 'jsonl' has no option {unknown[0]!r}; allowed: field")
        field = options.get("field", "text")
        if not isinstance(field, str) or not field:
            raise BpeError(f"input.field: expected the name of a JSON field, got {field!r}")
        return cls(field)

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[str]:
        for path in expand_paths(paths):
            if path != "-":
                self._sources.append(file_source(path))
            with open_text(path) as handle:
                line_number = 0
                try:
                    for line_number, line in enumerate(handle, start=1):
                        if line.strip():
                            yield self._document(path, line_number, line)
                except UnicodeDecodeError as error:
                    raise BpeError(f"{path}, line {line_number + 1}: not valid UTF-8 ({error.reason})") from error

    def _document(self, path: str, line_number: int, line: str) -> str:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise BpeError(f"{path}, line {line_number}: invalid JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(record, dict):
            raise BpeError(f"{path}, line {line_number}: expected a JSON object, got {type(record).__name__}")
        if self.field not in record:
            raise BpeError(f"{path}, line {line_number}: no field {self.field!r} (fields: {', '.join(sorted(record))})")
        value = record[self.field]
        if not isinstance(value, str):
            raise BpeError(f"{path}, line {line_number}: field {self.field!r} is {type(value).__name__}, not a string")
        return value

    def sources(self) -> list[Source]:
        return list(self._sources)
