"""Tokenizer = special tokens + pretokenizer + engine + decoder, and `train` that builds one.

Ids: base symbols first (0..A-1), then merged tokens in merge order, then special tokens when
their position is `end`; with position `start` the special tokens take ids 0..S-1 and everything
else moves up by S. The engine always works in unshifted ids; this module maps between them.
"""

import codecs
import multiprocessing
import os
import re
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from functools import lru_cache
from random import Random
from typing import Any, Literal

from bpe_core import progress as progress_bars
from bpe_core.contract import Pretokenizer, Reader, StreamedText
from bpe_core.config import Config, RunnerConfig, load_config, parse_runner
from bpe_core.chunking import count_chunks, piece_size, pieces
from bpe_core.counts import Counts, check_same_config, check_trainable, load_counts, merge_all, pack, symbol_width, unpack
from bpe_core.engine import TIE_RULES, Alphabet, Decoder, Encoder, Trainer
from bpe_core.errors import BpeError, located
from bpe_core.formats.layout import check_layout
from bpe_core.runners.local import WorkerPool, default_workers, ordered_map
from bpe_core.plugins import registry

BATCH = 64  # documents per task in encode_batch: amortizes inter-process traffic


def _splits_a_special(text: str, cut: int, special_tokens: Sequence[str]) -> bool:
    """Whether a cut of `text` at `cut` may fall inside a special token's string (the text may go
    on after its end)."""
    return any(
        text.endswith(token[:length], 0, cut) and token.startswith(text[cut : cut + len(token) - length], length)
        for token in special_tokens
        for length in range(1, len(token))
    )


