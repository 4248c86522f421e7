"""DNA pretokenizers: single nucleotides (`dna-nucleotides`) and k-mers (`dna-kmers`).

Policies (options) decide what happens to lower case (soft-masking), N and the other IUPAC
ambiguity letters; anything else in a sequence is an error that names the record and position.
`split` gives what encoding uses; `count` (training) may add windows' overlaps and the reverse
complement strand; with `reverse_complement: symmetric` the pretokenizer also hands training the
complement as a mirror of the symbols (`symbol_mirror`), so each merge is learned with its reverse
complement partner, and `resolve_overlaps: mirrored` asks encoding to resolve overlapping merges
as mirror images of their partners (`mirrored_overlaps`). This module does not read files.
"""

import os
import re
from collections import Counter
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from bpe_core.contract import PackedChunks, TokenDrawing, check_options
from bpe_core.errors import BpeError
from bpe_dna import drawing
from bpe_dna.readers import FASTA_SUFFIXES, FASTQ_SUFFIXES, Record

BASES = "ACGT"
IUPAC = "RYKMSWBDHV"
COMPLEMENT = str.maketrans("ACGTNRYKMSWBDHVacgtnrykmswbdhv", "TGCANYRMKSWVHDBtgcanyrmkswvhdb")
# What Hugging Face's normalizer writes after each whole k-mer of a dna-kmers export, so its BPE
# (which starts from characters) can build every k-mer in place: see KmerPretokenizer.hf_components.
KMER_END = "|"
# What an input KMER_END becomes first: a character outside the vocabulary, so that it is an error
# in Hugging Face as it is in bpe-core, not a k-mer end.
NOT_A_LETTER = "\ufffd"
NOT_A_SYMBOL = 255  # in NucleotidePretokenizer.symbol_table: a byte that is no letter of the alphabet
# what the error for a path given as a sequence says to do instead
ENCODE_FILE = "encode takes a sequence; give a FASTA/FASTQ file to Tokenizer.encode_file(path), one id list per record"


def _choice(name: str, options: dict[str, Any], key: str, allowed: tuple[Any, ...]) -> Any:
    value = options.get(key, allowed[0])
    if value not in allowed:
        shown = ", ".join("null" if item is None else str(item).lower() for item in allowed)
        raise BpeError(f"pretokenizer.{key}: {value!r} is not allowed for {name}; allowed: {shown}")
    return value


def _integer(options: dict[str, Any], key: str, default: int | None, low: int, high: int) -> int | None:
    value = options.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BpeError(f"pretokenizer.{key}: expected an integer from {low} to {high}, got {value!r}")
    return value


def _sequence_of(document: Any) -> tuple[str, str]:
    """(sequence, where) for a Record or a plain string."""
    if isinstance(document, Record):
        return document.sequence, f"{document.source}, record {document.id}"
    if isinstance(document, str):
        return document, "sequence"
    if isinstance(document, os.PathLike):
        raise BpeError(f"{os.fspath(document)!r} is a path, not a sequence: {ENCODE_FILE}")
    raise BpeError(f"a DNA pretokenizer takes FASTA/FASTQ records or strings, not {type(document).__name__}")


def _looks_like_a_path(sequence: str) -> bool:
    """Whether a string that is no sequence is a file's name (asked only once it failed as one)."""
    if "/" in sequence or "\\" in sequence or sequence.lower().endswith(FASTA_SUFFIXES + FASTQ_SUFFIXES):
        return True
    return len(sequence) < 4096 and os.path.isfile(sequence)


