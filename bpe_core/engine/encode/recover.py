"""The merges behind a rank-ordered token list (a `.tiktoken` file holds tokens and ranks, no
merges): each token is encoded with the merges recovered before it, and the pair its bytes end in
is its merge. It reads no file.
"""

from mypy_extensions import i64

from bpe_core.engine.encode.kernel import MergeKernel
from bpe_core.engine.encode.pair_ranks import PairRanks


def recover_merges(tokens: list[bytes]) -> list[tuple[int, int]]:
    """The merge that makes each token, for tokens of two bytes or more given in rank order: the
    pair its bytes end in when encoded with the merges recovered before it (ids: the bytes 0-255,
    then one per merge, in order), or (-1, -1) where they end in more than two parts (no merge
    sequence makes the token; it is kept for decoding only).

    >>> recover_merges([b"ab", b"abc", b"xyz"])
    [(97, 98), (256, 99), (-1, -1)]
    """
    table = PairRanks(256, len(tokens))
    kernel = MergeKernel(table)
    pairs: list[tuple[int, int]] = []
    made: i64 = 0
    for index in range(len(tokens)):
        token = tokens[index]
        kernel.room(len(token))
        parts = kernel.tokens(kernel.merge(kernel.read_bytes(token, 0, len(token))))
        if len(parts) == 2:
            table.add(parts[0], parts[1], 256 + made)
            made += 1
            pairs.append((parts[0], parts[1]))
        else:
            pairs.append((-1, -1))
    return pairs
