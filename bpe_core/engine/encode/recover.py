"""The merges behind a rank-ordered token list (a `.tiktoken` file holds tokens and ranks, no
merges): each token is encoded with the merges recovered before it, and the pair its bytes end in
is its merge. It reads no file.
"""

from typing import Final

from librt.strings import BytesWriter, write_i32_le
from mypy_extensions import i32, i64

from bpe_core.engine.encode.kernel import LINKED, MergeKernel
from bpe_core.engine.encode.pair_ranks import PairRanks

NO_MERGE: Final[i64] = -1


def recover_merges(tokens: list[bytes]) -> bytes:
    """The merge that makes each token, for tokens of two bytes or more given in rank order: the
    pair its bytes end in when encoded with the merges recovered before it (ids: the bytes 0-255,
    then one per merge, in order), or (-1, -1) where they end in more than two parts (no merge
    sequence makes the token; it is kept for decoding only). Packed as little-endian 32-bit ids,
    two per token: no Python object per merge.

    >>> merges = recover_merges([b"ab", b"abc", b"xyz"])
    >>> [int.from_bytes(merges[at : at + 4], "little", signed=True) for at in range(0, len(merges), 4)]
    [97, 98, 256, 99, -1, -1]
    """
    table = PairRanks(256, len(tokens))
    kernel = MergeKernel(table)
    out = BytesWriter()
    made: i64 = 0
    for index in range(len(tokens)):
        token = tokens[index]
        size: i64 = len(token)
        kernel.room(size)
        left = kernel.merge(kernel.read_bytes(token, 0, size))
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
