"""A sample cut into tokens for the inspect page: which document, capped how, and what each token is.

`Shown` is what the page reads of a tokenizer (a Protocol, so this package sits below
`tokenizer.py`, whose `visualize` calls it). `cut` encodes one document, capping the sample so
pages stay small (and saying so); `tooltip` is the text of a token's tooltip; `measure` encodes
whole files for the compression and usage charts; `shipped_sample` finds the sample the package
ships for a tokenizer's reader. Nothing here writes HTML beyond one token's text.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, Protocol

from bpe_core.contract import (
    DrawsTokens,
    Pretokenizer,
    ReportsOffsets,
    StreamedText,
    TokenDrawing,
    reader_suffixes,
)
from bpe_core.corpus.streaming import CorpusTokenizer, corpus_reader, encode_pieces, safe_cut
from bpe_core.errors import BpeError
from bpe_core.specials import Specials
from bpe_core.visual.charts import escape

SAMPLE_CHARS = 6000  # text: the sample is cut (where the pretokenizer may cut) after about this many characters
SAMPLE_TOKENS = 1200  # every domain: at most this many tokens are shown
# the samples shipped in bpe_core/samples, in the order they are tried for a reader
SHIPPED_SAMPLES = ("us-founding-texts.txt", "lambda_phage.fa.gz", "pop909/001.mid")


class Shown(CorpusTokenizer, Protocol):
    """What the page reads of a tokenizer (`bpe_core.Tokenizer` has it all)."""

    name: str
    alphabet: list[str]
    alphabet_size: int
    special_ids: dict[str, int]
    merge_counts: list[int]
    pretokenizer: Pretokenizer
    reserved_ids: range

    @property
    def vocab_size(self) -> int: ...

    def encode(
        self, document: Any, *, allowed_special: Specials = ..., disallowed_special: Specials = ...
    ) -> list[int]: ...

    def encode_with_offsets(self, document: Any) -> tuple[list[int], list[tuple[int, int]]]: ...

    def token_symbols(self, token_id: int) -> tuple[str, ...]: ...

    def token_text(self, token_id: int) -> str: ...

    def token_bytes(self, token_id: int) -> bytes: ...

    def merged_ids(self) -> list[int]: ...

    def regular_ids(self) -> list[int]: ...


@dataclass(frozen=True)
class Cut:
    """A document cut into tokens as the page shows it: the first `len(ids)` of `total` tokens."""

    ids: list[int]
    total: int
    capped: str  # a sentence saying what was left out, or ""
    spans: list[tuple[int, int]] | None
    drawing: TokenDrawing | None


def _capped_text(tokenizer: Shown, document: Any, limit: int) -> tuple[Any, bool]:
    """Text documents (a str, streamed text) cut after about `limit` characters where the
    pretokenizer allows, so a large file is never read whole; other documents unchanged."""
    if isinstance(document, StreamedText):
        text = ""
        for block in document.blocks():
            text += block
            if len(text) > limit:
                break
        document = text
    if not isinstance(document, str) or len(document) <= limit:
        return document, False
    cut = safe_cut(tokenizer, document[:limit])
    return document[: cut or limit], True


def cut(tokenizer: Shown, document: Any, limit: int = SAMPLE_TOKENS, chars: int = SAMPLE_CHARS) -> Cut:
    """The first `limit` tokens of a document (text: of its first `chars` characters or so), with
    their spans where the pretokenizer reports offsets and the domain's drawing where it draws."""
    document, text_capped = _capped_text(tokenizer, document, chars)
    pretokenizer = tokenizer.pretokenizer
    spans: list[tuple[int, int]] | None = None
    if isinstance(pretokenizer, ReportsOffsets) and not pretokenizer.byte_level:
        ids, spans = tokenizer.encode_with_offsets(document)
    else:
        ids = tokenizer.encode(document, allowed_special="all", disallowed_special=frozenset())
    total = len(ids)
    notes = []
    if text_capped:
        notes.append(f"the sample was capped at its first {len(document):,} characters")
    if total > limit:
        notes.append(f"showing the first {limit:,} of its {total:,} tokens")
        ids = ids[:limit]
        spans = spans[:limit] if spans is not None else None
    drawing = None
    if isinstance(pretokenizer, DrawsTokens):
        specials = set(tokenizer.special_ids.values())
        symbol_ids = {label: index for index, label in enumerate(tokenizer.alphabet)}
        tokens = [
            () if token in specials else tuple(symbol_ids[label] for label in tokenizer.token_symbols(token))
            for token in ids
        ]
        drawing = pretokenizer.draw_tokens(tokens, spans)
    capped = ("Capped: " + "; ".join(notes) + ".") if notes else ""
    return Cut(ids, total, capped, spans, drawing)


