"""Tokenizer = normalizers + special tokens + pretokenizer + engine + decoder, built from a spec.

Ids: base symbols first (0..A-1), then merged tokens in merge order, then special tokens when
their position is `end`; with position `start` the special tokens take ids 0..S-1 and everything
else moves up by S. An imported vocabulary keeps its own ids (`spec.IdLayout`). The engine always
works in internal ids; this module maps between them. It does not train and reads no files: the
file formats read specs, `loading` turns them into tokenizers.
"""

import gc
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property
from random import Random
from typing import Any

from bpe_core import contract, packing, pieces, raw_bytes
from bpe_core.batching import BatchEncoder, allowed_sets, check_documents
from bpe_core.chunking import normalize
from bpe_core.engine import Alphabet, Decoder
from bpe_core.errors import BpeError, path_argument
from bpe_core.formats import native
from bpe_core.pieces import TextStream
from bpe_core.plugins import Registry, registry
from bpe_core.spec import ComponentConfig, IdLayout, TokenizerSpec
from bpe_core.specials import Specials, allowed_specials, special_pattern, special_runs
from bpe_core.strands import make_encoder

DECODE_ERRORS = ("roundtrip", "replace", "strict", "ignore")  # what decode does with ids that make invalid UTF-8
CHUNK_CACHE_SIZE = 1 << 18  # chunks whose ids a tokenizer remembers (not packed: MIDI, k-mers)
_living: "weakref.WeakSet[Tokenizer]" = weakref.WeakSet()  # whose engines a fork waits for (see _hold_engines)
_held: list["Tokenizer"] = []  # the tokenizers whose engine locks the forking thread holds


class NotAToken(BpeError, KeyError):
    """An id that stands for no token, or bytes or text that are no single token: a BpeError, and
    a KeyError as tiktoken raises there (`decode_single_token_bytes`, `encode_single_token`)."""

    def __str__(self) -> str:  # the message itself, not KeyError's repr of it
        return str(self.args[0])