class Tokenizer:
    """A trained (or loaded) tokenizer: normalizers, special tokens, pretokenizer, merges, decoder.

    >>> tok = bpe_core.load("gpt2-32k.json")
    >>> tok.decode(tok.encode("hello world"))
    'hello world'
    """

    def __init__(
        self,
        *,
        name: str,
        pretokenizer: Pretokenizer,
        merges: list[tuple[int, int]],
        merge_counts: list[int] | None = None,
        merge_results: list[int] | None = None,
        token_usage: list[int] | None = None,
        special_tokens: Sequence[str] = (),
        special_position: str = "end",
        normalizers: Sequence[tuple[str, dict[str, Any]]] = (),
        padding: int = 0,
        ids: Sequence[int] | None = None,
        special_ids: dict[str, int] | None = None,
        orphans: dict[int, list[int]] | None = None,
        whole_chunks: dict[bytes, int] | None = None,
        config: dict[str, Any] | None = None,
        provenance: dict[str, Any] | None = None,
        plugins: dict[str, str] | None = None,
    ) -> None:
        """Build a tokenizer from its parts (`train`, `load` and the importers call this).

        By default ids are laid out as the module docstring says. Imported vocabularies keep
        their own ids: `ids[i]` is the id of internal token i (base symbols, then merges; -1
        drops the symbol, as Hugging Face does with bytes missing from its vocabulary),
        `special_ids` the id of each special token, and `orphans` maps ids that no merge
        produces (decode only) to their base symbols. `whole_chunks` maps a byte-level chunk
        that is a token by itself to its id, looked up before merging (tiktoken does this for
        every chunk; Hugging Face with `ignore_merges`).
        """
        self.name = name
        self.pretokenizer = pretokenizer
        try:
            self.alphabet: list[str] = Alphabet(pretokenizer.alphabet()).labels
        except ValueError as error:
            raise BpeError(f"pretokenizer {pretokenizer.name!r}: {error}") from None
        self.alphabet_size = len(self.alphabet)
        self._merges = list(merges)
        self.merge_counts = list(merge_counts) if merge_counts is not None else []
        self.token_usage = list(token_usage) if token_usage is not None else []
        self.special_tokens = list(special_tokens)
        self.special_position = special_position
        self.normalizer_specs = [(normalizer, dict(options)) for normalizer, options in normalizers]
        self.config = config or {}
        self.provenance = provenance or {}
        self.plugins = plugins or {}
        components = registry()
        self.normalizers = [components.normalizer(normalizer, options) for normalizer, options in self.normalizer_specs]
        decoder_options = getattr(pretokenizer, "decoder_options", None)
        self.decoder = components.decoder(pretokenizer.decoder, decoder_options() if decoder_options else {})
        self.merge_results = list(merge_results) if merge_results is not None else None
        self._encoder = Encoder(self.alphabet_size, self._merges, results=self.merge_results)
        self._decoder = Decoder(self.alphabet_size, self._merges, results=self.merge_results)
        internal_count = self.alphabet_size + self._encoder.token_count
        shift = len(self.special_tokens) if special_position == "start" else 0
        if ids is None:
            self._external = [internal + shift for internal in range(internal_count)]
        else:
            if len(ids) != internal_count:
                raise BpeError(f"{len(ids)} ids for {internal_count} base symbols and merges")
            self._external = list(ids)
        if self._external != list(range(internal_count)):
            self._encoder.set_output_ids(self._external)
        if special_ids is None:
            first = 0 if special_position == "start" else internal_count
            special_ids = {token: first + index for index, token in enumerate(self.special_tokens)}
        self.special_ids = dict(special_ids)
        self._special_by_id = {token_id: token for token, token_id in self.special_ids.items()}
        self._orphans = dict(orphans or {})
        self._whole_chunks = dict(whole_chunks or {})
        check_layout(self._external, self.alphabet_size, self.special_ids, self._orphans, self._whole_chunks, padding)
        self._token_lengths: dict[int, int] = {}
        self._pool: WorkerPool | None = None
        # decided once: a decoder that gives files (MIDI) decodes specials differently from text
        self._decodes_to_text = isinstance(self.decoder.decode([], self.alphabet), str)
        self._single_character_labels = all(len(label) == 1 for label in self.alphabet)
        used = [*self._external, *self.special_ids.values(), *self._orphans, -1]
        self.padding = padding
        self.reserved_ids = range(max(used) + 1, max(used) + 1 + padding)
        self._internal = [-1] * (max(used) + 1)
        for internal in range(internal_count - 1, -1, -1):  # the first internal id wins for shared ids
            if self._external[internal] >= 0:
                self._internal[self._external[internal]] = internal

    @property
    def merges(self) -> list[tuple[int, int]]:
        """Merges in rank order, as (left id, right id) in this tokenizer's ids."""
        external = self._external
        return [(external[left], external[right]) for left, right in self._merges]

    def regular_ids(self) -> list[int]:
        """Every id that stands for base symbols (not special, not reserved), in order."""
        return sorted({token for token in self._external if token >= 0} | set(self._orphans))

    def merged_ids(self) -> list[int]:
        """The id each merge creates, in rank order."""
        return [self._external[result] for result in self._encoder.merge_result]

    @property
    def vocab_size(self) -> int:
        """The size of the id space: base symbols, merged tokens, special tokens and reserved padding ids."""
        return self.reserved_ids.stop

    def normalize(self, document: Any) -> Any:
        """The document after the normalizers (text only; other documents pass unchanged)."""
        if isinstance(document, str):
            for normalizer in self.normalizers:
                document = normalizer.normalize(document)
        return document

    def encode(
        self,
        document: Any,
        *,
        allowed_special: AbstractSet[str] | Literal["all"] = frozenset(),
        disallowed_special: AbstractSet[str] | Literal["all"] = "all",
        dropout: float = 0.0,
        seed: int | None = None,
    ) -> list[int]:
        """Token ids for one document (for text, a str).

        Special tokens follow tiktoken's safe default: text that contains a special token's
        string is an error unless that token is in `allowed_special` (then it becomes the
        special id) or left out of `disallowed_special` (then it is encoded as plain text).
        Untrusted text should go through `encode_ordinary`. Special tokens are matched before
        normalization and pretokenization.

        `dropout` > 0 applies BPE-dropout (each merge skipped with that probability), for
        training-time augmentation; with the same `seed` the result is the same.

        >>> tok.encode("hello<|endoftext|>", allowed_special={"<|endoftext|>"})
        [31373, 50256]
        """
        rng = _dropout_rng(dropout, seed)
        if not self.special_tokens or not isinstance(document, str):
            return self._encode_plain(document, dropout, rng)
        allowed = self._check_specials(document, allowed_special, disallowed_special)
        if not allowed:
            return self._encode_plain(document, dropout, rng)
        ids: list[int] = []
        start = 0
        for match in _special_pattern(sorted(allowed)).finditer(document):
            ids.extend(self._encode_plain(document[start : match.start()], dropout, rng))
            ids.append(self.special_ids[match.group()])
            start = match.end()
        ids.extend(self._encode_plain(document[start:], dropout, rng))
        return ids

    def _check_specials(
        self,
        text: str,
        allowed_special: AbstractSet[str] | Literal["all"],
        disallowed_special: AbstractSet[str] | Literal["all"],
        first_line: int = 1,
    ) -> set[str]:
        """The allowed special tokens; raises if the text holds a disallowed one (naming its line,
        counting from first_line)."""
        allowed = set(self.special_tokens) if allowed_special == "all" else set(allowed_special)
        unknown = allowed - set(self.special_tokens)
        if unknown:
            raise BpeError(f"allowed_special names {sorted(unknown)[0]!r}, which is not a special token of this tokenizer")
        disallowed = (set(self.special_tokens) if disallowed_special == "all" else set(disallowed_special)) - allowed
        if disallowed:
            found = _special_pattern(sorted(disallowed)).search(text)
            if found is not None:
                line = first_line + text.count("\n", 0, found.start())
                raise BpeError(
                    f"line {line} contains the special token {found.group()!r}; pass allowed_special to encode it "
                    "as the special token, or use encode_ordinary to treat it as text"
                )
        return allowed

    def encode_ordinary(self, document: Any, *, dropout: float = 0.0, seed: int | None = None) -> list[int]:
        """Token ids with every special token's string treated as plain text (safe for untrusted input).

        >>> tok.encode_ordinary("<|endoftext|>") == tok.encode("<|endoftext|>", disallowed_special=())
        True
        """
        return self._encode_plain(document, dropout, _dropout_rng(dropout, seed))

    def _encode_plain(self, document: Any, dropout: float, rng: Random | None) -> list[int]:
        chunks = self.pretokenizer.split(self.normalize(document))
        if self._whole_chunks and rng is None:
            ids: list[int] = []
            for chunk in chunks:
                whole = self._whole_chunks.get(bytes(self.pretokenizer.symbols(chunk)))
                ids.extend([whole] if whole is not None else self._encode_chunks([chunk]))
            return ids
        return self._encode_chunks(chunks, dropout, rng)

    def _encode_chunks(self, chunks: Iterable[Any], dropout: float = 0.0, rng: Random | None = None) -> list[int]:
        encoder = self._encoder
        if rng is not None:
            ids: list[int] = []
            for chunk in chunks:
                ids.extend(encoder.to_output(encoder.encode_symbols_dropout(self.pretokenizer.symbols(chunk), dropout, rng)))
            return ids
        if self.pretokenizer.byte_level:
            return encoder.encode_utf8_chunks(chunks if isinstance(chunks, list) else list(chunks))
        ids = []
        for chunk in chunks:
            chunk_ids = encoder.cached(chunk)
            if chunk_ids is None:
                chunk_ids = encoder.to_output(encoder.encode_symbols(self.pretokenizer.symbols(chunk)))
                encoder.remember(chunk, chunk_ids)
            ids.extend(chunk_ids)
        return ids

    def encoding_report(self, document: Any) -> dict[str, Any]:
        """What encoding this document loses or changes, when the pretokenizer quantizes (MIDI:
        notes dropped outside the pitch range, onsets moved, durations clipped, velocities
        binned); empty for lossless pretokenizers.

        >>> tok.encoding_report("song.mid")["dropped_pitch_out_of_range"]
        0
        """
        report = getattr(self.pretokenizer, "report", None)
        return dict(report(self.normalize(document))) if report is not None else {}

    def most_used_tokens(self, count: int = 10) -> list[tuple[int, int]]:
        """(id, uses) of the merged tokens used most on the training data."""
        merged = self._encoder.merge_result
        ranked = sorted(
            ((self._external[token], self.token_usage[token]) for token in set(merged) if token < len(self.token_usage)),
            key=lambda item: (-item[1], item[0]),
        )
        return ranked[:count]

    def encode_with_offsets(self, document: Any) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and, for each, the (start, end) it covers in the document (end exclusive), in the
        pretokenizer's coordinates: for DNA, 0-based positions in the record's sequence, so
        tokens align to genome coordinates. Needs a pretokenizer with `split_with_offsets`.

        >>> ids, spans = tok.encode_with_offsets(record)
        """
        split_with_offsets = getattr(self.pretokenizer, "split_with_offsets", None)
        if split_with_offsets is None:
            raise BpeError(f"pretokenizer {self.pretokenizer.name!r} does not report offsets")
        encoder = self._encoder
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        for chunk, chunk_start in split_with_offsets(self.normalize(document)):
            symbol_spans = self.pretokenizer.symbol_spans(chunk)  # type: ignore[attr-defined]
            internal = encoder.encode_symbols(self.pretokenizer.symbols(chunk))
            index = 0
            for token in internal:
                length = self._token_length(token)
                spans.append((chunk_start + symbol_spans[index][0], chunk_start + symbol_spans[index + length - 1][1]))
                index += length
            ids.extend(encoder.to_output(internal))
        return ids, spans

    def _token_length(self, internal: int) -> int:
        length = self._token_lengths.get(internal)
        if length is None:
            length = self._token_lengths[internal] = len(self._decoder.symbols([internal]))
        return length

    def encode_batch(self, documents: Sequence[Any], workers: int | None = None) -> list[list[int]]:
        """`encode` for many documents, in parallel processes when workers > 1; order is kept.
        The worker processes stay up between calls (their chunk caches warm), until the tokenizer
        is garbage-collected or `close()` is called.

        >>> tok.encode_batch(["a b", "c"], workers=2) == [tok.encode("a b"), tok.encode("c")]
        True
        """
        workers = workers or default_workers()
        batches = [documents[start : start + BATCH] for start in range(0, len(documents), BATCH)]
        if workers <= 1 or len(batches) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            return [self.encode(document) for document in documents]
        if self._pool is None or self._pool.workers != workers:
            self.close()
            self._pool = WorkerPool(lambda batch: [self.encode(document) for document in batch], workers)
            self._pool_finalizer = weakref.finalize(self, self._pool.close)
        results: list[list[int]] = []
        for batch_ids in self._pool.map(batches):
            results.extend(batch_ids)
        return results

    def close(self) -> None:
        """Stop the worker processes encode_batch keeps (they also stop with the tokenizer)."""
        if self._pool is not None:
            self._pool_finalizer.detach()
            self._pool.close()
            self._pool = None

    def encode_documents(
        self,
        documents: Iterable[Any],
        workers: int | None = None,
        allowed_special: AbstractSet[str] | Literal["all"] = frozenset(),
        disallowed_special: AbstractSet[str] | Literal["all"] = "all",
    ) -> Iterator[list[int]]:
        """Ids for each document a reader gives, in order, in `workers` processes."""
        current: list[int] = []
        for ids, ends in self.encode_pieces(documents, workers, allowed_special, disallowed_special):
            current.extend(ids)
            if ends:
                yield current
                current = []

    def safe_cut(self, text: str) -> int:
        """Where streamed text may be cut: the pretokenizer's safe point, never inside a special
        token's string, nor where one may begin at the end of `text` or have begun before it."""
        cut = self.pretokenizer.safe_cut(text)
        if not self.special_tokens:
            return cut
        longest = max(map(len, self.special_tokens))
        while cut > 0 and (cut < longest or _splits_a_special(text, cut, self.special_tokens)):
            cut = self.pretokenizer.safe_cut(text[: cut - 1]) if cut >= longest else 0
        return cut

    def encode_pieces(
        self,
        documents: Iterable[Any],
        workers: int | None = None,
        allowed_special: AbstractSet[str] | Literal["all"] = frozenset(),
        disallowed_special: AbstractSet[str] | Literal["all"] = "all",
    ) -> Iterator[tuple[list[int], bool]]:
        """`encode_documents` in pieces: (ids, whether the document ends there). Streamed text is
        encoded piece by piece (cut where no chunk can change), so however long a document is,
        memory holds a few pieces, not its ids."""
        sources: list[str] = []

        def tagged() -> Iterator[tuple[int, int, Any]]:
            """(document index, first line, piece); a piece of None ends the document."""
            for index, document in enumerate(documents):
                sources.append(_source_name(document))
                if isinstance(document, StreamedText):
                    line = 1
                    longest = max(map(len, self.special_tokens), default=0)  # context that safe_cut needs
                    for piece in pieces([document], self.pretokenizer, self.safe_cut, context=longest + 2):
                        yield index, line, piece
                        line += piece.count("\n")
                else:
                    yield index, 1, document
                yield index, 0, None

        def encode_piece(item: tuple[int, int, Any]) -> tuple[int, list[int] | None, str | None]:
            index, line, piece = item
            if piece is None:
                return index, None, None
            try:
                if isinstance(piece, str) and self.special_tokens:
                    allowed = self._check_specials(piece, allowed_special, disallowed_special, line)
                    return index, self.encode(piece, allowed_special=allowed, disallowed_special=frozenset()), None
                return index, self.encode(piece), None
            except BpeError as error:
                return index, None, str(error)

        for index, ids, failure in ordered_map(encode_piece, tagged(), workers):
            if failure is not None:
                raise BpeError(located(sources[index], failure))
            yield ([], True) if ids is None else (ids, False)

    def decode(self, ids: Sequence[int], errors: str = "roundtrip") -> Any:
        """The document for a sequence of ids (for text, a str; special tokens as their text).

        For byte-level text, `errors` says what ids that make invalid UTF-8 (a model may emit
        any) decode to: "roundtrip" gives back the lone surrogates `encode` wrote, so
        `decode(encode(s)) == s` for every str, and U+FFFD for any other bad byte sequence;
        "replace" gives U+FFFD for every bad sequence, as tiktoken's errors="replace" (the text
        always encodes to UTF-8, to write it to a file); "strict" raises a BpeError naming the
        first bad byte. Other domains never make invalid text and ignore it.

        >>> tok.decode([31373, 50256])
        'hello<|endoftext|>'
        >>> tok.decode([72, 237, 160, 128], errors="replace") == "H" + "\N{REPLACEMENT CHARACTER}" * 3
        True
        """
        if errors not in DECODE_ERRORS:
            raise BpeError(f"decode errors={errors!r}; allowed: {', '.join(DECODE_ERRORS)}")
        if errors != "roundtrip" and self._decodes_to_text and self.pretokenizer.byte_level:
            return self._decode_utf8(ids, errors)
        if not self._special_by_id:
            return self.decoder.decode(self._symbols(ids), self.alphabet)
        if not self._decodes_to_text:
            # a document that is a file (MIDI): special tokens (BOS, PAD) mark the sequence, not the music
            return self.decoder.decode(self._symbols([token for token in ids if token not in self._special_by_id]), self.alphabet)
        pieces = [
            part if isinstance(part, str) else self.decoder.decode(self._symbols(part), self.alphabet)
            for part in self._special_runs(ids)
        ]
        return "".join(pieces) if all(isinstance(piece, str) for piece in pieces) else pieces

    def _special_runs(self, ids: Sequence[int]) -> Iterator[list[int] | str]:
        """The ids as runs of regular ids and special tokens' strings, in order (at least one run)."""
        run: list[int] = []
        produced = False
        for token in ids:
            special = self._special_by_id.get(token)
            if special is None:
                run.append(token)
                continue
            if run:
                yield run
                run = []
            yield special
            produced = True
        if run or not produced:
            yield run

    def _decode_utf8(self, ids: Sequence[int], errors: str) -> str:
        """Byte-level text decoded with Python's "replace" or "strict" UTF-8 error handling."""
        data = b"".join(
            part.encode("utf-8") if isinstance(part, str) else bytes(self._symbols(part)) for part in self._special_runs(ids)
        )
        try:
            return data.decode("utf-8", errors)
        except UnicodeDecodeError as error:
            position = 0
            for index, token in enumerate(ids):
                position += len(self.token_bytes(token))
                if position > error.start:
                    break
            raise BpeError(
                f"the ids do not make valid UTF-8 text: {error.reason} at byte {error.start} of the text "
                f"(id {token}, number {index + 1} in the sequence); errors 'replace' gives U+FFFD there instead"
            ) from None

    def decode_stream(self) -> "TextStream":
        """An incremental decoder for generation: `push(ids)` returns the text completed so far,
        holding back a UTF-8 character split across tokens; `flush()` returns the rest.

        >>> stream = tok.decode_stream()
        >>> "".join(stream.push([token]) for token in tok.encode("héllo")) + stream.flush()
        'héllo'
        """
        if not self.pretokenizer.byte_level:
            raise BpeError(f"decode_stream is for byte-level text tokenizers; {self.pretokenizer.name!r} is not one")
        return TextStream(self)

    def _symbols(self, ids: Sequence[int]) -> list[int]:
        internal_of = self._internal
        symbols: list[int] = []
        internal: list[int] = []
        for token in ids:
            inner = internal_of[token] if 0 <= token < len(internal_of) else -1
            if inner >= 0:
                internal.append(inner)
                continue
            orphan = self._orphans.get(token)
            if orphan is None:
                raise BpeError(self._unknown_id(token))
            symbols.extend(self._decoder.symbols(internal))
            symbols.extend(orphan)
            internal = []
        symbols.extend(self._decoder.symbols(internal))
        return symbols

    def _unknown_id(self, token: int) -> str:
        if token in self.reserved_ids:
            return f"token id {token} is a reserved padding id (pad_to_multiple_of); it stands for no text"
        if token in self._special_by_id:
            return f"token id {token} is the special token {self._special_by_id[token]!r}"
        return f"token id {token} is not in this tokenizer (vocab_size {self.vocab_size})"

    def token_symbols(self, token_id: int) -> tuple[str, ...]:
        """The base symbol labels a token stands for (a special token: its own text)."""
        special = self._special_by_id.get(token_id)
        if special is not None:
            return (special,)
        return tuple(self.alphabet[symbol] for symbol in self._symbols([token_id]))

    def token_text(self, token_id: int) -> str:
        """A readable form of a token with no whitespace in it: its base labels joined
        (byte-level: GPT-2's byte characters; DNA: the letters), with `+` between labels that are
        words (MIDI events: `Pitch_60+Velocity_79`), so one token is one word of `--format tokens`."""
        separator = "" if self._single_character_labels else "+"
        return separator.join(self.token_symbols(token_id))

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for; byte-level text tokenizers only."""
        if not self.pretokenizer.byte_level:
            raise BpeError(f"token_bytes needs a byte-level tokenizer; {self.pretokenizer.name!r} is not one")
        special = self._special_by_id.get(token_id)
        if special is not None:
            return special.encode("utf-8")
        return bytes(self._symbols([token_id]))

    def to_hf(self, path: str | os.PathLike[str]) -> None:
        """Write a Hugging Face `tokenizer.json` that gives the same ids (byte-level text).

        >>> tok.to_hf("tokenizer.json")
        """
        from bpe_core.formats.hf import to_hf

        to_hf(self, path)

    def to_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Write a `.tiktoken` file (tokens and ranks; give tiktoken the pattern and special tokens).

        >>> tok.to_tiktoken("mine.tiktoken")
        """
        from bpe_core.formats.tiktoken import to_tiktoken

        to_tiktoken(self, path)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tokenizer file (atomically: a temporary file, then a rename)."""
        from bpe_core.formats.native import save

        save(self, os.fspath(path))


class TextStream:
    """Incremental text decoding; see `Tokenizer.decode_stream`."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        stream = getattr(tokenizer.decoder, "stream", None)
        if stream is None:
            raise BpeError(f"decoder {tokenizer.decoder.name!r} cannot decode incrementally")
        self.bytes_decoder: codecs.IncrementalDecoder = stream()

    def push(self, ids: Sequence[int]) -> str:
        data = b"".join(self.tokenizer.token_bytes(token) for token in ids)
        return str(self.bytes_decoder.decode(data))

    def flush(self) -> str:
        return str(self.bytes_decoder.decode(b"", final=True))


