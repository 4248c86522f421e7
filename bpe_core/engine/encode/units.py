"""Reading a packed chunk with its sealed units read as the tokens they become.

Units (`roles`, one per symbol: a symbol of its own, one that starts a unit, one that continues
it; for UTF-8 text, each character of three or four bytes) let a chunk start with a part per
character instead of per byte, the same ids with fewer merges.

Why that is exact. A unit is sealed between two neighbours when, encoded alone, it ends as one
token, and whenever its first token is merged inside it at rank r, no merge at rank r or below
joins that token to a left neighbour ending in the symbol before the unit; the same for its last
token and the symbol after it, mirrored. With merges that each make a new id from ids made before
them (`PairRanks.fresh`), merges apply in rising rank order, so nothing outside a sealed unit
takes part of it before it is whole, and anything that joins it later joins the whole token: the
chunk merges as it would from its bytes.

A unit is checked once for the classes (roles) of the symbols beside it, and where a merge could
take part of it into a neighbour of that class, once for those very symbols (`unit_sides` lists
the merges that take each piece of a unit), and the answers are remembered. A vocabulary with few
whole characters seals few, and looking units up then costs more than it saves: reading units
stops after a round of TRIAL of them in which fewer than a quarter were sealed.
"""

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

from bpe_core.engine.encode.kernel import BLOCKED, NO_SYMBOL, MergeKernel
from bpe_core.engine.encode.pair_ranks import NO_BYTE_RANK, NO_RANK
from bpe_core.engine.encode.unit_sides import CONTINUES, STARTS, UnitSides
from bpe_core.engine.tables import MISSING, IntTable

MAX_UNIT: Final[i64] = 4  # symbols in a unit (a UTF-8 character)
NOT_SEALED: Final[i64] = -1
EXACT: Final[i64] = -2  # sealed or not depending on the neighbours' very symbols, not their classes
MAX_UNITS: Final[i64] = 1 << 16  # units remembered before the tables are emptied (memory stays bounded)
TRIAL: Final[i64] = 1024  # units per round of the sealed share's check


