"""The merges behind a rank-ordered token list (a `.tiktoken` file holds tokens and ranks, no
merges): each token is encoded with the merges recovered before it, and the pair its bytes end in
is its merge. And the token list itself, read from a `.tiktoken` file's bytes in one pass, with no
Python object per line (the reader gives up on anything but the exact "base64-token rank" lines
every published file holds, for the caller's line-by-line reading to explain). It reads no file.
"""

from typing import Final, final

from librt.strings import BytesWriter, read_i32_le, write_i32_le
from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from bpe_core.engine.encode.kernel import LINKED, MergeKernel
from bpe_core.engine.encode.pair_ranks import PairRanks

NO_MERGE: Final[i64] = -1
ID_WIDTH: Final[i64] = 4  # bytes of a packed id or end offset
UNRANKED: Final[i64] = -1  # the rank of a single byte a file does not list (pair_ranks.NO_RANK is a pair's)
MAX_RANK: Final[i64] = (1 << 31) - 1
SPACE: Final[i64] = 32
NEWLINE: Final[i64] = 10
ZERO: Final[i64] = 48
PAD: Final[i64] = 61  # "="
INVALID: Final[i64] = -1
# [byte]: its value as a base64 digit, INVALID for any other byte ("=" included: padding is read apart)
BASE64_DIGITS: Final = vec[i64](
    ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".find(chr(byte)) for byte in range(256)]
)


@final
class RankedTokens:
    """A `.tiktoken` file's tokens in line order: `packed` holds their bytes one after another,
    `ends[line]` (a little-endian 32-bit offset each) where each ends; `count` tokens; `in_order`
    says the ranks are 0, 1, 2, ... line by line, and `byte_ranks[b]` is the rank of the one-byte
    token b (-1: none)."""

    packed: bytes
    ends: bytes
    count: i64
    in_order: bool
    byte_ranks: list[int]

    def __init__(self, packed: bytes, ends: bytes, count: i64, in_order: bool, byte_ranks: list[int]):
        self.packed = packed
        self.ends = ends
        self.count = count
        self.in_order = in_order
        self.byte_ranks = byte_ranks


def read_ranked_lines(body: bytes) -> RankedTokens | None:
    """The tokens of a `.tiktoken` file's content with trailing whitespace removed, if every line
    is exactly base64 (padded, the standard alphabet), one space, a rank (ASCII digits, below
    2**31), and no one-byte token is there twice; None otherwise."""
    digits = BASE64_DIGITS
    size: i64 = len(body)
    packed = BytesWriter()
    ends = BytesWriter()
    byte_ranks: list[int] = [UNRANKED] * 256
    in_order = True
    count: i64 = 0
    position: i64 = 0
    while position < size:
        start = len(packed)
        # the token: whole groups of four digits, the last may end in padding
        while True:
            if position + 4 > size:
                return None
            first = digits[body[position]]
            second = digits[body[position + 1]]
            if first == INVALID or second == INVALID:
                return None
            third_byte: i64 = body[position + 2]
            fourth_byte: i64 = body[position + 3]
            third = digits[third_byte]
            fourth = digits[fourth_byte]
            position += 4
            # u8 arguments: mypyc then appends in C, not through a method call with an int object
            if third == INVALID and third_byte == PAD and fourth_byte == PAD:
                packed.append(u8((first << 2) | (second >> 4)))
                break
            if third == INVALID:
                return None
            if fourth == INVALID and fourth_byte == PAD:
                packed.append(u8((first << 2) | (second >> 4)))
                packed.append(u8(((second & 15) << 4) | (third >> 2)))
                break
            if fourth == INVALID:
                return None
            packed.append(u8((first << 2) | (second >> 4)))
            packed.append(u8(((second & 15) << 4) | (third >> 2)))
            packed.append(u8(((third & 3) << 6) | fourth))
            if position < size and body[position] == SPACE:
                break
        if position >= size or body[position] != SPACE:
            return None
        position += 1
        # the rank
        rank: i64 = 0
        rank_start = position
        while position < size and body[position] != NEWLINE:
            digit: i64 = body[position] - ZERO
            if digit < 0 or digit > 9 or position - rank_start >= 10:
                return None
            rank = rank * 10 + digit
            position += 1
        if position == rank_start or rank > MAX_RANK:
            return None
        position += 1  # the newline (past the end after the last line)
        length = len(packed) - start
        if length == 1:
            byte = i64(packed[start])
            if byte_ranks[byte] != UNRANKED:
                return None
            byte_ranks[byte] = rank
        write_i32_le(ends, i32(len(packed)))
        if rank != count:
            in_order = False
        count += 1
    return RankedTokens(packed.getvalue(), ends.getvalue(), count, in_order, byte_ranks)


def recover_merges(packed: bytes, ends: bytes) -> bytes:
    """The merge that makes each token of two bytes or more, for tokens given in rank order as
    `packed` bytes with where each ends (`ends`, little-endian 32-bit offsets; tokens of one byte
    are skipped): the pair its bytes end in when encoded with the merges recovered before it
    (ids: the bytes 0-255, then one per merge, in order), or (-1, -1) where they end in more
    than two parts (no merge sequence makes the token; it is kept for decoding only). Packed as
    little-endian 32-bit ids, two per token of two bytes or more: no Python object per merge.

    >>> ends = b"".join(end.to_bytes(4, "little") for end in (2, 5, 8))
    >>> merges = recover_merges(b"ababcxyz", ends)
    >>> [int.from_bytes(merges[at : at + 4], "little", signed=True) for at in range(0, len(merges), 4)]
    [97, 98, 256, 99, -1, -1]
    """
    count: i64 = len(ends) // ID_WIDTH
    table = PairRanks(256, count)
    kernel = MergeKernel(table)
    out = BytesWriter()
    made: i64 = 0
    start: i64 = 0
    for index in range(count):
        end = i64(read_i32_le(ends, ID_WIDTH * index))
        size = end - start
        if size < 2:
            start = end
            continue
        kernel.room(size)
        left = kernel.merge(kernel.read_bytes(packed, start, size))
        start = end
        first = NO_MERGE
        second = NO_MERGE
        if left == 2:
            first = kernel.parts[0]
            second = kernel.parts[1]
        elif left == LINKED:  # a long token, merged by the heap loop
            parts = kernel.tokens(left)
            if len(parts) == 2:
                first = parts[0]
                second = parts[1]
        if first != NO_MERGE:
            table.add(first, second, 256 + made)
            made += 1
        write_i32_le(out, i32(first))
        write_i32_le(out, i32(second))
    return out.getvalue()