# What `Tokenizer.decode` does with ids that make invalid UTF-8; see there.
DECODE_ERRORS = ("roundtrip", "replace", "strict")


def _source_name(document: Any) -> str:
    """Where a document came from, for error messages."""
    for attribute in ("source", "filename"):
        value = getattr(document, attribute, None)
        if isinstance(value, str):
            record = getattr(document, "id", None)
            return f"{value}, record {record}" if isinstance(record, str) else value
    return "input"


def _dropout_rng(dropout: float, seed: int | None) -> Random | None:
    if not 0.0 <= dropout < 1.0:
        raise BpeError(f"dropout must be in [0, 1), got {dropout}")
    return Random(seed) if dropout > 0.0 else None


@lru_cache(maxsize=64)
def _special_pattern_cached(tokens: tuple[str, ...]) -> "re.Pattern[str]":
    # longest first, so a token that contains another one wins
    return re.compile("|".join(re.escape(token) for token in sorted(tokens, key=len, reverse=True)))


def _special_pattern(tokens: list[str]) -> "re.Pattern[str]":
    return _special_pattern_cached(tuple(tokens))


def _resolve_paths(config: Config, files: Sequence[str | os.PathLike[str]] | None) -> list[str]:
    if files:
        return [os.fspath(path) for path in files]
    base = os.path.dirname(config.origin) if config.origin != "<dict>" else ""
    return [path if os.path.isabs(path) or path == "-" else os.path.join(base, path) for path in config.input.paths]


