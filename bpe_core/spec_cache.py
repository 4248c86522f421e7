"""Tokenizer specs kept between processes, so that loading a large vocabulary a second time
neither parses nor checks its file, nor recovers merges (a `.tiktoken` file holds none). The
imports keep theirs (`.tiktoken` files, Hugging Face's `tokenizer.json`); our own file holds its
merges packed and is read about as fast as an entry would be, so it is read every time.

An entry is found by a digest of the file's bytes, the reader and its options, and what the spec
is made by (bpe-core's version, the code of the readers and of the merge recovery, for a compiled
module the source it was compiled from, the installed plugins): a file that changed, a new
bpe-core or another plugin finds no entry and is read as usual. Each entry holds a SHA-256 of its
name and content, checked before use; an entry that is unreadable, foreign or damaged is read
again from the file and replaced, never trusted.
An entry is written only once a tokenizer was built from its spec (so its ids fit together),
atomically (a temporary file renamed); a folder that cannot be written is only not used, and the
folder keeps at most MAX_ENTRIES, the least recently used going first.

The folder is `BPE_CORE_CACHE` if set (empty: keep nothing), else `$XDG_CACHE_HOME/bpe-core` or
`~/.cache/bpe-core`. Files smaller than MIN_SIZE are read every time: that is cheaper than a kept
copy. An entry is a header line, a JSON document of the small fields, and the id lists as
little-endian 32-bit (ids, merges) and 64-bit (counts) arrays. It holds no built table: the engine
builds its merge table from the packed merges about as fast as it would read one back, and an
image of it would be several times the size of the spec, to write, hash and read.
"""

import contextlib
import hashlib
import importlib.util
import json
import os
import sys
import time
from array import array
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from bpe_core.contract import cache_folder
from bpe_core.errors import BpeError
from bpe_core.plugins import registry
from bpe_core.spec import ComponentConfig, IdLayout, PackedMerges, TokenizerSpec
from bpe_core.version import VERSION

MAGIC = b"bpe-core kept spec 2\n"
MIN_SIZE = 1 << 18
MAX_ENTRIES = 16
PREFIX = "spec-"
ABANDONED_AFTER = 3600  # seconds after which a temporary file is a killed writer's
# the modules whose code makes a kept spec (a .tiktoken file's merges are recovered by the engine's
# kernel): a change to any of them makes new entries
MAKERS = (
    "bpe_core.formats.hf",
    "bpe_core.formats.tiktoken",
    "bpe_core.formats.layout",
    "bpe_core.spec",
    "bpe_core.spec_cache",
    "bpe_core.engine.encode.recover",
    "bpe_core.engine.encode.kernel",
    "bpe_core.engine.encode.pair_ranks",
    "bpe_core.engine.tables",
)
COMPILED_SUFFIX = ".so"  # a mypyc module's: its code is in the group library, its source beside it
Built = TypeVar("Built")
# the arrays of an entry, in order: (name, typecode)
ARRAYS = (("merges", "i"), ("merge_results", "i"), ("ids", "i"), ("merge_counts", "q"), ("token_usage", "q"))


def spec_entry(content: bytes, reader: str, options: object, digest: str | None = None) -> str | None:
    """Where the spec of a file with these bytes, read by `reader` with `options`, is kept; None
    when none is (see the module docstring). `digest`: the content's SHA-256 in hex, when the
    caller has hashed it already."""
    folder = cache_folder()
    if folder is None or len(content) < MIN_SIZE or sys.byteorder != "little":
        return None
    code = _makers_digest()
    if code is None:  # a maker's code cannot be read
        return None
    made_by = (reader, options, VERSION, code, sorted(registry().plugin_versions().items()))
    key = hashlib.sha256(repr((digest or hashlib.sha256(content).hexdigest(), *made_by)).encode()).hexdigest()
    return os.path.join(folder, f"{PREFIX}{key}.bin")


def kept_tokenizer(
    entry: str | None, read: Callable[[], TokenizerSpec], build: Callable[[TokenizerSpec, bool], Built]
) -> Built:
    """`build(spec, True)` of the spec an earlier process kept at `entry` (`spec_entry`), or
    `build(spec, False)` of the spec `read()` makes, kept there once the tokenizer is built (so a
    kept spec's ids are known to fit)."""
    built = found_tokenizer(entry, build)
    if built is not None:
        return built
    spec = read()
    built = build(spec, False)
    if entry is not None:
        with contextlib.suppress(OSError, ValueError, TypeError):
            _keep(entry, _encoded(spec, os.path.basename(entry)))
    return built


def found_tokenizer(entry: str | None, build: Callable[[TokenizerSpec, bool], Built]) -> Built | None:
    """`build(spec, True)` of the spec kept at `entry`, or None when there is none, or not a whole
    one: what tells a file's kind by parsing it can ask first, as only a file of that kind is kept
    under that reader."""
    if entry is None:
        return None
    try:
        with open(entry, "rb") as handle:
            spec = _decoded(handle.read(), os.path.basename(entry))
        built = build(spec, True)
    except (OSError, ValueError, KeyError, TypeError, BpeError):  # none kept, or not a whole one
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # recently used
    return built


