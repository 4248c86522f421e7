"""Rank-ordered BPE encoding of one chunk of symbol ids, and decoding back to base symbols.

Chunks go to `long_encoder`, which costs the merges it makes (a genome, but also a word or a read:
it was 1.5x faster than the heap encoder on a text corpus's unique words, 3-4x on DNA reads). Merge
lists where two merges make one token (imports) need rank order apart from creation order, and go
to the quadratic scan tiktoken uses (short chunks) or a linked list with a heap of (rank,
position), O(n log n). All merge the lowest-ranked pair first and the leftmost occurrence on ties,
which reproduces training exactly (`mirror_overlaps` opts into mirrored encoding instead). A
bounded cache maps repeated chunks (any hashable the caller chooses, such as the chunk's text) to
their ids. Chunks given as byte ranges of a buffer (`encode_range`: packed symbols, one byte each)
are encoded without a Python object per symbol (`short_encoder`) and cached by their bytes
(`range_cache`; long ones if the caller asks), so a document's chunks need no Python object each
either. Byte ranges of LONG_CHUNK symbols and more go to the short encoder's heap until they add up
to as many symbols as there are merges: the whole-chunk encoder's table costs about that much to
build (for o200k_base a fifth of encoding a megabyte of Japanese, whose few long chunks it then
encoded in a thirtieth of that), so it is built once the long chunks have paid for it, as a renter
buys once the rent reaches the price.

This module does not split documents into chunks or map chunks to symbols.
"""

import heapq
from random import Random
from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i64

from bpe_core.engine.long_encoder import LongEncoder
from bpe_core.engine.range_cache import RangeCache
from bpe_core.engine.short_encoder import ShortEncoder

NO_RANK: Final = 1 << 60
LONG_CHUNK: Final = 96
SWEEP_CHUNK: Final = 4096  # byte ranges from this length build the whole-chunk encoder at once (a genome)
DEFAULT_CACHE_SIZE: Final = 1 << 18