@dataclass(frozen=True)
class _Plan:
    """A validated config with its components built: everything training needs but the data."""

    settings: Config
    pretokenizer: Pretokenizer
    reader: Reader
    paths: list[str]
    alphabet_size: int
    num_merges: int


def _plan(
    config: str | os.PathLike[str] | dict[str, Any],
    files: Sequence[str | os.PathLike[str]] | None,
    overrides: dict[str, Any] | None,
    need_paths: bool = True,
) -> _Plan:
    settings = load_config(config, overrides)
    plugins = registry()
    try:
        pretokenizer = plugins.pretokenizer(settings.pretokenizer.name, settings.pretokenizer.options)
    except BpeError as error:
        raise BpeError(f"{settings.origin}: pretokenizer: {error}") from None
    try:
        reader = plugins.reader(settings.input.reader, settings.input.options)
    except BpeError as error:
        raise BpeError(f"{settings.origin}: input: {error}") from None
    for index, normalizer in enumerate(settings.normalizers):
        try:
            plugins.normalizer(normalizer.name, normalizer.options)
        except BpeError as error:
            key = "normalizer" if len(settings.normalizers) == 1 else f"normalizer[{index}]"
            raise BpeError(f"{settings.origin}: {key}: {error}") from None
    paths = _resolve_paths(settings, files)
    if not paths and need_paths:
        raise BpeError(f"{settings.origin}: input.paths: no input files (give files or set input.paths)")
    alphabet_size = len(pretokenizer.alphabet())
    minimum = alphabet_size + len(settings.special_tokens.tokens)
    if settings.trainer.vocab_size < minimum:
        raise BpeError(
            f"{settings.origin}: trainer.vocab_size: {settings.trainer.vocab_size} is below the minimum {minimum} "
            f"({alphabet_size} base symbols + {len(settings.special_tokens.tokens)} special tokens)"
        )
    return _Plan(settings, pretokenizer, reader, paths, alphabet_size, settings.trainer.vocab_size - minimum)


