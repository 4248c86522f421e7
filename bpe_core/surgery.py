"""Vocabulary surgery: `trim` makes a smaller tokenizer from a trained one, with compact ids.

Merged tokens are dropped four ways, in any combination: residue tokens (`bpe_core.residue`: made
on some files almost only as parts of longer tokens), tokens named by id or by text, tokens that
encoding some files makes fewer than a number of times, and the last-learned merges beyond a
vocabulary size. Residue goes first, and the tokens built on it stay, with merges found again
without it. Every merge built on a token dropped the other ways (as its left or right part, at
any depth) goes too, so what is left is a merge list that encodes on its own; a vocabulary closed under a
mirror (DNA: `reverse_complement: symmetric`) loses each token with its mirror partner, so it stays
closed (and mirrored overlap resolution keeps working). The result has training's id
layout: base symbols, the kept merges in rank order, then the special tokens (in their order,
first if they had the lowest ids, else last), then reserved padding ids only when asked for.
When only last-learned merges go, it is exactly the tokenizer that training to that size gives:
the same merges, merge counts, token usage and ids. `Trimmed.id_map` gives each kept token's new
id, for moving a model's embedding rows.

It does not re-encode or retrain: a count of uses is taken once, with the tokenizer as it was
(after dropping, encoding the same files again can use the remaining tokens differently). It does
not touch models. Imported vocabularies whose tokens are not all made by their merges (tokens
kept for decoding only, a whole-chunk lookup, merges that share results) are refused: training's
layout cannot hold them.
"""

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from bpe_core.errors import ArgumentError, BpeError, check_argument
from bpe_core.residue import DEFAULT_THRESHOLD, check_threshold, residue_tokens, token_usage, without_residue
from bpe_core.strands import token_mirror
from bpe_core.tokenizer import Tokenizer
from bpe_core.training import base_digest, lineage

ASKED = "asked"
BEYOND_VOCAB_SIZE = "beyond vocab_size"


class Trimmed(NamedTuple):
    """What `trim` returns: the trimmed tokenizer; the dropped tokens (their old ids, in rank order,
    each with why it went: "asked", "built on ID", "mirror partner of ID", "made N times on the
    files" or "beyond vocab_size"); and old id -> new id for every token kept (special tokens included), in new-id
    order."""

    tokenizer: Tokenizer
    dropped: dict[int, str]
    id_map: dict[int, int]


