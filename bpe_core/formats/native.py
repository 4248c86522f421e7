"""bpe-core's own tokenizer file: one versioned JSON document with everything needed to encode.

It holds the format version, the pipeline config (component names and options, plugin
versions), the alphabet, the merges with their training counts, the special tokens and the
training provenance. Writing is atomic. Reading gives a `TokenizerSpec` (`bpe_core.load` builds
the tokenizer). This module does not read other libraries' formats.

From version 2 the merges and the id layout's ids are stored packed: a string of the base64 of
little-endian signed 32-bit ids (two per merge), which a reader takes in one pass instead of a
JSON list per merge. From version 3 the merge counts and token usage (little-endian 64-bit) and
an import's merge results (32-bit) are packed too: as JSON lists they were most of a trained
tokenizer's reading. Files of earlier versions, with lists, are read as before.
"""

import json
import sys
from array import array
from collections.abc import Sequence
from itertools import chain
from typing import Any, NamedTuple

from librt.base64 import b64decode, b64encode

from bpe_core.engine import Encoder
from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, parse_json
from bpe_core.formats.layout import MAX_ID, check_id, is_int
from bpe_core.plugins import registry
from bpe_core.spec import ComponentConfig, IdLayout, PackedMerges, TokenizerSpec, TokenizerView

FORMAT = "bpe-core"
VERSION = 3
PACKED = "a pair of token ids [left, right] per merge, or their packed form (the base64 of little-endian 32-bit ids)"
# the counts' (64-bit) and merge_results' (32-bit)
PACKED_COUNTS = "a list of integers >= 0, or their packed form (the base64 of little-endian {bits}-bit integers)"
DESCRIPTION = "tokenizer file"


def to_dict(tokenizer: TokenizerView) -> dict[str, Any]:
    """The content of the tokenizer file."""
    spec = tokenizer.spec
    layout: dict[str, Any] = {}
    # an imported vocabulary keeps its own ids: regular, special (tiktoken's <|endoftext|> at
    # 100257 whatever the merges), orphans and whole chunks, each of which differs from training's
    if spec.layout is not None:
        layout = {
            "ids": _packed(array("i", spec.layout.ids).tobytes()),
            "special_ids": spec.layout.special_ids,
            "orphans": {str(token): symbols for token, symbols in spec.layout.orphans.items()},
            "whole_chunks": [[list(chunk), token] for chunk, token in spec.layout.whole_chunks.items()],
        }
    if spec.merge_results is not None:
        layout["merge_results"] = _packed(_little_endian(array("i", spec.merge_results)))
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": spec.name,
        "normalizers": [{"name": item.name, "options": item.options} for item in spec.normalizers],
        "pretokenizer": {"name": spec.pretokenizer.name, "options": spec.pretokenizer.options},
        "plugins": spec.plugins,
        "alphabet": tokenizer.alphabet,
        "merges": _packed(_merges_bytes(spec.internal_merges)),
        "merge_counts": _packed_counts(spec.merge_counts),
        "token_usage": _packed_counts(spec.token_usage),
        "special_tokens": {"tokens": list(spec.special_tokens), "position": spec.special_position},
        "padding": spec.padding,
        **layout,
        "config": spec.config,
        "provenance": spec.provenance,
    }


