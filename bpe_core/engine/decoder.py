"""Decoding: token ids back to base symbol ids, by expanding each token into the pair that made
it. It knows nothing of what a symbol means (the domain's decoder does the rest).
"""

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
