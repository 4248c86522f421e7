"""Rank-ordered BPE encoding of one short chunk given as a byte range of a buffer (packed symbol
ids, one byte each), compiled to work on unboxed integers only.

The quadratic scan tiktoken uses (cheapest for a word): the ranks of neighbouring pairs in an
i64 vec, the lowest taken first and the leftmost on ties, the two ranks beside a merge looked up
again. A pair of ids below 256 (every pair of the first pass) is read from a 65,536-entry table
of i32s; other pairs from an open-addressing pair -> rank table of integers (key and rank packed
in one word, so the table is half the size and more of it stays in the CPU's cache), not a
dict. The chunk's symbols are read straight from the caller's bytes, so no Python object is made
per symbol, and the ids come out in the output layout. It gives exactly what `encoder.Encoder`
gives for the same chunk.

Most of those table lookups find no merge (62% of them on Japanese with o200k_base), and each
cost a cache miss in a table of megabytes. A filter of one bit per hash bucket, a sixteenth of
the table's size and built from the same hash, answers most of them first: a cold megabyte of
Japanese encodes in 13-16% less time with it.

From HEAP_CHUNK symbols on, rescanning every pair after each merge costs more than it saves:
such a chunk is merged over a linked list instead, with a binary heap of (rank, position) keys in
an i64 vec, O(n log n) (a Japanese sentence without spaces is one chunk of 20-90 bytes). Both take
the lowest rank first and the leftmost position on ties.

Units (`roles`; for text, each character of three or four UTF-8 bytes: CJK, kana, Indic): a
unit that always becomes one token is read as that token, so a Japanese chunk starts with a part
per character, not per byte (a cold megabyte of Japanese with o200k_base: 8% fewer instructions,
on top of writing ids straight into the caller's list, 4.6%). It always becomes that token when it
is sealed: encoded alone it ends as one token, and whenever its first token is merged inside it
at rank r, no merge at rank r or below joins that token to a left neighbour ending in the symbol
before the unit; the same for its last token, mirrored. With each merge ranked above the merges
that make its two tokens (`ordered`), merges apply in rising rank order, so nothing outside takes
part of a sealed unit before it is whole, and anything that joins it later joins the whole token.
A unit is checked once for the classes (roles) of the symbols beside it, and where a merge could
take part of it into a neighbour of that class, once for those very symbols: o200k_base's
"ー\xe3\x83" takes the first bytes of a katakana after "ー", not after "ア" (`unit_sides`). 94% of
the Japanese characters in new chunks are sealed with o200k_base, 82% with cl100k_base. A
vocabulary with few whole characters seals few (our English-trained one on Japanese), and looking
units up then cost 24% more instructions than it saved: units stop after a round of TRIAL of them
in which fewer than a quarter were sealed.

It does not cache (`encoder.Encoder.encode_range` does), and it takes chunks of any length: the
caller sends the long chunks of a vocabulary whose merges each create a new id to the whole-chunk
encoder instead, which costs only the merges it makes. Its tables may also grow a merge at a time
(`add_merge`, within a capacity given up front): `recover_merges` finds a tiktoken file's merges
so, encoding each token with the merges found before it (0.2-0.3 s for o200k_base's 200,000
tokens, against 1 s for the Encoder's scans over Python lists).
"""

from typing import Final, cast

from librt.vecs import append, vec
from mypy_extensions import i32, i64

from bpe_core.engine.heap import sift_down, sift_up
from bpe_core.engine.int_table import MISSING, IntTable
from bpe_core.engine.unit_sides import UnitSides

NO_RANK: Final[i64] = 1 << 60
NO_BYTE_RANK: Final[i32] = -1
EMPTY: Final[i64] = -1
BYTE_PAIRS: Final[i64] = 256 * 256
HEAP_CHUNK: Final[i64] = 24  # from this many symbols on, the heap instead of the rescans
FILTER_BITS_PER_PAIR: Final[i64] = 8  # at least: 6-12% of the pairs no merge makes pass the filter
MAX_UNIT: Final[i64] = 4  # symbols in a unit (a UTF-8 character)
NOT_SEALED: Final[i64] = -1
EXACT: Final[i64] = -2  # sealed or not depending on the neighbours' very symbols, not their classes
# a symbol's role in units (its class, for sealing): a symbol of its own, one that continues a
# unit, one that starts a unit
PLAIN: Final[i64] = 0
CONTINUES: Final[i64] = 1
STARTS: Final[i64] = 2
NO_SYMBOL: Final[i64] = -1  # the chunk's edge, as a neighbour
MAX_UNITS: Final[i64] = 1 << 16  # units remembered before the table is emptied (memory stays bounded)
# units are read while at least a quarter of those met, counted in rounds of TRIAL, are sealed
# (a vocabulary with few tokens of whole characters seals few, and reading units cost more)
TRIAL: Final[i64] = 1024


