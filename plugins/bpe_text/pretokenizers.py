"""Byte-level text pretokenizers: chunks are regex matches (or whitespace-separated words) and
symbols are the chunk's UTF-8 bytes, so ids 0..255 are the byte values.

A str is read as tiktoken reads it (`well_formed`): a surrogate pair, which UTF-16 data may
leave in a Python string, is the character it spells, and a lone surrogate is U+FFFD, before
anything splits it, for training and encoding alike; so the bytes are always UTF-8 and the ids
are tiktoken's for the same text.
"""

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Hashable
from functools import cache, cached_property
from typing import Any

from bpe_core.contract import UNIT_CONTINUES, UNIT_PLAIN, UNIT_STARTS, PackedChunks, check_options
from bpe_core.errors import BpeError
from bpe_text.classes import case_folds, class_table
from bpe_text.packing import pack_texts
from bpe_text.scanner import CL100K, GPT2, O200K, Scanner

PATTERNS: dict[str, str] = {
    # the original GPT-2 release (encoder.py)
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # tiktoken's cl100k_base and o200k_base, character for character
    "cl100k": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501 (as published)
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

SCANNER_KINDS = {"gpt2": GPT2, "cl100k": CL100K, "o200k": O200K}

# For the three built-in patterns no match holds a newline followed by a letter, and a match never
# looks behind its start; when the newline also follows a non-space, the text before it ends with
# the same chunks whether or not the letter follows (tested against whole-text splitting).
# Second rule, so text without newlines is cut too: no match holds a letter followed by a
# character that is not a letter, a mark or an apostrophe (o200k's words take marks and
# contractions, nothing else), and every construct that could read past such a letter (more
# letters, marks, a contraction) fails on that character exactly as it fails at the end of the
# text, so the chunks before it are the same whether the text ends there or goes on.
# (Two plain patterns searched from the end: one pattern with lookbehinds would be tried at every
# position of a text with no cut.)
_CUT_BEFORE_LETTER = r"(?<=\S)\n\p{L}"
_CUT_AFTER_LETTER = r"\p{L}[^\p{L}\p{M}']"

# A pattern from a config or an imported file may backtrack catastrophically: (a|a)+b|. takes
# minutes on 42 a's. `regex` stops a search after a time limit; a pattern slower than this on a
# document (half a million characters a second, after two seconds) is taken for a runaway. The
# built-in patterns run on the compiled scanners and have no limit.
TIMEOUT_SECONDS = 2.0
TIMEOUT_PER_CHARACTER = 2e-6


def well_formed(text: str) -> str:
    """The text with its surrogates repaired as tiktoken repairs them: a pair joined into the
    character it spells, a lone one U+FFFD. The text itself when it holds none (ASCII is told
    at once; other text by encoding it, which is what finding one costs)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _bytes_to_unicode() -> list[str]:
    """GPT-2's printable stand-in character for each byte value, used as the byte labels."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    labels: dict[int, str] = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in labels:
            labels[byte] = chr(256 + extra)
            extra += 1
    return [labels[byte] for byte in range(256)]


BYTE_LABELS = _bytes_to_unicode()

# each byte's role in UTF-8 for the engine's units: a character of three or four bytes (CJK, Indic,
# most symbols) is one unit, its lead byte starting it (0xE0-0xF7) and continuation bytes
# (0x80-0xBF) continuing it; ASCII and the two-byte characters stay bytes (as units they were
# mostly not sealed, and looking them up cost more than it saved on German)
UTF8_ROLES = bytes(
    UNIT_STARTS if byte >= 0xE0 else UNIT_CONTINUES if 0x80 <= byte < 0xC0 else UNIT_PLAIN for byte in range(256)
)


class ByteLevel(ABC):
    """Shared byte alphabet, chunk-to-bytes mapping and decoding."""

    name = "byte-level"
    byte_level = True
    decoder = "text"
    symbol_unit = "bytes"

    def alphabet(self) -> list[str]:
        return list(BYTE_LABELS)

    def symbols(self, chunk: Hashable) -> list[int]:
        assert isinstance(chunk, str)
        return list(chunk.encode("utf-8", "surrogatepass"))

    @abstractmethod
    def split(self, document: Any) -> list[str]:
        """The document's chunks (each subclass splits its own way)."""

    def pack(self, documents: list[Any]) -> PackedChunks:
        """The documents' chunks as their UTF-8 bytes (a byte-level chunk's packed symbols)."""
        return PackedChunks.of(
            [[chunk.encode("utf-8", "surrogatepass") for chunk in self.split(document)] for document in documents]
        )

    def pack_counted(self, documents: list[Any]) -> PackedChunks:
        """Training counts the chunks of `split`."""
        return self.pack(documents)

    def unit_roles(self) -> bytes:
        return UTF8_ROLES


@cache
def _reversed(pattern: str) -> Any:
    """A pattern compiled by `regex` to search from the end (imported on first use)."""
    import regex

    return regex.compile(pattern, flags=regex.REVERSE)


class RegexPretokenizer(ByteLevel):
    """Chunks are the matches of a regex (the `regex` package's syntax), found left to right.

    Text the pattern does not match is dropped, as in tiktoken and rustbpe, unless the option
    `unmatched: keep` makes each unmatched stretch a chunk of its own (Hugging Face's `Split`
    with behavior `Isolated`). Every built-in pattern matches every character. Empty matches
    make no chunk.
    """

    def __init__(self, name: str, pattern: str, keep_unmatched: bool = False) -> None:
        self.name = name
        self.pattern = pattern
        self.keep_unmatched = keep_unmatched
        self.builtin = pattern in PATTERNS.values()
        self._scanner: Scanner | None = None
        if not self.builtin:  # a user's pattern is checked now; the built-in ones need no regex at all
            self.compiled  # noqa: B018 (compiled on first access)

    @cached_property
    def compiled(self) -> Any:
        """The pattern compiled by `regex` (imported here: the built-in patterns use the scanner)."""
        import regex

        try:
            return regex.compile(self.pattern)
        except regex.error as error:
            raise BpeError(f"pretokenizer.pattern is not a valid regex: {error}: {self.pattern!r}") from error

    @property
    def scanner(self) -> Scanner | None:
        """The compiled scanner for a built-in pattern, built on first use (its class table
        takes a fraction of a second); None for other patterns."""
        if self._scanner is None and self.builtin:
            kind = SCANNER_KINDS[next(name for name, text in PATTERNS.items() if text == self.pattern)]
            self._scanner = Scanner(kind, class_table(), case_folds())
        return self._scanner

    @classmethod
    def from_options(cls, name: str, options: dict[str, Any], fixed_pattern: str | None) -> "RegexPretokenizer":
        check_options("pretokenizer", name, options, () if fixed_pattern is not None else ("pattern", "unmatched"))
        if fixed_pattern is not None:
            return cls(name, fixed_pattern)
        pattern = options.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise BpeError("pretokenizer.pattern: the regex pretokenizer needs a non-empty pattern string")
        unmatched = options.get("unmatched", "drop")
        if unmatched not in ("drop", "keep"):
            raise BpeError(f"pretokenizer.unmatched: {unmatched!r} is not allowed; allowed: drop, keep")
        return cls(name, pattern, unmatched == "keep")

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name, "pattern": self.pattern, "keep_unmatched": self.keep_unmatched}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"], state["pattern"], state["keep_unmatched"])  # type: ignore[misc]

    def options(self) -> dict[str, Any]:
        if self.name in PATTERNS:
            return {}
        return {"pattern": self.pattern, **({"unmatched": "keep"} if self.keep_unmatched else {})}

    def split(self, document: Any) -> list[str]:
        document = well_formed(document)
        scanner = self.scanner
        if scanner is not None:
            return scanner.split(document)
        if self.builtin:
            chunks: list[str] = self.compiled.findall(document)
            return chunks
        limit = TIMEOUT_SECONDS + len(document) * TIMEOUT_PER_CHARACTER
        try:
            return self._split_by_pattern(document, limit)
        except TimeoutError:
            shown = self.pattern if len(self.pattern) <= 80 else self.pattern[:60] + "..."
            raise BpeError(
                f"pretokenizer.pattern {shown!r} took more than {limit:.1f} s on a document of {len(document)} "
                "characters "
                "(catastrophic backtracking?); simplify the pattern"
            ) from None

    def _split_by_pattern(self, document: str, limit: float) -> list[str]:
        if not self.keep_unmatched:
            return [
                match.group()
                for match in self.compiled.finditer(document, timeout=limit)
                if match.end() > match.start()
            ]
        result: list[str] = []
        position = 0
        for match in self.compiled.finditer(document, timeout=limit):
            if match.start() > position:
                result.append(document[position : match.start()])
            if match.end() > match.start():
                result.append(match.group())
            position = match.end()
        if position < len(document):
            result.append(document[position:])
        return result

    def hf_components(self) -> dict[str, Any]:
        """This pretokenizer in Hugging Face's terms: Split on the pattern (keeping unmatched text
        as chunks, or removing it), then ByteLevel."""
        from bpe_core.formats.hf import to_hf_pattern

        keep = self.keep_unmatched or self.builtin  # the built-in patterns match everything
        split: dict[str, Any] = {"type": "Split", "pattern": {"Regex": to_hf_pattern(self.pattern)}}
        split.update({"behavior": "Isolated", "invert": False} if keep else {"behavior": "Removed", "invert": True})
        return {
            "normalizer": None,
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": [
                    split,
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
                ],
            },
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        }

    def count(self, document: str) -> dict[str, int]:
        """The document's chunks with their counts (the scanner counts without a chunk list)."""
        scanner = self.scanner
        if scanner is None:
            return dict(Counter(self.split(document)))
        counts: dict[str, int] = {}
        scanner.count(well_formed(document), counts)
        return counts

    def pack(self, documents: list[Any]) -> PackedChunks:
        """The documents' chunks as their UTF-8 bytes: for the built-in patterns, found by the
        compiled scanner in one pass over the documents joined (no string per chunk)."""
        scanner = self.scanner
        if scanner is None:
            return super().pack(documents)
        try:
            symbols, ends, counts = pack_texts(scanner, documents)
        except UnicodeEncodeError:  # a surrogate: the texts repaired, then packed
            symbols, ends, counts = pack_texts(scanner, [well_formed(document) for document in documents])
        return PackedChunks(symbols, ends, counts)

    def prepare(self) -> None:
        """Build the scanner's class table now (as tiktoken builds its regex with the encoding)."""
        self.scanner  # noqa: B018 (built on first access)

    def safe_cut(self, text: str) -> int:
        if not self.builtin:
            return 0
        letter = _reversed(_CUT_AFTER_LETTER).search(text)
        after = letter.start() + 1 if letter is not None else 0
        # the later cut wins, and a line's cut is later only if its newline is after the letter:
        # the line search stops there (searching back to the text's start was a large share of
        # counting text whose lines mostly start with spaces)
        line = _reversed(_CUT_BEFORE_LETTER).search(text, max(after - 1, 0))
        return max(line.end() - 1 if line is not None else 0, after)


class WhitespacePretokenizer(ByteLevel):
    """Chunks are the words `str.split()` gives: runs of non-whitespace.

    Whitespace is dropped, so decoding cannot restore it: decoded words are simply concatenated.
    Use it to reproduce the seed article's experiments, not for a tokenizer that must round-trip.
    """

    name = "whitespace"

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "WhitespacePretokenizer":
        check_options("pretokenizer", cls.name, options, ())
        return cls()

    def options(self) -> dict[str, Any]:
        return {}

    def split(self, document: Any) -> list[str]:
        words: list[str] = well_formed(document).split()
        return words

    def prepare(self) -> None:
        """`str.split` needs nothing built."""

    def safe_cut(self, text: str) -> int:
        for index in range(len(text) - 1, -1, -1):
            if text[index].isspace():
                return index + 1
        return 0