class _Policy:
    """Case, N and IUPAC policies shared by both pretokenizers: which letters are symbols, which
    break chunks, which are errors."""

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.case = _choice(name, options, "case", ("fold", "keep"))
        self.n = _choice(name, options, "n", ("split", "symbol"))
        self.iupac = _choice(name, options, "iupac", ("split", "error"))
        letters = BASES + "N" + (IUPAC if self.iupac == "split" else "")
        self.letters = letters + (letters.lower() if self.case == "keep" else "")
        merged = BASES + ("N" if self.n == "symbol" else "")
        merged += merged.lower() if self.case == "keep" else ""
        # runs of letters that merge, or one letter that stands alone
        self.chunk_pattern = re.compile(f"[{merged}]+|[{re.escape(self.letters)}]")
        self.one_chunk = re.compile(f"[{merged}]+")  # a sequence with no letter that stands alone (most reads)
        self.merged = merged
        self.valid = re.compile(f"[{re.escape(self.letters)}]*")

    def prepare(self, document: Any) -> str:
        """The sequence, case-folded as the policy says, after checking every letter."""
        given, where = _sequence_of(document)
        sequence = given.upper() if self.case == "fold" else given
        valid_end = self.valid.match(sequence)
        end = valid_end.end() if valid_end else 0
        if end < len(sequence):
            if where == "sequence" and _looks_like_a_path(given):
                raise BpeError(f"{given[:200]!r} looks like a file path, not a sequence: {ENCODE_FILE}")
            letter = sequence[end]
            what = "an IUPAC ambiguity letter (iupac: error)" if letter.upper() in IUPAC else "not a nucleotide letter"
            raise BpeError(f"{where}: {letter!r} at position {end + 1} is {what}; allowed: {self.letters}")
        return sequence


def hf_case_folding(letters: str) -> list[dict[str, Any]]:
    """Hugging Face normalizers that upper-case the letters (and nothing else, as `prepare` checks)."""
    return [{"type": "Replace", "pattern": {"String": letter.lower()}, "content": letter} for letter in letters]


def hf_isolating(policy: _Policy) -> dict[str, Any] | None:
    """A Hugging Face Split that makes each letter that stands alone (N, IUPAC) its own word."""
    bases = BASES + ("N" if policy.n == "symbol" else "")
    standalone = "".join(letter for letter in policy.letters if letter.upper() not in bases)
    if not standalone:
        return None
    return {"type": "Split", "pattern": {"Regex": f"[{standalone}]"}, "behavior": "Isolated", "invert": False}


