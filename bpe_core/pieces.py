"""What each id decodes to, as one table: built on a tokenizer's first decode, laid out in one pass.

`pieces[id]` holds the base symbols the id stands for, packed one byte each when the alphabet has
at most 256 symbols (a byte-level token's piece is its bytes), else in `array` items of two or
four bytes; in a byte-level tokenizer a special token's piece is its UTF-8 (it decodes to its
text); every other id (special tokens elsewhere, reserved padding ids) has None. The engine joins
the pieces of many ids (`engine.join_pieces`); this module builds the table, hands the engine
ids as it takes them, and unpacks the symbols. It does not know what a symbol means (the domain's
decoder does) and builds nothing at load time.
"""

import operator
import sys
from array import array
from collections.abc import Callable, Sequence

from bpe_core.engine import join_packed_pieces, join_pieces
from bpe_core.errors import BpeError
from bpe_core.spec import IdLayout

Pieces = list[bytes | None]


def symbol_code(alphabet_size: int) -> str:
    """The `array` type code of one packed symbol: bytes up to 256 symbols, else 2 or 4 bytes."""
    if alphabet_size <= 1 << 8:
        return "B"
    return "H" if alphabet_size <= 1 << 16 else "I"


def build(
    alphabet_size: int,
    merges: Sequence[tuple[int, int]],
    results: list[int] | None,
    layout: IdLayout,
    size: int,
    specials: dict[int, bytes],
) -> Pieces:
    """The table for `size` ids: each internal token is its merge's two pieces end to end (a merge
    that makes no new token, in an import, defines none), placed at its id in `layout` (the first
    internal token wins an id that several share); orphans; then `specials`' pieces."""
    code = symbol_code(alphabet_size)
    internal = [array(code, [symbol]).tobytes() for symbol in range(alphabet_size)]
    made = results if results is not None else range(alphabet_size, alphabet_size + len(merges))
    for (left, right), result in zip(merges, made):
        if result == len(internal):
            internal.append(internal[left] + internal[right])
    pieces: Pieces = [None] * size
    for token, piece in zip(reversed(layout.ids), reversed(internal)):
        if token >= 0:
            pieces[token] = piece
    for token, symbols in layout.orphans.items():
        pieces[token] = array(code, symbols).tobytes()
    for token, piece in specials.items():
        pieces[token] = piece
    return pieces


def join(pieces: Pieces, ids: Sequence[int], unknown_id: Callable[[int], str]) -> bytes:
    """The pieces of the ids end to end; a BpeError with `unknown_id`'s message for the first id
    that has none."""
    try:
        return _join(pieces, ids)
    except ValueError:  # the engine's, for an id without a piece
        token = next(token for token in ids if not 0 <= token < len(pieces) or pieces[token] is None)
        raise BpeError(unknown_id(token)) from None


def _join(pieces: Pieces, ids: Sequence[int]) -> bytes:
    """A list goes to the engine as it is; an `array` of 2- or 4-byte unsigned ids (a shard's) as
    its bytes; any other sequence (a tuple, numpy's) as a list."""
    if isinstance(ids, array) and ids.typecode in "HIL" and ids.itemsize in (2, 4):
        if sys.byteorder == "big":
            ids = array(ids.typecode, ids)
            ids.byteswap()
        return join_packed_pieces(pieces, ids.tobytes(), ids.itemsize)
    listed = ids if isinstance(ids, list) else list(ids)
    try:
        return join_pieces(pieces, listed)
    except TypeError:  # ids that are not Python ints (numpy's): each through its __index__
        return join_pieces(pieces, [operator.index(token) for token in listed])


def symbols(packed: bytes, alphabet_size: int) -> Sequence[int]:
    """Symbol ids from joined pieces: the bytes themselves for up to 256 symbols, else a list."""
    code = symbol_code(alphabet_size)
    return packed if code == "B" else array(code, packed).tolist()