def trim(
    tokenizer: Tokenizer,
    *,
    vocab_size: int | None = None,
    drop: Iterable[int | str] = (),
    min_count: int | None = None,
    on: Sequence[str] = (),
    pad_to_multiple_of: int | None = None,
    residue: bool = False,
    threshold: float | None = None,
    workers: int | None = None,
) -> Trimmed:
    """A tokenizer with fewer merged tokens and compact ids (see the module docstring).

    `drop`: merged tokens by id (an int) or by text as `Tokenizer.token_text` shows it (a str; every
    merged token with that text). `min_count` with `on`: the merged tokens that encoding the files
    `on` (read as `bpe inspect --on` reads them) makes fewer than `min_count` times, counting each
    time a token is made, whether it stays in the output or is merged further (so a token used
    only inside longer ones is not dropped from under them; a part is made at least as often as
    what is built on it). `vocab_size`: then drop the last-learned merges left until there are at
    most this many ids, padding included. `pad_to_multiple_of`: reserve ids after all others so
    the size is a multiple of it (without it the result has no reserved ids). `residue` with `on`:
    first remove the residue tokens of encoding the files, those given on their own in fewer than
    `threshold` (default `bpe_core.residue.DEFAULT_THRESHOLD`) of the times they are made, keeping
    every longer token: its merge is found again without them (`bpe_core.residue` says how and
    why). Base symbols, special tokens and reserved ids are never dropped; naming one is an error.

    >>> trimmed, dropped, id_map = bpe_core.trim(tok, vocab_size=800)
    """
    check_argument(tokenizer, Tokenizer, "trim(tokenizer)", "a Tokenizer (bpe_core.load(path) reads one)")
    if isinstance(drop, (str, int)):
        raise ArgumentError(f"trim(drop): expected a list of ids or token texts, got one {type(drop).__name__}")
    if isinstance(on, (str, os.PathLike)):
        raise ArgumentError(f"trim(on): expected a list of paths, got one {type(on).__name__}")
    _check_renumberable(tokenizer)
    if min_count is not None and not on:
        raise BpeError("min_count needs the files to count on (on=[...])")
    check_argument(residue, bool, "trim(residue)", "True or False")
    if threshold is not None:
        check_argument(threshold, (int, float), "trim(threshold)", "a number from 0 to 1")
    if residue and not on:
        raise BpeError("residue needs the files to count on (on=[...])")
    if on and min_count is None and not residue:
        raise BpeError("files to count on are for min_count or residue; give one of them too")
    if threshold is not None and not residue:
        raise BpeError("threshold is for residue; give residue=True too")
    residue_threshold = check_threshold(DEFAULT_THRESHOLD if threshold is None else threshold)
    for key, value in (
        ("vocab_size", vocab_size),
        ("min_count", min_count),
        ("pad_to_multiple_of", pad_to_multiple_of),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise BpeError(f"{key}: expected a whole number, 0 or more, got {value!r}")
    if pad_to_multiple_of == 0:
        raise BpeError("pad_to_multiple_of: expected 1 or more, got 0")
    alphabet_size = tokenizer.alphabet_size
    merges = list(tokenizer.spec.internal_merges)
    internal_count = alphabet_size + len(merges)
    external = tokenizer.layout.ids
    asked = list(drop)

    why: dict[int, str] = {}  # internal id of a dropped token -> why it went
    named = _Names(tokenizer)
    for item in asked:
        for internal in named.merged_tokens(item):
            why.setdefault(internal, ASKED)
    sources: list[dict[str, Any]] = []
    residue_stage: dict[str, Any] = {}
    if on:
        usage_on = token_usage(tokenizer, on, workers)
        alone, within, sources = usage_on
        if residue:
            found = residue_tokens(tokenizer, usage_on, residue_threshold)
            # the tokens built on residue get other merges, so the ones dropped below follow the new trees
            merges, removed, kept_back = without_residue(tokenizer, found)
            for token in removed:
                made = alone[token] + within[token]
                why[token] = f"residue: made {made} time{'' if made == 1 else 's'} on the files, {alone[token]} alone"
            residue_stage = {"threshold": residue_threshold, "found": len(found), "kept_back": len(kept_back)}
        if min_count is not None:
            for token in range(alphabet_size, internal_count):
                made = alone[token] + within[token]
                if made < min_count:
                    why.setdefault(token, f"made {made} time{'' if made == 1 else 's'} on the files")
    mirror = _closed_mirror(tokenizer)
    growing = True
    while growing:  # a partner comes just before or after its token: repeat until nothing more goes
        growing = False
        for rank, (left, right) in enumerate(merges):  # parts come before what is built on them
            token = alphabet_size + rank
            if token in why:
                continue
            part = None
            if left in why:
                part = left
            elif right in why:
                part = right
            if part is not None:
                why[token] = f"built on {external[part]}"
            elif mirror is not None and mirror[token] in why:
                why[token] = f"mirror partner of {external[mirror[token]]}"
            growing = growing or token in why
    kept = [rank for rank in range(len(merges)) if alphabet_size + rank not in why]

    specials = sorted(tokenizer.special_tokens, key=tokenizer.special_ids.__getitem__)
    multiple = pad_to_multiple_of or 1
    if vocab_size is not None:
        minimum = alphabet_size + len(specials)
        room = vocab_size // multiple * multiple - minimum
        if room < 0:
            padded = f" (padded to a multiple of {multiple})" if multiple > 1 else ""
            raise BpeError(
                f"vocab_size: {vocab_size}{padded} is below the minimum {minimum} ({alphabet_size} base symbols + "
                f"{len(specials)} special tokens)"
            )
        # the last kept merges have nothing kept built on them: dropping them keeps the rest whole
        while (
            mirror is not None
            and 0 < room < len(kept)
            and mirror[alphabet_size + kept[room - 1]] > alphabet_size + kept[room - 1]
        ):
            room -= 1  # not the first of two partners without the second
        for rank in kept[room:]:
            why[alphabet_size + rank] = BEYOND_VOCAB_SIZE
        kept = kept[:room]

    new_internal = list(range(alphabet_size)) + [-1] * len(merges)
    for new_rank, rank in enumerate(kept):
        new_internal[alphabet_size + rank] = alphabet_size + new_rank
    new_merges = [(new_internal[merges[rank][0]], new_internal[merges[rank][1]]) for rank in kept]
    assert all(left >= 0 and right >= 0 for left, right in new_merges), "a kept merge lost a part"
    spec = tokenizer.spec
    usage = _usage_after(spec.token_usage, why, merges, alphabet_size)
    unpadded = alphabet_size + len(kept) + len(specials)
    position = tokenizer.special_position
    if specials:
        lowest_regular = min((token for token in external if token >= 0), default=0)
        position = "start" if max(tokenizer.special_ids.values()) < lowest_regular else "end"
    provenance = dict(spec.provenance)
    if usage:
        provenance["tokens"] = sum(usage)
    asked_for = {
        "vocab_size": vocab_size,
        "drop": asked,
        "min_count": min_count,
        "on": sources,
        "pad_to_multiple_of": pad_to_multiple_of,
        **({"residue": residue_stage} if residue else {}),
    }
    stage = {
        "base": {"name": tokenizer.name, "sha256": base_digest(tokenizer), "vocab_size": tokenizer.vocab_size},
        "asked": asked_for,
        "dropped": len(why),
        "vocab_size": unpadded + (-unpadded % multiple),
    }
    provenance["lineage"] = [*lineage(tokenizer), {"trim": stage}]
    trimmed = Tokenizer(
        replace(
            spec,
            internal_merges=new_merges,
            merge_counts=[spec.merge_counts[rank] for rank in kept] if spec.merge_counts else [],
            merge_results=None,
            token_usage=[usage[token] for token in range(internal_count) if new_internal[token] >= 0] if usage else [],
            special_tokens=tuple(specials),
            special_position=position,
            padding=-unpadded % multiple,
            layout=None,
            provenance=provenance,
        )
    )
    id_map = {
        external[token]: trimmed.layout.ids[new_internal[token]]
        for token in range(internal_count)
        if new_internal[token] >= 0
    }
    id_map.update({tokenizer.special_ids[token]: trimmed.special_ids[token] for token in specials})
    return Trimmed(
        trimmed,
        {external[token]: why[token] for token in sorted(why)},
        dict(sorted(id_map.items(), key=lambda item: item[1])),
    )


class _Names:
    """Finds the merged tokens a `drop` item names; anything else it names is an error."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.internal_of = {token: internal for internal, token in enumerate(tokenizer.layout.ids)}
        self.by_text: dict[str, list[int]] | None = None  # made on the first text asked for

    def merged_tokens(self, item: int | str) -> list[int]:
        tokenizer = self.tokenizer
        special_of = {token_id: token for token, token_id in tokenizer.special_ids.items()}
        if isinstance(item, int) and not isinstance(item, bool):
            if item in special_of:
                raise BpeError(
                    f"cannot drop id {item}: it is the special token {special_of[item]!r}; trim drops merged tokens"
                )
            if item in tokenizer.reserved_ids:
                raise BpeError(f"cannot drop id {item}: it is a reserved padding id; trim drops merged tokens")
            internal = self.internal_of.get(item)
            if internal is None:
                raise BpeError(
                    f"cannot drop id {item}: the tokenizer has no such id (vocab_size {tokenizer.vocab_size})"
                )
            found = [internal]
        elif isinstance(item, str):
            if item in tokenizer.special_ids:
                raise BpeError(f"cannot drop {item!r}: it is a special token; trim drops merged tokens")
            if self.by_text is None:
                self.by_text = {}
                for internal, token in enumerate(tokenizer.layout.ids):
                    self.by_text.setdefault(tokenizer.token_text(token), []).append(internal)
            found = self.by_text.get(item, [])
            if not found:
                raise BpeError(
                    f"cannot drop {item!r}: no token has this text (tokens are named as token_text and "
                    "`bpe encode --format tokens` show them, or by id)"
                )
        else:
            raise BpeError(f"cannot drop {item!r}: give a token id (int) or a token's text (str)")
        base = [internal for internal in found if internal < tokenizer.alphabet_size]
        if base:
            token = tokenizer.layout.ids[base[0]]
            raise BpeError(
                f"cannot drop {tokenizer.token_text(token)!r} (id {token}): it is a base symbol, and base symbols "
                "are never dropped (every input must stay encodable)"
            )
        return found


def _closed_mirror(tokenizer: Tokenizer) -> list[int] | None:
    """The mirror on every internal token when the pretokenizer has one (DNA with
    reverse_complement: symmetric) and the vocabulary is closed under it, so trim keeps it closed;
    else None."""
    try:
        return token_mirror(tokenizer.pretokenizer, tokenizer.alphabet_size, list(tokenizer.spec.internal_merges))
    except BpeError:
        return None  # not closed (a vocabulary trained without the mirror): nothing to keep


def _check_renumberable(tokenizer: Tokenizer) -> None:
    """A BpeError saying why when the tokens are not exactly base symbols plus one per merge."""
    spec = tokenizer.spec
    layout = tokenizer.layout
    alphabet_size = tokenizer.alphabet_size
    problems = []
    fresh = list(range(alphabet_size, alphabet_size + len(spec.internal_merges)))
    if spec.merge_results is not None and spec.merge_results != fresh:
        problems.append("some merges make a token another merge already made")
    if layout.orphans:
        problems.append(f"{len(layout.orphans)} of its tokens are made by no merge (kept for decoding only)")
    if layout.whole_chunks:
        problems.append("it looks whole chunks up before merging (Hugging Face's ignore_merges)")
    missing = sum(1 for token in layout.ids[:alphabet_size] if token < 0)
    if missing:
        problems.append(f"{missing} base symbols have no id of their own")
    if problems:
        raise BpeError(
            f"cannot trim {tokenizer.name!r}, an imported vocabulary that training's id layout cannot hold: "
            + "; ".join(problems)
        )


def _usage_after(
    usage: list[int], dropped: dict[int, str], merges: list[tuple[int, int]], alphabet_size: int
) -> list[int]:
    """The training data's token usage with each dropped token counted as its two parts (down to
    kept tokens): exactly training's usage at the smaller size when only last-learned merges go,
    since the merges after the cut only joined the tokens it had. Empty when none was recorded."""
    if not usage:
        return []
    counts = list(usage) + [0] * (alphabet_size + len(merges) - len(usage))
    for token in sorted(dropped, reverse=True):  # what is built on a token goes before it
        left, right = merges[token - alphabet_size]
        counts[left] += counts[token]
        counts[right] += counts[token]
        counts[token] = 0
    return counts
