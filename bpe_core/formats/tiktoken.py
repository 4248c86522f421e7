"""tiktoken's `.tiktoken` files (one "base64-token rank" per line): import and export.

Import recovers the merge list from the ranks: a token's merge is the pair its bytes end in when
encoded with the merges of lower rank. Ids stay tiktoken's ranks, also where single bytes are
not ranks 0-255 in byte order (cl100k_base). A token that no merge sequence produces is kept for
decoding and for the whole-chunk lookup tiktoken does first, and reported in
`tokenizer.provenance["unreachable_tokens"]`, never dropped.

The published vocabularies (r50k_base, p50k_base, cl100k_base, o200k_base) are recognised by the
SHA-256 of their content (plain or gzipped), the hashes tiktoken checks its downloads against, and
get tiktoken's pattern and special tokens; for cl100k_base and o200k_base the merges recovery
gives are shipped with the package (`formats.published`) and read instead. Any other file needs
its pattern: there is no default, because a wrong pattern gives plausible but different ids. This
module does not download.
"""

import base64
import binascii
import gzip
import hashlib
import os
import zlib
from array import array
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import Any, NamedTuple

from bpe_core.engine.encode.recover import UNRANKED, RankedTokens, read_ranked_lines, recover_merges
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, make_directory, read_file
from bpe_core.formats import published as published_merges
from bpe_core.formats.layout import MAX_ID
from bpe_core.plugins import registry
from bpe_core.spec import ComponentConfig, IdLayout, PackedMerges, TokenizerSpec, TokenizerView
from bpe_core.strands import refuse_mirrored_overlaps

NAMED_PATTERNS = ("gpt2", "cl100k", "o200k")

_ENDOFTEXT = "<|endoftext|>"
RANK_DIGITS = len(str(MAX_ID))


@dataclass(frozen=True)
class PublishedVocabulary:
    """A vocabulary OpenAI publishes, as tiktoken_ext/openai_public.py defines it."""

    name: str
    pattern: str  # one of NAMED_PATTERNS (r50k and p50k use GPT-2's)
    special_tokens: dict[str, int]


# SHA-256 of the uncompressed file -> what it is; the hashes tiktoken verifies its downloads with
PUBLISHED: dict[str, PublishedVocabulary] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": PublishedVocabulary(
        "r50k_base", "gpt2", {_ENDOFTEXT: 50256}
    ),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": PublishedVocabulary(
        "p50k_base", "gpt2", {_ENDOFTEXT: 50256}
    ),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": PublishedVocabulary(
        "cl100k_base",
        "cl100k",
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": PublishedVocabulary(
        "o200k_base", "o200k", {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018}
    ),
}


def _content(path: str) -> bytes:
    """A file's content (uncompressed, for .gz), or the error that names it."""
    return _unpacked(read_file(path, "tiktoken file"), path)


def _unpacked(stored: bytes, path: str) -> bytes:
    """A file's stored bytes, uncompressed when its name ends in .gz."""
    if not path.endswith(".gz"):
        return stored
    try:
        return gzip.decompress(stored)
    except (OSError, EOFError, zlib.error) as error:
        raise BpeError(f"cannot read {path}: {error}") from error


def content_sha256(path: str) -> str:
    """SHA-256 of a file's content (of the uncompressed content for .gz)."""
    return hashlib.sha256(_content(path)).hexdigest()


def published_vocabulary(path: str | os.PathLike[str]) -> PublishedVocabulary | None:
    """Which published vocabulary a .tiktoken file is (by content), or None."""
    return PUBLISHED.get(content_sha256(os.fspath(path)))


class Recognised(NamedTuple):
    """A `.tiktoken` file's content (uncompressed for .gz), its SHA-256 in hex, and which published
    vocabulary it is, if one."""

    content: bytes
    digest: str
    published: PublishedVocabulary | None


def recognised(stored: bytes, path: str) -> Recognised:
    """A file's content, hashed once (or the error that names it): what `spec_from_content` takes."""
    content = _unpacked(stored, path)
    digest = hashlib.sha256(content).hexdigest()
    return Recognised(content, digest, PUBLISHED.get(digest))


def ship_published(path: str, folder: str | None = None) -> str:
    """Recover the merges of a published vocabulary's `.tiktoken` file and write them where the
    package ships them (`formats.published`), or into `folder`; the path written."""
    content, _, published = recognised(read_file(path, "tiktoken file"), path)
    if published is None:
        raise BpeError(f"{path} is not one of the published tiktoken vocabularies")
    lines = read_ranked_lines(content.rstrip())
    recovered = _recovered_in_order(lines) if lines is not None and lines.in_order else None
    if lines is None or recovered is None:
        raise BpeError(f"{path}: the merges of a published vocabulary are recovered in one pass")
    return published_merges.ship(published.name, lines.byte_ranks, recovered[0], folder or published_merges.FOLDER)


def read_ranks(path: str) -> dict[bytes, int]:
    """token bytes -> rank, from a .tiktoken file (plain or .gz)."""
    return _ranks_of(_content(path), path)


