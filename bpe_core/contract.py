"""The plugin contract: the shapes of the components plugins provide (pretokenizers, readers,
decoders, normalizers), the optional abilities a component may have, and the small value
classes both sides share.

Every component has the methods of its Protocol. An optional ability is a runtime-checkable
Protocol of its own, which the framework tests with `isinstance` (never `getattr`), and which
docs/plugins.md lists under the same names. `check_options` is the one check every component's
factory makes of its options. Nothing here reads, splits or decodes anything; what an option's
value may be is the component's own business.
"""

import codecs
import os
import sys
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Final, NamedTuple, Protocol, runtime_checkable

from bpe_core.engine import CONTINUES, END_WIDTH, MAX_PACKED, PADDING, PLAIN, STARTS
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
    """Turns base symbol ids (with the alphabet's labels) back into a document, and writes one.
    The symbols come as bytes (one symbol a byte) when the alphabet has at most 256, else as a
    list; a byte-level tokenizer's special tokens come as their UTF-8 bytes among them."""

    name: str

    def decode(self, symbols: Sequence[int], alphabet: list[str]) -> Any: ...

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


# Optional abilities ------------------------------------------------------------------------------
# A component has one when it has the Protocol's members; `isinstance(component, Ability)` tells.


@runtime_checkable
class CountsChunks(Protocol):
    """A pretokenizer that counts a document's chunks without making a list of them (faster)."""

    def count(self, document: Any) -> Mapping[Hashable, int]: ...


@runtime_checkable
class ReportsCounting(Protocol):
    """A pretokenizer whose training count of a document is more than its chunks (MIDI: songs
    counted again, augmented), with a report of what it did: counts of named things, summed over
    the corpus into `Counts.measures["counting"]` and the tokenizer's provenance (on every runner;
    `bpe train` prints them). Training counts with it before `CountsChunks`; encoding never uses it."""

    def count_reported(self, document: Any) -> tuple[Mapping[Hashable, int], Mapping[str, int]]: ...


# the roles of symbols in units (`PacksChunks.unit_roles`): a symbol of its own, one that
# continues a unit, one that starts a unit
UNIT_PLAIN: Final = PLAIN
UNIT_CONTINUES: Final = CONTINUES
UNIT_STARTS: Final = STARTS
# bytes that must follow the last chunk of `PackedChunks.symbols` (the engine reads keys in words)
PACKING_PADDING: Final = PADDING
PACKED_END_WIDTH: Final = END_WIDTH  # bytes of a chunk end in `PackedChunks.ends` (little-endian)
PACKED_LIMIT: Final = MAX_PACKED  # `PackedChunks.symbols` holds fewer bytes than this


class PackedChunks(NamedTuple):
    """Documents' chunks as data, for the framework to count or encode with no Python object per
    chunk or symbol.

    `symbols`: every chunk's symbol ids, one byte each (alphabets of up to 256 symbols), chunk
    after chunk and document after document, then PACKING_PADDING. `ends`: where each chunk ends
    in `symbols`, PACKED_END_WIDTH bytes each (`array("i", ends).tobytes()` on a little-endian machine;
    the first chunk starts at 0, every other where the one before ends). `documents[d]`: how many
    chunks documents 0..d hold together. `repeats_long`: whether long chunks are likely to come
    again (text's runs of spaces are; a genome's stretches are not), so worth caching.
    """

    symbols: bytes
    ends: bytes
    documents: list[int]
    repeats_long: bool = True

    @staticmethod
    def of(documents: Sequence[Sequence[bytes]], repeats_long: bool = True) -> "PackedChunks":
        """The packed form of each document's chunks, given as their packed symbols."""
        chunks = [chunk for chunks_of_document in documents for chunk in chunks_of_document]
        chunk_ends = list(accumulate(map(len, chunks)))
        counts = list(accumulate(map(len, documents)))
        return PackedChunks.joined(chunks, chunk_ends, counts, repeats_long)

    @staticmethod
    def joined(
        pieces: Sequence[bytes], chunk_ends: Sequence[int], documents: list[int], repeats_long: bool = True
    ) -> "PackedChunks":
        """Packed chunks from the packed symbols in pieces (joined, then padded) and where each
        chunk ends in them; an error if they hold PACKED_LIMIT symbols or more."""
        if chunk_ends and chunk_ends[-1] >= MAX_PACKED:
            raise BpeError(f"packed chunks hold fewer than {MAX_PACKED} symbols, not {chunk_ends[-1]}")
        ends = array("i", chunk_ends)  # END_WIDTH bytes each
        if sys.byteorder != "little":
            ends.byteswap()
        return PackedChunks(b"".join(pieces) + PADDING, ends.tobytes(), documents, repeats_long)


