"""Residue: merged tokens that encoding some files almost never gives on their own, because a later
merge absorbs them; and the merges of a vocabulary without them.

BPE keeps every token it makes, also the steps towards longer ones ("entucky" on the way to
"Kentucky"). The measure is LiteToken's (Sun et al. 2026, arXiv 2602.04706) final/intermediate
ratio: encode the files, count for each merged token how often it is output on its own (`alone`)
and how often it is made as a part of a longer output token (`within`, once per place in that
token's merge tree); a token is residue when alone < R x (alone + within). Picky BPE's
intersection over self (Chizhov et al., EMNLP 2024) is the same ratio taken per merge, with the
training data's pair counts, at the moment the merge is learned: a test for training (a
`trainer.residue` option, not this module), while a finished vocabulary is judged by what encoding does with it, and
LiteToken's measure is that, summed over every longer token a token is a part of. A threshold of
R is Picky BPE's tau = 1 - R. Base symbols and special tokens are never residue, and neither is a
token the files never make (no evidence either way).

Removal keeps the longer tokens and exact exports. The layouts that Hugging Face and tiktoken
files hold (and training's) give every token of a merge an id, so a residue token cannot stay as
an id-less step inside the merges (LiteToken masks it instead). The vocabulary without the residue
is taken as a ranked list of symbol strings, as tiktoken sees it, and each kept token's merge is
found again the way a `.tiktoken` import finds it: the pair its symbols end in when encoded with
the merges of lower rank. A token built on a residue token gets another pair ("Kentucky" as
"Kent" + "ucky" once "entucky" goes). Residue tokens are tried one at a time; when some longer
token could no longer be made that way (its symbols would end in three pieces or more), the
residue token stays: a longer token is never lost for a residue token's sake. The result is
exactly the merge list an import of its own tiktoken export recovers, so exports stay exact, and
decoding is untouched, so encoding stays lossless.

This module counts and chooses; it does not renumber ids, drop other tokens or write files
(`bpe_core.surgery.trim` does, with `residue=True`). It does not retrain.
"""

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from bpe_core.contract import mirrored_overlaps
from bpe_core.corpus.streaming import corpus_reader, plain_pieces
from bpe_core.errors import ArgumentError, BpeError, check_argument
from bpe_core.strands import token_mirror
from bpe_core.tokenizer import Tokenizer

DEFAULT_THRESHOLD: Final = 0.1  # Picky BPE's tau = 0.9: given alone in fewer than 1 of 10 makings


class TokenUsage(NamedTuple):
    """How encoding some files used each internal token (base symbols, then merged tokens):
    `alone[i]` times as an output token, `within[i]` times as a part of a longer output token;
    and the files read (path, size, SHA-256)."""

    alone: list[int]
    within: list[int]
    sources: list[dict[str, Any]]


class Residue(NamedTuple):
    """A residue token's counts on the files (see `TokenUsage`)."""

    alone: int
    within: int


class Pruned(NamedTuple):
    """What `without_residue` returns, in internal ids: every merge (a removed token's own merge
    stays at its rank, for its parts; every kept token's merge is found again without the removed
    ones); the residue tokens removed, in rank order; and each residue token kept back -> a longer
    token that cannot be made without it (or its mirror partner, which is no residue)."""

    merges: list[tuple[int, int]]
    removed: list[int]
    kept_back: dict[int, int]