def check_config(
    config: str | os.PathLike[str] | dict[str, Any],
    overrides: dict[str, Any] | None = None,
    files: Sequence[str | os.PathLike[str]] | None = None,
) -> str:
    """Validate a config without training: keys, components and their options, vocabulary size.

    Returns a one-line summary; raises BpeError naming what is wrong.
    """
    plan = _plan(config, files, overrides)
    settings = plan.settings
    return (
        f"pretokenizer {settings.pretokenizer.name} ({plan.alphabet_size} base symbols), reader {settings.input.reader}, "
        f"vocab {settings.trainer.vocab_size} = {plan.alphabet_size} + {plan.num_merges} merges + "
        f"{len(settings.special_tokens.tokens)} special, {len(plan.paths)} input path(s)"
    )


def count(
    config: str | os.PathLike[str] | dict[str, Any],
    files: Sequence[str | os.PathLike[str]] | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    progress: bool | None = None,
    runner: RunnerConfig | dict[str, Any] | None = None,
) -> Counts:
    """The unique chunks of the config's input with their counts (the part of training that
    grows with the corpus), on the config's runner unless `runner` is given.

    >>> counts = bpe_core.count("configs/gpt2-style.yaml", ["corpus.txt"])
    >>> counts.save("corpus.counts")
    """
    plan = _plan(config, files, overrides)
    return _count(plan, _runner(plan.settings, runner, workers), progress)


