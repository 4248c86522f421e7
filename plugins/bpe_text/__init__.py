"""Built-in text plugin: byte-level regex pretokenizers (gpt2, cl100k, o200k, a user's regex),
the whitespace pretokenizer, and the `text` reader.

Registered through the `bpe_core` entry-point group like any third-party plugin. It does not
normalize text (that is a pipeline stage) and does not know about special tokens.
"""

from typing import Any

from bpe_core.components import PretokenizerFactory, ReaderFactory
from bpe_core.hookspecs import hookimpl
from bpe_text.pretokenizers import PATTERNS, RegexPretokenizer, WhitespacePretokenizer
from bpe_text.readers import TextReader

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
    return {"text": TextReader.from_options}
