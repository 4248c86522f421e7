"""A tokenizer as plain data: what training, our file format and the importers produce, and what
`Tokenizer` is built from; and the read-only view of a tokenizer that the exporters write.

`TokenizerSpec` names its components (pretokenizer, normalizers) instead of holding them, so it
can be made, saved and compared without the plugins; `Tokenizer` resolves the names through one
registry. `IdLayout` is how an imported vocabulary numbers its tokens (trained tokenizers need
none: their ids follow from the merges). This module builds nothing and reads no file.
"""

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

from bpe_core.contract import Pretokenizer
from bpe_core.formats.layout import check_layout


@dataclass(frozen=True)
class ComponentConfig:
    """A component by name, with its options (a config's and a spec's pretokenizer, normalizers)."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)


class PackedMerges(Sequence[tuple[int, int]]):
    """Merges held as little-endian 32-bit ids, two per merge, with no Python object per merge
    until one is asked for: a kept spec's (`spec_cache`), which the engine reads as they are.
    Equal to a list of the same pairs."""

    def __init__(self, packed: bytes) -> None:
        if len(packed) % 8 or sys.byteorder != "little":
            raise ValueError("packed merges are little-endian 32-bit id pairs")
        self.packed = packed
        self._ids = memoryview(packed).cast("i")

    def __len__(self) -> int:
        return len(self._ids) // 2

    @overload
    def __getitem__(self, index: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, int]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, int] | list[tuple[int, int]]:
        if isinstance(index, slice):
            return list(self)[index]
        position = range(len(self))[index]  # negative indexes, and the IndexError
        return self._ids[2 * position], self._ids[2 * position + 1]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        ids = iter(self._ids.tolist())
        return zip(ids, ids)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedMerges):
            return self.packed == other.packed
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which have none

    def __repr__(self) -> str:
        return f"PackedMerges({len(self)} merges)"


@dataclass(frozen=True)
class IdLayout:
    """The ids of a tokenizer's tokens, when they are not the trained layout.

    `ids[i]` is the id of internal token i (base symbols, then merged tokens; -1 drops a base
    symbol, as Hugging Face does with bytes missing from its vocabulary); `special_ids` the id of
    each special token; `orphans` maps ids that no merge produces (decoded only) to their base
    symbols; `whole_chunks` maps a byte-level chunk that is a token by itself to its id, looked up
    before merging (tiktoken does this for every chunk, Hugging Face with `ignore_merges`).
    """

    ids: list[int]
    special_ids: dict[str, int]
    orphans: dict[int, list[int]] = field(default_factory=dict)
    whole_chunks: dict[bytes, int] = field(default_factory=dict)

    @classmethod
    def trained(cls, internal_count: int, special_tokens: Sequence[str], position: str) -> "IdLayout":
        """Training's layout: base symbols, merged tokens in merge order, then the special tokens
        (position `end`); with position `start` the special tokens are 0..S-1 and the rest moves up."""
        shift = len(special_tokens) if position == "start" else 0
        first_special = 0 if position == "start" else internal_count
        return cls(
            list(range(shift, shift + internal_count)),
            {token: first_special + index for index, token in enumerate(special_tokens)},
        )

    def check(self, alphabet_size: int, padding: int) -> None:
        """Raise a BpeError naming the field when the ids do not fit together."""
        check_layout(self.ids, alphabet_size, self.special_ids, self.orphans, self.whole_chunks, padding)

    def counts_up_from_zero(self) -> bool:
        """Whether ids[i] == i throughout (an import's layout is told from it at its first id)."""
        return self.ids[:1] == [0] and self.ids == list(range(len(self.ids)))

    def is_trained(self, special_tokens: Sequence[str], position: str) -> bool:
        """Whether this is the layout training gives these tokens (an import's is told from it at
        its first id, without building that one)."""
        shift = len(special_tokens) if position == "start" else 0
        if self.ids[:1] != [shift]:
            return False
        return self == IdLayout.trained(len(self.ids), special_tokens, position)


@dataclass(frozen=True)
class TokenizerSpec:
    """Everything a tokenizer is: its components by name, its merges, its special tokens and ids,
    and where it came from.

    `internal_merges` are in the engine's internal ids (base symbols 0..A-1, merge r creating A+r
    unless `merge_results` says otherwise), which the saved file keeps under "merges";
    `Tokenizer.merges` gives the same merges in the tokenizer's own ids (`layout`), and the two
    names differ because the ids do whenever special tokens come first or a vocabulary is imported."""

    name: str
    pretokenizer: ComponentConfig
    internal_merges: Sequence[tuple[int, int]]  # a list, or PackedMerges
    normalizers: tuple[ComponentConfig, ...] = ()
    merge_counts: list[int] = field(default_factory=list)
    merge_results: list[int] | None = None  # the token each merge makes, when merges share results (imports)
    token_usage: list[int] = field(default_factory=list)
    special_tokens: tuple[str, ...] = ()
    special_position: str = "end"
    padding: int = 0  # reserved ids after all others (pad_to_multiple_of)
    layout: IdLayout | None = None  # None: training's layout
    config: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    plugins: dict[str, str] = field(default_factory=dict)


class TokenizerView(Protocol):
    """What the exporters read of a tokenizer (`Tokenizer` has all of it)."""

    spec: TokenizerSpec
    layout: IdLayout
    pretokenizer: Pretokenizer
    alphabet: list[str]
    special_ids: dict[str, int]
    reserved_ids: range

    @property
    def merges(self) -> list[tuple[int, int]]: ...

    def regular_ids(self) -> list[int]: ...

    def token_symbols(self, token_id: int) -> tuple[str, ...]: ...

    def token_text(self, token_id: int) -> str: ...

    def token_bytes(self, token_id: int) -> bytes: ...
