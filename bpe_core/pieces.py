"""What each id decodes to, as one table: built on a tokenizer's first decode, laid out in one pass.

`pieces[id]` holds the base symbols the id stands for, packed one byte each when the alphabet has
at most 256 symbols (a byte-level token's piece is its bytes), else in `array` items of two or
four bytes; in a byte-level tokenizer a special token's piece is its UTF-8 (it decodes to its
text); every other id (special tokens elsewhere, reserved padding ids) has None. The engine joins
the pieces of many ids (`engine.join_pieces`); this module builds the table, hands the engine
ids as it takes them, and unpacks the symbols. It does not know what a symbol means (the domain's
decoder does) and builds nothing at load time.
"""

import codecs
import operator
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from bpe_core.contract import Decoder, StreamsText
from bpe_core.engine import join_packed_pieces, join_pieces
from bpe_core.errors import ArgumentError, BpeError, described
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


def join(pieces: Pieces, ids: Sequence[int], unknown_id: Callable[[int], str], argument: str = "ids") -> bytes:
    """The pieces of the ids end to end; a BpeError with `unknown_id`'s message for the first id
    that has none, an ArgumentError naming `argument` for an element that is no id."""
    try:
        return _join(pieces, ids)
    except TypeError:  # an element that is no int: found, and named
        return join(pieces, _int_list(ids, argument), unknown_id)
    except ValueError:  # the engine's, for an id without a piece
        token = next(token for token in ids if not 0 <= token < len(pieces) or pieces[token] is None)
        raise BpeError(unknown_id(token)) from None


def token_ids(ids: Any, argument: str) -> Sequence[int]:
    """`ids` as `join` takes them: a list or an `array` as it is (a wrong element is found only if
    the join fails on it), any other iterable of integers (numpy's, say) as a list of int; an
    ArgumentError naming `argument` and the first element that is not a token id."""
    if isinstance(ids, (list, array)):
        return ids
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise ArgumentError(f"{argument}: expected a sequence of token ids (int), got {described(ids)}")
    return _int_list(ids, argument)


def _int_list(ids: Iterable[Any], argument: str) -> list[int]:
    """The ids as a list of int, or an ArgumentError naming the first that is not one."""
    listed: list[int] = []
    for position, token in enumerate(ids):
        try:
            listed.append(operator.index(token))
        except TypeError:
            raise ArgumentError(
                f"{argument}: expected a sequence of token ids (int), got {described(token)} at position {position}"
            ) from None
    return listed


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


class TextStream:
    """Incremental text decoding; see `Tokenizer.decode_stream`: a UTF-8 character split across
    tokens is held back until its last byte comes."""

    def __init__(self, tokenizer: "DecodesBytes") -> None:
        self.tokenizer = tokenizer
        if not isinstance(tokenizer.decoder, StreamsText):
            raise BpeError(f"decoder {tokenizer.decoder.name!r} cannot decode incrementally")
        self.bytes_decoder: codecs.IncrementalDecoder = tokenizer.decoder.stream()

    def push(self, ids: Sequence[int]) -> str:
        return str(self.bytes_decoder.decode(self.tokenizer.decode_bytes(ids)))

    def flush(self) -> str:
        return str(self.bytes_decoder.decode(b"", final=True))


class DecodesBytes(Protocol):
    """What a `TextStream` reads of a tokenizer."""

    decoder: Decoder

    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...