def encoded(tokenizer: TokenizerView) -> bytes:
    """The tokenizer file's bytes."""
    return (json.dumps(to_dict(tokenizer), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def save(tokenizer: TokenizerView, path: str) -> None:
    with atomic_output(path, binary=True) as handle:
        handle.write(encoded(tokenizer))


def spec_from_content(content: bytes, path: str) -> TokenizerSpec:
    """The spec in a tokenizer file's bytes (`path` names it in errors)."""
    return spec_from_dict(parse_json(content, path, DESCRIPTION), path)


def spec_from_dict(data: Any, path: str) -> TokenizerSpec:
    """The spec in the content of a tokenizer file (`path` names it in errors)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BpeError(f'{path} is not a bpe-core tokenizer file (no "format": "{FORMAT}")')
    version = data.get("version")
    if isinstance(version, int) and version > VERSION:
        raise BpeError(f"{path} has format version {version}; this bpe-core reads up to version {VERSION}, upgrade it")
    try:
        fields = check_fields(data)
    except BpeError as error:
        raise BpeError(f"{path}: {error}") from None
    try:
        pretokenizer_data = data["pretokenizer"]
        name = pretokenizer_data["name"]
        normalizers = tuple(
            ComponentConfig(str(item["name"]), dict(item.get("options", {}))) for item in data.get("normalizers", [])
        )
        plugins = registry()
        recorded_plugins = data.get("plugins", {})
        if not isinstance(recorded_plugins, dict):
            raise BpeError(f'{path}: "plugins" must map plugin names to versions')
        for kind, needed in [("pretokenizer", name)] + [("normalizer", normalizer.name) for normalizer in normalizers]:
            if needed not in plugins.names(kind):
                wanted = ", ".join(f"{plugin} {version}" for plugin, version in recorded_plugins.items())
                raise BpeError(
                    f"{path} needs {kind} {needed!r}"
                    + (f" from plugin {wanted}" if wanted else "")
                    + ", which is not installed"
                )
        try:
            pretokenizer = plugins.pretokenizer(name, pretokenizer_data.get("options", {}))
            for normalizer in normalizers:
                plugins.normalizer(normalizer.name, normalizer.options)
        except BpeError as error:
            raise BpeError(f"{path}: {error}") from None
        if pretokenizer.alphabet() != data["alphabet"]:
            raise BpeError(f"{path}: the alphabet differs from what pretokenizer {name!r} gives with these options")
        merges = fields.merges
        results = fields.merge_results
        special = data.get("special_tokens", {})
        if special.get("position", "end") not in ("end", "start"):
            raise BpeError(f"{path}: special_tokens.position is {special.get('position')!r}; allowed: end, start")
        tokens = tuple(str(token) for token in special.get("tokens", []))
        position = str(special.get("position", "end"))
        return TokenizerSpec(
            name=str(data.get("name", "tokenizer")),
            pretokenizer=ComponentConfig(name, dict(pretokenizer_data.get("options", {}))),
            normalizers=normalizers,
            internal_merges=merges,
            merge_counts=fields.merge_counts,
            merge_results=results,
            token_usage=fields.token_usage,
            special_tokens=tokens,
            special_position=position,
            padding=int(data.get("padding", 0)),
            layout=_layout(data, fields.ids, len(pretokenizer.alphabet()), merges, results, tokens, position),
            config=data.get("config", {}),
            provenance=data.get("provenance", {}),
            plugins=data.get("plugins", {}),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise BpeError(f"{path}: malformed tokenizer file ({type(error).__name__}: {error})") from error


def _layout(
    data: dict[str, Any],
    ids: list[int] | None,
    alphabet_size: int,
    merges: PackedMerges,
    results: list[int] | None,
    tokens: tuple[str, ...],
    position: str,
) -> IdLayout | None:
    """The file's id layout; None when it has none (a trained tokenizer). A layout given in part
    takes training's for the rest."""
    if not any(key in data for key in ("ids", "special_ids", "orphans", "whole_chunks")):
        return None
    if ids is None:
        ids = IdLayout.trained(
            alphabet_size + Encoder(alphabet_size, merges.packed, results=results).token_count, tokens, position
        ).ids
    special_ids = (
        {str(token): int(token_id) for token, token_id in data["special_ids"].items()}
        if "special_ids" in data
        else IdLayout.trained(len(ids), tokens, position).special_ids
    )
    return IdLayout(
        ids,
        special_ids,
        {int(token): [int(symbol) for symbol in symbols] for token, symbols in data.get("orphans", {}).items()},
        {bytes(chunk): int(token) for chunk, token in data.get("whole_chunks", [])},
    )


class CheckedFields(NamedTuple):
    """The large fields `check_fields` unpacked while checking them, so they are read once."""

    merges: PackedMerges
    ids: list[int] | None  # the layout's ids, if the file gives them
    merge_counts: list[int]
    token_usage: list[int]
    merge_results: list[int] | None


def check_fields(data: dict[str, Any]) -> CheckedFields:
    """Every field of a tokenizer file has its type and range (a BpeError names the first that
    does not), so a damaged or hostile file fails here, not as a traceback or a wrong encoding
    later; returns the merges and ids as read. How the ids fit together is checked by
    `layout.check_layout` when the tokenizer is built."""
    check_id(data.get("version"), "version", 1, VERSION)
    _typed(data, "name", str, required=False)
    for index, item in enumerate(_typed(data, "normalizers", list, required=False) or []):
        field = f"normalizers[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise BpeError(f"{field}: expected an object with a name, got {_short(item)}")
        _typed(item, "options", dict, required=False, prefix=field + ".")
    pretokenizer = _typed(data, "pretokenizer", dict)
    _typed(pretokenizer, "name", str, prefix="pretokenizer.")
    _typed(pretokenizer, "options", dict, required=False, prefix="pretokenizer.")
    plugins = _typed(data, "plugins", dict, required=False) or {}
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in plugins.items()):
        raise BpeError("plugins: expected plugin names mapped to versions (strings)")
    alphabet = _typed(data, "alphabet", list)
    if not alphabet or not all(isinstance(label, str) for label in alphabet):
        raise BpeError("alphabet: expected a non-empty list of symbol labels (strings)")
    if "merges" not in data:
        raise BpeError(f"merges: missing; expected {PACKED}")
    merges = PackedMerges(_merges_field(data["merges"]))
    counts = _counts_field(data, "merge_counts", "q")
    if counts and len(counts) != len(merges):
        raise BpeError(f"merge_counts: {len(counts)} counts for {len(merges)} merges")
    usage = _counts_field(data, "token_usage", "q")
    if len(usage) > len(alphabet) + len(merges):
        raise BpeError(f"token_usage: {len(usage)} counts for {len(alphabet) + len(merges)} symbols and merged tokens")
    results = _counts_field(data, "merge_results", "i") if "merge_results" in data else None
    if results is not None and len(results) != len(merges):
        raise BpeError(f"merge_results: {len(results)} results for {len(merges)} merges")
    special = _typed(data, "special_tokens", dict, required=False) or {}
    tokens = _typed(special, "tokens", list, required=False, prefix="special_tokens.") or []
    for index, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise BpeError(f"special_tokens.tokens[{index}]: expected a non-empty string, got {_short(token)}")
        if token in tokens[:index]:
            raise BpeError(f"special_tokens.tokens[{index}]: {_short(token)} is listed twice")
    if special.get("position", "end") not in ("end", "start"):
        raise BpeError(
            f"special_tokens.position: {_short(special.get('position'))} is not allowed; allowed: end, start"
        )
    check_id(data.get("padding", 0), "padding")
    ids = _ids_field(data["ids"]) if "ids" in data else None
    special_ids = _typed(data, "special_ids", dict, required=False)
    if special_ids is not None:
        for token, token_id in special_ids.items():
            check_id(token_id, f"special_ids[{_short(token)}]")
        if set(special_ids) != set(tokens):
            raise BpeError("special_ids: the tokens must be exactly special_tokens.tokens")
    for token, symbols in (_typed(data, "orphans", dict, required=False) or {}).items():
        if not token.isdecimal() or not token.isascii():
            raise BpeError(f"orphans: key {_short(token)} is not a token id")
        check_id(int(token), f"orphans[{token}]")
        if not isinstance(symbols, list) or not symbols:
            raise BpeError(f"orphans[{token}]: expected a non-empty list of base symbol ids, got {_short(symbols)}")
        for symbol in symbols:
            check_id(symbol, f"orphans[{token}]", 0, len(alphabet) - 1)
    for index, entry in enumerate(_typed(data, "whole_chunks", list, required=False) or []):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list)):
            raise BpeError(f"whole_chunks[{index}]: expected [list of bytes, token id], got {_short(entry)}")
        for byte in entry[0]:
            check_id(byte, f"whole_chunks[{index}]", 0, 255)
        check_id(entry[1], f"whole_chunks[{index}]")
    _typed(data, "config", dict, required=False)
    _typed(data, "provenance", dict, required=False)
    return CheckedFields(merges, ids, counts, usage, results)


