"""Special tokens: finding them in text, refusing the disallowed ones, never cutting one, and
telling them apart in a sequence of ids.

tiktoken's rules: text that holds a special token's string is an error unless the token is
allowed (then it becomes the special id) or left out of the disallowed set (then it is plain
text). This module knows strings and ids, not tokenizers.
"""

import re
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Literal

from bpe_core.errors import BpeError

Specials = AbstractSet[str] | Literal["all"]


class SpecialTokenInText(BpeError, ValueError):
    """Text holds a disallowed special token's string: a BpeError, and a ValueError as tiktoken
    raises there, so code written for tiktoken catches it."""


@lru_cache(maxsize=64)
def special_pattern(tokens: tuple[str, ...]) -> "re.Pattern[str]":
    """A pattern matching any of the tokens, the longest first (a token that holds another wins)."""
    return re.compile("|".join(re.escape(token) for token in sorted(tokens, key=len, reverse=True)))


def allowed_specials(
    text: str,
    special_tokens: Sequence[str],
    allowed_special: Specials,
    disallowed_special: Specials,
    first_line: int = 1,
) -> frozenset[str]:
    """The special tokens allowed in `text`; a BpeError if it holds a disallowed one (naming its
    line, counting from `first_line`) or if `allowed_special` names a token that is not special."""
    tokens = tuple(special_tokens)
    try:
        allowed, disallowed = _special_rules(tokens, allowed_special, disallowed_special)
    except TypeError:  # a set, which cannot be a key: worked out without remembering it
        allowed, disallowed = _special_rules.__wrapped__(tokens, allowed_special, disallowed_special)
    if disallowed is not None:
        found = disallowed.search(text)
        if found is not None:
            line = first_line + text.count("\n", 0, found.start())
            raise SpecialTokenInText(
                f"line {line} contains the special token {found.group()!r}; pass allowed_special to encode it "
                "as the special token, or use encode_ordinary to treat it as text"
            )
    return allowed


@lru_cache(maxsize=64)
def _special_rules(
    special_tokens: tuple[str, ...], allowed_special: Specials, disallowed_special: Specials
) -> tuple[frozenset[str], "re.Pattern[str] | None"]:
    """The allowed tokens and a pattern of the disallowed ones (None: no token is), remembered for
    the arguments `encode` is called with again and again: working them out cost more than
    searching a kilobyte of text for them."""
    allowed = frozenset(special_tokens) if allowed_special == "all" else frozenset(allowed_special)
    unknown = allowed - set(special_tokens)
    if unknown:
        raise BpeError(f"allowed_special names {sorted(unknown)[0]!r}, which is not a special token of this tokenizer")
    disallowed = (set(special_tokens) if disallowed_special == "all" else set(disallowed_special)) - allowed
    return allowed, special_pattern(tuple(sorted(disallowed))) if disallowed else None


def splits_a_special(text: str, cut: int, special_tokens: Sequence[str]) -> bool:
    """Whether a cut of `text` at `cut` may fall inside a special token's string (the text may go
    on after its end)."""
    return any(
        text.endswith(token[:length], 0, cut) and token.startswith(text[cut : cut + len(token) - length], length)
        for token in special_tokens
        for length in range(1, len(token))
    )


def special_runs(ids: Sequence[int], special_by_id: dict[int, str]) -> Iterator[list[int] | str]:
    """The ids as runs of regular ids and special tokens' strings, in order (at least one run)."""
    run: list[int] = []
    produced = False
    for token in ids:
        special = special_by_id.get(token)
        if special is None:
            run.append(token)
            continue
        if run:
            yield run
            run = []
        yield special
        produced = True
    if run or not produced:
        yield run
