"""Rank-ordered BPE encoding of chunks of symbol ids: the one place that chooses how a chunk is
read and which loop merges it.

Every loop merges the lowest-ranked pair first and the leftmost occurrence on ties, which
reproduces training exactly, so the choice changes the cost, never the ids (mirrored encoding,
opt-in, is the one exception: `mirror_overlaps`). The choice:

- a chunk with a mirror on the tokens: the bucket encoder (`buckets`), which alone knows mirrors;
- a chunk given as a list of symbol ids, for merges that each make a new id (`PairRanks.fresh`):
  the bucket encoder, whose cost follows the merges it makes; for an import's merges, which may
  reuse ids, the merge kernel (`kernel`: a scan for short chunks, a heap for longer ones);
- a chunk given as a byte range of a buffer (`encode_range`, `encode_ranges`: packed symbols, one
  byte each, a document's chunks with no Python object per chunk or symbol): the merge kernel,
  its sealed units read as tokens (`units`) when the caller declared units; from LONG_CHUNK
  symbols on, the bucket encoder, once the long ranges met have added up to as many symbols as
  there are merges (its buckets cost about that much to set up, so it is set up once the long
  chunks have paid for it), and at once from SWEEP_CHUNK symbols (a genome).

Repeated byte ranges are cached by their bytes (`range_cache`). Ids come out in the caller's
layout (`set_output_ids`). This module does not split documents into chunks or map chunks to symbols.
"""

from random import Random
from typing import Final, cast

from librt.strings import read_i32_le
from mypy_extensions import i64

from bpe_core.engine.encode.buckets import BucketEncoder
from bpe_core.engine.encode.kernel import MergeKernel
from bpe_core.engine.encode.pair_ranks import PairRanks
from bpe_core.engine.encode.range_cache import RangeCache
from bpe_core.engine.encode.units import UnitReader
from bpe_core.engine.tables import END_WIDTH

LONG_CHUNK: Final[i64] = 96
SWEEP_CHUNK: Final[i64] = 4096
PACKED_ID: Final[i64] = 4  # bytes of an id in packed merges
DEFAULT_CACHE_SIZE: Final = 1 << 18


