"""Tokenizer = special tokens + pretokenizer + engine + decoder, and `train` that builds one.

Ids: base symbols first (0..A-1), then merged tokens in merge order, then special tokens when
their position is `end`; with position `start` the special tokens take ids 0..S-1 and everything
else moves up by S. The engine always works in unshifted ids; this module maps between them.
"""

import os
import time
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from bpe_core import progress as progress_bars
from bpe_core.components import Pretokenizer, Source
from bpe_core.config import Config, load_config
from bpe_core.counting import count_chunks
from bpe_core.engine import TIE_RULES, Decoder, Encoder, Trainer
from bpe_core.errors import BpeError
from bpe_core.plugins import registry


class Tokenizer:
    """A trained (or loaded) tokenizer.

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
        special_tokens: Sequence[str] = (),
        special_position: str = "end",
        config: dict[str, Any] | None = None,
        provenance: dict[str, Any] | None = None,
        plugins: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.pretokenizer = pretokenizer
        self.alphabet: list[str] = pretokenizer.alphabet()
        self.alphabet_size = len(self.alphabet)
        self._merges = list(merges)
        self.merge_counts = list(merge_counts) if merge_counts is not None else []
        self.special_tokens = list(special_tokens)
        self.special_position = special_position
        self.config = config or {}
        self.provenance = provenance or {}
        self.plugins = plugins or {}
        self._encoder = Encoder(self.alphabet_size, self._merges)
        self._decoder = Decoder(self.alphabet_size, self._merges)
        self._shift = len(self.special_tokens) if special_position == "start" else 0
        first_special = 0 if special_position == "start" else self.alphabet_size + len(self._merges)
        self.special_ids = {token: first_special + index for index, token in enumerate(self.special_tokens)}
        self._special_by_id = {token_id: token for token, token_id in self.special_ids.items()}

    @property
    def merges(self) -> list[tuple[int, int]]:
        """Merges in rank order, as (left id, right id) in this tokenizer's ids."""
        shift = self._shift
        return [(left + shift, right + shift) for left, right in self._merges]

    @property
    def vocab_size(self) -> int:
        return self.alphabet_size + len(self._merges) + len(self.special_tokens)

    def encode(self, document: Any) -> list[int]:
        """Token ids for one document (for text, a str).

        >>> tok.encode("hello")
        [31373]
        """
        return self._encode_chunks(self.pretokenizer.split(document))

    def _encode_chunks(self, chunks: Iterable[Hashable]) -> list[int]:
        if self.pretokenizer.byte_level:
            ids = self._encoder.encode_utf8_chunks(chunks if isinstance(chunks, list) else list(chunks))  # type: ignore[arg-type]
        else:
            ids = []
            for chunk in chunks:
                chunk_ids = self._encoder.cached(chunk)
                if chunk_ids is None:
                    chunk_ids = self._encoder.encode_symbols(self.pretokenizer.symbols(chunk))
                    self._encoder.remember(chunk, chunk_ids)
                ids.extend(chunk_ids)
        if self._shift:
            shift = self._shift
            return [token + shift for token in ids]
        return ids

    def encode_batch(self, documents: Sequence[Any], workers: int | None = None) -> list[list[int]]:
        """`encode` for many documents, in parallel processes when workers > 1; order is kept.

        >>> tok.encode_batch(["a b", "c"], workers=2) == [tok.encode("a b"), tok.encode("c")]
        True
        """
        from bpe_core.parallel import map_in_order

        return map_in_order(self.encode, documents, workers)

    def decode(self, ids: Sequence[int]) -> Any:
        """The document for a sequence of ids (for text, a str; special tokens as their text)."""
        if not self._special_by_id:
            return self.pretokenizer.decode(self._symbols(ids))
        pieces: list[Any] = []
        run: list[int] = []
        for token in ids:
            special = self._special_by_id.get(token)
            if special is None:
                run.append(token)
                continue
            if run:
                pieces.append(self.pretokenizer.decode(self._symbols(run)))
                run = []
            pieces.append(special)
        if run or not pieces:
            pieces.append(self.pretokenizer.decode(self._symbols(run)))
        return "".join(pieces) if all(isinstance(piece, str) for piece in pieces) else pieces

    def _symbols(self, ids: Sequence[int]) -> list[int]:
        shift = self._shift
        internal = [token - shift for token in ids] if shift else list(ids)
        try:
            return self._decoder.symbols(internal)
        except ValueError:
            bad = next(token for token in ids if token not in self._special_by_id and not 0 <= token - shift < self.alphabet_size + len(self._merges))
            raise BpeError(f"token id {bad} is not in this tokenizer (vocab_size {self.vocab_size})") from None

    def token_symbols(self, token_id: int) -> tuple[str, ...]:
        """The base symbol labels a token stands for (a special token: its own text)."""
        special = self._special_by_id.get(token_id)
        if special is not None:
            return (special,)
        return tuple(self.alphabet[symbol] for symbol in self._symbols([token_id]))

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for; byte-level text tokenizers only."""
        if not self.pretokenizer.byte_level:
            raise BpeError(f"token_bytes needs a byte-level tokenizer; {self.pretokenizer.name!r} is not one")
        special = self._special_by_id.get(token_id)
        if special is not None:
            return special.encode("utf-8")
        return bytes(self._symbols([token_id]))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tokenizer file (atomically: a temporary file, then a rename)."""
        from bpe_core.formats.native import save

        save(self, os.fspath(path))


