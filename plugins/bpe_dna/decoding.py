"""DNA decoders: symbols back to a sequence, and sequences to FASTA files."""

from typing import Any

from bpe_core.errors import BpeError
from bpe_core.files import atomic_output

LINE = 60


def write_fasta(document: Any, path: str, record_id: str = "decoded") -> None:
    sequence = str(document)
    with atomic_output(path) as handle:
        handle.write(f">{record_id}\n")
        for start in range(0, len(sequence), LINE):
            handle.write(sequence[start : start + LINE] + "\n")


class NucleotideDecoder:
    """Each symbol is one letter."""

    name = "dna"

    def __init__(self, options: dict[str, Any]) -> None:
        if options:
            raise BpeError(f"decoder 'dna' has no option {sorted(options)[0]!r}")

    def decode(self, symbols: list[int], alphabet: list[str]) -> str:
        return "".join(alphabet[symbol] for symbol in symbols)

    def write(self, document: Any, path: str) -> None:
        write_fasta(document, path)


class KmerDecoder:
    """k-mers back to the sequence: a chunk's first k-mer gives k letters, each next one the
    `stride` letters it adds; single letters and N-padded tails give their letters."""

    name = "dna-kmers"

    def __init__(self, options: dict[str, Any]) -> None:
        self.k = int(options.get("k", 6))
        self.stride = int(options.get("stride", self.k))
        self.padded = bool(options.get("padded", False))

    def decode(self, symbols: list[int], alphabet: list[str]) -> str:
        k, stride = self.k, self.stride
        pieces: list[str] = []
        in_kmers = False
        for symbol in symbols:
            label = alphabet[symbol]
            tail = self.padded and len(label) == k and "N" in label
            if len(label) == k and not tail:
                pieces.append(label[k - stride :] if in_kmers else label)
                in_kmers = True
            else:
                pieces.append(label.rstrip("N") if tail else label)
                in_kmers = False
        return "".join(pieces)

    def write(self, document: Any, path: str) -> None:
        write_fasta(document, path)
