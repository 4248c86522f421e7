"""What can join the first or last token of a unit to a neighbour before the unit is whole, for
the unit reader (see `units`). Such a token is a piece of a unit: a prefix (a
symbol that starts a unit, then symbols that continue it) or a suffix (symbols that continue a
unit). For each piece, the merges that take it (a prefix as their right, a suffix as their left)
are kept in rank order with the edge symbol of the other token, as merges are added. Only merges
that take a piece are kept, a few thousand of o200k_base's 200,000, so building costs little more
than a pass over the merges, and a question reads the few merges ranked at or below the one it
asks about.
"""

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64

from bpe_core.engine.tables import MISSING, NO_LIMIT, IntTable

NO_EDGES: Final[i32] = -1
PREFIX: Final[i64] = 1 << 16  # flags in `edges`
SUFFIX: Final[i64] = 1 << 17
# a symbol's role in units (and its class, for sealing): a symbol of its own, one that continues a
# unit, one that starts a unit
PLAIN: Final[i64] = 0
CONTINUES: Final[i64] = 1
STARTS: Final[i64] = 2


class UnitSides:
    """Merges added in rank order; `taken(...)` answers whether one can take a piece of a unit
    into a neighbour.

    >>> sides = UnitSides(bytes([0, 2, 1] + [0] * 253), 256, 2)
    >>> sides.add(1, 2, 256)
    >>> sides.add(0, 1, 257)
    >>> sides.taken(1, True, 0, 1, True), sides.taken(1, True, 0, 0, True), sides.taken(1, True, 5, 1, True)
    (True, False, False)
    >>> sides.taken(1, True, 5, 1, False)  # 5 has the class 0 has
    True
    """

    roles: bytes  # [symbol]: its class, compared when a question is not exact
    count: i64  # merges added
    # [token]: its first symbol << 8 | its last symbol, | PREFIX or SUFFIX if it is such a piece
    edges: vec[i32]
    # (piece << 1 | 1 when taken as a left) -> the first and the last merge that takes it, and
    # (merge << 1 | side) -> the next merge that takes the same piece + 1 (0: none) << 8 | the
    # other token's edge symbol beside it
    first: IntTable
    last: IntTable
    links: IntTable

    def __init__(self, roles: bytes, alphabet_size: i64, capacity: i64) -> None:
        """Room for `capacity` merges, each making a new id (alphabet_size + its rank)."""
        self.roles = roles
        self.count = 0
        self.edges = vec[i32]([NO_EDGES] * (alphabet_size + capacity + 1))
        for symbol in range(alphabet_size):
            role: i64 = roles[symbol]
            flags = PREFIX if role == STARTS else SUFFIX if role == CONTINUES else 0
            self.edges[symbol] = i32(symbol << 8 | symbol | flags)
        self.first = IntTable(NO_LIMIT)
        self.last = IntTable(NO_LIMIT)
        self.links = IntTable(NO_LIMIT)

    def add(self, left: i64, right: i64, result: i64) -> None:
        """The next merge, within the capacity (a result beyond alphabet_size + capacity, which
        no ordered merges make, gets no edges)."""
        rank = self.count
        self.count += 1
        left_edges = i64(self.edges[left])
        right_edges = i64(self.edges[right])
        if left_edges == NO_EDGES or right_edges == NO_EDGES:
            return
        if result < len(self.edges):
            flags: i64 = 0
            if right_edges & SUFFIX:
                flags = (left_edges & (PREFIX | SUFFIX)) if left_edges & (PREFIX | SUFFIX) else 0
            self.edges[result] = i32((left_edges & 0xFF00) | (right_edges & 0xFF) | flags)
        if right_edges & PREFIX:
            self._link(right << 1, rank << 1, left_edges & 0xFF)
        if left_edges & SUFFIX:
            self._link(left << 1 | 1, rank << 1 | 1, (right_edges >> 8) & 0xFF)

    def _link(self, piece: i64, link: i64, symbol: i64) -> None:
        """Append merge link >> 1 to the piece's list, with the neighbour's edge symbol."""
        self.links.put(link, symbol)
        tail = self.last.get(piece)
        if tail == MISSING:
            self.first.put(piece, link)
        else:
            self.links.put(tail, self.links.get(tail) | (link + 1) << 8)
        self.last.put(piece, link)

    def taken(self, token: i64, from_left: bool, neighbour: i64, rank: i64, exact: bool) -> bool:
        """Whether a merge at `rank` or below takes `token` as its right (`from_left`: a left
        neighbour that ends in `neighbour`) or as its left (a right neighbour that starts with
        it); not `exact`: ends or starts with a symbol of the same class as `neighbour`."""
        roles = self.roles
        link = self.first.get(token << 1 | (0 if from_left else 1))
        while link != MISSING and link >> 1 <= rank:
            entry = self.links.get(link)
            symbol = entry & 0xFF
            if symbol == neighbour or (not exact and roles[symbol] == roles[neighbour]):
                return True
            link = (entry >> 8) - 1 if entry >> 8 else MISSING
        return False
