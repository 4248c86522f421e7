"""Checks that an id layout is one a tokenizer can hold, whoever made it: training, our own file,
a Hugging Face or tiktoken import.

A layout is the id of each internal token (base symbols, then merges), the special tokens' ids,
the orphans (ids no merge produces, kept for decoding), the whole-chunk lookup and the padding.
Ids are bounded below 2**31 (so an id table is never gigabytes and every id fits int32), and no
id stands for two things, so encoding and decoding cannot silently disagree. The one sharing
allowed is Hugging Face's: bytes missing from its vocabulary encode as its unk token, an orphan.
This module does not read files; errors name the field, callers prefix the file.
"""

from collections.abc import Sequence
from typing import cast

from bpe_core.engine import UNCHECKED, check_ids
from bpe_core.errors import BpeError

MAX_ID = (1 << 31) - 1  # ids are below 2**31: they fit int32 and a table of them stays small


def is_int(value: object) -> bool:
    """An integer that is not a bool (JSON's true is not an id)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_id(value: object, field: str, low: int = 0, high: int = MAX_ID) -> int:
    """`value` as an id-like integer in low..high, or an error naming `field`."""
    if not is_int(value):
        raise BpeError(f"{field}: expected an integer from {low} to {high}, got {_short(value)}")
    assert isinstance(value, int)
    if not low <= value <= high:
        raise BpeError(f"{field}: {_short(value)} is out of range; allowed: {low} to {high}")
    return value


def check_layout(
    ids: Sequence[int],
    alphabet_size: int,
    special_ids: dict[str, int],
    orphans: dict[int, list[int]],
    whole_chunks: dict[bytes, int],
    padding: int,
) -> None:
    """Raise a BpeError naming the field when the layout is not consistent (see the module docstring)."""
    ids = ids if isinstance(ids, list) else list(ids)
    # the common case in one compiled pass (a vocabulary has 200,000 ids)
    unfit, highest = check_ids(cast(list[object], ids), alphabet_size)
    if unfit == UNCHECKED:  # ids too sparse for the pass's bitmap: a set of them
        distinct = set(ids)
        distinct.discard(-1)
        unfit = -1 if len(distinct) == len(ids) - ids.count(-1) else 0
    if unfit >= 0:  # an id out of range, or repeated: name the first fault
        for index, token in enumerate(ids):
            # -1 drops a base symbol (Hugging Face: a byte missing from the vocabulary)
            low = -1 if index < alphabet_size else 0
            if not is_int(token) or not low <= token <= MAX_ID:
                check_id(token, f"ids[{index}]", low)
    for token, symbols in orphans.items():
        check_id(token, f"orphans[{_short(token)}]")
        if not isinstance(symbols, list) or not symbols:
            raise BpeError(f"orphans[{token}]: expected a non-empty list of base symbol ids, got {_short(symbols)}")
        for symbol in symbols:
            if not is_int(symbol) or not 0 <= symbol < alphabet_size:
                check_id(symbol, f"orphans[{token}]", 0, alphabet_size - 1)
    # with no id shared, the one fault left is an orphan's id on a merged token
    if unfit >= 0 or (orphans and not orphans.keys().isdisjoint(ids[alphabet_size:])):  # name the first fault
        # regular id -> the first internal token with it (built from the end, so the first one stays)
        first_index = dict(zip(reversed(ids), range(len(ids) - 1, -1, -1)))
        for index, token in enumerate(ids):
            if token < 0:
                continue
            if token in orphans and index >= alphabet_size:
                raise BpeError(f"ids[{index}]: id {token} is also orphans[{token}]; an id stands for one token")
            other = first_index[token]
            if other != index and not (index < alphabet_size and token in orphans):
                raise BpeError(f"ids[{index}]: id {token} is also ids[{other}]; an id stands for one token")
    regular: set[int] | None = None  # the regular ids, made once an id at or below the highest is asked about

    def is_regular(token: object) -> bool:
        nonlocal regular
        if not isinstance(token, int) or not 0 <= token <= highest:
            return False
        if regular is None:
            regular = set(ids)
        return token in regular

    special_of: dict[int, str] = {}
    for token_text, token in special_ids.items():
        field = f"special_ids[{_short(token_text)}]"
        if not isinstance(token_text, str) or not token_text:
            raise BpeError(f"{field}: a special token is a non-empty string")
        check_id(token, field)
        clash = None
        if is_regular(token):
            clash = f"ids[{ids.index(token)}]"
        elif token in orphans:
            clash = f"orphans[{token}]"
        elif token in special_of:
            clash = f"special_ids[{_short(special_of[token])}]"
        if clash is not None:
            raise BpeError(f"{field}: id {token} is also {clash}; an id stands for one token")
        special_of[token] = token_text
    for chunk, token in whole_chunks.items():
        if not is_regular(token) and token not in orphans:
            raise BpeError(f"whole_chunks: {chunk!r} maps to id {_short(token)}, which is no regular token")
    top = max(highest, *orphans, *special_of, -1)
    if not is_int(padding) or padding < 0 or top + 1 + padding > MAX_ID + 1:
        raise BpeError(
            f"padding: {_short(padding)} is out of range; allowed: 0 to {MAX_ID - top} (ids stay below 2**31)"
        )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:40] + f"... ({len(text)} characters)"