def train(
    config: str | os.PathLike[str] | dict[str, Any],
    files: Sequence[str | os.PathLike[str]] | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    progress: bool | None = None,
    runner: RunnerConfig | dict[str, Any] | None = None,
    counts: Sequence["str | os.PathLike[str] | Counts"] | None = None,
) -> Tokenizer:
    """Train a tokenizer from a YAML config (path or dict); `files` replaces input.paths.

    Relative paths in a config file are relative to that file. With `counts` (counts files or
    objects, as `count` makes them) no input is read: training starts from their sum.

    >>> tok = bpe_core.train("configs/gpt2-style.yaml", ["corpus.txt"], {"trainer.vocab_size": 8192})
    """
    started = time.perf_counter()
    if counts is not None:
        if files:
            raise BpeError("give input files or counts to train from, not both")
        plan = _plan(config, None, overrides, need_paths=False)
        named = [(str(item), load_counts(item)) if not isinstance(item, Counts) else ("counts", item) for item in counts]
        merged = merge_all(named)
        check_same_config(counting_config(plan.settings), merged.config, named[0][0])
        check_trainable(merged, plan.alphabet_size, named[0][0])
        if not any(merged.chunks):
            raise BpeError(f"nothing to train on: {', '.join(name for name, _ in named)} hold(s) no chunks")
    else:
        plan = _plan(config, files, overrides)
        merged = _count(plan, _runner(plan.settings, runner, workers), progress)
    return _train_from(plan, merged, progress, started)