@runtime_checkable
class PacksChunks(Protocol):
    """A pretokenizer over an alphabet of up to 256 symbols that gives documents' chunks as data
    (`PackedChunks`), exactly the chunks of `split` mapped by `symbols`: the framework counts and
    encodes them with no Python object per chunk (training's fastest way to count, and
    encoding's). `unit_roles()`: each symbol's role in units (UNIT_PLAIN, UNIT_CONTINUES,
    UNIT_STARTS; text: a character of three or four UTF-8 bytes is a unit, which the engine may
    read as one token, the same ids with fewer merges), or b"" for none. `prepare()` builds what
    `pack` uses; it is called when a tokenizer is built, so workers forked later share it."""

    def pack(self, documents: list[Any]) -> PackedChunks: ...

    def unit_roles(self) -> bytes: ...

    def prepare(self) -> None: ...


@runtime_checkable
class CountsPacked(Protocol):
    """A pretokenizer that gives the chunks training counts as data: each occurrence of each
    chunk `count` would count, packed as `PackedChunks` (text: the chunks of `split`), so the
    framework counts them in a compiled table with no Python object per chunk."""

    def pack_counted(self, documents: list[Any]) -> PackedChunks: ...


@runtime_checkable
class ReportsOffsets(Protocol):
    """A pretokenizer that says where each chunk and each of its symbols lie in the document, so
    `Tokenizer.encode_with_offsets` can give every token its span (DNA: genome coordinates)."""

    def split_with_offsets(self, document: Any) -> Iterable[tuple[Hashable, int]]: ...

    def symbol_spans(self, chunk: Hashable) -> list[tuple[int, int]]: ...


@runtime_checkable
class ReportsEncoding(Protocol):
    """A pretokenizer that quantizes (MIDI) and reports what encoding a document lost or changed."""

    def report(self, document: Any) -> Mapping[str, Any]: ...


@runtime_checkable
class ReportsLosses(Protocol):
    """A pretokenizer whose encoding drops parts of some documents (MIDI: notes outside the pitch
    range, notes of programs not allowed): `losses(document)` says what in a few words ('' when
    nothing is lost), cheaply enough to ask of every document `bpe encode` reads, so that it can
    warn per file (and `--strict` refuse)."""

    def losses(self, document: Any) -> str: ...


@runtime_checkable
class AugmentsDocuments(Protocol):
    """A pretokenizer that makes augmented copies of training data (`bpe encode --augment
    KEY=VALUE,...`, MIDI: transpositions, velocity and duration offsets). `check_augment(options)`
    refuses options it does not take, before any work; `augmented(document, options)` yields the
    document and then each copy, in a fixed order, each `Named` (the index lists the names)."""

    def check_augment(self, options: Mapping[str, float]) -> None: ...

    def augmented(self, document: Any, options: Mapping[str, float]) -> Iterator[Any]: ...


@runtime_checkable
class MarksBoundaries(Protocol):
    """A pretokenizer that knows where a document is best cut into training windows (MIDI: bar
    lines, then beat lines). `boundary_names` names the kinds, strongest first; for each kind,
    `split_with_boundaries` gives the offsets where one begins, counted in base symbols of the
    chunks (the chunks `split` gives, returned beside them) laid end to end."""

    boundary_names: tuple[str, ...]

    def split_with_boundaries(self, document: Any) -> tuple[list[Hashable], list[list[int]]]: ...


