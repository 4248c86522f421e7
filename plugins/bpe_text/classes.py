"""The class table and case-folding map the compiled scanners use, computed from `regex` itself
so that a scanner and the pattern agree on every code point (including unassigned ones and
surrogates).

Building them asks `regex` about every code point, a noticeable part of a small training run and
most of a first tokenizer load, so they are built once per installed `regex` version and kept,
compressed and with their checksum, in the user's cache folder: `BPE_CORE_CACHE` if set (empty:
keep nothing), else `$XDG_CACHE_HOME/bpe-core` or `~/.cache/bpe-core`. A later process reads that
small file instead. The package ships the files built with the `regex` it was released with
(`tables/`, written by `ship_tables`), read when the installed `regex` is that one. A file that is
unreadable or does not match its checksum is built again, and a folder that cannot be written is
only not used.
"""

import contextlib
import hashlib
import importlib.util
import os
import zlib
from array import array
from collections.abc import Callable
from functools import cache

from bpe_core.contract import cache_folder
from bpe_text.scanner import LETTER, LOWERISH, NUMBER, SPACE, UPPERISH

CLASSES = (
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (UPPERISH, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (LOWERISH, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
)
CONTRACTION_LETTERS = "sdmtlvre"
SHIPPED = os.path.join(os.path.dirname(__file__), "tables")


def every_code_point() -> str:
    """Every code point in order, lone surrogates included: its UTF-32 bytes laid out byte column
    by byte column, then decoded in one call (joining 1.1 million `chr`s is far slower); not
    cached, so the string goes once the tables are built)."""
    size = 0x110000
    utf32 = bytearray(4 * size)
    utf32[0::4] = bytes(range(256)) * (size // 256)
    utf32[1::4] = b"".join(bytes([middle]) * 256 for middle in range(256)) * (size // 65536)
    utf32[2::4] = b"".join(bytes([plane]) * 65536 for plane in range(size // 65536))
    return utf32.decode("utf-32-le", "surrogatepass")


def kept(name: str, build: Callable[[], bytes]) -> bytes:
    """build(), or what an earlier process kept of it: the file's name holds a digest of what the
    tables are built from (the definitions here and the `regex` version), its content a sha256 of
    the bytes and the bytes compressed."""
    file_name = kept_file_name(name)
    folder = cache_folder()
    path = os.path.join(folder, file_name) if folder else None
    for kept_path in (path, os.path.join(SHIPPED, file_name)):
        data = _read_kept(kept_path) if kept_path is not None else None
        if data is not None:
            return data
    data = build()
    if path is not None:
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(temporary, "wb") as handle:
                handle.write(_stored(data))
            os.replace(temporary, path)  # whole or not at all, whoever writes at the same time
        except OSError:
            with contextlib.suppress(OSError):  # a half-written file, if there is one
                os.unlink(temporary)
    return data


def kept_file_name(name: str) -> str:
    """A kept file's name: a digest of what the table is built from (the definitions here and the
    `regex` version)."""
    recipe = repr((CLASSES, CONTRACTION_LETTERS, regex_version(), name))
    return f"{name}-{hashlib.sha256(recipe.encode()).hexdigest()[:16]}.bin"


@cache
def regex_version() -> str:
    """The installed `regex` version, read from the name of its distribution's metadata folder
    beside the package when there is one (importing `regex` costs more than the rest of reading
    a kept table); else `regex.__version__`."""
    found = importlib.util.find_spec("regex")
    if found is not None and found.origin is not None:
        folder = os.path.dirname(os.path.dirname(found.origin))
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if name.startswith("regex-") and name.endswith(".dist-info"):
                    return name.removeprefix("regex-").removesuffix(".dist-info")
    import regex

    return str(regex.__version__)


def _stored(data: bytes) -> bytes:
    return hashlib.sha256(data).digest() + zlib.compress(data)


def _read_kept(path: str) -> bytes | None:
    """A kept file's table, or None when it is missing, unreadable or damaged."""
    try:
        with open(path, "rb") as handle:
            stored = handle.read()
        data = zlib.decompress(stored[32:])
    except (OSError, zlib.error):
        return None
    return data if hashlib.sha256(data).digest() == stored[:32] else None


def ship_tables(folder: str) -> list[str]:
    """Write the tables built with the installed `regex` into `folder` (the source tree's
    `plugins/bpe_text/tables`, when `regex` is upgraded), replacing those of other versions."""
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        if old.endswith(".bin"):
            os.unlink(os.path.join(folder, old))
    written = []
    for name, build in (("classes", build_class_table), ("folds", build_case_folds)):
        path = os.path.join(folder, kept_file_name(name))
        with open(path, "wb") as handle:
            handle.write(_stored(build()))
        written.append(path)
    return written


@cache
def class_table() -> bytes:
    """One byte per code point (0..0x10FFFF) with the class bits set."""
    return kept("classes", build_class_table)


@cache
def case_folds() -> dict[int, int]:
    """Code point -> the contraction letter it matches under (?i), as `regex` decides."""
    pairs = array("I")
    pairs.frombytes(kept("folds", build_case_folds))
    return dict(zip(pairs[0::2], pairs[1::2]))


def build_class_table() -> bytes:
    """`class_table`, built from `regex`."""
    import regex

    every = every_code_point()
    combined = 0
    for bit, pattern in CLASSES:
        marks = bytearray(0x110000)
        for match in regex.finditer(pattern + "+", every):
            marks[match.start() : match.end()] = b"\x01" * (match.end() - match.start())
        # each byte is 0 or 1, so shifting the whole number moves bit 0 of every byte in place
        combined |= int.from_bytes(marks, "little") << (bit.bit_length() - 1)
    return combined.to_bytes(0x110000, "little")


def build_case_folds() -> bytes:
    """`case_folds`, built from `regex`: (code point, letter) pairs as uint32s, in code point order."""
    import regex

    every = every_code_point()
    folds: dict[int, int] = {}
    for letter in CONTRACTION_LETTERS:
        for match in regex.finditer(f"(?i:{letter})", every):
            folds[match.start()] = ord(letter)
    return array("I", [value for point in sorted(folds) for value in (point, folds[point])]).tobytes()