def _runner(settings: Config, runner: RunnerConfig | dict[str, Any] | None, workers: int | None) -> RunnerConfig:
    """The runner to use: given, else the config's; `workers` overrides its worker count."""
    if runner is None:
        chosen = settings.runner
    elif isinstance(runner, dict):
        chosen = parse_runner(runner, "runner")
    else:
        chosen = runner
    return chosen if workers is None else replace(chosen, workers=workers)


def counting_config(settings: Config) -> dict[str, Any]:
    """What decides the symbols a chunk is counted as: counts merge only when this is equal."""
    whole = settings.to_dict()
    return {"normalizer": whole["normalizer"], "pretokenizer": whole["pretokenizer"]}


def input_config(settings: Config) -> dict[str, Any]:
    """How the input was read (recorded with each counted file)."""
    recorded = dict(settings.to_dict()["input"])
    del recorded["paths"]
    return recorded


def _count(plan: _Plan, runner: RunnerConfig, progress: bool | None) -> Counts:
    if runner.kind == "dask":
        from bpe_core.runners.dask import count_on_dask

        return count_on_dask(plan, runner, progress)
    fraction = _sample_fraction(plan)
    return count_documents(plan, plan.reader.documents(plan.paths), runner.workers, progress, fraction)


def _sample_fraction(plan: _Plan) -> float | None:
    sample = plan.settings.input.sample
    if sample is None:
        return None
    if sample.fraction is not None:
        return sample.fraction
    assert sample.bytes is not None
    return _budget_fraction(plan, sample.bytes)