def _ranks_of(data: bytes, path: str) -> dict[bytes, int]:
    """The ranks in a .tiktoken file's content, or the error that names `path` and the line."""
    ranks = _well_formed_ranks(data)
    if ranks is None:  # parsed again line by line, for the error that names the line
        ranks = _checked_ranks(data, path)
    if len(set(ranks.values())) != len(ranks):
        raise BpeError(f"{path}: two tokens share a rank")
    return ranks


def _well_formed_ranks(data: bytes) -> dict[bytes, int] | None:
    """The ranks, if every line is "base64-token rank" (blank lines only at the end) with no
    token twice; None otherwise. The common case, with no more work per line than it needs."""
    lines = data.rstrip().split(b"\n") if data.strip() else []
    ranks: dict[bytes, int] = {}
    decode = binascii.a2b_base64
    try:
        for line in lines:
            token, rank = line.split()
            if not rank.isdigit() or len(rank) > RANK_DIGITS:
                return None
            ranks[decode(token, strict_mode=True)] = int(rank)
    except ValueError:  # not two fields, or not base64 (binascii.Error)
        return None
    if len(ranks) != len(lines) or max(ranks.values(), default=0) > MAX_ID:
        return None
    return ranks


def _checked_ranks(data: bytes, path: str) -> dict[bytes, int]:
    """The ranks, or an error naming the first line that is not "base64-token rank"."""
    ranks: dict[bytes, int] = {}
    for line_number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise BpeError(f"{path}, line {line_number}: expected 'base64-token rank'")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except binascii.Error:
            raise BpeError(f"{path}, line {line_number}: expected 'base64-token rank'") from None
        # ASCII digits only (int() would take "+5", "1_0" and a 5,000-digit number)
        if not fields[1].isdigit() or len(fields[1]) > RANK_DIGITS or int(fields[1]) > MAX_ID:
            raise BpeError(
                f"{path}, line {line_number}: rank {fields[1][:20].decode('ascii', 'replace')!r} is not an "
                f"integer from 0 to {MAX_ID}"
            )
        if token in ranks:
            raise BpeError(f"{path}, line {line_number}: token {token!r} appears twice")
        ranks[token] = int(fields[1])
    return ranks


def named_pattern(pattern: str) -> str:
    """The pattern a name stands for: a published vocabulary's name (cl100k_base) is its pattern's
    (cl100k); a regex, or a pattern's own name, is itself. Read as a regex, such a name would match
    only itself, and every other text would encode to nothing."""
    return next((vocabulary.pattern for vocabulary in PUBLISHED.values() if vocabulary.name == pattern), pattern)


def pretokenizer_for(pattern: str) -> Any:
    """A built-in pattern by name, or a user regex."""
    if pattern in NAMED_PATTERNS:
        return registry().pretokenizer(pattern, {})
    return registry().pretokenizer("regex", {"pattern": pattern})


def spec_from_content(
    content: bytes,
    path: str,
    published: PublishedVocabulary | None,
    pattern: str | None = None,
    special_tokens: dict[str, int] | None = None,
    no_pattern: str = "",
) -> TokenizerSpec:
    """The spec in a `.tiktoken` file's content, as `recognised` gives it with the published
    vocabulary it is. `no_pattern` is what the error for a file that is not published and has no
    `pattern` says to do (default: give the pattern)."""
    shipped = published_merges.shipped_merges(published.name) if published is not None else None
    lines = None if shipped is not None else read_ranked_lines(content.rstrip())
    if lines is not None and not lines.in_order:
        lines = None  # ranks in another order: sorted by the reading below
    # a file whose ranks are its line numbers: the single bytes' ranks, and the count of tokens
    # (a published file whose merges are shipped is one, and is not read)
    in_order: tuple[list[int], int] | None = None
    if shipped is not None:
        in_order = shipped[0], 256 + len(shipped[1])
    elif lines is not None:
        in_order = lines.byte_ranks, lines.count
    # a file the one-pass reader gives up on is read line by line (whose errors name the line)
    ranks = _ranks_of(content, path) if in_order is None else {}
    if pattern is None:
        if published is None:
            raise BpeError(
                f"{path} is not one of the published tiktoken vocabularies "
                f"({', '.join(v.name for v in PUBLISHED.values())}): "
                + (no_pattern or f"give its pattern ({', '.join(NAMED_PATTERNS)} or a regex)")
            )
        pattern = published.pattern
    pattern = named_pattern(pattern)
    if in_order is None:
        missing = [byte for byte in range(256) if bytes([byte]) not in ranks]
    else:
        missing = [byte for byte in range(256) if in_order[0][byte] == UNRANKED]
    if missing:
        raise BpeError(
            f"{path}: {len(missing)} single bytes have no rank (first: {missing[0]}); tiktoken needs all 256"
        )
    specials = {**(published.special_tokens if published is not None else {}), **(special_tokens or {})}
    shared = sorted(token_id for token_id in set(specials.values()) if list(specials.values()).count(token_id) > 1)
    if shared:
        tokens = [token for token, token_id in specials.items() if token_id == shared[0]]
        raise BpeError(f"special tokens {tokens[0]!r} and {tokens[1]!r} both have id {shared[0]}")
    if in_order is None:
        clash = sorted(set(specials.values()) & set(ranks.values()))
    else:  # the ranks are 0 to count - 1
        clash = sorted(token_id for token_id in set(specials.values()) if 0 <= token_id < in_order[1])
    if clash:
        raise BpeError(f"special token id {clash[0]} is also the rank of a regular token in {path}")
    recovered: tuple[PackedMerges, list[int], dict[int, list[int]]] | None = None
    if shipped is not None and in_order is not None:
        recovered = shipped[1], _ids(*in_order), {}
    elif lines is not None:
        recovered = _recovered_in_order(lines)
    if recovered is None:  # read line by line: an orphan, or a token listed twice, is found there
        recovered = _recovered(ranks or _ranks_of(content, path))
    merges, ids, orphans = recovered
    name = os.path.basename(path).split(".")[0]
    pretokenizer = pretokenizer_for(pattern)
    return TokenizerSpec(
        name=name,
        pretokenizer=ComponentConfig(pretokenizer.name, pretokenizer.options()),
        internal_merges=merges,
        special_tokens=tuple(specials),
        layout=IdLayout(ids, specials, orphans, {bytes(symbols): token for token, symbols in orphans.items()}),
        config={"name": name, "pretokenizer": {"name": pattern if pattern in NAMED_PATTERNS else "regex"}},
        provenance={
            "imported_from": {
                "format": "tiktoken",
                "path": path,
                **({"published": published.name} if published else {}),
            },
            "unreachable_tokens": sorted(orphans),
        },
    )