class Encoder:
    """Applies merges by rank. `merges[r]` makes token id `alphabet_size + r` (or `results[r]`).

    >>> Encoder(3, [(0, 1), (3, 2)]).encode_symbols([0, 1, 2, 0])
    [4, 0]
    """

    alphabet_size: int
    table: PairRanks
    token_count: int  # merges that make a new id
    kernel: MergeKernel
    buckets: BucketEncoder | None
    units: UnitReader | None
    unit_roles: bytes  # see set_units
    cache_size: int
    range_cache: RangeCache | None
    output_ids: list[int]
    # [token]: the id it is written as, a Python int made once (None: the layout drops it), so
    # that encoding copies a reference per token instead of making an int
    boxed: list[object]
    mirrored: list[int]
    long_symbols: i64  # symbols of long byte ranges the kernel took while the buckets were not set up

    def __init__(
        self,
        alphabet_size: int,
        merges: list[tuple[int, int]] | bytes,
        cache_size: int = DEFAULT_CACHE_SIZE,
        results: list[int] | None = None,
    ) -> None:
        """`merges`: (left, right) pairs, or the same packed as little-endian 32-bit ids, two per
        merge (no Python object per merge). `results[r]`: the id merge r makes, when it is an
        existing token rather than the next new id (Hugging Face reuses the id when a merge makes
        a string it already has). A pair listed twice keeps its first rank."""
        self.alphabet_size = alphabet_size
        self.token_count = 0
        count: i64 = len(merges) if isinstance(merges, list) else len(merges) // (2 * PACKED_ID)
        table = PairRanks(alphabet_size, count)
        self.table = table
        for rank in range(count):
            if isinstance(merges, list):
                left, right = merges[rank]
                self._add(rank, left, right, results)
            else:
                first = 2 * PACKED_ID * rank
                left_id = i64(read_i32_le(merges, first))
                self._add(rank, left_id, i64(read_i32_le(merges, first + PACKED_ID)), results)
        self.kernel = MergeKernel(self.table)
        self.buckets = None
        self.units = None
        self.unit_roles = b""
        self.cache_size = cache_size
        self.range_cache = None
        self.mirrored = []
        self.long_symbols = 0
        self.set_output_ids([])

    def _add(self, rank: i64, left: i64, right: i64, results: list[int] | None) -> None:
        bound = self.alphabet_size + self.token_count
        if left < 0 or right < 0 or left >= bound or right >= bound:
            raise ValueError(f"merge {rank} ({left}, {right}) uses an id that does not exist yet")
        result: i64 = bound if results is None or results[rank] < 0 else results[rank]
        if result > bound:
            raise ValueError(f"merge {rank} makes id {result}, beyond the next new id {bound}")
        if result == bound:
            self.token_count += 1
        self.table.add(left, right, result)

    def merge_pairs(self) -> list[tuple[int, int]]:
        """Each merge's (left, right), in rank order."""
        return self.table.pairs()

    def merge_results(self) -> list[int]:
        """The id each merge makes, in rank order."""
        results = self.table.results
        return [int(results[rank]) for rank in range(self.table.size())]

    def rank_of(self, left: int, right: int) -> int:
        """The rank of the merge of (left, right), 1 << 60 if there is none."""
        return self.table.rank_of(left, right)

    def set_output_ids(self, output_ids: list[int]) -> None:
        """Make encoding write `output_ids[token]` instead of token (a tokenizer's own id layout);
        -1 drops the token. An empty list means ids as they are."""
        self.output_ids = list(output_ids)
        if not output_ids:
            self.boxed = list(range(self.alphabet_size + self.table.size() + 1))
        elif min(output_ids) >= 0:  # no token dropped: the list itself (one list fewer for the garbage collector)
            self.boxed = cast(list[object], self.output_ids)
        else:
            self.boxed = [None if out < 0 else out for out in output_ids]
        self._forget()

    def _forget(self) -> None:
        """Drop every cached encoding (the output layout or the rules changed)."""
        self.range_cache = None

    def mirror_overlaps(self, token_mirror: list[int]) -> None:
        """Mirrored encoding (opt-in; Hugging Face and tiktoken have no such rule): for merges in
        mirror-partner order, `token_mirror` the mirror on every token id (`mirror_tokens`), a
        merge and its partner are one step and overlapping occurrences are resolved so that a
        chunk's mirror image (reversed, each symbol mirrored) tokenizes as the mirror image of its
        tokenization, always (`BucketEncoder.set_mirror` says how)."""
        if not self.table.fresh or len(token_mirror) != self.alphabet_size + self.table.size():
            raise ValueError("mirrored encoding needs merges that each create a new id, and a mirror on every token")
        buckets = BucketEncoder(self.table)
        buckets.set_mirror(token_mirror)  # checks the mirror's partner order
        self.buckets = buckets
        self.mirrored = list(token_mirror)
        self._forget()

    def _buckets(self) -> BucketEncoder:
        """The bucket encoder, set up on first use."""
        buckets = self.buckets
        if buckets is None:
            buckets = BucketEncoder(self.table)
            self.buckets = buckets
        return buckets

    def encode_symbols(self, symbols: list[int]) -> list[int]:
        """Token ids for one chunk given as base symbol ids."""
        if self.mirrored or self.table.fresh:
            return self._buckets().encode(symbols)
        return self.kernel.encode_list(symbols)

    def encode_symbols_dropout(self, symbols: list[int], dropout: float, rng: Random) -> list[int]:
        """BPE-dropout over one chunk (`kernel` says how); dropout 0 gives `encode_symbols`."""
        kernel = self.kernel
        count = kernel.read_list(symbols)
        return kernel.tokens(kernel.scan(kernel.parts, kernel.ranks, count, None, -1, -1, False, dropout, rng))

    def to_output(self, ids: list[int]) -> list[int]:
        """ids in the output layout (see set_output_ids)."""
        if len(self.output_ids) == 0:
            return ids
        output_ids = self.output_ids
        result: list[int] = []
        for token in ids:
            mapped = output_ids[token]
            if mapped >= 0:
                result.append(mapped)
        return result

    def set_units(self, roles: bytes) -> None:
        """Each symbol's role in units (`roles`, one per symbol, the values of
        `unit_sides.PLAIN`, `CONTINUES` and `STARTS`; for UTF-8, a character of three or four
        bytes is a unit): a unit that always becomes one token is read as that token, the same
        ids with fewer merges (see `units`). Empty: no units."""
        if roles != self.unit_roles:
            self.unit_roles = roles
            self.units = None
            self._forget()  # built again, with the units, by prepare_ranges

    def prepare_ranges(self) -> None:
        """Build what `encode_range` uses (done on its first call too): call it before forking
        workers, so they share it instead of each building its own."""
        if self.range_cache is not None:
            return
        if self.alphabet_size > 256:
            raise ValueError(f"packed chunks hold one byte per symbol; this alphabet has {self.alphabet_size}")
        self.range_cache = RangeCache(self.cache_size)
        if self.unit_roles and self.units is None and self.table.fresh:
            self.units = UnitReader(self.unit_roles, self.kernel)

    def encode_documents(self, data: bytes, ends: bytes, documents: list[int], cache_long: bool) -> list[list[int]]:
        """Each document's ids (output layout) in packed chunks: chunk k ends at the offset `ends`
        holds at END_WIDTH * k (`tables.END_WIDTH`), the first at 0, and `documents[d]` is how
        many chunks documents 0..d hold together (`encode_ranges` each)."""
        results: list[list[int]] = []
        start: i64 = 0
        first: i64 = 0
        for last in documents:
            ids: list[int] = []
            start = self.encode_ranges(data, ends, first, last, start, ids, cache_long)
            results.append(ids)
            first = last
        return results

    def encode_ranges(
        self, data: bytes, ends: bytes, first: i64, last: i64, start: i64, out: list[int], cache_long: bool
    ) -> i64:
        """Extend `out` with the ids (output layout) of chunks first..last - 1 of packed chunks:
        chunk k ends at the offset `ends` holds at END_WIDTH * k (`tables.END_WIDTH`), and chunk
        `first` starts at `start` (where the one before ends). Gives where the last one ends.
        Each chunk as `encode_range` encodes it (the cache asked here: no call more per chunk)."""
        self.prepare_ranges()
        cache = self.range_cache
        assert cache is not None
        longest_cached: i64 = 1 << 62 if cache_long else LONG_CHUNK - 1
        for chunk in range(first, last):
            end = i64(read_i32_le(ends, END_WIDTH * chunk))
            if end - start > longest_cached:
                self._encode_into(data, start, end, out)
            elif not cache.extend_found(data, start, end, out):
                begin = len(out)
                self._encode_into(data, start, end, out)
                cache.add(data, start, end, out, begin)
            start = end
        return start

    def encode_range(self, data: bytes, start: i64, end: i64, out: list[int], cache_long: bool = True) -> None:
        """Extend `out` with the ids (output layout) of the chunk data[start:end], its symbol ids
        one byte each, through a cache keyed by those bytes. `cache_long=False` keeps chunks of
        LONG_CHUNK symbols and more out of it, for callers whose long chunks rarely come again
        (reads, genomes; text's long chunks, runs of spaces or rules, do repeat). `data` must
        hold 8 readable bytes past `end`."""
        cache = self.range_cache
        if cache is None:
            self.prepare_ranges()
            cache = self.range_cache
            assert cache is not None
        if end - start >= LONG_CHUNK and not cache_long:
            self._encode_into(data, start, end, out)
        elif not cache.extend_found(data, start, end, out):
            begin = len(out)
            self._encode_into(data, start, end, out)
            cache.add(data, start, end, out, begin)

    def encode_uncached(self, data: bytes, start: i64, end: i64) -> list[int]:
        """The ids (output layout) of the chunk data[start:end], one symbol id per byte, found
        without the cache."""
        if self.range_cache is None:
            self.prepare_ranges()
        ids: list[int] = []
        self._encode_into(data, start, end, ids)
        return ids

    def _encode_into(self, data: bytes, start: i64, end: i64, out: list[int]) -> None:
        """Append the ids (output layout) of a chunk given as bytes, one symbol id each, read and
        merged as the module docstring says."""
        size = end - start
        if size <= 0:
            return
        if self.mirrored or (size >= LONG_CHUNK and self.table.fresh and not self._renting(size)):
            out.extend(self.to_output(self._buckets().encode_bytes(data, start, end)))
            return
        kernel = self.kernel
        kernel.room(size)
        units = self.units
        if units is not None and units.first_start < 256 and units.wanted(data, start, end):
            count = units.read(kernel, data, start, size)
        else:
            count = kernel.read_bytes(data, start, size)
        kernel.write(kernel.merge(count), self.boxed, out)

    def _renting(self, length: i64) -> bool:
        """Whether a long byte range of `length` symbols goes to the kernel because the bucket
        encoder is not set up yet and the long ranges so far (this one included) have not yet
        added up to as many symbols as there are merges. From SWEEP_CHUNK symbols on (a genome)
        it is set up at once."""
        if self.buckets is not None or length >= SWEEP_CHUNK:
            return False
        self.long_symbols += length
        return self.long_symbols < self.table.size()