def count_documents(
    plan: _Plan, documents: Iterable[Any], workers: int | None, progress: bool | None, fraction: float | None
) -> Counts:
    """Count the documents (from plan.reader) into a Counts, in `workers` processes."""
    settings, pretokenizer = plan.settings, plan.pretokenizer
    normalize = [registry().normalizer(item.name, item.options) for item in settings.normalizers]

    def prepare(piece: Any) -> Any:
        if isinstance(piece, str):
            for normalizer in normalize:
                piece = normalizer.normalize(piece)
        return piece

    seed = settings.input.sample.seed if settings.input.sample else 0
    counted = count_chunks(
        documents, pretokenizer, workers, progress, prepare=prepare, sample=None if fraction is None else (fraction, seed)
    )
    if not counted and fraction is not None:
        raise BpeError(f"{settings.origin}: input.sample kept nothing of the input (fraction {fraction:.3g}); sample more")
    width = symbol_width(plan.alphabet_size)
    symbols = pretokenizer.symbols
    chunks: dict[bytes, int] = {}
    for chunk, times in counted.items():
        key = pack(symbols(chunk), width)
        chunks[key] = chunks.get(key, 0) + times
    read = input_config(settings)
    inputs = [
        {"path": source.path, "size": source.size, "sha256": source.sha256, "input": read, "sampled_fraction": fraction}
        for source in plan.reader.sources()
    ]
    measures = getattr(plan.reader, "measures", None)  # optional: what the documents add up to (MIDI: beats)
    return Counts(counting_config(settings), plan.alphabet_size, chunks, inputs, measures() if measures is not None else {})


def _train_from(plan: _Plan, counts: Counts, progress: bool | None, started: float) -> Tokenizer:
    settings, pretokenizer = plan.settings, plan.pretokenizer
    alphabet_size, num_merges = plan.alphabet_size, plan.num_merges
    plugins = registry()
    normalizers = [(item.name, item.options) for item in settings.normalizers]
    width = counts.width
    if not any(counts.chunks):  # no chunk, or only empty ones: a tokenizer without merges is no result
        read = [item["path"] for item in counts.inputs] or plan.paths
        shown = ", ".join(read[:5]) + (f" and {len(read) - 5} more" if len(read) > 5 else "")
        raise BpeError(f"nothing to train on: {shown or 'the input'} holds no chunks (empty, or only what is skipped)")
    chunk_symbols = [unpack(key, width) for key in counts.chunks]
    weights = list(counts.chunks.values())
    trainer = Trainer(
        alphabet_size,
        chunk_symbols,
        weights,
        alphabet_size + num_merges,
        settings.trainer.max_token_length or 0,
        TIE_RULES.index(settings.trainer.tie_break),
        # tie_break hf: Hugging Face numbers the alphabet in code point order of its labels
        sorted(range(alphabet_size), key=pretokenizer.alphabet().__getitem__),
    )
    symbol_count = sum(len(symbols) * weight for symbols, weight in zip(chunk_symbols, weights))
    del chunk_symbols
    with progress_bars.bar(progress, "merging", total=num_merges, unit="merge") as bar:

        def advance(done: int) -> None:
            bar.update(done - bar.n)

        trainer.run(num_merges, settings.trainer.min_frequency, advance)
    usage = trainer.token_usage()
    unpadded = alphabet_size + len(trainer.merges) + len(settings.special_tokens.tokens)
    multiple = settings.trainer.pad_to_multiple_of or 1
    fractions = {item.get("sampled_fraction") for item in counts.inputs}
    provenance = {
        "inputs": [{"path": item["path"], "size": item["size"], "sha256": item["sha256"]} for item in counts.inputs],
        "unique_chunks": len(counts.chunks),
        "chunks": sum(weights),
        "symbols": symbol_count,
        "tokens": sum(usage),
        "merges_learned": len(trainer.merges),
        "sampled_fraction": fractions.pop() if len(fractions) == 1 else None,
        "seconds": round(time.perf_counter() - started, 3),
        **counts.measures,
    }
    return Tokenizer(
        name=settings.name,
        pretokenizer=pretokenizer,
        merges=trainer.merges,
        merge_counts=trainer.merge_counts,
        token_usage=usage,
        special_tokens=settings.special_tokens.tokens,
        special_position=settings.special_tokens.position,
        normalizers=normalizers,
        padding=-unpadded % multiple,
        config=settings.to_dict(),
        provenance=provenance,
        plugins={
            name: version
            for name, version in plugins.plugin_versions().items()
            if name
            in [plugins.plugin_of("pretokenizer", settings.pretokenizer.name), plugins.plugin_of("reader", settings.input.reader)]
            + [plugins.plugin_of("normalizer", name) for name, _ in normalizers]
        },
    )


def _budget_fraction(plan: _Plan, budget: int) -> float:
    """The fraction of the input that makes about `budget` bytes (one extra reading pass)."""
    total = 0
    reader = registry().reader(plan.settings.input.reader, plan.settings.input.options)
    for piece in pieces(reader.documents(plan.paths), plan.pretokenizer):
        total += len(piece.encode("utf-8", "surrogatepass")) if isinstance(piece, str) else piece_size(piece)
    return 1.0 if total <= budget else budget / total
