"""bpe-core's own tokenizer file: one versioned JSON document with everything needed to encode.

It holds the format version, the pipeline config (component names and options, plugin
versions), the alphabet, the merges with their training counts, the special tokens and the
training provenance. Writing is atomic. This module does not read other libraries' formats.
"""

import json
import os
from typing import TYPE_CHECKING, Any

from bpe_core.errors import BpeError
from bpe_core.files import atomic_output, read_json
from bpe_core.plugins import registry

if TYPE_CHECKING:
    from bpe_core.pipeline import Tokenizer

FORMAT = "bpe-core"
VERSION = 1


def to_dict(tokenizer: "Tokenizer") -> dict[str, Any]:
    layout: dict[str, Any] = {}
    shift = len(tokenizer.special_tokens) if tokenizer.special_position == "start" else 0
    default_ids = [internal + shift for internal in range(len(tokenizer._external))]
    if tokenizer._external != default_ids:  # an imported vocabulary keeps its own ids
        layout = {
            "ids": tokenizer._external,
            "special_ids": tokenizer.special_ids,
            "orphans": {str(token): symbols for token, symbols in tokenizer._orphans.items()},
            "whole_chunks": [[list(chunk), token] for chunk, token in tokenizer._whole_chunks.items()],
        }
    if tokenizer.merge_results is not None:
        layout["merge_results"] = tokenizer.merge_results
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": tokenizer.name,
        "normalizers": [{"name": name, "options": options} for name, options in tokenizer.normalizer_specs],
        "pretokenizer": {"name": tokenizer.pretokenizer.name, "options": tokenizer.pretokenizer.options()},
        "plugins": tokenizer.plugins,
        "alphabet": tokenizer.alphabet,
        "merges": [list(pair) for pair in tokenizer._merges],
        "merge_counts": tokenizer.merge_counts,
        "token_usage": tokenizer.token_usage,
        "special_tokens": {"tokens": tokenizer.special_tokens, "position": tokenizer.special_position},
        "padding": tokenizer.padding,
        **layout,
        "config": tokenizer.config,
        "provenance": tokenizer.provenance,
    }


def save(tokenizer: "Tokenizer", path: str) -> None:
    with atomic_output(path) as handle:
        handle.write(json.dumps(to_dict(tokenizer), ensure_ascii=False, separators=(",", ":")) + "\n")


def load(path: str | os.PathLike[str]) -> "Tokenizer":
    """Read a tokenizer file written by `Tokenizer.save`.

    >>> tok = bpe_core.load("gpt2-32k.json")
    """
    path = os.fspath(path)
    return from_dict(read_json(path, "tokenizer file"), path)


def from_dict(data: Any, path: str) -> "Tokenizer":
    """A tokenizer from the content of a tokenizer file (`path` names it in errors)."""
    from bpe_core.pipeline import Tokenizer

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BpeError(f"{path} is not a bpe-core tokenizer file (no \"format\": \"{FORMAT}\")")
    version = data.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise BpeError(f"{path} has format version {version}; this bpe-core reads up to version {VERSION}, upgrade it")
    try:
        pretokenizer_data = data["pretokenizer"]
        name = pretokenizer_data["name"]
        normalizers = [(str(item["name"]), dict(item.get("options", {}))) for item in data.get("normalizers", [])]
        plugins = registry()
        recorded_plugins = data.get("plugins", {})
        if not isinstance(recorded_plugins, dict):
            raise BpeError(f"{path}: \"plugins\" must map plugin names to versions")
        for kind, needed in [("pretokenizer", name)] + [("normalizer", normalizer) for normalizer, _ in normalizers]:
            if needed not in plugins.names(kind):
                wanted = ", ".join(f"{plugin} {version}" for plugin, version in recorded_plugins.items())
                raise BpeError(
                    f"{path} needs {kind} {needed!r}" + (f" from plugin {wanted}" if wanted else "") + ", which is not installed"
                )
        try:
            pretokenizer = plugins.pretokenizer(name, pretokenizer_data.get("options", {}))
            for normalizer, options in normalizers:
                plugins.normalizer(normalizer, options)
        except BpeError as error:
            raise BpeError(f"{path}: {error}") from None
        if pretokenizer.alphabet() != data["alphabet"]:
            raise BpeError(f"{path}: the alphabet differs from what pretokenizer {name!r} gives with these options")
        merges = [(int(left), int(right)) for left, right in data["merges"]]
        special = data.get("special_tokens", {})
        if special.get("position", "end") not in ("end", "start"):
            raise BpeError(f"{path}: special_tokens.position is {special.get('position')!r}; allowed: end, start")
        return Tokenizer(
            name=str(data.get("name", "tokenizer")),
            pretokenizer=pretokenizer,
            merges=merges,
            merge_counts=[int(count) for count in data.get("merge_counts", [])],
            token_usage=[int(count) for count in data.get("token_usage", [])],
            merge_results=[int(result) for result in data["merge_results"]] if "merge_results" in data else None,
            special_tokens=list(special.get("tokens", [])),
            special_position=str(special.get("position", "end")),
            normalizers=normalizers,
            padding=int(data.get("padding", 0)),
            ids=[int(token) for token in data["ids"]] if "ids" in data else None,
            special_ids={str(token): int(token_id) for token, token_id in data["special_ids"].items()}
            if "special_ids" in data
            else None,
            orphans={int(token): [int(symbol) for symbol in symbols] for token, symbols in data.get("orphans", {}).items()},
            whole_chunks={bytes(chunk): int(token) for chunk, token in data.get("whole_chunks", [])},
            config=data.get("config", {}),
            provenance=data.get("provenance", {}),
            plugins=data.get("plugins", {}),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise BpeError(f"{path}: malformed tokenizer file ({type(error).__name__}: {error})") from error
