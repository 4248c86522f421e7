"""Built-in DNA plugin: FASTA/FASTQ readers (Biopython), the `dna-nucleotides` and `dna-kmers`
pretokenizers and their decoders. Registered through the `bpe_core` entry-point group."""

from bpe_core.contract import DecoderFactory, PretokenizerFactory, ReaderFactory
from bpe_core.hookspecs import hookimpl
from bpe_dna.decoding import KmerDecoder, NucleotideDecoder
from bpe_dna.pretokenizers import KmerPretokenizer, NucleotidePretokenizer
from bpe_dna.readers import FastaReader, FastqReader

__version__ = "0.1.0"


@hookimpl
def bpe_core_pretokenizers() -> dict[str, PretokenizerFactory]:
    return {"dna-nucleotides": NucleotidePretokenizer, "dna-kmers": KmerPretokenizer}


@hookimpl
def bpe_core_readers() -> dict[str, ReaderFactory]:
    return {"fasta": FastaReader, "fastq": FastqReader}


@hookimpl
def bpe_core_decoders() -> dict[str, DecoderFactory]:
    return {"dna": NucleotideDecoder, "dna-kmers": KmerDecoder}