class Ranks:
    """Each merged token's rank (its merge's place in the merge list) and training count."""

    def __init__(self, tokenizer: Shown) -> None:
        self.tokenizer = tokenizer
        self.rank_of = {token: rank for rank, token in enumerate(tokenizer.merged_ids())}
        self.lengths: dict[int, int] = {}

    def length(self, token: int) -> int:
        """How many base symbols a token stands for (a special token: 1)."""
        length = self.lengths.get(token)
        if length is None:
            length = self.lengths[token] = len(self.tokenizer.token_symbols(token))
        return length

    def count(self, token: int) -> int | None:
        """How often a merged token's pair occurred when it was merged; None for other ids, or
        when the tokenizer has no merge counts (an import)."""
        rank = self.rank_of.get(token)
        counts = self.tokenizer.merge_counts
        return counts[rank] if rank is not None and rank < len(counts) else None

    def tooltip(self, token: int, span: tuple[int, int] | None = None, notes: str = "") -> str:
        """The tooltip of a token: id, symbols, training count and rank (and position, and what
        the domain adds), one fact a line."""
        tokenizer = self.tokenizer
        lines = [f"id {token}"]
        special = {token_id: name for name, token_id in tokenizer.special_ids.items()}
        if token in special:
            lines.append(f"special token {special[token]}")
        else:
            symbols = tokenizer.token_symbols(token)
            lines.append(f"symbols ({len(symbols)}): {' '.join(symbols)}")
            rank = self.rank_of.get(token)
            if rank is None:
                lines.append("base symbol (no merge)")
            else:
                count = self.count(token)
                lines.append("training count unknown" if count is None else f"training count {count:,}")
                lines.append(f"rank {rank} of {len(self.rank_of):,} merges")
        if span is not None:
            lines.append(f"positions {span[0] + 1}-{span[1]}")
        if notes:
            lines.append(notes)
        return "\n".join(lines)


def token_html(tokenizer: Shown, token: int) -> str:
    """A token's text for the page, escaped: byte-level text as its characters, with the bytes
    that are not valid UTF-8 on their own in hex; newlines marked; other domains' symbols joined."""
    if token in tokenizer.special_ids.values() or not tokenizer.pretokenizer.byte_level:
        return escape(tokenizer.token_text(token))
    data = tokenizer.token_bytes(token)
    parts: list[str] = []
    while data:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            text = data[: error.start].decode("utf-8")
            bad = data[error.start : error.end]
            data = data[error.end :]
        else:
            bad = b""
            data = b""
        parts.append(escape(text).replace("\n", "\u21b5\n"))
        if bad:
            parts.append('<span class="x">' + " ".join(f"{byte:02x}" for byte in bad) + "</span>")
    return "".join(parts)


@dataclass(frozen=True)
class Measured:
    """What encoding one file (or the sample) came to: tokens, base symbols and each id's uses."""

    label: str
    tokens: int
    symbols: int
    usage: Counter[int]

    @property
    def symbols_per_token(self) -> float:
        return self.symbols / self.tokens if self.tokens else 0.0


def measure(tokenizer: Shown, ranks: Ranks, path: str, workers: int | None = 1) -> Measured:
    """Encode a whole file as the tokenizer's reader reads it (special-token strings as text)."""
    usage: Counter[int] = Counter()
    documents = corpus_reader(tokenizer).documents([path], strict=True)
    for ids, _ in encode_pieces(tokenizer, documents, workers, frozenset(), frozenset()):
        usage.update(ids)
    return measured(path, ranks, usage)


def measured(label: str, ranks: Ranks, usage: Counter[int]) -> Measured:
    """`Measured` from the uses of each id."""
    specials = set(ranks.tokenizer.special_ids.values())
    symbols = sum(count * ranks.length(token) for token, count in usage.items() if token not in specials)
    return Measured(label, sum(usage.values()), symbols, usage)


def first_document(tokenizer: Shown, path: str) -> Any:
    """The first document of a file, read with the tokenizer's reader; an error naming the file
    when it holds none."""
    for document in corpus_reader(tokenizer).documents([path], strict=True):
        return document
    raise BpeError(f"{path}: no documents to show")


def shipped_sample(tokenizer: Shown) -> Traversable | None:
    """The first sample shipped in bpe_core/samples that the tokenizer's reader reads (of those
    with one of its suffixes, when it lists them); None when it reads none of them."""
    suffixes = reader_suffixes(corpus_reader(tokenizer))
    for name in SHIPPED_SAMPLES:
        if suffixes and not name.endswith(suffixes):
            continue
        sample = files("bpe_core").joinpath("samples", *name.split("/"))
        try:
            first_document(tokenizer, str(sample))
        except BpeError:
            continue
        return sample
    return None


def sample_rows(values: Sequence[int]) -> list[tuple[str, list[float]]]:
    """Uses of merged tokens in buckets (never, 1, 2-3, 4-7, ...) as rows of a bar chart."""
    buckets: Counter[int] = Counter()
    for value in values:
        buckets[value.bit_length()] += 1
    rows = []
    for bucket in range(max(buckets, default=0) + 1):
        if bucket == 0:
            label = "never"
        elif bucket == 1:
            label = "1"
        else:
            label = f"{1 << (bucket - 1)}-{(1 << bucket) - 1}"
        rows.append((f"{label} uses", [float(buckets.get(bucket, 0))]))
    return rows