@runtime_checkable
class ConfiguresDecoder(Protocol):
    """A pretokenizer whose decoder needs options of its own (the grid, the case of letters)."""

    def decoder_options(self) -> dict[str, Any]: ...


@runtime_checkable
class ExportsToHF(Protocol):
    """A pretokenizer that can describe itself as Hugging Face components: `normalizer` (or None),
    `pre_tokenizer` and `decoder`, as they appear in a tokenizer.json."""

    def hf_components(self) -> dict[str, Any]: ...


@runtime_checkable
class NamesSymbols(Protocol):
    """A pretokenizer that names its base symbols for reports ("bytes", "nucleotides", "events")."""

    symbol_unit: str


@runtime_checkable
class MirrorsSymbols(Protocol):
    """A pretokenizer whose training chunks are closed under reversal with each base symbol
    mirrored (DNA: both strands, the complement), that wants each merge learned with its mirror
    partner. `symbol_mirror` gives the involution on base symbol ids (mirror[mirror[s]] == s), or
    None when the options ask for no symmetry."""

    def symbol_mirror(self) -> list[int] | None: ...


@dataclass(frozen=True)
class TokenDrawing:
    """A domain's additions to the page that shows a document cut into tokens (`DrawsTokens`):
    per token, `notes` (more lines for its tooltip: "GC 4/6 (67%)") and `marks` (a word the page
    styles: "n" for N, "" for none); `figure`, inline SVG markup of the whole sample (escaped by its
    maker) in which the element drawing token `i` has `data-k="i"`; `legend`, a line saying what
    the figure shows."""

    notes: list[str]
    marks: list[str]
    figure: str = ""
    legend: str = ""


@runtime_checkable
class DrawsTokens(Protocol):
    """A pretokenizer that adds its domain's view to `bpe inspect --html` (DNA: GC content per
    token and N runs; MIDI: a piano roll). `tokens` holds each shown token's base symbol ids (empty
    for a special token); `spans`, where the pretokenizer `ReportsOffsets`, each token's (start,
    end) in the document, else None."""

    def draw_tokens(self, tokens: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]] | None) -> TokenDrawing: ...


@runtime_checkable
class MirrorsOverlaps(Protocol):
    """A pretokenizer with a symbol mirror (`MirrorsSymbols`) that may ask encoding to resolve
    overlapping merges mirrored instead of leftmost (`engine.Encoder.mirror_overlaps`), so a
    sequence's mirror image tokenizes as the mirror image of its tokenization. `mirrored_overlaps`
    names the option that asks for it, as errors show it ("resolve_overlaps: mirrored"), or is
    None for rank order's leftmost rule (what training, Hugging Face and tiktoken do)."""

    def mirrored_overlaps(self) -> str | None: ...


@runtime_checkable
class StreamsText(Protocol):
    """A decoder of byte-level text that decodes incrementally (`Tokenizer.decode_stream`)."""

    def stream(self) -> codecs.IncrementalDecoder: ...


@runtime_checkable
class WritesRecords(Protocol):
    """A decoder that writes named records to one file (DNA: FASTA) when the output's name ends
    with one of `record_suffixes`."""

    record_suffixes: tuple[str, ...]

    def write_records(self, records: Iterable[tuple[str, Any]], path: str) -> None: ...


@runtime_checkable
class WritesFiles(Protocol):
    """A decoder whose documents are files of a format of their own (MIDI), named with
    `file_suffix` (".mid"): `bpe decode -o DIR/` writes one such file per document."""

    file_suffix: str


@runtime_checkable
class ListsSuffixes(Protocol):
    """A reader that, given a directory, reads only the files ending with one of `suffixes`."""

    suffixes: tuple[str, ...]


@runtime_checkable
class MeasuresDocuments(Protocol):
    """A reader that reports what the documents it read add up to (MIDI: beats, files skipped)."""

    def measures(self) -> dict[str, Any]: ...