class NucleotidePretokenizer:
    """Single nucleotides as symbols; chunks are the stretches between N (and IUPAC letters)."""

    byte_level = False
    decoder = "dna"
    name = "dna-nucleotides"
    symbol_unit = "nucleotides"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options(
            "pretokenizer",
            self.name,
            options,
            ("case", "n", "iupac", "max_chunk", "overlap", "reverse_complement", "resolve_overlaps"),
        )
        self.policy = _Policy(self.name, options)
        self.max_chunk = _integer(options, "max_chunk", None, 2, 1 << 40)
        self.overlap = _integer(options, "overlap", 0, 0, (self.max_chunk or 2) - 1) or 0
        if self.overlap and self.max_chunk is None:
            raise BpeError("pretokenizer.overlap needs max_chunk")
        self.reverse_complement = _choice(self.name, options, "reverse_complement", (False, "augment", "symmetric"))
        self.resolve_overlaps = _choice(self.name, options, "resolve_overlaps", ("leftmost", "mirrored"))
        if self.resolve_overlaps == "mirrored" and self.reverse_complement != "symmetric":
            raise BpeError(
                "pretokenizer.resolve_overlaps: mirrored needs reverse_complement: symmetric (it resolves each "
                "merge's overlaps as the mirror image of its reverse-complement partner's, and only a symmetric "
                f"vocabulary has the partners); reverse_complement is {str(self.reverse_complement).lower()}"
            )
        self.symbol_ids = {letter: index for index, letter in enumerate(self.policy.letters)}
        # letter byte -> symbol id, NOT_A_SYMBOL elsewhere: a genome maps with one bytes.translate
        self.symbol_table = bytes(self.symbol_ids.get(chr(byte), NOT_A_SYMBOL) for byte in range(256))
        # for encode_packed, lower case folded as `case` says: every letter of the alphabet, and
        # the letters that merge only (a sequence with no NOT_A_SYMBOL there is one chunk)
        self.letter_table = self._folded_table(self.policy.letters)
        self.merging_table = self._folded_table(self.policy.merged)

    def _folded_table(self, letters: str) -> bytes:
        """Byte -> symbol id for these letters (and their lower case, with `case: fold`), NOT_A_SYMBOL elsewhere."""
        letter_of = {letter: letter for letter in letters}
        if self.policy.case == "fold":
            letter_of.update({letter.lower(): letter for letter in letters})
        return bytes(
            self.symbol_ids[letter_of[chr(byte)]] if chr(byte) in letter_of else NOT_A_SYMBOL for byte in range(256)
        )

    def options(self) -> dict[str, Any]:
        return {
            "case": self.policy.case,
            "n": self.policy.n,
            "iupac": self.policy.iupac,
            "max_chunk": self.max_chunk,
            "overlap": self.overlap,
            "reverse_complement": self.reverse_complement,
            "resolve_overlaps": self.resolve_overlaps,
        }

    def alphabet(self) -> list[str]:
        return list(self.policy.letters)

    def _chunks(self, sequence: str, step_back: int) -> list[str]:
        return [chunk for chunk, _ in self._windows(sequence, step_back)]

    def _windows(self, sequence: str, step_back: int) -> list[tuple[str, int]]:
        """(chunk, start) pairs: the stretches between standalone letters, cut into windows of
        max_chunk that overlap by step_back."""
        windows = []
        for match in self.policy.chunk_pattern.finditer(sequence):
            chunk = match.group()
            offset = match.start()
            if self.max_chunk is None or len(chunk) <= self.max_chunk:
                windows.append((chunk, offset))
                continue
            start = 0
            while True:
                windows.append((chunk[start : start + self.max_chunk], offset + start))
                if start + self.max_chunk >= len(chunk):
                    break
                start += self.max_chunk - step_back
        return windows

    def split_with_offsets(self, document: Any) -> list[tuple[str, int]]:
        """The chunks of `split` with where each starts in the sequence (0-based)."""
        return self._windows(self.policy.prepare(document), 0)

    def symbol_spans(self, chunk: str) -> list[tuple[int, int]]:
        """Where each symbol of a chunk lies in it: one letter each."""
        return [(index, index + 1) for index in range(len(chunk))]

    def split(self, document: Any) -> list[str]:
        """Chunks for encoding: windows never overlap, so decoding restores the sequence."""
        sequence = self.policy.prepare(document)
        if self.max_chunk is None and self.policy.one_chunk.fullmatch(sequence):
            return [sequence]
        return self._chunks(sequence, 0)

    def pack(self, documents: list[Any]) -> PackedChunks:
        """The documents' chunks as their symbol ids, cut as `split` cuts (long stretches are
        marked as unlikely to repeat: a read or a genome rarely comes again)."""
        chunk_ends: list[int] = []
        pieces = []
        counts = []
        offset = 0
        for document in documents:
            symbols = self._packed_document(document, offset, chunk_ends)
            pieces.append(symbols)
            counts.append(len(chunk_ends))
            offset += len(symbols)
        return PackedChunks.joined(pieces, chunk_ends, counts, repeats_long=False)

    def _packed_document(self, document: Any, offset: int, chunk_ends: list[int]) -> bytes:
        """The document's symbol ids; where each of its chunks ends, plus `offset`, is appended to
        `chunk_ends`. Without
        max_chunk, an ASCII sequence is mapped with `bytes.translate` and the letters that stand
        alone (N, IUPAC) are found with `bytes.find`, so a read is one chunk or a few; other
        sequences, and any with a letter outside the alphabet (for the error `split` gives), go
        chunk by chunk."""
        sequence, _ = _sequence_of(document)
        if self.max_chunk is None and sequence.isascii():
            letters = sequence.encode("ascii")
            mapped = letters.translate(self.letter_table)
            if NOT_A_SYMBOL not in mapped:
                merging = letters.translate(self.merging_table)
                start = 0
                alone = merging.find(NOT_A_SYMBOL)
                while alone >= 0:  # a stretch before the letter that stands alone, then the letter
                    if alone > start:
                        chunk_ends.append(offset + alone)
                    start = alone + 1
                    chunk_ends.append(offset + start)
                    alone = merging.find(NOT_A_SYMBOL, start)
                if len(mapped) > start:
                    chunk_ends.append(offset + len(mapped))
                return mapped
        chunks = [bytes(self.symbols(chunk)) for chunk in self.split(document)]
        chunk_ends.extend(offset + end for end in accumulate(map(len, chunks)))
        return b"".join(chunks)

    def unit_roles(self) -> bytes:
        return b""

    def prepare(self) -> None:
        """Nothing to build: the letter tables are made with the pretokenizer."""

    def count(self, document: Any) -> dict[str, int]:
        """Chunks for training: windows overlap by `overlap`; with reverse_complement: augment,
        the other strand is counted too. With symmetric, each chunk's reverse complement is
        counted with it (the other strand's windows would be cut elsewhere), so the counts are
        exactly closed under reverse complement, as the mirrored trainer needs."""
        sequence = self.policy.prepare(document)
        counts = Counter(self._chunks(sequence, self.overlap))
        if self.reverse_complement == "augment":
            counts.update(self._chunks(sequence.translate(COMPLEMENT)[::-1], self.overlap))
        elif self.reverse_complement == "symmetric":
            counts.update({chunk.translate(COMPLEMENT)[::-1]: times for chunk, times in counts.items()})
        return dict(counts)

    def symbol_mirror(self) -> list[int] | None:
        """With reverse_complement: symmetric, each symbol's complement (A-T, C-G, N-N, R-Y, K-M,
        S-S, W-W, B-V, D-H, in the case it has); otherwise None."""
        if self.reverse_complement != "symmetric":
            return None
        return [self.symbol_ids[letter.translate(COMPLEMENT)] for letter in self.policy.letters]

    def mirrored_overlaps(self) -> str | None:
        """With resolve_overlaps: mirrored, what asks encoding to resolve overlapping merges as
        the mirror image of their partners (so a reverse complement tokenizes as the mirror image
        of the forward strand); None for leftmost, as training, Hugging Face and tiktoken do."""
        return "resolve_overlaps: mirrored" if self.resolve_overlaps == "mirrored" else None

    def symbols(self, chunk: Any) -> list[int]:
        mapped = chunk.encode("ascii", "replace").translate(self.symbol_table)
        if NOT_A_SYMBOL in mapped:  # a letter outside the alphabet: the KeyError names it
            symbol_ids = self.symbol_ids
            return [symbol_ids[letter] for letter in chunk]
        return list(mapped)

    def safe_cut(self, text: str) -> int:
        return 0

    def decoder_options(self) -> dict[str, Any]:
        return {}

    def draw_tokens(self, tokens: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]] | None) -> TokenDrawing:
        """GC content per token and N runs, for `bpe inspect --html` (see `drawing`)."""
        letters = self.policy.letters
        return drawing.draw(["".join(letters[symbol] for symbol in token).upper() for token in tokens], spans)

    def hf_components(self) -> dict[str, Any]:
        """Hugging Face equivalent: upper-casing by Replace (case: fold), letters that stand alone
        isolated by a Split, tokens fused back together when decoding."""
        folding = hf_case_folding(self.policy.letters) if self.policy.case == "fold" else []
        normalizer = {"type": "Sequence", "normalizers": folding} if folding else None
        pre_tokenizer = hf_isolating(self.policy)
        if self.max_chunk is not None:
            raise BpeError("max_chunk windows have no Hugging Face equivalent")
        return {"normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "decoder": {"type": "Fuse"}}


class KmerPretokenizer:
    """Each k-mer is one base symbol (a 4^k alphabet, k up to 8); BPE can then merge k-mers, or a
    vocab_size equal to the alphabet gives a plain k-mer tokenizer.

    stride 1 overlaps as DNABERT does; stride k does not (Nucleotide Transformer). The tail
    shorter than a k-mer is `single` nucleotides, dropped (`drop`, lossy) or one k-mer padded with
    N (`pad`). `canonical: true` gives a k-mer and its reverse complement one symbol
    (lossy: decoding gives the canonical k-mer). N and IUPAC letters break chunks and are their
    own symbols (n: split), or N is a fifth base (n: symbol, 5^k k-mers).
    """

    byte_level = False
    decoder = "dna-kmers"
    name = "dna-kmers"
    symbol_unit = "k-mers"

    def __init__(self, options: dict[str, Any]) -> None:
        check_options(
            "pretokenizer", self.name, options, ("k", "stride", "remainder", "canonical", "n", "iupac", "case")
        )
        if options.get("case", "fold") != "fold":
            raise BpeError("pretokenizer.case: dna-kmers folds case; allowed: fold")
        k = _integer(options, "k", 6, 1, 8)
        assert k is not None
        self.k = k
        stride = _integer(options, "stride", k, 1, k)
        assert stride is not None
        self.stride = stride
        self.remainder = _choice(self.name, options, "remainder", ("single", "drop", "pad"))
        self.canonical = _choice(self.name, options, "canonical", (False, True))
        self.policy = _Policy(self.name, {key: options[key] for key in ("n", "iupac") if key in options})
        bases = BASES + ("N" if self.policy.n == "symbol" else "")
        if self.remainder == "pad" and self.policy.n == "symbol":
            raise BpeError("pretokenizer.remainder: pad fills with N, so it cannot be combined with n: symbol")
        self.standalone = frozenset(letter for letter in self.policy.letters if letter not in bases)
        labels = [""]
        for _ in range(k):
            labels = [prefix + base for prefix in labels for base in bases]
        if self.remainder == "single" and k > 1:
            labels += list(bases)
        if self.remainder == "pad":
            partial = [""]
            for length in range(1, k):
                partial = [prefix + base for prefix in partial for base in bases]
                labels += [prefix + "N" * (k - length) for prefix in partial]
        labels += [letter for letter in self.policy.letters if letter not in bases]
        self.labels = labels
        self.symbol_ids = {label: index for index, label in enumerate(labels)}

    def options(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "stride": self.stride,
            "remainder": self.remainder,
            "canonical": self.canonical,
            "n": self.policy.n,
            "iupac": self.policy.iupac,
        }

    def alphabet(self) -> list[str]:
        return list(self.labels)

    def split(self, document: Any) -> list[str]:
        return list(self.policy.chunk_pattern.findall(self.policy.prepare(document)))

    def split_with_offsets(self, document: Any) -> list[tuple[str, int]]:
        """The chunks of `split` with where each starts in the sequence (0-based)."""
        return [
            (match.group(), match.start())
            for match in self.policy.chunk_pattern.finditer(self.policy.prepare(document))
        ]

    def symbol_spans(self, chunk: str) -> list[tuple[int, int]]:
        """Where each symbol of a chunk lies in it: a k-mer covers k letters (overlapping when
        stride < k), a tail letter one, a padded tail the letters it holds."""
        if chunk in self.standalone:
            return [(0, 1)]
        spans = []
        start = 0
        while start + self.k <= len(chunk):
            spans.append((start, start + self.k))
            start += self.stride
        covered = start - self.stride + self.k if start > 0 else 0
        if covered < len(chunk):
            if self.remainder == "single":
                spans.extend((index, index + 1) for index in range(covered, len(chunk)))
            elif self.remainder == "pad":
                spans.append((covered, len(chunk)))
        return spans

    def symbols(self, chunk: Any) -> list[int]:
        k = self.k
        stride = self.stride
        symbol_ids = self.symbol_ids
        if chunk in self.standalone:
            return [symbol_ids[chunk]]
        ids = []
        start = 0
        while start + k <= len(chunk):
            kmer = chunk[start : start + k]
            if self.canonical:
                kmer = min(kmer, kmer.translate(COMPLEMENT)[::-1])
            ids.append(symbol_ids[kmer])
            start += stride
        covered = start - stride + k if start > 0 else 0
        tail = chunk[covered:]
        if tail:
            if self.remainder == "single":
                ids.extend(symbol_ids[base] for base in tail)
            elif self.remainder == "pad":
                ids.append(symbol_ids[tail + "N" * (k - len(tail))])
        return ids

    def safe_cut(self, text: str) -> int:
        return 0

    def draw_tokens(self, tokens: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]] | None) -> TokenDrawing:
        """GC content per token and N runs, for `bpe inspect --html` (see `drawing`): a token's
        letters are its k-mers' with the overlap of each k-mer on the one before it left out."""
        spelled = []
        for token in tokens:
            letters = ""
            for symbol in token:
                label = self.labels[symbol]
                if self.remainder == "pad" and self.k > 1 and len(label) == self.k and label.endswith("N"):
                    label = label.rstrip("N")  # a padded tail: the letters it holds
                elif letters and len(label) == self.k:  # a k-mer after another: only the letters it adds
                    label = label[self.k - self.stride :]
                letters += label
            spelled.append(letters)
        return drawing.draw(spelled, spans)

    def decoder_options(self) -> dict[str, Any]:
        return {"k": self.k, "stride": self.stride, "padded": self.remainder == "pad" and self.k > 1}

    def hf_components(self) -> dict[str, Any]:
        """Hugging Face equivalent of non-overlapping k-mers (stride: k), exact for every input.

        Hugging Face's BPE starts from characters, and letter merges alone cannot find where
        k-mers start (`ACA` is AC+A, `CAC` is CA+C). So the normalizer marks each whole k-mer's
        end with KMER_END: a Replace of the empty match after `[ACGT]{k}` (`\\K`), found left to
        right from each run's start, exactly as `symbols` steps through a chunk. A k-mer's token
        is its letters and the mark (`ACGTAC|`), built right to left by `building_merges` ranked
        before ours: (C, |), (A, C|), ... Those always find a merge while a k-mer is unbuilt, and
        none applies to a tail letter (no mark follows it) or to a whole k-mer, so our merges then
        start from exactly our symbols. `remainder: drop` removes the unmarked tails.
        """
        if self.stride != self.k:
            raise BpeError(
                f"pretokenizer.stride: {self.stride} with k: {self.k} makes overlapping k-mers, and Hugging Face "
                "pre-tokenizers cannot emit overlapping pieces (each letter goes to one token); "
                "only stride equal to k can be exported"
            )
        if self.canonical:
            raise BpeError(
                "pretokenizer.canonical: true gives a k-mer and its reverse complement one id, and a Hugging Face "
                "vocabulary cannot spell one token two ways; only canonical: false can be exported"
            )
        if self.remainder == "pad":
            raise BpeError(
                "pretokenizer.remainder: pad has no Hugging Face export (its normalizer cannot pad a tail with N "
                "without N splitting it); use remainder: single or drop"
            )
        bases = BASES + ("N" if self.policy.n == "symbol" else "")
        normalizers = [{"type": "Replace", "pattern": {"String": KMER_END}, "content": NOT_A_LETTER}]
        normalizers += hf_case_folding(self.policy.letters)
        normalizers.append({"type": "Replace", "pattern": {"Regex": f"[{bases}]{{{self.k}}}\\K"}, "content": KMER_END})
        if self.remainder == "drop" and self.k > 1:
            tail = f"(?<![{bases}])[{bases}]{{1,{self.k - 1}}}(?![{bases}{re.escape(KMER_END)}])"
            normalizers.append({"type": "Replace", "pattern": {"Regex": tail}, "content": ""})
        kmers = len(bases) ** self.k
        suffixes = [""]
        building_merges = []
        for _ in range(self.k):
            suffixes = [base + suffix for base in bases for suffix in suffixes]
            building_merges += [(suffix[0], suffix[1:] + KMER_END) for suffix in suffixes]
        return {
            "normalizer": {"type": "Sequence", "normalizers": normalizers},
            "pre_tokenizer": hf_isolating(self.policy),
            "decoder": {
                "type": "Sequence",
                "decoders": [{"type": "Replace", "pattern": {"String": KMER_END}, "content": ""}, {"type": "Fuse"}],
            },
            "symbol_tokens": [label + KMER_END for label in self.labels[:kmers]] + self.labels[kmers:],
            "building_merges": building_merges,
        }