def _typed(data: dict[str, Any], key: str, kind: type, required: bool = True, prefix: str = "") -> Any:
    """data[key] if it is a `kind` (None when missing and not required), else an error naming the field."""
    if key not in data and not required:
        return None
    value = data.get(key)
    if not isinstance(value, kind):
        found = "missing" if key not in data else f"got {_short(value)}"
        raise BpeError(f"{prefix}{key}: expected {KIND_NAMES.get(kind, kind.__name__)}, {found}")
    return value


KIND_NAMES: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def _packed(data: bytes) -> str:
    return b64encode(data).decode("ascii")


def _packed_counts(counts: list[int]) -> str | list[int]:
    """Counts packed as little-endian 64-bit integers; as a list if one does not fit (the trainer
    keeps counts below 2**63, so only a spec made by hand can have one)."""
    try:
        return _packed(_little_endian(array("q", counts)))
    except OverflowError:
        return counts


def _merges_bytes(merges: Sequence[tuple[int, int]]) -> bytes:
    """Merges as little-endian 32-bit ids, two per merge."""
    if isinstance(merges, PackedMerges):
        return merges.packed
    return _little_endian(array("i", chain.from_iterable(merges)))


def _little_endian(ids: "array[int]") -> bytes:
    if sys.byteorder != "little":
        ids.byteswap()
    return ids.tobytes()