class ShortEncoder:
    """Applies merges by rank to short packed chunks; `merges[r]` creates `results[r]`, and
    `output_ids[token]` is the id a token is written as (-1 drops it; an empty list: as it is).

    >>> ShortEncoder(3, [(0, 1), (3, 2)], [3, 4], []).encode(bytes([0, 1, 2, 0]), 0, 4)
    [4, 0]
    """

    id_bound: i64
    capacity: i64  # merges the tables have room for
    byte_ranks: vec[i32]  # [left * 256 + right]: the rank of a pair of ids below 256
    slots: vec[i64]  # per slot: pair key << rank_bits | rank (one word: o200k's table is 4 MB, not 8)
    mask: i64  # slot count - 1
    # bit (hash & filter_mask) is set if a pair in `slots` has that hash: a clear bit means no merge
    filter: vec[i64]
    filter_mask: i64
    rank_bits: i64
    bit_values: vec[i64]
    results: vec[i64]
    # [token]: the id it is written as, a Python int made once (None: the layout drops it), so
    # that encoding copies a reference per token instead of making an int (ids above 256 are not
    # shared by Python), and reads no other table per token
    boxed: list[object]
    roles: bytes  # [symbol]: PLAIN, CONTINUES or STARTS (empty: no units; the module docstring)
    first_start: i64  # the lowest symbol that STARTS a unit (256: none, or no more units)
    units_met: i64  # units looked up in this round of TRIAL, and how many of them were sealed
    units_sealed: i64
    alphabet_size: i64
    # whether each merge makes alphabet_size + rank from tokens made before it (what sealing needs)
    ordered: bool
    sides: UnitSides | None  # with units: what can take a unit's first or last token
    units: IntTable  # a unit (its symbols, length and neighbours' classes) -> token, NOT_SEALED or EXACT
    exact_units: IntTable  # the same keyed by the neighbours' symbols, for the units found EXACT
    # scratch, reused between calls
    parts: vec[i64]  # the symbols (the heap path: per position, its symbol or -1 once merged away)
    ranks: vec[i64]  # the rank of the pair each part starts
    following: vec[i64]  # the heap path's linked list: next and previous position, -1 at the ends
    preceding: vec[i64]
    heap: vec[i64]  # rank << shift | position, a binary min-heap in its first entries

    def __init__(
        self,
        alphabet_size: int,
        merges: list[tuple[int, int]],
        results: list[int],
        output_ids: list[int],
        capacity: int = 0,
        roles: bytes = b"",
    ) -> None:
        """A pair listed twice keeps its first rank. `capacity`: how many merges `add_merge` may
        bring the total to (default: no more). `roles[symbol]`: the symbol's role in units (see
        the module docstring; empty, the default: no units)."""
        most: i64 = max(len(merges), capacity)
        self.capacity = most
        self.id_bound = alphabet_size + most + 1
        self.rank_bits = max(1, int(most).bit_length())
        if int(self.id_bound * self.id_bound).bit_length() + self.rank_bits > 63:
            raise ValueError(f"{most} merges are too many for the packed pair table (at most about 2 million)")
        self.byte_ranks = vec[i32]([NO_BYTE_RANK] * BYTE_PAIRS)
        slot_count: i64 = 16
        while slot_count < 2 * most + 2:
            slot_count *= 2
        self.slots = vec[i64]([EMPTY] * slot_count)
        self.mask = slot_count - 1
        filter_bits: i64 = 64
        while filter_bits < FILTER_BITS_PER_PAIR * most:
            filter_bits *= 2
        self.filter = vec[i64]([0] * (filter_bits // 64))
        self.filter_mask = filter_bits - 1
        # [b]: the word with only bit b set (bit 63 is the sign bit of an i64)
        self.bit_values = vec[i64]([1 << bit if bit < 63 else -(1 << 63) for bit in range(64)])
        self.results = vec[i64]()
        self.alphabet_size = alphabet_size
        self.ordered = True
        if roles and (len(roles) != 256 or alphabet_size > 256 or max(roles) > STARTS or most >= 1 << 23):
            raise ValueError("units need a role (0-2) for each of 256 symbols, and fewer than 2**23 merges")
        self.roles = roles
        self.first_start = 256
        self.units_met = 0
        self.units_sealed = 0
        for symbol in range(len(roles) - 1, -1, -1):
            if roles[symbol] == STARTS:
                self.first_start = symbol
        self.sides = UnitSides(roles, alphabet_size, most) if roles else None
        self.units = IntTable(MAX_UNITS)
        self.exact_units = IntTable(MAX_UNITS)
        for rank in range(len(merges)):
            self.add_merge(merges[rank][0], merges[rank][1], results[rank])
        if not output_ids:
            self.boxed = list(range(self.id_bound))
        elif min(output_ids) >= 0:  # no token dropped: the list given (one list fewer for the garbage collector)
            self.boxed = cast(list[object], output_ids)
        else:
            self.boxed = [None if out < 0 else out for out in output_ids]
        self.parts = vec[i64]()
        self.ranks = vec[i64]()
        self.following = vec[i64]()
        self.preceding = vec[i64]()
        self.heap = vec[i64]()

    def add_merge(self, left: i64, right: i64, result: i64) -> None:
        """Append a merge (lowest priority so far) that makes `result`, within the capacity."""
        rank: i64 = len(self.results)
        if rank >= self.capacity or left >= self.id_bound or right >= self.id_bound:
            raise ValueError("more merges, or higher ids, than the short encoder's capacity")
        if left >= 256 or right >= 256:
            self._insert(left * self.id_bound + right, rank)
        elif self.byte_ranks[left * 256 + right] == NO_BYTE_RANK:
            self.byte_ranks[left * 256 + right] = i32(rank)
        self.results = append(self.results, result)
        if result != self.alphabet_size + rank or left >= result or right >= result:
            self.ordered = False
        if self.sides is not None:
            self.sides.add(left, right, result)
            if self.units.count > 0:  # a unit sealed without this merge may not be sealed with it
                self.units.clear()
                self.exact_units.clear()

    def _hash(self, key: i64) -> i64:
        # mix the high bits in, and keep the product below 2**63 so pure and compiled agree
        mixed = (key ^ (key >> 29)) & 0x7FFFFFFF
        return (mixed * 2654435761) >> 7

    def _insert(self, key: i64, rank: i64) -> None:
        hashed = self._hash(key)
        bit = hashed & self.filter_mask
        self.filter[bit >> 6] |= self.bit_values[bit & 63]
        slot = hashed & self.mask
        while self.slots[slot] != EMPTY:
            if self.slots[slot] >> self.rank_bits == key:
                return  # the first rank of a pair counts
            slot = (slot + 1) & self.mask
        self.slots[slot] = (key << self.rank_bits) | rank

    def rank_of(self, left: i64, right: i64) -> i64:
        """The rank of pair (left, right), NO_RANK if no merge makes it."""
        if left < 256 and right < 256:
            rank = i64(self.byte_ranks[left * 256 + right])
            return NO_RANK if rank == NO_BYTE_RANK else rank
        key = left * self.id_bound + right
        hashed = self._hash(key)
        bit = hashed & self.filter_mask
        if (self.filter[bit >> 6] >> (bit & 63)) & 1 == 0:
            return NO_RANK
        slot = hashed & self.mask
        slots = self.slots
        bits = self.rank_bits
        while True:
            stored = slots[slot]
            if stored == EMPTY:
                return NO_RANK
            if stored >> bits == key:
                return stored & ((1 << bits) - 1)
            slot = (slot + 1) & self.mask

    def encode(self, data: bytes, start: i64, end: i64) -> list[int]:
        """The ids (output layout) of the chunk data[start:end], one symbol id per byte."""
        result: list[int] = []
        self.encode_into(data, start, end, result)
        return result

    def encode_into(self, data: bytes, start: i64, end: i64, out: list[int]) -> None:
        """`encode`, appending the ids to `out`."""
        size = end - start
        if size <= 0:
            return
        if len(self.parts) < size:
            self.parts = vec[i64]([0] * size)
            self.ranks = vec[i64]([0] * size)
        count = self._read(data, start, size)
        if count >= HEAP_CHUNK:
            self._encode_heap(count, out)
            return
        parts = self.parts
        ranks = self.ranks
        while count > 1:
            best_rank = NO_RANK
            best: i64 = -1
            for index in range(count - 1):
                if ranks[index] < best_rank:
                    best_rank = ranks[index]
                    best = index
            if best < 0:
                break
            new_id = self.results[best_rank]
            parts[best] = new_id
            count -= 1
            for index in range(best + 1, count):
                parts[index] = parts[index + 1]
            for index in range(best, count - 1):
                ranks[index] = ranks[index + 1]
            if best < count - 1:
                ranks[best] = self.rank_of(new_id, parts[best + 1])
            if best > 0:
                ranks[best - 1] = self.rank_of(parts[best - 1], new_id)
        sink = cast(list[object], out)
        for index in range(count):
            self._put(sink, parts[index])

    def _read(self, data: bytes, start: i64, size: i64) -> i64:
        """Fill parts with the chunk's symbols and ranks with the ranks of their pairs (pairs of
        bytes: from the byte table, no call per pair); the number of parts (fewer than `size`
        when sealed units are read as their tokens)."""
        first_start = self.first_start
        if first_start < 256 and self.ordered:
            for index in range(start, start + size):
                if data[index] >= first_start:
                    return self._read_units(data, start, size)
        parts = self.parts
        ranks = self.ranks
        byte_ranks = self.byte_ranks
        previous: i64 = data[start]
        parts[0] = previous
        for index in range(1, size):
            symbol: i64 = data[start + index]
            parts[index] = symbol
            rank = i64(byte_ranks[previous * 256 + symbol])
            ranks[index - 1] = NO_RANK if rank == NO_BYTE_RANK else rank
            previous = symbol
        return size

    def _read_units(self, data: bytes, start: i64, size: i64) -> i64:
        """`_read`, with each sealed unit read as the token it becomes (each byte read once: a
        unit's symbols are packed into its key as they are read)."""
        parts = self.parts
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
                token = self._unit_token(data, start + index, key | length << 32, before, following)
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
        ranks = self.ranks
        byte_ranks = self.byte_ranks
        for position in range(count - 1):
            left = parts[position]
            right = parts[position + 1]
            if left < 256 and right < 256:
                rank = i64(byte_ranks[left * 256 + right])
                ranks[position] = NO_RANK if rank == NO_BYTE_RANK else rank
            else:
                ranks[position] = self.rank_of(left, right)
        return count

    def _unit_token(self, data: bytes, at: i64, key: i64, before: i64, after: i64) -> i64:
        """The token the unit data[at:at + length] becomes if it is sealed between the symbols
        `before` and `after` (NO_SYMBOL: the chunk's edge), else NOT_SEALED: found once for the
        neighbours' classes, then remembered; where that depends on the very symbols, for them.
        `key`: the unit's symbols, a byte each from the lowest, and its length << 32."""
        length = key >> 32
        roles = self.roles
        # the neighbours' classes as i64s: mypyc shifts an `int` read from bytes as a Python int
        before_class: i64 = roles[before] + 1 if before >= 0 else 0
        after_class: i64 = roles[after] + 1 if after >= 0 else 0
        classes = key | before_class << 35 | after_class << 38
        token = self.units.get(classes)
        if token == MISSING:
            token = self._seal(data, at, length, before, after, False)
            self.units.put(classes, token)
        if token == EXACT:
            symbols = key | (before + 1) << 35 | (after + 1) << 44
            token = self.exact_units.get(symbols)
            if token == MISSING:
                token = self._seal(data, at, length, before, after, True)
                self.exact_units.put(symbols, token)
        self.units_met += 1
        self.units_sealed += 1 if token >= 0 else 0
        if self.units_met == TRIAL:
            if 4 * self.units_sealed < TRIAL:
                self.first_start = 256  # the rest of the chunks are read symbol by symbol
            self.units_met = 0
            self.units_sealed = 0
        return token

    def _seal(self, data: bytes, at: i64, length: i64, before: i64, after: i64, exact: bool) -> i64:
        """The token a unit becomes when it is sealed between `before` and `after` (their classes,
        or with `exact` the symbols themselves), else NOT_SEALED, or EXACT when it is not sealed
        for the classes and might be for the symbols. Sealed: encoded alone it ends as one token,
        and no merge can take part of it into a neighbour first: whenever its first token is
        merged inside it (as a left) at rank r, no merge at rank r or below takes that token as a
        right and a token ending in `before` as the left; the same for its last token, mirrored."""
        sides = self.sides
        assert sides is not None
        parts = vec[i64]()
        for offset in range(length):
            parts = append(parts, i64(data[at + offset]))
        count = length
        while count > 1:
            best_rank = NO_RANK
            best: i64 = -1
            for index in range(count - 1):
                rank = self.rank_of(parts[index], parts[index + 1])
                if rank < best_rank:
                    best_rank = rank
                    best = index
            if best < 0:
                return NOT_SEALED
            if (best == 0 and before >= 0 and sides.taken(parts[0], True, before, best_rank, exact)) or (
                best == count - 2 and after >= 0 and sides.taken(parts[count - 1], False, after, best_rank, exact)
            ):
                return NOT_SEALED if exact else EXACT
            parts[best] = self.results[best_rank]
            for index in range(best + 1, count - 1):
                parts[index] = parts[index + 1]
            count -= 1
        return parts[0]

    def _put(self, sink: list[object], token: i64) -> None:
        """Append a token to `sink` as the output layout writes it (or not, if it drops it)."""
        item = self.boxed[token]
        if item is not None:
            sink.append(item)

    def _encode_heap(self, size: i64, out: list[int]) -> None:
        """`encode` for a chunk of HEAP_CHUNK symbols or more, once `_read` has read it: a linked
        list and a heap of rank << shift | position, shift the bits a position takes (stale keys, whose position's pair
        has changed, are skipped)."""
        if len(self.following) < size:
            self.following = vec[i64]([0] * size)
            self.preceding = vec[i64]([0] * size)
            self.heap = vec[i64]([0] * (3 * size))
        parts = self.parts
        ranks = self.ranks
        following = self.following
        preceding = self.preceding
        heap = self.heap
        held: i64 = 0
        shift: i64 = 1
        while (1 << shift) < size:
            shift += 1
        positions: i64 = (1 << shift) - 1
        for index in range(size):
            following[index] = index + 1
            preceding[index] = index - 1
        following[size - 1] = -1
        for index in range(size - 1):
            rank = ranks[index]
            if rank != NO_RANK:
                sift_up(heap, held, (rank << shift) | index)
                held += 1
        ranks[size - 1] = NO_RANK
        while held > 0:
            key = heap[0]
            held -= 1
            sift_down(heap, held, heap[held])
            rank = key >> shift
            position = key & positions
            if ranks[position] != rank:
                continue  # stale: the pair starting here has changed since
            new_id = self.results[rank]
            second = following[position]
            after = following[second]
            parts[position] = new_id
            parts[second] = -1
            ranks[second] = NO_RANK
            following[position] = after
            ranks[position] = NO_RANK
            if after >= 0:
                preceding[after] = position
                rank = self.rank_of(new_id, parts[after])
                ranks[position] = rank
                if rank != NO_RANK:
                    sift_up(heap, held, (rank << shift) | position)
                    held += 1
            before = preceding[position]
            if before >= 0:
                rank = self.rank_of(parts[before], new_id)
                ranks[before] = rank
                if rank != NO_RANK:
                    sift_up(heap, held, (rank << shift) | before)
                    held += 1
        sink = cast(list[object], out)
        position = 0  # the first position is never merged away
        while position >= 0:
            self._put(sink, parts[position])
            position = following[position]


def recover_merges(tokens: list[bytes]) -> list[tuple[int, int]]:
    """The merge that makes each token, for tokens of two bytes or more given in rank order
    (tiktoken's files hold tokens and ranks, no merges): the pair its bytes end in when encoded
    with the merges recovered before it (ids: the bytes 0-255, then one per merge, in order), or
    (-1, -1) where they end in more than two parts (no merge sequence makes the token)."""
    short = ShortEncoder(256, [], [], [], len(tokens))
    pairs: list[tuple[int, int]] = []
    made: i64 = 0
    for index in range(len(tokens)):
        token = tokens[index]
        parts = short.encode(token, 0, len(token))
        if len(parts) == 2:
            short.add_merge(parts[0], parts[1], 256 + made)
            made += 1
            pairs.append((parts[0], parts[1]))
        else:
            pairs.append((-1, -1))
    return pairs