def check_threshold(threshold: object) -> float:
    """The threshold as a float from 0 to 1, or a BpeError saying what it must be."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise BpeError(
            f"threshold: expected a number from 0 to 1 (the share of makings given alone), got {threshold!r}"
        )
    return float(threshold)


def is_residue(alone: int, within: int, threshold: float) -> bool:
    """Whether a token made `alone + within` times is given alone in fewer than `threshold` of them."""
    return alone < threshold * (alone + within)


def token_usage(tokenizer: Tokenizer, paths: Sequence[str], workers: int | None = None) -> TokenUsage:
    """How encoding the files (read as `bpe inspect --on` reads them, special tokens' strings as
    plain text) uses each internal token. A token's merge tree is fixed, so each output token
    makes every token below it once per place in its tree."""
    reader = corpus_reader(tokenizer)
    output: Counter[int] = Counter()
    for ids, _ in plain_pieces(tokenizer, paths, workers, reader):
        output.update(ids)
    alphabet_size = tokenizer.alphabet_size
    merges = tokenizer.spec.internal_merges
    alone = [output.get(token, 0) for token in tokenizer.layout.ids]
    made = list(alone)
    for rank in range(len(merges) - 1, -1, -1):  # what is built on a token has a later rank
        left, right = merges[rank]
        made[left] += made[alphabet_size + rank]
        made[right] += made[alphabet_size + rank]
    within = [made[token] - alone[token] for token in range(len(made))]
    sources = [{"path": source.path, "size": source.size, "sha256": source.sha256} for source in reader.sources()]
    return TokenUsage(alone, within, sources)


def residue_tokens(tokenizer: Tokenizer, usage: TokenUsage, threshold: float = DEFAULT_THRESHOLD) -> list[int]:
    """The internal ids of the merged tokens that are residue by `usage`, in rank order."""
    check_argument(threshold, (int, float), "residue_tokens(threshold)", "a number from 0 to 1")
    threshold = check_threshold(threshold)
    return [
        token
        for token in range(tokenizer.alphabet_size, len(usage.alone))
        if is_residue(usage.alone[token], usage.within[token], threshold)
    ]


def find_residue(
    tokenizer: Tokenizer, on: Sequence[str], *, threshold: float = DEFAULT_THRESHOLD, workers: int | None = None
) -> dict[int, Residue]:
    """The residue tokens of encoding the files `on`: id -> its counts, in id order.

    >>> bpe_core.residue.find_residue(tok, ["held-back.txt"])
    """
    check_argument(tokenizer, Tokenizer, "find_residue(tokenizer)", "a Tokenizer (bpe_core.load(path) reads one)")
    if isinstance(on, (str, os.PathLike)):
        raise ArgumentError(f"find_residue(on): expected a list of paths, got one {type(on).__name__}")
    check_argument(threshold, (int, float), "find_residue(threshold)", "a number from 0 to 1")
    check_threshold(threshold)  # before the files are read
    usage = token_usage(tokenizer, on, workers)
    ids = tokenizer.layout.ids
    found = {
        ids[token]: Residue(usage.alone[token], usage.within[token])
        for token in residue_tokens(tokenizer, usage, threshold)
    }
    return dict(sorted(found.items()))


def without_residue(tokenizer: Tokenizer, residue: Iterable[int]) -> Pruned:
    """The merges without the residue tokens (internal ids) that can go (see the module
    docstring). Each residue token is tried alone, the last-learned first (the most specific
    ones, on which the fewest tokens are built): it goes when every kept token with its symbols
    inside is still made in two pieces without it, else it stays. With a vocabulary closed under
    a mirror (DNA), a token goes only with its mirror partner, both residue, so it stays closed."""
    asked = mirrored_overlaps(tokenizer.pretokenizer)
    if asked is not None:
        raise BpeError(
            f"pretokenizer {tokenizer.pretokenizer.name!r} resolves overlapping merges mirrored ({asked}); residue "
            "removal finds merges again by leftmost resolution, so it needs a vocabulary that uses it"
        )
    alphabet_size = tokenizer.alphabet_size
    merges = list(tokenizer.spec.internal_merges)
    strings = _symbol_strings(alphabet_size, merges)
    candidates = set(residue)
    try:
        mirror = token_mirror(tokenizer.pretokenizer, alphabet_size, merges)
    except BpeError:
        mirror = None  # not closed under its mirror: nothing to keep closed
    containing = _containing(alphabet_size, strings, candidates)
    pair_merge = {pair: (rank, alphabet_size + rank) for rank, pair in enumerate(merges)}
    removed: set[int] = set()
    kept_back: dict[int, int] = {}
    for token in sorted(candidates, reverse=True):
        if token in removed or token in kept_back:
            continue  # went or stayed with its mirror partner
        unit = [token]
        if mirror is not None and mirror[token] != token:
            if mirror[token] not in candidates:
                kept_back[token] = mirror[token]  # stays with its partner, which is no residue
                continue
            unit.append(mirror[token])
        affected = sorted({inner for part in unit for inner in containing[part]} - removed - set(unit))
        found, stranded = _found_without(alphabet_size, merges, strings, pair_merge, set(unit), affected)
        if stranded >= 0:
            for part in unit:
                kept_back[part] = stranded
            continue
        for part in unit:
            del pair_merge[merges[part - alphabet_size]]
            removed.add(part)
        for inner, pair in found.items():
            del pair_merge[merges[inner - alphabet_size]]
            merges[inner - alphabet_size] = pair
            pair_merge[pair] = (inner - alphabet_size, inner)
    return Pruned(merges, sorted(removed), dict(sorted(kept_back.items())))


def _symbol_strings(alphabet_size: int, merges: list[tuple[int, int]]) -> list[str]:
    """Each internal token's base symbols as a str (one character per symbol id), so that one
    token being a part of another is a substring test, for any alphabet."""
    strings = [chr(symbol) for symbol in range(alphabet_size)]
    for left, right in merges:  # parts come before what is built on them
        strings.append(strings[left] + strings[right])
    return strings


def _containing(alphabet_size: int, strings: list[str], candidates: set[int]) -> dict[int, list[int]]:
    """Each candidate -> the merged tokens with its symbols inside (only their merges can change
    when it goes: a token is made from tokens inside it), in rank order."""
    candidate_of = {strings[token]: token for token in candidates}
    longest = max((len(strings[token]) for token in candidates), default=0)
    containing: dict[int, list[int]] = {token: [] for token in candidates}
    for token in range(alphabet_size, len(strings)):
        whole = strings[token]
        for start in range(len(whole) - 1):
            for end in range(start + 2, min(len(whole) + (start > 0), start + longest + 1)):
                inner = candidate_of.get(whole[start:end])
                if inner is not None:
                    containing[inner].append(token)
    return containing


def _found_without(
    alphabet_size: int,
    merges: list[tuple[int, int]],
    strings: list[str],
    pair_merge: dict[tuple[int, int], tuple[int, int]],
    leaving: set[int],
    affected: list[int],
) -> tuple[dict[int, tuple[int, int]], int]:
    """The merge of each affected token (in rank order) found again from its symbols with the
    merges below it, `leaving` left out; and -1, or the first token that ends in more than two
    pieces (then the merges found so far)."""
    hidden = leaving | set(affected)  # their pairs as they were: gone, or found again below
    found: dict[tuple[int, int], tuple[int, int]] = {}  # new pair -> (rank, token)
    found_merges: dict[int, tuple[int, int]] = {}
    for token in affected:
        rank = token - alphabet_size
        pieces = [ord(symbol) for symbol in strings[token]]
        while len(pieces) > 1:
            best_rank = rank  # only the merges below its own: the engine needs a merge's parts made before it
            best_at = -1
            best_token = -1
            for at in range(len(pieces) - 1):
                pair = (pieces[at], pieces[at + 1])
                merge = found.get(pair) or pair_merge.get(pair)
                if merge is not None and merge[0] < best_rank and (merge[1] not in hidden or pair in found):
                    best_rank, best_token = merge
                    best_at = at
            if best_at < 0:
                break
            pieces[best_at : best_at + 2] = [best_token]
        if len(pieces) != 2:
            return found_merges, token
        pair = (pieces[0], pieces[1])
        found[pair] = (rank, token)
        found_merges[token] = pair
    return found_merges, -1
