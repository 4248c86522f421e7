"""The framework's side of `PacksChunks` and `CountsPacked`: a pretokenizer gives documents'
chunks as data (`contract.PackedChunks`), and only this module hands them to the engine, to
encode (`Encoder`) or to count (`ChunkCounts`), so plugins never see the engine. It does not
split documents.
"""

from typing import Any

from bpe_core.contract import CountsPacked, PackedChunks, PacksChunks
from bpe_core.engine import ChunkCounts, Encoder


def prepare(encoder: Encoder, packer: PacksChunks) -> None:
    """Build what packing and encoding packed chunks use (units included), so that workers forked
    afterwards share it instead of each building its own."""
    packer.prepare()
    encoder.set_units(packer.unit_roles())
    encoder.prepare_ranges()


def encode_packed(encoder: Encoder, packed: PackedChunks) -> list[list[int]]:
    """Each packed document's ids, in the encoder's output layout."""
    return encoder.encode_documents(packed.symbols, packed.ends, packed.documents, packed.repeats_long)


def encode_documents(encoder: Encoder, packer: PacksChunks, documents: list[Any]) -> list[list[int]]:
    """Each document's ids, its chunks packed by the pretokenizer."""
    return encode_packed(encoder, packer.pack(documents))


def count_documents(counts: ChunkCounts, packer: CountsPacked, documents: list[Any]) -> None:
    """Add each chunk training counts in the documents once to `counts`, as its packed symbols."""
    packed = packer.pack_counted(documents)
    if packed.documents:
        counts.add_ranges(packed.symbols, packed.ends, 0, packed.documents[-1], 0)