@runtime_checkable
class ReadsMemory(Protocol):
    """A reader that also takes documents a program holds in memory (`train(..., documents=...)`):
    each item as a user has it (text: `str` or `bytes`; DNA: a sequence or a Biopython
    `SeqRecord`; MIDI: a path, a `mido.MidiFile` or a `Song`) becomes what `documents` yields for
    the same content read from a file. Lazy: one item is taken at a time. A wrong item is a
    BpeError naming it as `documents[INDEX]`."""

    def memory_documents(self, items: Iterable[Any]) -> Iterator[Any]: ...


@runtime_checkable
class ReadsRanges(Protocol):
    """A reader that reads a byte range of a large file, so counting and encoding can split it
    (on a Dask cluster). `range_fragments`: the file is one document and its ranges are pieces of
    it (plain text), not whole documents (JSON lines)."""

    range_fragments: bool

    def splittable(self, path: str) -> bool: ...

    def range_documents(self, path: str, start: int, step: int, safe_cut: Callable[[str], int]) -> Iterator[Any]: ...


@runtime_checkable
class Sourced(Protocol):
    """A document that knows the file it came from (streamed text, a FASTA record, a song)."""

    source: str


@runtime_checkable
class Named(Protocol):
    """A document with a name of its own (a FASTA/FASTQ record's id). It may also have a
    `description`: its whole header (id and description), or "" when that is the id alone;
    `document_name(document, whole=True)` gives it."""

    id: str


ABILITIES = (
    CountsChunks,
    ReportsCounting,
    CountsPacked,
    PacksChunks,
    ReportsOffsets,
    ReportsEncoding,
    ReportsLosses,
    AugmentsDocuments,
    MarksBoundaries,
    ConfiguresDecoder,
    ExportsToHF,
    NamesSymbols,
    MirrorsSymbols,
    MirrorsOverlaps,
    DrawsTokens,
    StreamsText,
    WritesRecords,
    WritesFiles,
    ListsSuffixes,
    MeasuresDocuments,
    ReadsMemory,
    ReadsRanges,
    Sourced,
    Named,
)


def cache_folder() -> str | None:
    """Where bpe-core and its plugins keep what they build once and read in later processes (None:
    nowhere): `BPE_CORE_CACHE` if set (empty: keep nothing), else `$XDG_CACHE_HOME/bpe-core` or
    `~/.cache/bpe-core`."""
    configured = os.environ.get("BPE_CORE_CACHE")
    if configured is not None:
        return configured or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "bpe-core")


def symbol_unit(pretokenizer: Pretokenizer) -> str:
    """What the pretokenizer's base symbols are, for reports ("symbols" when it does not say)."""
    return pretokenizer.symbol_unit if isinstance(pretokenizer, NamesSymbols) else "symbols"


def mirrored_overlaps(pretokenizer: Pretokenizer) -> str | None:
    """The option that asks for mirrored overlap resolution ("resolve_overlaps: mirrored"), or
    None when encoding resolves overlaps leftmost (the pretokenizer does not say, or says no)."""
    return pretokenizer.mirrored_overlaps() if isinstance(pretokenizer, MirrorsOverlaps) else None


def reader_suffixes(reader: Reader) -> tuple[str, ...]:
    """The file suffixes a reader takes from a directory (all files when it does not say)."""
    return reader.suffixes if isinstance(reader, ListsSuffixes) else ()


def document_name(document: Any, whole: bool = False) -> str | None:
    """A document's own name: a FASTA/FASTQ record's id, or with `whole` its whole header when it
    has a `description` (`bpe encode --keep-description`); None for documents without one (text)."""
    if not isinstance(document, Named) or not isinstance(document.id, str):
        return None
    description = getattr(document, "description", "") if whole else ""
    return description if isinstance(description, str) and description else document.id


def document_source(document: Any) -> str:
    """Where a document came from, for error messages: its file (and record), else "input"."""
    if isinstance(document, Sourced) and isinstance(document.source, str):
        name = document_name(document)
        return f"{document.source}, record {name}" if name is not None else document.source
    return "input"


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