def _resolve_paths(config: Config, files: Sequence[str | os.PathLike[str]] | None) -> list[str]:
    if files:
        return [os.fspath(path) for path in files]
    base = os.path.dirname(config.origin) if config.origin != "<dict>" else ""
    return [path if os.path.isabs(path) or path == "-" else os.path.join(base, path) for path in config.input.paths]


def train(
    config: str | os.PathLike[str] | dict[str, Any],
    files: Sequence[str | os.PathLike[str]] | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    progress: bool | None = None,
) -> Tokenizer:
    """Train a tokenizer from a YAML config (path or dict); `files` replaces input.paths.

    Relative paths in a config file are relative to that file.

    >>> tok = bpe_core.train("configs/gpt2-style.yaml", ["corpus.txt"], {"trainer.vocab_size": 8192})
    """
    started = time.perf_counter()
    settings = load_config(config, overrides)
    plugins = registry()
    pretokenizer = plugins.pretokenizer(settings.pretokenizer.name, settings.pretokenizer.options)
    reader = plugins.reader(settings.input.reader, settings.input.options)
    paths = _resolve_paths(settings, files)
    if not paths:
        raise BpeError(f"{settings.origin}: input.paths: no input files (give files or set input.paths)")
    alphabet_size = len(pretokenizer.alphabet())
    minimum = alphabet_size + len(settings.special_tokens.tokens)
    if settings.trainer.vocab_size < minimum:
        raise BpeError(
            f"{settings.origin}: trainer.vocab_size: {settings.trainer.vocab_size} is below the minimum {minimum} "
            f"({alphabet_size} base symbols + {len(settings.special_tokens.tokens)} special tokens)"
        )
    num_merges = settings.trainer.vocab_size - minimum

    counts = count_chunks(reader.documents(paths), pretokenizer, workers, progress)
    unique_chunks = list(counts)
    chunk_symbols = [pretokenizer.symbols(chunk) for chunk in unique_chunks]
    weights = [counts[chunk] for chunk in unique_chunks]
    del counts
    trainer = Trainer(
        alphabet_size,
        chunk_symbols,
        weights,
        alphabet_size + num_merges,
        settings.trainer.max_token_length or 0,
        TIE_RULES.index(settings.trainer.tie_break),
    )
    symbol_count = sum(len(symbols) * weight for symbols, weight in zip(chunk_symbols, weights))
    del chunk_symbols
    with progress_bars.bar(progress, "merging", total=num_merges, unit="merge") as bar:

        def advance(done: int) -> None:
            bar.update(done - bar.n)

        trainer.run(num_merges, settings.trainer.min_frequency, advance)
    sources: list[Source] = reader.sources()
    provenance = {
        "inputs": [{"path": source.path, "size": source.size, "sha256": source.sha256} for source in sources],
        "unique_chunks": len(unique_chunks),
        "chunks": sum(weights),
        "symbols": symbol_count,
        "merges_learned": len(trainer.merges),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return Tokenizer(
        name=settings.name,
        pretokenizer=pretokenizer,
        merges=trainer.merges,
        merge_counts=trainer.merge_counts,
        special_tokens=settings.special_tokens.tokens,
        special_position=settings.special_tokens.position,
        config=settings.to_dict(),
        provenance=provenance,
        plugins={
            name: version
            for name, version in plugins.plugin_versions().items()
            if name
            in (
                plugins.plugin_of("pretokenizer", settings.pretokenizer.name),
                plugins.plugin_of("reader", settings.input.reader),
            )
        },
    )