@final
class UnitReader:
    """Reads byte ranges into a kernel's parts, each sealed unit as its token."""

    roles: bytes  # [symbol]: PLAIN, CONTINUES or STARTS
    first_start: i64  # the lowest symbol that STARTS a unit (256: none, or no more units)
    units_met: i64  # units looked up in this round of TRIAL, and how many of them were sealed
    units_sealed: i64
    sides: UnitSides  # what can take a unit's first or last token
    units: IntTable  # a unit (its symbols, length and neighbours' classes) -> token, NOT_SEALED or EXACT
    exact_units: IntTable  # the same keyed by the neighbours' symbols, for the units found EXACT
    seal_parts: vec[i64]  # scratch for encoding a unit alone
    seal_ranks: vec[i64]

    def __init__(self, roles: bytes, kernel: MergeKernel) -> None:
        """Units over the kernel's merges, which must each make a new id (`PairRanks.fresh`)."""
        table = kernel.table
        if len(roles) != 256 or table.alphabet_size > 256 or max(roles) > STARTS or table.capacity >= 1 << 23:
            raise ValueError("units need a role (0-2) for each of 256 symbols, and fewer than 2**23 merges")
        self.roles = roles
        self.first_start = 256
        for symbol in range(255, -1, -1):
            if roles[symbol] == STARTS:
                self.first_start = symbol
        self.units_met = 0
        self.units_sealed = 0
        self.sides = UnitSides(roles, table.alphabet_size, table.size())
        for rank in range(table.size()):
            self.sides.add(table.left[rank], table.right[rank], table.results[rank])
        self.units = IntTable(MAX_UNITS)
        self.exact_units = IntTable(MAX_UNITS)
        self.seal_parts = vec[i64]([0] * MAX_UNIT)
        self.seal_ranks = vec[i64]([0] * MAX_UNIT)

    def wanted(self, data: bytes, start: i64, end: i64) -> bool:
        """Whether data[start:end] holds a symbol that starts a unit (the caller checks first
        that units are still read: `first_start` below 256)."""
        first_start = self.first_start
        for index in range(start, end):
            if data[index] >= first_start:
                return True
        return False

    def read(self, kernel: MergeKernel, data: bytes, start: i64, size: i64) -> i64:
        """`kernel.read_bytes`, with each sealed unit read as the token it becomes (each byte read
        once: a unit's symbols are packed into its key as they are read)."""
        parts = kernel.parts
        roles = self.roles
        count: i64 = 0
        index: i64 = 0
        before: i64 = NO_SYMBOL  # the symbol before data[start + index]
        symbol: i64 = data[start]  # data[start + index]
        while index < size:
            key: i64 = symbol  # the symbols read so far, a byte each, the first lowest
            length: i64 = 1
            following: i64 = NO_SYMBOL  # the symbol after them (NO_SYMBOL: the chunk's end)
            if roles[symbol] == STARTS:
                while index + length < size:
                    following = data[start + index + length]
                    if length == MAX_UNIT or roles[following] != CONTINUES:
                        break
                    key |= following << (8 * length)
                    length += 1
                    following = NO_SYMBOL
            elif index + 1 < size:
                following = data[start + index + 1]
            token = NOT_SEALED
            if length > 1:
                token = self._unit_token(kernel, key | length << 32, before, following)
            if token == NOT_SEALED:
                for offset in range(length):
                    parts[count] = (key >> (8 * offset)) & 255
                    count += 1
            else:
                parts[count] = token
                count += 1
            before = (key >> (8 * (length - 1))) & 255
            symbol = following
            index += length
        ranks = kernel.ranks
        table = kernel.table
        byte_ranks = table.byte_ranks
        for position in range(count - 1):
            left = parts[position]
            right = parts[position + 1]
            if left < 256 and right < 256:
                rank = i64(byte_ranks[left * 256 + right])
                ranks[position] = NO_RANK if rank == NO_BYTE_RANK else rank
            else:
                ranks[position] = table.rank_of(left, right)
        return count

    def _unit_token(self, kernel: MergeKernel, key: i64, before: i64, after: i64) -> i64:
        """The token a unit becomes if it is sealed between the symbols `before` and `after`
        (NO_SYMBOL: the chunk's edge), else NOT_SEALED: found once for the neighbours' classes,
        then remembered; where that depends on the very symbols, for them. `key`: the unit's
        symbols, a byte each from the lowest, and its length << 32."""
        roles = self.roles
        # the neighbours' classes as i64s: mypyc shifts an `int` read from bytes as a Python int
        before_class: i64 = roles[before] + 1 if before >= 0 else 0
        after_class: i64 = roles[after] + 1 if after >= 0 else 0
        classes = key | before_class << 35 | after_class << 38
        token = self.units.get(classes)
        if token == MISSING:
            token = self._seal(kernel, key, before, after, False)
            self.units.put(classes, token)
        if token == EXACT:
            symbols = key | (before + 1) << 35 | (after + 1) << 44
            token = self.exact_units.get(symbols)
            if token == MISSING:
                token = self._seal(kernel, key, before, after, True)
                self.exact_units.put(symbols, token)
        self.units_met += 1
        if token >= 0:
            self.units_sealed += 1
        if self.units_met == TRIAL:
            if 4 * self.units_sealed < TRIAL:
                self.first_start = 256  # the rest of the chunks are read symbol by symbol
            self.units_met = 0
            self.units_sealed = 0
        return token

    def _seal(self, kernel: MergeKernel, key: i64, before: i64, after: i64, exact: bool) -> i64:
        """The token the unit `key` becomes when it is sealed between `before` and `after` (their
        classes, or with `exact` the symbols themselves), else NOT_SEALED, or EXACT when it is
        not sealed for the classes and might be for the symbols (see the module docstring)."""
        length = key >> 32
        parts = self.seal_parts
        for offset in range(length):
            parts[offset] = (key >> (8 * offset)) & 255
        kernel.rank_parts(parts, self.seal_ranks, length)
        left = kernel.scan(parts, self.seal_ranks, length, self.sides, before, after, exact, 0.0, None)
        if left == BLOCKED:
            return NOT_SEALED if exact else EXACT
        if left > 1:
            return NOT_SEALED
        return parts[0]
