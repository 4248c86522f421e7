"""The `text` decoder: UTF-8 bytes back to a str, whole or as a stream of complete characters.

The three bytes that spell a lone surrogate in UTF-8 with "surrogatepass" (ED A0..BF 80..BF)
decode back to it; the text pretokenizers never make them (they repair a str's surrogates as
tiktoken does), but bytes written that way, or ids a model emits, may hold them. Any other
invalid UTF-8 becomes U+FFFD, one per bad byte sequence as Python's "replace" does. The
normalizers live here too: small, text-only, no state.
"""

import codecs
import unicodedata
from collections.abc import Sequence
from typing import Any

from bpe_core.contract import check_options
from bpe_core.files import atomic_output

ERRORS = "bpe-surrogates-else-replace"


def _surrogates_else_replace(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    data = error.object[error.start : error.start + 3]
    if len(data) == 3 and data[0] == 0xED and 0xA0 <= data[1] <= 0xBF and 0x80 <= data[2] <= 0xBF:
        return chr(0xD000 | ((data[1] & 0x3F) << 6) | (data[2] & 0x3F)), error.start + 3
    return "\ufffd", error.end


codecs.register_error(ERRORS, _surrogates_else_replace)


class TextDecoder:
    """Base symbols are byte values; a document is a str."""

    name = "text"

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "TextDecoder":
        check_options("decoder", cls.name, options, ())
        return cls()

    def decode(self, symbols: Sequence[int], alphabet: list[str]) -> str:
        return bytes(symbols).decode("utf-8", ERRORS)

    def stream(self) -> "codecs.IncrementalDecoder":
        """An incremental decoder: feed bytes, get text only at complete UTF-8 characters."""
        return codecs.getincrementaldecoder("utf-8")(ERRORS)

    def write(self, document: Any, path: str) -> None:
        with atomic_output(path) as handle:
            handle.write(document)


class UnicodeNormalizer:
    """Unicode normalization form NFC, NFD, NFKC or NFKD."""

    def __init__(self, form: str) -> None:
        self.name = form.lower()
        self.form = form

    def normalize(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)  # type: ignore[arg-type]


class LowercaseNormalizer:
    """Each character lower-cased on its own (as Hugging Face's Lowercase does: a capital sigma
    becomes σ even at the end of a word, where str.lower() writes ς). Lossy: decoding gives the
    lower-cased text."""

    name = "lowercase"

    def normalize(self, text: str) -> str:
        # str.lower() is per character except for the context-dependent final sigma
        return text.replace("\u03a3", "\u03c3").lower()
