"""Decoding: token ids back to base symbol ids, by expanding each token into the pair that made
it, and many ids at once by laying out a table of each id's bytes (which the caller builds). It
knows nothing of what a symbol means (the domain's decoder does the rest).
"""

from librt.strings import BytesWriter, read_i16_le, read_i32_le
from librt.vecs import append, vec
from mypy_extensions import i64


class Decoder:
    """Expands token ids to base symbol ids.

    >>> Decoder(3, [(0, 1), (3, 2)]).symbols([4, 0])
    [0, 1, 2, 0]
    """

    alphabet_size: int
    left: vec[i64]  # [token - alphabet_size]: the pair that made it (vecs: the garbage collector never visits them)
    right: vec[i64]

    def __init__(self, alphabet_size: int, merges: list[tuple[int, int]], results: list[int] | None = None) -> None:
        """Token `alphabet_size + k` is defined by the k-th merge that creates a new id."""
        self.alphabet_size = alphabet_size
        self.left = vec[i64]()
        self.right = vec[i64]()
        for rank in range(len(merges)):
            if results is None or results[rank] == alphabet_size + len(self.left):
                self.left = append(self.left, merges[rank][0])
                self.right = append(self.right, merges[rank][1])

    def symbols(self, ids: list[int]) -> list[int]:
        """Base symbol ids for a sequence of token ids (all ids must be below the token bound)."""
        bound = self.alphabet_size + len(self.left)
        result: list[int] = []
        stack: list[int] = []
        for token in ids:
            if token < 0 or token >= bound:
                raise ValueError(f"token id {token} is outside 0..{bound - 1}")
            stack.append(token)
            while len(stack) > 0:
                current = stack.pop()
                if current < self.alphabet_size:
                    result.append(current)
                else:
                    index = current - self.alphabet_size
                    stack.append(self.right[index])
                    stack.append(self.left[index])
        return result


def join_pieces(pieces: list[bytes | None], ids: list[int]) -> bytes:
    """`pieces[id]` of each id, end to end, in one pass (compiled, a few times faster than
    CPython's `b"".join(map(pieces.__getitem__, ids))`). A ValueError names the first id with
    no piece: outside the table, or None there.

    >>> join_pieces([b"a", None, b"bc"], [2, 0, 2])
    b'bcabc'
    """
    joined = BytesWriter()
    for token in ids:
        joined.write(_piece(pieces, token))
    return joined.getvalue()


def join_packed_pieces(pieces: list[bytes | None], ids: bytes, width: i64) -> bytes:
    """`join_pieces` of ids packed as little-endian unsigned integers of `width` bytes, 2 or 4 (as
    id files and shards hold them), read where they lie: no Python int per id."""
    joined = BytesWriter()
    for index in range(len(ids) // width):
        if width == 2:
            token = i64(read_i16_le(ids, index * 2)) & 0xFFFF
        else:
            token = i64(read_i32_le(ids, index * 4)) & 0xFFFFFFFF
        joined.write(_piece(pieces, token))
    return joined.getvalue()


def _piece(pieces: list[bytes | None], token: int) -> bytes:
    piece = pieces[token] if 0 <= token < len(pieces) else None
    if piece is None:
        raise ValueError(f"token id {token} has no piece")
    return piece
