"""Built-in DNA plugin: FASTA/FASTQ readers (Biopython), the `dna-nucleotides` and `dna-kmers`
pretokenizers and their decoders. Registered through the `bpe_core` entry-point group.

Each component's module is imported when the component is built, not when the plugin is found:
every command that builds a component finds all plugins, and one of text should not pay for
DNA's modules.
"""

from typing import Any

from bpe_core.contract import Decoder, DecoderFactory, Pretokenizer, PretokenizerFactory, Reader, ReaderFactory
from bpe_core.hookspecs import hookimpl

__version__ = "0.1.0"


def nucleotide_pretokenizer(options: dict[str, Any]) -> Pretokenizer:
    from bpe_dna.pretokenizers import NucleotidePretokenizer

    return NucleotidePretokenizer(options)


def kmer_pretokenizer(options: dict[str, Any]) -> Pretokenizer:
    from bpe_dna.pretokenizers import KmerPretokenizer

    return KmerPretokenizer(options)


def fasta_reader(options: dict[str, Any]) -> Reader:
    from bpe_dna.readers import FastaReader

    return FastaReader(options)


def fastq_reader(options: dict[str, Any]) -> Reader:
    from bpe_dna.readers import FastqReader

    return FastqReader(options)


def nucleotide_decoder(options: dict[str, Any]) -> Decoder:
    from bpe_dna.decoding import NucleotideDecoder

    return NucleotideDecoder(options)


def kmer_decoder(options: dict[str, Any]) -> Decoder:
    from bpe_dna.decoding import KmerDecoder

    return KmerDecoder(options)


@hookimpl
def bpe_core_pretokenizers() -> dict[str, PretokenizerFactory]:
    return {"dna-nucleotides": nucleotide_pretokenizer, "dna-kmers": kmer_pretokenizer}


@hookimpl
def bpe_core_readers() -> dict[str, ReaderFactory]:
    return {"fasta": fasta_reader, "fastq": fastq_reader}


@hookimpl
def bpe_core_decoders() -> dict[str, DecoderFactory]:
    return {"dna": nucleotide_decoder, "dna-kmers": kmer_decoder}
