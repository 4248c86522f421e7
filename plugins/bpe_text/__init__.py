"""Built-in text plugin: byte-level regex pretokenizers (gpt2, cl100k, o200k, a user's regex),
the whitespace pretokenizer, the `text` and `jsonl` readers, the `text` decoder and the nfc,
nfkc, nfd, nfkd and lowercase normalizers.

Registered through the `bpe_core` entry-point group like any third-party plugin. It does not
normalize text (that is a pipeline stage) and does not know about special tokens.
"""

from collections.abc import Callable
from typing import Any

from bpe_core.contract import (
    DecoderFactory,
    Normalizer,
    NormalizerFactory,
    PretokenizerFactory,
    ReaderFactory,
    check_options,
)
from bpe_core.hookspecs import hookimpl
from bpe_text.decoding import LowercaseNormalizer, TextDecoder, UnicodeNormalizer
from bpe_text.pretokenizers import PATTERNS, RegexPretokenizer, WhitespacePretokenizer
from bpe_text.readers import JsonlReader, TextReader

__version__ = "0.1.0"


def _named_pattern(name: str) -> PretokenizerFactory:
    def factory(options: dict[str, Any]) -> RegexPretokenizer:
        return RegexPretokenizer.from_options(name, options, fixed_pattern=PATTERNS[name])

    return factory


def _user_regex(options: dict[str, Any]) -> RegexPretokenizer:
    return RegexPretokenizer.from_options("regex", options, fixed_pattern=None)


@hookimpl
def bpe_core_pretokenizers() -> dict[str, PretokenizerFactory]:
    factories: dict[str, PretokenizerFactory] = {name: _named_pattern(name) for name in PATTERNS}
    factories["regex"] = _user_regex
    factories["whitespace"] = WhitespacePretokenizer.from_options
    return factories


@hookimpl
def bpe_core_readers() -> dict[str, ReaderFactory]:
    return {"text": TextReader.from_options, "jsonl": JsonlReader.from_options}


@hookimpl
def bpe_core_decoders() -> dict[str, DecoderFactory]:
    return {"text": TextDecoder.from_options}


def _without_options(name: str, build: Callable[[], Normalizer]) -> NormalizerFactory:
    def factory(options: dict[str, Any]) -> Normalizer:
        check_options("normalizer", name, options, ())
        return build()

    return factory


@hookimpl
def bpe_core_normalizers() -> dict[str, NormalizerFactory]:
    factories = {
        form.lower(): _without_options(form.lower(), lambda form=form: UnicodeNormalizer(form))  # type: ignore[misc]
        for form in ("NFC", "NFD", "NFKC", "NFKD")
    }
    factories["lowercase"] = _without_options("lowercase", LowercaseNormalizer)
    return factories