class Tokenizer:
    """A trained (or loaded) tokenizer: normalizers, special tokens, pretokenizer, merges, decoder.

    >>> tok = bpe_core.load("gpt2-32k.json")
    >>> tok.decode(tok.encode("hello world"))
    'hello world'
    """

    def __init__(self, spec: TokenizerSpec, components: Registry | None = None, checked: bool = False) -> None:
        """Build a tokenizer from its spec (`train`, `load` and the importers make one), resolving
        the pretokenizer, normalizers and decoder by name in `components` (the installed plugins
        by default). Raises a BpeError when the ids do not fit together. `checked`: the spec is
        one a tokenizer was built from before (`spec_cache` keeps them, hashed), so its ids are
        known to fit and are not checked again."""
        components = components or registry()
        # the registry the components were found in; the readers of its corpora come from it too
        self.components = components
        pretokenizer = components.pretokenizer(spec.pretokenizer.name, spec.pretokenizer.options)
        self.pretokenizer = pretokenizer
        try:
            self.alphabet: list[str] = Alphabet(pretokenizer.alphabet()).labels
        except ValueError as error:
            raise BpeError(f"pretokenizer {pretokenizer.name!r}: {error}") from None
        self.alphabet_size = len(self.alphabet)
        self.normalizers = [components.normalizer(item.name, item.options) for item in spec.normalizers]
        decoder_options: dict[str, Any] = {}
        if isinstance(pretokenizer, contract.ConfiguresDecoder):
            decoder_options = pretokenizer.decoder_options()
        self.decoder = components.decoder(pretokenizer.decoder, decoder_options)

        # the engine's encoder, and the ids it gives (training's, or an import's own)
        self._encoder = make_encoder(pretokenizer, self.alphabet_size, spec.internal_merges, spec.merge_results)
        # the encoder keeps working buffers and caches from call to call: one thread at a time
        # (threads sharing a tokenizer take turns; decoding needs no turn)
        self._engine_lock = threading.Lock()
        _living.add(self)
        internal_count = self.alphabet_size + self._encoder.token_count
        layout = spec.layout or IdLayout.trained(internal_count, spec.special_tokens, spec.special_position)
        if len(layout.ids) != internal_count:
            raise BpeError(f"{len(layout.ids)} ids for {internal_count} base symbols and merges")
        if not checked:
            layout.check(self.alphabet_size, spec.padding)
        if not layout.counts_up_from_zero():
            self._encoder.set_output_ids(layout.ids)
        self.layout = layout

        # the spec as it is saved: the pretokenizer's options as it reports them, no layout when it is training's
        self.spec = replace(
            spec,
            pretokenizer=ComponentConfig(self.pretokenizer.name, self.pretokenizer.options()),
            layout=None if layout.is_trained(spec.special_tokens, spec.special_position) else layout,
        )

        # what the spec says, by name: plain attributes, to read and not to change
        self.name = spec.name
        self.special_tokens = list(spec.special_tokens)
        self.special_position = spec.special_position
        self.special_ids = layout.special_ids
        self.merge_counts = spec.merge_counts
        self.token_usage = spec.token_usage
        self.config = spec.config
        self.provenance = spec.provenance
        self.plugins = spec.plugins

        self._special_by_id = {token_id: token for token, token_id in layout.special_ids.items()}
        self._token_lengths: dict[int, int] = {}
        self._chunk_ids: dict[Any, list[int]] = {}  # chunk -> ids, for alphabets too large to pack
        self._packer = self.pretokenizer if isinstance(self.pretokenizer, contract.PacksChunks) else None
        plain = self._packer if not self.normalizers and not layout.whole_chunks else None  # as in _encode_plain
        self._batches = BatchEncoder(
            self.encode, self.encode_ordinary, pretokenizer.byte_level, None if plain is None else self._encode_strings
        )
        if self._packer is not None:  # built with the tokenizer, as tiktoken builds its regex and table
            packing.prepare(self._encoder, self._packer)

        self._decodes_to_text = isinstance(self.decoder.decode([], self.alphabet), str)
        self._text = self._decodes_to_text and self.pretokenizer.byte_level  # documents are str
        self._single_character_labels = all(len(label) == 1 for label in self.alphabet)

        # the reserved ids follow every id in use
        first_unused = max(max(layout.ids, default=-1), *layout.special_ids.values(), *layout.orphans, -1) + 1
        self.reserved_ids = range(first_unused, first_unused + spec.padding)

        # to the oldest generation: young collections would traverse these vocabulary-sized lists
        gc.collect(1)

    @property
    def merges(self) -> list[tuple[int, int]]:
        """Merges in rank order, as (left id, right id) in this tokenizer's ids."""
        external = self.layout.ids
        return [(external[left], external[right]) for left, right in self.spec.internal_merges]

    @property
    def vocab_size(self) -> int:
        """The size of the id space: base symbols, merged tokens, special tokens and reserved padding ids."""
        return self.reserved_ids.stop

    @property
    def n_vocab(self) -> int:
        """tiktoken's name for `vocab_size` (tiktoken has no reserved ids: `max_token_value + 1`)."""
        return self.vocab_size

    @property
    def max_token_value(self) -> int:
        """The largest id that stands for a token or a special token (tiktoken's name)."""
        return self.reserved_ids.start - 1

    @property
    def eot_token(self) -> int:
        """The id of `<|endoftext|>` (tiktoken's name); NotAToken when there is none."""
        token = self.special_ids.get("<|endoftext|>")
        if token is None:
            raise NotAToken(f"this tokenizer has no <|endoftext|> token; its special tokens: {self.special_tokens}")
        return token

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' strings as a set (tiktoken's `special_tokens_set`)."""
        return set(self.special_tokens)

    # encoding -----------------------------------------------------------------------------------

    def encode(
        self,
        document: Any,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
        dropout: float = 0.0,
        seed: int | None = None,
    ) -> list[int]:
        """Token ids for one document (for text, a str).

        Special tokens follow tiktoken's safe default: text that contains a special token's
        string is an error unless that token is in `allowed_special` (then it becomes the
        special id) or left out of `disallowed_special` (then it is encoded as plain text).
        Untrusted text should go through `encode_ordinary`. Special tokens are matched before
        normalization and pretokenization.

        Text is read as tiktoken reads it: a surrogate pair in the str (which UTF-16 data may
        leave there) is the character it spells, and a lone surrogate is U+FFFD, so the ids are
        tiktoken's and always UTF-8 (the text plugin repairs the str before splitting it).

        `dropout` > 0 applies BPE-dropout (each merge skipped with that probability), for
        training-time augmentation; with the same `seed` the result is the same.

        >>> tok.encode("hello<|endoftext|>", allowed_special={"<|endoftext|>"})
        [31373, 50256]
        """
        rng = _dropout_rng(dropout, seed)
        check_documents([document], self._text, "encode(document)")
        if not self.spec.special_tokens or not isinstance(document, str):
            return self._encode_plain(document, dropout, rng)
        allowed = allowed_specials(document, self.spec.special_tokens, allowed_special, disallowed_special)
        if not allowed:
            return self._encode_plain(document, dropout, rng)
        ids: list[int] = []
        start = 0
        for match in special_pattern(tuple(sorted(allowed))).finditer(document):
            ids.extend(self._encode_plain(document[start : match.start()], dropout, rng))
            ids.append(self.special_ids[match.group()])
            start = match.end()
        ids.extend(self._encode_plain(document[start:], dropout, rng))
        return ids

    def encode_ordinary(self, document: Any, *, dropout: float = 0.0, seed: int | None = None) -> list[int]:
        """Token ids with every special token's string treated as plain text (safe for untrusted input).

        >>> tok.encode_ordinary("<|endoftext|>") == tok.encode("<|endoftext|>", disallowed_special=())
        True
        """
        check_documents([document], self._text, "encode_ordinary(document)")
        return self._encode_plain(document, dropout, _dropout_rng(dropout, seed))

    def encode_batch(
        self,
        documents: Sequence[Any],
        workers: int | None = None,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[list[int]]:
        """`encode` for many documents in `workers` processes, order kept (see `batching`: this one and
        forked ones that stay up, their caches warm, until `close()`; text gives each worker at least
        `batching.MIN_CHARACTERS_PER_WORKER` characters, and forks none for fewer than
        `batching.MIN_TEXT_PROCESSES` processes). Special tokens follow `encode`'s rules,
        checked for every document before any is encoded: an error names the document's index.

        >>> tok.encode_batch(["a b", "c"], workers=2) == [tok.encode("a b"), tok.encode("c")]
        True
        """
        check_documents(documents, self._text, "encode_batch(documents)")
        allowed = allowed_sets(documents, self.spec.special_tokens, allowed_special, disallowed_special)
        return self._batches.encode(documents, allowed, workers)

    def encode_ordinary_batch(self, documents: Sequence[Any], workers: int | None = None) -> list[list[int]]:
        """`encode_ordinary` for many documents, run as `encode_batch` runs them (tiktoken's
        `encode_ordinary_batch`): every special token's string is plain text.

        >>> tok.encode_ordinary_batch(["a<|endoftext|>"]) == [tok.encode_ordinary("a<|endoftext|>")]
        True
        """
        check_documents(documents, self._text, "encode_ordinary_batch(documents)")
        return self._batches.encode(documents, None, workers)

    def encode_file(
        self,
        path: str | os.PathLike[str],
        workers: int | None = None,
        *,
        allowed_special: Specials = frozenset(),
        disallowed_special: Specials = "all",
    ) -> list[list[int]]:
        """The ids of each document of a file, read as this tokenizer's training input was (its
        reader: a text file is one document, a JSON Lines file one per line, a FASTA/FASTQ file
        one per record, a MIDI file one song), in file order: one list of ids per document, as
        `bpe encode FILE` writes them one a line. A text file is streamed in pieces (cut where no
        chunk can change), so it is never held whole. Special tokens follow `encode`'s rules.

        >>> reads = dna_tok.encode_file("reads.fq")  # one list of ids per read
        """
        from bpe_core.corpus.streaming import corpus_reader, encode_pieces  # what only files need

        documents = corpus_reader(self).documents([path_argument(path, "encode_file(path)")], strict=True)
        encoded: list[list[int]] = []
        ids: list[int] = []
        for piece, ends in encode_pieces(self, documents, workers, allowed_special, disallowed_special):
            ids.extend(piece)
            if ends:
                encoded.append(ids)
                ids = []
        return encoded

    def encode_bytes(self, data: bytes) -> list[int]:
        """Ids for bytes that need not be UTF-8, so `decode_bytes(encode_bytes(data)) == data`
        (tiktoken's `_encode_bytes`, see `raw_bytes`): valid UTF-8 is `encode_ordinary` of its
        text. Byte-level tokenizers only."""
        self._require_byte_level("encode_bytes")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise BpeError(f"encode_bytes: data: a {type(data).__name__}, not bytes (encode takes text)")
        data = bytes(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            chunks = self._encoded_chunks
            return raw_bytes.encode_invalid_utf8(data, error.start, chunks, self.token_bytes, self._encode_chunk_bytes)
        return self.encode_ordinary(text)

    def encode_single_token(self, token: str | bytes) -> int:
        """The id of the token whose text or bytes these are, a special token's by its text
        (tiktoken's name); NotAToken when they are not one token. Byte-level tokenizers only."""
        self._require_byte_level("encode_single_token")
        if not isinstance(token, (str, bytes)):
            raise BpeError(f"encode_single_token: token: a {type(token).__name__}, not str or bytes")
        data = token.encode("utf-8", "surrogatepass") if isinstance(token, str) else token
        found = self._ids_by_bytes.get(data)
        if found is not None:
            return found
        special = self.special_ids.get(data.decode("utf-8", "surrogatepass") if isinstance(token, bytes) else token)
        if special is not None:
            return special
        raise NotAToken(f"{token!r} is not a single token of this tokenizer")

    def encode_with_offsets(self, document: Any) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and, for each, the (start, end) it covers in the document (end exclusive), in the
        pretokenizer's coordinates: for DNA, 0-based positions in the record's sequence, so
        tokens align to genome coordinates. Needs a pretokenizer that reports offsets.

        >>> ids, spans = tok.encode_with_offsets(record)
        """
        pretokenizer = self.pretokenizer
        if not isinstance(pretokenizer, contract.ReportsOffsets):
            raise BpeError(f"pretokenizer {self.pretokenizer.name!r} does not report offsets")
        encoder = self._encoder
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        for chunk, chunk_start in pretokenizer.split_with_offsets(self.normalize(document)):
            symbol_spans = pretokenizer.symbol_spans(chunk)
            with self._engine_lock:
                internal = encoder.encode_symbols(self.pretokenizer.symbols(chunk))
            index = 0
            for token in internal:
                length = self._token_length(token)
                spans.append((chunk_start + symbol_spans[index][0], chunk_start + symbol_spans[index + length - 1][1]))
                index += length
            ids.extend(encoder.to_output(internal))
        return ids, spans

    def normalize(self, document: Any) -> Any:
        """The document after the normalizers (text only; other documents pass unchanged)."""
        return normalize(document, self.normalizers)

    def encoding_report(self, document: Any) -> dict[str, Any]:
        """What encoding this document loses or changes, when the pretokenizer quantizes (MIDI:
        notes dropped outside the pitch range, onsets moved, durations clipped, velocities
        binned); empty for lossless pretokenizers."""
        if not isinstance(self.pretokenizer, contract.ReportsEncoding):
            return {}
        return dict(self.pretokenizer.report(self.normalize(document)))

    def close(self) -> None:
        """Stop the worker processes the batches keep (else they stop when the tokenizer is
        garbage-collected, or when this process exits)."""
        self._batches.close()

    # decoding -----------------------------------------------------------------------------------

    def decode(self, ids: Sequence[int], errors: str = "roundtrip") -> Any:
        """The document for a sequence of ids (for text, a str; special tokens as their text).

        For byte-level text, `errors` says what ids that make invalid UTF-8 (a model may emit
        any) decode to: "roundtrip" gives a lone surrogate for the three bytes that spell one
        (UTF-8 with "surrogatepass") and U+FFFD for any other bad byte sequence; "replace" gives
        U+FFFD for every bad sequence, as tiktoken's errors="replace" (the text always encodes
        to UTF-8, to write it to a file); "ignore" drops them, as tiktoken's errors="ignore";
        "strict" raises a BpeError naming the first bad byte. Other domains never make invalid
        text and ignore it. Text `encode` was given comes back as it was, but for the
        surrogates `encode` repairs (see `encode`).

        >>> tok.decode([31373, 50256])
        'hello<|endoftext|>'
        >>> tok.decode([72, 237, 160, 128], errors="replace") == "H" + "\N{REPLACEMENT CHARACTER}" * 3
        True
        """
        if errors not in DECODE_ERRORS:
            raise BpeError(f"decode errors={errors!r}; allowed: {', '.join(DECODE_ERRORS)}")
        ids = pieces.token_ids(ids, "decode(ids)")
        if self._decodes_to_text and self.pretokenizer.byte_level:
            # special tokens stand for their UTF-8: text that ends mid-character before one
            # decodes as it does at the end, so the whole sequence is one run of bytes
            data = pieces.join(self._pieces, ids, self._unknown_id, "decode(ids)")
            if errors == "roundtrip":
                return self.decoder.decode(data, self.alphabet)
            return self._decode_utf8(ids, data, errors)
        if not self._special_by_id or self._special_by_id.keys().isdisjoint(ids):
            return self.decoder.decode(self._symbols(ids), self.alphabet)
        if not self._decodes_to_text:
            # a file (MIDI): special tokens (BOS, PAD) mark the sequence, not the music
            regular = [token for token in ids if token not in self._special_by_id]
            return self.decoder.decode(self._symbols(regular), self.alphabet)
        documents: list[Any] = []
        for part in special_runs(ids, self._special_by_id):
            if isinstance(part, str):
                documents.append(part)
            else:
                documents.append(self.decoder.decode(self._symbols(part), self.alphabet))
        if all(isinstance(document, str) for document in documents):
            return "".join(documents)
        return documents

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes the ids stand for, special tokens as their UTF-8 (tiktoken's `decode_bytes`);
        byte-level tokenizers only. Ids in an `array` of uint16 or uint32 (a shard's) are read
        where they lie.

        >>> tok.decode_bytes([31373, 50256])
        b'hello<|endoftext|>'
        """
        if not self.pretokenizer.byte_level:
            raise BpeError(f"decode_bytes needs a byte-level tokenizer; {self.pretokenizer.name!r} is not one")
        return pieces.join(
            self._pieces, pieces.token_ids(ids, "decode_bytes(ids)"), self._unknown_id, "decode_bytes(ids)"
        )

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """tiktoken's name for `token_bytes`."""
        return self.token_bytes(token_id)

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """Each id's bytes (tiktoken's name)."""
        return [self.token_bytes(token) for token in ids]

    def decode_batch(self, batch: Sequence[Sequence[int]], errors: str = "roundtrip") -> list[Any]:
        """`decode` of each sequence of ids, in order (tiktoken's name)."""
        return [self.decode(ids, errors) for ids in batch]

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """The text of the ids (valid UTF-8, else a BpeError as with errors="strict") and where
        each id's token starts in it, in characters (tiktoken's name; see `raw_bytes`)."""
        token_bytes = self.decode_tokens_bytes(ids)
        return self._decode_utf8(ids, b"".join(token_bytes), "strict"), raw_bytes.character_offsets(token_bytes)

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

    # inspection ---------------------------------------------------------------------------------

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
        """The bytes a token stands for (a special token's: its UTF-8); byte-level text tokenizers
        only. An id that stands for none is a NotAToken error (a BpeError, and a KeyError as in
        tiktoken's `decode_single_token_bytes`)."""
        self._require_byte_level("token_bytes")
        table = self._pieces
        piece = table[token_id] if isinstance(token_id, int) and 0 <= token_id < len(table) else None
        if piece is None:
            raise NotAToken(self._unknown_id(token_id))
        return piece

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every regular token, sorted (tiktoken's name); byte-level tokenizers only."""
        self._require_byte_level("token_byte_values")
        return sorted(self._ids_by_bytes)

    def regular_ids(self) -> list[int]:
        """Every id that stands for base symbols (not special, not reserved), in order."""
        return sorted({token for token in self.layout.ids if token >= 0} | set(self.layout.orphans))

    def merged_ids(self) -> list[int]:
        """The id each merge creates, in rank order."""
        return [self.layout.ids[result] for result in self._encoder.merge_results()]

    def most_used_tokens(self, count: int = 10) -> list[tuple[int, int]]:
        """(id, uses) of the merged tokens used most on the training data."""
        usage = self.spec.token_usage
        ranked = sorted(
            (
                (self.layout.ids[token], usage[token])
                for token in set(self._encoder.merge_results())
                if token < len(usage)
            ),
            key=lambda item: (-item[1], item[0]),
        )
        return ranked[:count]

    def visualize(self, document: Any) -> str:
        """A self-contained HTML page of `document` cut into tokens, with charts (`bpe inspect --html`)."""
        from bpe_core.visual.page import page  # what only pages need, imported for them

        return page(self, document)

    def _repr_html_(self) -> str:  # notebooks show the first tokens of the sample shipped for the domain
        from bpe_core.visual.page import notebook

        return notebook(self)

    # files --------------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tokenizer file (atomically: a temporary file, then a rename)."""
        native.save(self, path_argument(path, "save(path)"))

    def to_hf(self, path: str | os.PathLike[str], *, max_length: int | None = None) -> None:
        """Write a Hugging Face `tokenizer.json` that gives the same ids (see `formats.hf.to_hf`).
        `max_length` (default: the config's `max_length`) is transformers' `model_max_length`,
        written to `tokenizer_config.json` in a folder export."""
        from bpe_core.formats import hf  # each export's format imported when it is written

        if max_length is None:
            recorded = self.config.get("max_length") if isinstance(self.config, dict) else None
            max_length = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else None
        elif isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise BpeError(f"max_length: expected a whole number of tokens, 1 or more, got {max_length!r}")
        hf.to_hf(self, path_argument(path, "to_hf(path)"), max_length)

    def to_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Write a `.tiktoken` file (tokens and ranks; give tiktoken the pattern and special tokens)."""
        from bpe_core.formats import tiktoken

        tiktoken.to_tiktoken(self, path_argument(path, "to_tiktoken(path)"))

    # internals ----------------------------------------------------------------------------------

    def _encode_plain(self, document: Any, dropout: float, rng: Random | None) -> list[int]:
        whole_chunks = self.layout.whole_chunks
        if rng is None and not whole_chunks and self._packer is not None:
            return self._encode_strings([self.normalize(document)])[0]
        chunks = self.pretokenizer.split(self.normalize(document))
        if whole_chunks and rng is None:
            return self._encode_whole_chunks_first(chunks, whole_chunks)
        return self._encode_chunks(chunks, dropout, rng)

    def _encode_strings(self, documents: list[Any]) -> list[list[int]]:
        """Each document's ids, its chunks packed by the pretokenizer, as they are (no normalizers)."""
        assert self._packer is not None
        with self._engine_lock:
            return packing.encode_documents(self._encoder, self._packer, documents)

    def _encode_whole_chunks_first(self, chunks: Iterable[Any], whole_chunks: dict[bytes, int]) -> list[int]:
        """A chunk that is a token by itself is that token, looked up before merging (as tiktoken
        does for every chunk); the others are merged."""
        ids: list[int] = []
        for chunk in chunks:
            whole = whole_chunks.get(bytes(self.pretokenizer.symbols(chunk)))
            if whole is not None:
                ids.append(whole)
            else:
                ids.extend(self._encode_chunks([chunk]))
        return ids

    def _encode_chunks(self, chunks: Iterable[Any], dropout: float = 0.0, rng: Random | None = None) -> list[int]:
        with self._engine_lock:
            return self._merge_chunks(chunks, dropout, rng)

    def _merge_chunks(self, chunks: Iterable[Any], dropout: float, rng: Random | None) -> list[int]:
        """`_encode_chunks`, the engine's turn taken."""
        encoder = self._encoder
        if rng is not None:
            dropped: list[int] = []
            for chunk in chunks:
                internal = encoder.encode_symbols_dropout(self.pretokenizer.symbols(chunk), dropout, rng)
                dropped.extend(encoder.to_output(internal))
            return dropped
        if self.alphabet_size <= 256:  # packed, through the engine's cache of byte ranges
            symbols = self.pretokenizer.symbols
            packed = contract.PackedChunks.of([[bytes(symbols(chunk)) for chunk in chunks]])
            return packing.encode_packed(encoder, packed)[0]
        ids: list[int] = []
        chunk_ids_of = self._chunk_ids
        for chunk in chunks:
            chunk_ids = chunk_ids_of.get(chunk)
            if chunk_ids is None:
                chunk_ids = encoder.to_output(encoder.encode_symbols(self.pretokenizer.symbols(chunk)))
                if len(chunk_ids_of) >= CHUNK_CACHE_SIZE:  # emptied when full: bounded memory
                    chunk_ids_of.clear()
                chunk_ids_of[chunk] = chunk_ids
            ids.extend(chunk_ids)
        return ids

    def _encoded_chunks(self, text: str) -> list[list[int]]:
        """Each chunk's ids, as `encode_ordinary` encodes the text."""
        whole_chunks = self.layout.whole_chunks
        chunks = self.pretokenizer.split(self.normalize(text))
        if whole_chunks:
            return [self._encode_whole_chunks_first([chunk], whole_chunks) for chunk in chunks]
        return [self._encode_chunks([chunk]) for chunk in chunks]

    def _encode_chunk_bytes(self, data: bytes) -> list[int]:
        """One chunk of bytes: its token, if it is one, else merged (tiktoken's `_encode_bytes`)."""
        whole = self._ids_by_bytes.get(data)
        if whole is not None:
            return [whole]
        with self._engine_lock:
            return self._encoder.to_output(self._encoder.encode_symbols(list(data)))

    @cached_property
    def _ids_by_bytes(self) -> dict[bytes, int]:
        """Each regular token's id by its bytes (byte-level tokenizers), built when first asked for."""
        ids: dict[bytes, int] = {}
        for token, piece in enumerate(self._pieces):
            if piece is not None and token not in self._special_by_id:
                ids.setdefault(piece, token)
        return ids

    def _require_byte_level(self, method: str) -> None:
        if not self.pretokenizer.byte_level:
            raise BpeError(f"{method} needs a byte-level tokenizer; {self.pretokenizer.name!r} is not one")

    def _token_length(self, internal: int) -> int:
        length = self._token_lengths.get(internal)
        if length is None:
            length = len(self._decoder.symbols([internal]))
            self._token_lengths[internal] = length
        return length

    def _decode_utf8(self, ids: Sequence[int], data: bytes, errors: str) -> str:
        """The ids' bytes decoded with Python's "replace" or "strict" UTF-8 error handling."""
        try:
            return data.decode("utf-8", errors)
        except UnicodeDecodeError as error:
            position = 0
            for index, token in enumerate(ids):  # noqa: B007 (index and token name the place, after the loop)
                position += len(self.token_bytes(token))
                if position > error.start:
                    break
            raise BpeError(
                f"the ids do not make valid UTF-8 text: {error.reason} at byte {error.start} of the text "
                f"(id {token}, number {index + 1} in the sequence); errors 'replace' gives U+FFFD there instead"
            ) from None

    def _symbols(self, ids: Sequence[int]) -> Sequence[int]:
        """The base symbols of the ids' tokens: bytes for up to 256 symbols, else a list."""
        return pieces.symbols(pieces.join(self._pieces, ids, self._unknown_id), self.alphabet_size)

    @cached_property
    def _pieces(self) -> pieces.Pieces:
        """What each id decodes to (see `pieces`), built on the first decode: loading stays cheap."""
        specials: dict[int, bytes] = {}
        if self.pretokenizer.byte_level:
            specials = {token: text.encode("utf-8", "surrogatepass") for token, text in self._special_by_id.items()}
        spec = self.spec
        return pieces.build(
            self.alphabet_size, spec.internal_merges, spec.merge_results, self.layout, self.reserved_ids.start, specials
        )

    @cached_property
    def _decoder(self) -> Decoder:
        """The engine's decoder (token -> base symbols), built when first asked for."""
        spec = self.spec
        return Decoder(self.alphabet_size, list(spec.internal_merges), results=spec.merge_results)

    def _unknown_id(self, token: int) -> str:
        if token in self.reserved_ids:
            return f"token id {token} is a reserved padding id (pad_to_multiple_of); it stands for no text"
        if token in self._special_by_id:
            return f"token id {token} is the special token {self._special_by_id[token]!r}"
        return f"token id {token} is not in this tokenizer (vocab_size {self.vocab_size})"


def _hold_engines() -> None:
    """Before a fork: wait until no thread is inside a tokenizer's encoder, and hold them all, so
    the child gets no encoder half-way through a call (its caches half-updated) nor a lock that a
    thread it does not have holds. Engine calls take one document each: the wait is short."""
    for tokenizer in list(_living):
        tokenizer._engine_lock.acquire()
        _held.append(tokenizer)  # listed once held: a signal handled mid-way leaves no unheld lock to release


def _release_engines() -> None:
    """After a fork, in the parent and in the child: the locks `_hold_engines` took, released."""
    while _held:  # each unlisted as it is released: a signal handled mid-way leaves the rest listed
        _held.pop()._engine_lock.release()


os.register_at_fork(before=_hold_engines, after_in_parent=_release_engines, after_in_child=_release_engines)


def _dropout_rng(dropout: float, seed: int | None) -> Random | None:
    if not 0.0 <= dropout < 1.0:
        raise BpeError(f"dropout must be in [0, 1), got {dropout}")
    return Random(seed) if dropout > 0.0 else None
