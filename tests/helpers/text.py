"""The shared text the tests train and encode on, and what text tokenizers in the tests are made
of: the Python documentation (read once, newlines untouched) and its slices, the GPT-2-style
config, the special tokens tests add, and GPT-2's printable stand-in for each byte as openai/gpt-2
publishes it (the split patterns are in helpers.patterns).

Nothing here calls bpe_core: expected values in the tests must not come from the code under test.
"""

import gzip
from functools import lru_cache

from helpers.paths import CONFIGS_DIR, DOCS_PATH, require

TRAINING_CHARS = 200_000
EOT = "<|endoftext|>"
PAD = "<|pad|>"
SPECIALS = [EOT, PAD]  # two special tokens for tests that add their own
GPT2_CONFIG = CONFIGS_DIR / "gpt2-style.yaml"


def gpt2_byte_characters() -> dict[str, int]:
    """GPT-2's printable stand-in character -> byte value (bytes_to_unicode in openai/gpt-2)."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    characters = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in characters:
            characters[byte] = chr(256 + extra)
            extra += 1
    return {character: byte for byte, character in characters.items()}


@lru_cache(maxsize=1)
def docs_text() -> str:
    """The whole Python documentation text, newlines untouched."""
    with gzip.open(require(DOCS_PATH), "rt", encoding="utf-8", newline="") as handle:
        return handle.read()


def training_text() -> str:
    """The first 200,000 characters of the documentation: enough for a few hundred merges."""
    return docs_text()[:TRAINING_CHARS]


@lru_cache(maxsize=1)
def multilingual_excerpt() -> str:
    """About 8,000 characters of the documentation around its first character outside the BMP:
    prose and code with accents, dashes, box drawing and 4-byte characters."""
    text = docs_text()
    astral = next(index for index, character in enumerate(text) if ord(character) > 0xFFFF)
    start = text.rfind("\n", 0, max(0, astral - 4000)) + 1
    end = text.find("\n", astral + 4000) + 1
    excerpt = text[start:end]
    assert any(ord(character) > 0xFFFF for character in excerpt)
    assert any(0x7F < ord(character) <= 0xFFFF for character in excerpt)
    return excerpt


def non_ascii_paragraphs(count: int) -> list[str]:
    """The first `count` paragraphs of the documentation that hold a non-ASCII character."""
    found = [
        paragraph for paragraph in docs_text().split("\n\n") if any(ord(character) > 127 for character in paragraph)
    ]
    assert len(found) >= count
    return found[:count]


def paragraphs(text: str) -> list[str]:
    """Non-blank paragraphs (blank-line separated) of a text."""
    return [paragraph for paragraph in text.split("\n\n") if paragraph.strip()]
