"""What can join the first or last token of a unit to a neighbour before the unit is whole, for
the short encoder's units (see `short_encoder`): for each token, the merges that take it as the
right and those that take it as the left, each a linked list in rank order kept as merges are
added (a few integers per merge), so a question reads the few merges ranked at or below the one
it asks about.
"""

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

NO_EDGES: Final[i32] = -1
NO_MERGE: Final[i32] = -1


class UnitSides:
    """Merges added in rank order; `taken(...)` answers whether one can take a token into a neighbour.

    >>> sides = UnitSides(bytes(256), 256, 258)
    >>> sides.add(1, 2, 256)
    >>> sides.add(0, 1, 257)
    >>> sides.taken(1, True, 0, 1, True), sides.taken(1, True, 0, 0, True), sides.taken(1, True, 5, 1, True)
    (True, False, False)
    >>> sides.taken(1, True, 5, 1, False)  # 5 has the class 0 has
    True
    """

    roles: bytes  # [symbol]: its class, compared when a question is not exact
    lefts: vec[i32]  # per merge, in rank order
    rights: vec[i32]
    edges: vec[i32]  # [token]: its first symbol << 8 | its last symbol
    # the merges that take a token as the right: from first_as_right[token] on, each to the
    # next in next_as_right[merge] (NO_MERGE ends it); the same as the left
    first_as_right: vec[i32]
    last_as_right: vec[i32]
    next_as_right: vec[i32]
    first_as_left: vec[i32]
    last_as_left: vec[i32]
    next_as_left: vec[i32]

    def __init__(self, roles: bytes, alphabet_size: i64, id_bound: i64) -> None:
        self.roles = roles
        self.lefts = vec[i32]()
        self.rights = vec[i32]()
        self.edges = vec[i32]([NO_EDGES] * id_bound)
        for symbol in range(alphabet_size):
            self.edges[symbol] = i32(symbol << 8 | symbol)
        self.first_as_right = vec[i32]([NO_MERGE] * id_bound)
        self.last_as_right = vec[i32]([NO_MERGE] * id_bound)
        self.next_as_right = vec[i32]()
        self.first_as_left = vec[i32]([NO_MERGE] * id_bound)
        self.last_as_left = vec[i32]([NO_MERGE] * id_bound)
        self.next_as_left = vec[i32]()

    def add(self, left: i64, right: i64, result: i64) -> None:
        """The next merge (ids below id_bound)."""
        rank = i32(len(self.lefts))
        self.lefts = append(self.lefts, i32(left))
        self.rights = append(self.rights, i32(right))
        if self.edges[left] != NO_EDGES and self.edges[right] != NO_EDGES:
            self.edges[result] = i32((i64(self.edges[left]) & ~255) | (i64(self.edges[right]) & 255))
        self.next_as_right = append(self.next_as_right, NO_MERGE)
        if self.first_as_right[right] == NO_MERGE:
            self.first_as_right[right] = rank
        else:
            self.next_as_right[i64(self.last_as_right[right])] = rank
        self.last_as_right[right] = rank
        self.next_as_left = append(self.next_as_left, NO_MERGE)
        if self.first_as_left[left] == NO_MERGE:
            self.first_as_left[left] = rank
        else:
            self.next_as_left[i64(self.last_as_left[left])] = rank
        self.last_as_left[left] = rank

    def taken(self, token: i64, from_left: bool, neighbour: i64, rank: i64, exact: bool) -> bool:
        """Whether a merge at `rank` or below takes `token` as its right (`from_left`: a left
        neighbour that ends in `neighbour`) or as its left (a right neighbour that starts with
        it); not `exact`: ends or starts with a symbol of the same class as `neighbour`."""
        roles = self.roles
        merge = i64(self.first_as_right[token] if from_left else self.first_as_left[token])
        while merge != NO_MERGE and merge <= rank:
            if from_left:
                symbol = i64(self.edges[i64(self.lefts[merge])]) & 255
                merge_next = i64(self.next_as_right[merge])
            else:
                symbol = (i64(self.edges[i64(self.rights[merge])]) >> 8) & 255
                merge_next = i64(self.next_as_left[merge])
            if symbol == neighbour or (not exact and roles[symbol] == roles[neighbour]):
                return True
            merge = merge_next
        return False