def _unpacked(value: str, field: str, width: int, expected: str = PACKED) -> bytes:
    """The little-endian ids a packed field holds, or an error naming the field. The base64 is
    decoded leniently (in one vectorised pass) and refused unless writing the ids again gives
    exactly the field: the canonical form `_packed` writes, nothing else."""
    try:
        data = b64decode(value)
        canonical = b64encode(data) == value.encode("ascii")
    except ValueError:  # not ASCII, or padding missing
        canonical = False
    if not canonical:
        raise BpeError(f"{field}: not valid base64; expected {expected}")
    if len(data) % width:
        raise BpeError(f"{field}: {len(data)} bytes, not a whole number of {width}-byte entries; expected {expected}")
    return data


def _has_negative(packed: bytes) -> bool:
    """Whether some little-endian 32-bit id is negative: its last byte has the top bit set (one
    pass in C, where min() would make an int per id)."""
    return not packed[3::4].isascii()


def _ids_of(packed: bytes, typecode: str = "i") -> "array[int]":
    """The little-endian integers of a packed field (`typecode` "i": 32-bit, "q": 64-bit)."""
    ids = array(typecode, packed)
    if sys.byteorder != "little":
        ids.byteswap()
    return ids


def _merges_field(value: object) -> bytes:
    """The merges, as little-endian 32-bit ids two per merge, from either form; checked."""
    if isinstance(value, str):
        packed = _unpacked(value, "merges", 8)
        if _has_negative(packed):
            raise BpeError(f"merges: id {min(_ids_of(packed))} is negative; token ids are 0 or more")
        return packed
    if not isinstance(value, list):
        raise BpeError(f"merges: expected {PACKED}, got {_short(value)}")
    if not (set(map(type, value)) <= {list} and set(map(len, value)) <= {2} and _ints_within(_flat(value), 0)):
        for index, merge in enumerate(value):  # the first that is not a pair of ids, for the error
            if not (
                isinstance(merge, list)
                and len(merge) == 2
                and all(is_int(part) and 0 <= part <= MAX_ID for part in merge)
            ):
                raise BpeError(f"merges[{index}]: expected a pair of token ids [left, right], got {_short(merge)}")
    return _little_endian(array("i", _flat(value)))


def _ids_field(value: object) -> list[int]:
    """The layout's ids (-1: a dropped base symbol), from either form; checked."""
    if isinstance(value, str):
        packed = _unpacked(value, "ids", 4)
        ids = _ids_of(packed).tolist()
        if _has_negative(packed) and min(ids) < -1:
            raise BpeError(f"ids: {min(ids)} is out of range; allowed: -1 to {MAX_ID}")
        return ids
    if not isinstance(value, list):
        raise BpeError(f"ids: expected a list of ids or their packed form, got {_short(value)}")
    if not _ints_within(value, -1):
        for index, token in enumerate(value):
            check_id(token, f"ids[{index}]", -1)
    return list(value)


def _counts_field(data: dict[str, Any], key: str, typecode: str) -> list[int]:
    """A list of integers >= 0 (counts, or merge results), from either form; checked. Empty
    when the file has none."""
    value = data.get(key, [])
    width = array(typecode).itemsize
    expected = PACKED_COUNTS.format(bits=8 * width)
    if isinstance(value, str):
        packed = _unpacked(value, key, width, expected)
        counts = _ids_of(packed, typecode)
        if not packed[width - 1 :: width].isascii():  # a top bit set: a negative number
            raise BpeError(f"{key}: {min(counts)} is negative; expected {expected}")
        return counts.tolist()
    if not isinstance(value, list):
        raise BpeError(f"{key}: expected {expected}, got {_short(value)}")
    if not _ints_within(value, 0, None):
        for index, count in enumerate(value):
            if not is_int(count) or count < 0:
                raise BpeError(f"{key}[{index}]: expected an integer >= 0, got {_short(count)}")
    return list(value)


def _flat(pairs: list[list[Any]]) -> list[Any]:
    return list(chain.from_iterable(pairs))


def _ints_within(values: list[Any], low: int, high: int | None = MAX_ID) -> bool:
    """Whether every value is an integer (not a bool) from low to high (None: no bound), checked
    without a Python step per value: the common case of a large, well-formed file."""
    if not set(map(type, values)) <= {int}:
        return False
    return not values or (min(values) >= low and (high is None or max(values) <= high))


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, (bytes, set)) else repr(value)
    return text if len(text) <= 60 else text[:40] + f"... ({len(text)} characters)"