@cache
def _makers_digest() -> str | None:
    """A digest of the makers' code, read once a process; None when some cannot be read."""
    digest = hashlib.sha256()
    for name in MAKERS:
        found = importlib.util.find_spec(name)  # where its code is, without running it
        module_file = found.origin if found is not None else None
        if module_file is None:
            return None
        if module_file.endswith(COMPILED_SUFFIX):
            folder, file_name = os.path.split(module_file)
            module_file = os.path.join(folder, file_name.split(".")[0] + ".py")
        try:
            with open(module_file, "rb") as handle:
                digest.update(handle.read())
        except OSError:
            return None
    return digest.hexdigest()


def _encoded(spec: TokenizerSpec, name: str) -> bytes:
    """An entry's bytes: header, a SHA-256 of its name and the rest (so an entry under another
    name is refused as foreign), the rest."""
    layout = spec.layout
    small = {
        "name": spec.name,
        "pretokenizer": [spec.pretokenizer.name, spec.pretokenizer.options],
        "normalizers": [[item.name, item.options] for item in spec.normalizers],
        "special_tokens": list(spec.special_tokens),
        "special_position": spec.special_position,
        "padding": spec.padding,
        "config": spec.config,
        "provenance": spec.provenance,
        "plugins": spec.plugins,
        "has_results": spec.merge_results is not None,
        "layout": None
        if layout is None
        else {
            "special_ids": layout.special_ids,
            "orphans": [[token, symbols] for token, symbols in layout.orphans.items()],
            "whole_chunks": [[list(chunk), token] for chunk, token in layout.whole_chunks.items()],
        },
    }
    lists: dict[str, list[int]] = {
        "merges": []
        if isinstance(spec.internal_merges, PackedMerges)
        else [token for pair in spec.internal_merges for token in pair],
        "merge_results": spec.merge_results or [],
        "ids": layout.ids if layout is not None else [],
        "merge_counts": spec.merge_counts,
        "token_usage": spec.token_usage,
    }
    arrays = [array(typecode, lists[name]).tobytes() for name, typecode in ARRAYS]
    if isinstance(spec.internal_merges, PackedMerges):
        arrays[0] = spec.internal_merges.packed
    head = json.dumps(small, ensure_ascii=False).encode() + b"\n"
    sizes = json.dumps([len(head), *map(len, arrays)]).encode() + b"\n"
    rest = sizes + head + b"".join(arrays)
    return MAGIC + hashlib.sha256(name.encode() + rest).digest() + rest


def _decoded(entry: bytes, name: str) -> TokenizerSpec:
    """The spec in the entry kept under `name`; a ValueError (or KeyError, TypeError) when it is
    not a whole one, or another's."""
    if not entry.startswith(MAGIC):
        raise ValueError("not a kept spec")
    digest = hashlib.sha256(name.encode())
    digest.update(memoryview(entry)[len(MAGIC) + 32 :])
    if digest.digest() != entry[len(MAGIC) : len(MAGIC) + 32]:
        raise ValueError("damaged, or another's")
    line_end = entry.index(b"\n", len(MAGIC) + 32)
    sizes = json.loads(entry[len(MAGIC) + 32 : line_end])
    offset = line_end + 1
    small: dict[str, Any] = json.loads(entry[offset : offset + sizes[0]])
    offset += sizes[0]
    stored: dict[str, bytes] = {}
    for (field, _), size in zip(ARRAYS, sizes[1:], strict=True):
        stored[field] = entry[offset : offset + size]
        offset += size
    lists = {field: array(typecode, stored[field]) for field, typecode in ARRAYS if field != "merges"}
    if offset != len(entry):
        raise ValueError("damaged")
    stored_layout = small["layout"]
    layout = None
    if stored_layout is not None:
        layout = IdLayout(
            lists["ids"].tolist(),
            stored_layout["special_ids"],
            {token: symbols for token, symbols in stored_layout["orphans"]},
            {bytes(chunk): token for chunk, token in stored_layout["whole_chunks"]},
        )
    return TokenizerSpec(
        name=small["name"],
        pretokenizer=ComponentConfig(*small["pretokenizer"]),
        internal_merges=PackedMerges(stored["merges"]),
        normalizers=tuple(ComponentConfig(component, options) for component, options in small["normalizers"]),
        merge_counts=lists["merge_counts"].tolist(),
        merge_results=lists["merge_results"].tolist() if small["has_results"] else None,
        token_usage=lists["token_usage"].tolist(),
        special_tokens=tuple(small["special_tokens"]),
        special_position=small["special_position"],
        padding=small["padding"],
        layout=layout,
        config=small["config"],
        provenance=small["provenance"],
        plugins=small["plugins"],
    )


def _keep(path: str, entry: bytes) -> None:
    """Write an entry whole or not at all, then drop the least recently used beyond MAX_ENTRIES."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            handle.write(entry)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    names = [name for name in os.listdir(folder) if name.startswith(PREFIX)]
    entries = sorted((os.path.join(folder, name) for name in names if name.endswith(".bin")), key=_last_used)
    # and what a killed writer left behind
    abandoned = [
        os.path.join(folder, name)
        for name in names
        if name.endswith(".tmp") and _last_used(os.path.join(folder, name)) < time.time() - ABANDONED_AFTER
    ]
    for stale in entries[: max(len(entries) - MAX_ENTRIES, 0)] + abandoned:
        with contextlib.suppress(OSError):
            os.unlink(stale)


def _last_used(path: str) -> float:
    with contextlib.suppress(OSError):
        return os.stat(path).st_mtime
    return 0.0
