"""The engine's encoder for a pretokenizer, and the mirror (DNA: the other strand)
on its tokens.

A pretokenizer with the `MirrorsSymbols` ability hands training an involution on its base symbols;
`token_mirror` extends it to the merged tokens (the merges must come in mirror-partner order, as a
mirrored run learns them). With `MirrorsOverlaps` it may also ask encoding to resolve overlapping
merges mirrored (`engine.Encoder.mirror_overlaps`); `make_encoder` builds the encoder that way when
asked. Both abilities are generic: this module knows no DNA. It does not train, split documents or
read files.
"""

from collections.abc import Sequence

from bpe_core.contract import MirrorsSymbols, Pretokenizer, mirrored_overlaps
from bpe_core.engine import Encoder, mirror_tokens
from bpe_core.errors import BpeError
from bpe_core.spec import PackedMerges


def symbol_mirror(pretokenizer: Pretokenizer) -> list[int] | None:
    """The pretokenizer's involution on base symbols, if it asks training for mirrored merges."""
    return pretokenizer.symbol_mirror() if isinstance(pretokenizer, MirrorsSymbols) else None


def token_mirror(pretokenizer: Pretokenizer, alphabet_size: int, merges: list[tuple[int, int]]) -> list[int] | None:
    """The mirror on every token (base symbols, then one per merge) when the pretokenizer has one
    and the merges are in partner order; None when it has none. A BpeError when the merges are not
    closed under it (a vocabulary not trained with the mirror)."""
    mirror = symbol_mirror(pretokenizer)
    if mirror is None:
        return None
    try:
        return mirror_tokens(mirror, alphabet_size, merges)
    except ValueError as problem:
        raise BpeError(
            f"pretokenizer {pretokenizer.name!r} mirrors its symbols, but the merges are not closed under the "
            f"mirror ({problem})"
        ) from None


def make_encoder(
    pretokenizer: Pretokenizer,
    alphabet_size: int,
    merges: Sequence[tuple[int, int]],
    results: list[int] | None,
) -> Encoder:
    """The engine's encoder for these merges (`results`: the token each makes, for imports), with
    mirrored overlap resolution when the pretokenizer asks for it. Packed merges reach the engine
    as they are."""
    engine_merges = merges.packed if isinstance(merges, PackedMerges) else list(merges)
    encoder = Encoder(alphabet_size, engine_merges, results=results)
    asked = mirrored_overlaps(pretokenizer)
    if asked is None:
        return encoder
    fresh = list(range(alphabet_size, alphabet_size + len(merges)))
    mirror = token_mirror(pretokenizer, alphabet_size, list(merges))
    if mirror is None or (results is not None and results != fresh):
        raise BpeError(
            f"pretokenizer {pretokenizer.name!r} ({asked}) needs a vocabulary trained with its mirror, each merge "
            "making a new token"
        )
    encoder.mirror_overlaps(mirror)
    return encoder


def refuse_mirrored_overlaps(pretokenizer: Pretokenizer, peer: str) -> None:
    """A BpeError saying why when the pretokenizer asks for mirrored overlap resolution: `peer`
    (Hugging Face, tiktoken) resolves overlapping merges leftmost and would give other ids."""
    asked = mirrored_overlaps(pretokenizer)
    if asked is not None:
        raise BpeError(
            f"pretokenizer {pretokenizer.name!r} resolves overlapping merges mirrored ({asked}), and {peer} "
            "resolves them leftmost, so the export would give other ids on runs such as AAA; export the "
            "same vocabulary with leftmost resolution (the default) instead"
        )