class Encoder:
    """Applies merges by rank. `merges[r]` creates token id `alphabet_size + r`.

    >>> Encoder(3, [(0, 1), (3, 2)]).encode_symbols([0, 1, 2, 0])
    [4, 0]
    """

    alphabet_size: int
    id_bound: int
    merge_rank: dict[int, int]
    merge_result: list[int]
    # each merge's pair, kept as two vecs (see `merge_pairs`)
    merge_left: vec[i64]
    merge_right: vec[i64]
    token_count: int
    cache: dict[object, list[int]]
    cache_size: int
    output_ids: list[int]
    long_encoder: LongEncoder | None
    short_encoder: ShortEncoder | None
    range_cache: RangeCache | None
    mirrored: list[int]
    long_symbols: int  # symbols of long byte ranges the short encoder took since the merges changed
    unit_roles: bytes  # see set_units

    def __init__(
        self,
        alphabet_size: int,
        merges: list[tuple[int, int]],
        cache_size: int = DEFAULT_CACHE_SIZE,
        results: list[int] | None = None,
    ) -> None:
        """`results[r]`: the id merge r creates, when it is an existing token rather than the next
        new id (Hugging Face reuses the id when a merge makes a string it already has). A pair
        listed twice keeps its first rank."""
        self.alphabet_size = alphabet_size
        self.id_bound = alphabet_size + len(merges) + 1
        self.merge_rank = {}
        self.merge_result = []
        self.merge_left = vec[i64]()
        self.merge_right = vec[i64]()
        self.token_count = 0
        self.cache = {}
        self.cache_size = cache_size
        self.output_ids = []
        self.long_encoder = None
        self.short_encoder = None
        self.range_cache = None
        self.mirrored = []
        self.long_symbols = 0
        self.unit_roles = b""
        for rank in range(len(merges)):
            self._append_merge(merges[rank][0], merges[rank][1], -1 if results is None else results[rank])

    def _append_merge(self, left: int, right: int, result: int) -> None:
        """Append a merge (lowest priority so far) that makes `result`, if it names an existing
        token, else the next new id."""
        rank = len(self.merge_result)
        bound = self.alphabet_size + self.token_count
        if left < 0 or right < 0 or left >= bound or right >= bound:
            raise ValueError(f"merge {rank} ({left}, {right}) uses an id that does not exist yet")
        if result < 0 or result == bound:
            result = bound
            self.token_count += 1
        elif result > bound:
            raise ValueError(f"merge {rank} creates id {result}, beyond the next new id {bound}")
        key = left * self.id_bound + right
        if key not in self.merge_rank:
            self.merge_rank[key] = rank
        self.merge_result.append(result)
        self.merge_left = append(self.merge_left, left)
        self.merge_right = append(self.merge_right, right)

    def merge_pairs(self) -> list[tuple[int, int]]:
        """Each merge's (left, right), in rank order, made on each call: kept as two vecs, which the
        garbage collector never visits, where a list of 200,000 tuples (o200k_base) cost every full
        collection of the caller's process about 10 ms."""
        left = self.merge_left
        right = self.merge_right
        return [(int(left[rank]), int(right[rank])) for rank in range(len(left))]

    def _forget(self) -> None:
        """Drop every cached encoding and the encoders built from the merges (they changed)."""
        self.cache.clear()
        self.long_encoder = None
        self.short_encoder = None
        self.range_cache = None
        self.long_symbols = 0

    def rank_of(self, left: int, right: int) -> int:
        return self.merge_rank.get(left * self.id_bound + right, NO_RANK)

    def encode_symbols(self, symbols: list[int]) -> list[int]:
        """Token ids for one chunk given as base symbol ids."""
        if self._takes_whole():
            return self._long_encoder().encode(symbols)
        if len(symbols) >= LONG_CHUNK:
            return self._encode_long(symbols)
        return self._encode_short(symbols)

    def _takes_whole(self) -> bool:
        """Whether chunks go to the whole-chunk encoder (its merges each make a new id)."""
        return len(self.mirrored) > 0 or self._fresh_results()

    def _fresh_results(self) -> bool:
        """Whether every merge creates a new id (then rank order equals merge order)."""
        return self.token_count == len(self.merge_result)

    def _long_encoder(self) -> LongEncoder:
        """The whole-chunk encoder, built on first use (and after merges were added)."""
        encoder = self.long_encoder
        if encoder is None:
            encoder = self.long_encoder = LongEncoder(self.alphabet_size, self.merge_pairs())
            if self.mirrored:
                encoder.set_mirror(self.mirrored)
        return encoder

    def mirror_overlaps(self, token_mirror: list[int]) -> None:
        """Mirrored encoding (opt-in; Hugging Face and tiktoken have no such rule): for merges in
        mirror-partner order, `token_mirror` the mirror on every token id (`mirror_tokens`), a
        merge and its partner are one step and overlapping occurrences are resolved so that a
        chunk's mirror image (reversed, each symbol mirrored) tokenizes as the mirror image of its
        tokenization, always (`LongEncoder.set_mirror` says how). Every chunk then goes through
        the whole-chunk encoder."""
        if not self._fresh_results() or len(token_mirror) != self.alphabet_size + len(self.merge_result):
            raise ValueError("mirrored encoding needs merges that each create a new id, and a mirror on every token")
        self.mirrored = list(token_mirror)
        self._forget()
        try:
            self._long_encoder()  # checks the mirror's partner order now
        except ValueError:
            self.mirrored = []
            self._forget()
            raise

    def _encode_short(self, symbols: list[int]) -> list[int]:
        parts = list(symbols)
        if len(parts) < 2:
            return parts
        ranks: list[int] = []
        for index in range(len(parts) - 1):
            ranks.append(self.rank_of(parts[index], parts[index + 1]))
        while True:
            best_rank = NO_RANK
            best_index = -1
            for index in range(len(ranks)):
                if ranks[index] < best_rank:
                    best_rank = ranks[index]
                    best_index = index
            if best_index < 0:
                return parts
            new_id = self.merge_result[best_rank]
            parts[best_index] = new_id
            del parts[best_index + 1]
            del ranks[best_index]
            if best_index < len(ranks):
                ranks[best_index] = self.rank_of(new_id, parts[best_index + 1])
            if best_index > 0:
                ranks[best_index - 1] = self.rank_of(parts[best_index - 1], new_id)

    def _encode_long(self, symbols: list[int]) -> list[int]:
        size = len(symbols)
        if size < 2:
            return list(symbols)
        sym = list(symbols)
        nxt: list[int] = [index + 1 for index in range(size)]
        nxt[size - 1] = -1
        prv: list[int] = [index - 1 for index in range(size)]
        rank_at: list[int] = [NO_RANK] * size
        heap: list[int] = []
        for index in range(size - 1):
            rank = self.rank_of(sym[index], sym[index + 1])
            rank_at[index] = rank
            if rank != NO_RANK:
                heap.append(rank * size + index)
        heapq.heapify(heap)
        while len(heap) > 0:
            key = heapq.heappop(heap)
            rank = key // size
            position = key - rank * size
            if rank_at[position] != rank:
                continue
            new_id = self.merge_result[rank]
            second = nxt[position]
            after = nxt[second]
            sym[position] = new_id
            sym[second] = -1
            rank_at[second] = NO_RANK
            nxt[position] = after
            if after >= 0:
                prv[after] = position
                rank = self.rank_of(new_id, sym[after])
                rank_at[position] = rank
                if rank != NO_RANK:
                    heapq.heappush(heap, rank * size + position)
            else:
                rank_at[position] = NO_RANK
            before = prv[position]
            if before >= 0:
                rank = self.rank_of(sym[before], new_id)
                rank_at[before] = rank
                if rank != NO_RANK:
                    heapq.heappush(heap, rank * size + before)
        result: list[int] = []
        position = 0
        while position >= 0:
            result.append(sym[position])
            position = nxt[position]
        return result

    def encode_symbols_dropout(self, symbols: list[int], dropout: float, rng: Random) -> list[int]:
        """BPE-dropout (Provilkov et al., 2020): each candidate merge is skipped with probability
        `dropout`, trying candidates best first; the chunk is done when every candidate was
        skipped. With dropout 0 this is exactly `encode_symbols`."""
        parts = list(symbols)
        while len(parts) > 1:
            candidates: list[tuple[int, int]] = []
            for index in range(len(parts) - 1):
                rank = self.rank_of(parts[index], parts[index + 1])
                if rank != NO_RANK:
                    candidates.append((rank, index))
            candidates.sort()
            chosen = -1
            for candidate in candidates:
                if rng.random() >= dropout:
                    chosen = candidate[1]
                    break
            if chosen < 0:
                break
            parts[chosen] = self.merge_result[self.rank_of(parts[chosen], parts[chosen + 1])]
            del parts[chosen + 1]
        return parts

    def set_output_ids(self, output_ids: list[int]) -> None:
        """Make the cached encoders return `output_ids[token]` instead of token (a tokenizer's own
        id layout); -1 drops the token. An empty list means ids as they are."""
        self.output_ids = list(output_ids)
        self._forget()

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

    def cached(self, chunk: object) -> list[int] | None:
        """The ids remembered for `chunk`, or None."""
        return self.cache.get(chunk)

    def remember(self, chunk: object, ids: list[int]) -> None:
        """Remember ids for a chunk; the cache is emptied when full, which bounds its memory."""
        if len(self.cache) >= self.cache_size:
            self.cache.clear()
        self.cache[chunk] = ids

    def encode_utf8_chunks(self, chunks: list[str]) -> list[int]:
        """Ids (in the output layout) for text chunks over a byte alphabet (symbol id = byte
        value), with the cache."""
        result: list[int] = []
        cache = self.cache
        for chunk in chunks:
            ids = cache.get(chunk)
            if ids is None:
                data = chunk.encode("utf-8", "surrogatepass")
                ids = []
                self._encode_into(data, 0, len(data), ids)
                self.remember(chunk, ids)
            result.extend(ids)
        return result

    def prepare_ranges(self) -> None:
        """Build what `encode_range` uses (done on its first call too): call it before forking
        workers, so they share it instead of each building its own."""
        if self.alphabet_size > 256:
            raise ValueError(f"packed chunks hold one byte per symbol; this alphabet has {self.alphabet_size}")
        if self.range_cache is None:
            self.range_cache = RangeCache(self.cache_size)
        self._short()

    def set_units(self, roles: bytes) -> None:
        """Symbols that start a unit and symbols that continue it (`roles`, one per symbol: for
        UTF-8, a character of three or four bytes is a unit): a unit that always becomes one
        token is read as that token, the same ids with fewer merges (see `short_encoder`)."""
        if roles != self.unit_roles:
            self.unit_roles = roles
            self.short_encoder = None

    def encode_range(self, data: bytes, start: i64, end: i64, out: list[int], cache_long: bool = True) -> None:
        """Extend `out` with the ids (output layout) of the chunk data[start:end], its symbol ids
        one byte each, through a cache keyed by those bytes. `cache_long=False` keeps chunks of
        LONG_CHUNK symbols and more out of it, for callers whose long chunks rarely come again
        (reads, genomes: looking them up and adding them cost a third of encoding 10,000 reads;
        text's long chunks, runs of spaces or rules, do repeat). `data` must hold 8 readable
        bytes past `end` (pad it with `chunk_counts.PADDING`)."""
        cache = self.range_cache
        if cache is None:
            self.prepare_ranges()
            cache = self.range_cache
            assert cache is not None
        if not cache_long and end - start >= LONG_CHUNK:
            self._encode_into(data, start, end, out)
        elif not cache.extend_found(data, start, end, out):
            begin = len(out)
            self._encode_into(data, start, end, out)
            cache.add(data, start, end, out, begin)

    def _short(self) -> ShortEncoder:
        encoder = self.short_encoder
        if encoder is None:
            encoder = self.short_encoder = ShortEncoder(
                self.alphabet_size,
                self.merge_pairs(),
                self.merge_result,
                self.output_ids,
                roles=self.unit_roles,
            )
        return encoder

    def _encode_into(self, data: bytes, start: i64, end: i64, out: list[int]) -> None:
        """Append the ids (output layout) of a chunk given as bytes, one symbol id each: the short
        encoder for short chunks, for any chunk of merges that reuse ids (imports) and for long
        chunks while `_renting`, the whole-chunk encoder for other long chunks and for mirrored
        encoding."""
        if not self.mirrored and (end - start < LONG_CHUNK or not self._fresh_results() or self._renting(end - start)):
            self._short().encode_into(data, start, end, out)
        else:
            out.extend(self.to_output(self._long_encoder().encode_bytes(data, start, end)))

    def _renting(self, length: int) -> bool:
        """Whether a long byte range of `length` symbols goes to the short encoder's heap because
        the whole-chunk encoder is not built yet and the long ranges so far (this one included)
        have not yet added up to as many symbols as there are merges (see the module docstring).
        From SWEEP_CHUNK symbols on (a genome) it is built at once."""
        if self.long_encoder is not None or length >= SWEEP_CHUNK:
            return False
        self.long_symbols += length
        return self.long_symbols < len(self.merge_result)


class Decoder:
    """Expands token ids to base symbol ids."""

    alphabet_size: int
    left: vec[i64]  # vecs, not lists: the garbage collector never visits them
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
