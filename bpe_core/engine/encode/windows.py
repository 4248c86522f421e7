"""A long chunk's encoding from the encodings of overlapping windows of it, exactly.

A token sequence is a chunk's encoding when it spells the chunk, each token encodes as itself,
and each two neighbours are neighbours in the encoding of some text. Such neighbours are a pair
that merging their concatenation gives again, and merges in rank order (leftmost first) restricted
to the chunk's span of two neighbours proceed as they would on the two alone, so no merge of the
whole chunk can cross their boundary. Where two overlapping windows cut at the same place with
the same token on either side, the first window's tokens up to there and the second's from there
keep every neighbour pair from one window's encoding.

A window that finds no such junction with the one before starts further back (twice the overlap);
one that cannot (it starts at the first undecided token already) leaves the chunk to be encoded
whole. Runs that never agree (a long run of one symbol whose windows start at different phases)
therefore cost time, never exactness. This module does not know how a window is encoded.
"""

from collections.abc import Callable

from librt.vecs import vec
from mypy_extensions import i32, i64


def encode_joined(
    source: vec[i32],
    window: i64,
    overlap: i64,
    encode_window: Callable[[vec[i32], i64, i64], tuple[vec[i64], vec[i64]]],
    encode_whole: Callable[[vec[i32]], list[int]],
) -> tuple[list[int], i64]:
    """The encoding of the whole of `source`, window by window of `window` symbols that share
    `overlap` (fewer than `window`), and how many junctions joined them. `encode_window(source,
    start, end)` gives the tokens of source[start:end] and where each starts in source, then end."""
    size: i64 = len(source)
    result: list[int] = []
    end = min(size, window)
    tokens, starts = encode_window(source, 0, end)
    taken: i64 = 0  # tokens[:taken] are in result; the rest are undecided
    junctions: i64 = 0
    while end < size:
        shared = overlap
        while True:
            next_start = max(starts[taken], end - shared)
            next_end = min(size, max(end + 1, next_start + window))
            next_tokens, next_starts = encode_window(source, next_start, next_end)
            mine, theirs = junction(tokens, starts, taken, next_tokens, next_starts)
            if mine >= 0:
                break
            if next_start == starts[taken]:
                return encode_whole(source), junctions
            shared *= 2
        junctions += 1
        for index in range(taken, mine + 1):
            result.append(tokens[index])
        tokens = next_tokens
        starts = next_starts
        taken = theirs + 1
        end = next_end
    for index in range(taken, len(tokens)):
        result.append(tokens[index])
    return result, junctions


def junction(
    tokens: vec[i64], starts: vec[i64], taken: i64, next_tokens: vec[i64], next_starts: vec[i64]
) -> tuple[i64, i64]:
    """The first (i, j), i >= taken, where tokens[i] and tokens[i + 1] are next_tokens[j] and
    next_tokens[j + 1] at the same place; (-1, -1) if there is none."""
    mine = taken
    theirs: i64 = 0
    while mine + 1 < len(tokens) and theirs + 1 < len(next_tokens):
        cut = starts[mine + 1]
        other_cut = next_starts[theirs + 1]
        if cut < other_cut:
            mine += 1
        elif other_cut < cut:
            theirs += 1
        elif tokens[mine] == next_tokens[theirs] and tokens[mine + 1] == next_tokens[theirs + 1]:
            return mine, theirs
        else:
            mine += 1
            theirs += 1
    return -1, -1