def _recovered_in_order(lines: RankedTokens) -> tuple[PackedMerges, list[int], dict[int, list[int]]] | None:
    """The merges, ids and (no) orphans of a file read in one pass whose ranks are its line
    numbers, with no Python object per token; None when some token has no merge (then
    `_recovered` says which, and finds a token listed twice, which is one)."""
    recovered = recover_merges(lines.packed, lines.ends)  # little-endian: a pair per longer token
    if not recovered[3::4].isascii():  # a negative id: (-1, -1), a token no merge makes
        return None
    return PackedMerges(recovered), _ids(lines.byte_ranks, lines.count), {}


def _ids(byte_ranks: list[int], count: int) -> list[int]:
    """The ids of a file of `count` tokens whose ranks are its line numbers: the single bytes'
    ranks, then every other rank in order (the longer tokens', which the merges make in that order)."""
    ids = list(byte_ranks)
    singles = sorted(byte_ranks)
    for before, after in zip([-1, *singles], [*singles, count], strict=True):
        ids.extend(range(before + 1, after))
    return ids


def _recovered(ranks: dict[bytes, int]) -> tuple[PackedMerges, list[int], dict[int, list[int]]]:
    """The merges, ids and orphans (tokens no merge makes) of a vocabulary given as its ranks."""
    longer = [(token, rank) for token, rank in sorted(ranks.items(), key=itemgetter(1)) if len(token) > 1]
    packed = b"".join(token for token, _ in longer)
    ends = array("i", accumulate(len(token) for token, _ in longer)).tobytes()
    recovered = array("i", recover_merges(packed, ends))  # little-endian: a pair per token
    ids = [ranks[bytes([byte])] for byte in range(256)]
    orphans: dict[int, list[int]] = {}
    if min(recovered, default=0) >= 0:  # every token has its merge
        ids.extend(rank for _, rank in longer)
        return PackedMerges(recovered.tobytes()), ids, orphans
    kept = array("i")
    for index, (token, rank) in enumerate(longer):
        if recovered[2 * index] >= 0:
            kept.extend(recovered[2 * index : 2 * index + 2])
            ids.append(rank)
        else:
            orphans[rank] = list(token)
    return PackedMerges(kept.tobytes()), ids, orphans


def to_tiktoken(tokenizer: TokenizerView, path: str | os.PathLike[str]) -> None:
    """Write the non-special tokens as a `.tiktoken` file, rank = our id.

    tiktoken merges by the rank of the merged bytes; our ids are in merge order, so ranks give
    the same priorities. Refused for non-byte-level tokenizers, for vocabularies where two ids
    stand for the same bytes (tiktoken keys tokens by their bytes) and for mirrored overlap
    resolution (tiktoken's is leftmost).
    """
    refuse_mirrored_overlaps(tokenizer.pretokenizer, "tiktoken")
    if not tokenizer.pretokenizer.byte_level:
        raise BpeError(f"tiktoken files hold byte-level text tokenizers; {tokenizer.pretokenizer.name!r} is not one")
    seen: dict[bytes, int] = {}
    lines = []
    for token_id in tokenizer.regular_ids():
        data = tokenizer.token_bytes(token_id)
        if data in seen:
            raise BpeError(f"ids {seen[data]} and {token_id} both stand for {data!r}; a tiktoken file cannot hold that")
        seen[data] = token_id
        lines.append(f"{base64.b64encode(data).decode('ascii')} {token_id}\n")
    make_directory(os.path.dirname(os.path.abspath(path)))
    with atomic_output(os.fspath(path)) as handle:
        handle.writelines(lines)
