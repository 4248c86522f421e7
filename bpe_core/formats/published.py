"""The merges of published tiktoken vocabularies, shipped with the package.

A `.tiktoken` file holds ranks, not merges, and recovering the merges of cl100k_base or
o200k_base is most of what loading it costs. The package ships what recovery gives for them
(`shipped/NAME.merges`, written by `ship`), so that a first load in a fresh process neither
parses the tokens nor recovers merges, and needs no kept spec (`spec_cache`). They are used only
for a file whose SHA-256 is the published one (`formats.tiktoken.PUBLISHED`), so they belong to
its content by construction, and tests/test_published.py recovers them afresh from the files and
compares. A shipped file that is missing, unreadable or fails its own checksum is not used: the
merges are recovered as for any other file (and, for a damaged one, not kept: the installation
is what needs mending).

A shipped file: MAGIC, the SHA-256 of the rest, then the rest: the ranks of the 256 single bytes,
then the merges (two ids each, in rank order), all little-endian 32-bit integers.
"""

import hashlib
import os
import sys
from array import array

from bpe_core.files import atomic_output
from bpe_core.spec import PackedMerges

MAGIC = b"bpe-core published merges 1\n"
FOLDER = os.path.join(os.path.dirname(__file__), "shipped")
SUFFIX = ".merges"
BYTE_RANKS_SIZE = 256 * 4


def ships(name: str) -> bool:
    """Whether the package ships a file for the published vocabulary `name` (whole or not)."""
    return os.path.isfile(os.path.join(FOLDER, name + SUFFIX))


def shipped_merges(name: str) -> tuple[list[int], PackedMerges] | None:
    """The single bytes' ranks and the merges recovery gives for the published vocabulary `name`,
    if the package ships them whole; None otherwise."""
    if sys.byteorder != "little":  # the ids are kept little-endian, as the engine reads them
        return None
    try:
        with open(os.path.join(FOLDER, name + SUFFIX), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    start = len(MAGIC) + 32
    rest = memoryview(data)[start:]
    if (
        not data.startswith(MAGIC)
        or hashlib.sha256(rest).digest() != data[len(MAGIC) : start]
        or len(rest) < BYTE_RANKS_SIZE
        or (len(rest) - BYTE_RANKS_SIZE) % 8
    ):
        return None
    return array("i", bytes(rest[:BYTE_RANKS_SIZE])).tolist(), PackedMerges(data[start + BYTE_RANKS_SIZE :])


def ship(name: str, byte_ranks: list[int], merges: PackedMerges, folder: str) -> str:
    """Write the file shipped for the published vocabulary `name` into `folder` (whole or not at
    all); its path."""
    if len(byte_ranks) != 256:
        raise ValueError("a rank for each of the 256 single bytes")
    rest = array("i", byte_ranks).tobytes() + merges.packed
    path = os.path.join(folder, name + SUFFIX)
    os.makedirs(folder, exist_ok=True)
    with atomic_output(path, binary=True) as handle:
        handle.write(MAGIC + hashlib.sha256(rest).digest() + rest)
    return path
