"""The shapes of the components plugins provide: pretokenizers, readers and documents.

These are typing Protocols plus the small value classes both sides share, and the one check
every component's factory makes of its options (`check_options`). Nothing here reads, splits or
decodes anything; what an option's value may be is the component's own business.
"""

from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from bpe_core.errors import BpeError


class Pretokenizer(Protocol):
    """Turns a document into chunks and a chunk into base symbol ids.

    `alphabet` lists the base symbol labels in id order. `split` must be a pure function of the
    document, so counting can run in worker processes. `symbols` is called once per unique chunk.
    `decoder` names the decoder that turns base symbols back into a document.
    """

    name: str
    byte_level: bool
    decoder: str

    def options(self) -> dict[str, Any]: ...

    def alphabet(self) -> list[str]: ...

    def split(self, document: Any) -> Iterable[Hashable]: ...

    def symbols(self, chunk: Hashable) -> list[int]: ...

    def safe_cut(self, text: str) -> int:
        """For streamed text: the largest index at which the text can be split in two without
        changing any chunk, whatever follows it; 0 if there is none."""
        ...


class Decoder(Protocol):
    """Turns base symbol ids (with the alphabet's labels) back into a document, and writes one."""

    name: str

    def decode(self, symbols: list[int], alphabet: list[str]) -> Any: ...

    def write(self, document: Any, path: str) -> None:
        """Write a decoded document to a file (atomically)."""
        ...


class Normalizer(Protocol):
    """A text transformation applied before pretokenization, in training and in encoding alike."""

    name: str

    def normalize(self, text: str) -> str: ...


@dataclass(frozen=True)
class StreamedText:
    """One text document too large to hold whole, delivered as consecutive blocks."""

    source: str
    open_blocks: Callable[[], Iterator[str]]

    def blocks(self) -> Iterator[str]:
        return self.open_blocks()


@dataclass(frozen=True)
class Source:
    """A file a reader took documents from: its path, size in bytes and SHA-256, for provenance."""

    path: str
    size: int
    sha256: str


class Reader(Protocol):
    """Turns paths (files, globs, directories, '-' for standard input) into documents.

    A reader may skip unreadable files when training over many (saying so); with `strict` it
    must raise instead (encoding a named file).
    """

    name: str

    def documents(self, paths: list[str], strict: bool = False) -> Iterator[Any]: ...

    def sources(self) -> list[Source]:
        """The files read so far, once `documents` is exhausted."""
        ...


PretokenizerFactory = Callable[[dict[str, Any]], Pretokenizer]
ReaderFactory = Callable[[dict[str, Any]], Reader]
DecoderFactory = Callable[[dict[str, Any]], Decoder]
NormalizerFactory = Callable[[dict[str, Any]], Normalizer]


def check_options(kind: str, name: str, options: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """Refuse an option the component does not have, naming it and listing the allowed ones.

    `kind` and `name` say which component (`"pretokenizer"`, `"dna-kmers"`); `allowed` is listed
    in the order given, `none` when it is empty. Of several unknown options the first in sorted
    order is named, so the message is the same whatever order the config wrote them in. Values
    are not checked.
    """
    listed = tuple(allowed)  # read twice below; a generator would be empty the second time
    unknown = set(options) - set(listed)
    if unknown:
        first_unknown = sorted(unknown, key=str)[0]  # by str: a YAML key may be a number beside strings
        raise BpeError(f"{kind} {name!r} has no option {first_unknown!r}; allowed: {', '.join(listed) or 'none'}")
