"""DNA on real data: the `fasta`/`fastq` readers, the `dna-nucleotides` and `dna-kmers`
pretokenizers, whole-genome training, offsets, the Hugging Face export and the CLI.

Data: ../shared/data/dna (phage lambda, E. coli K-12 as one 4.6 Mbp record, 40 kb of soft-masked
human chr17, a 10 Mbp tandem repeat, 10,000 lambda reads with N, Biopython's malformed FASTQ).

The compiled engine trains and encodes the whole E. coli genome and the whole 10 Mbp repeat; the
pure-Python engine (BPE_CORE_PURE=1) does the same tests on prefixes of them so the suite stays
fast. Nothing is skipped in either mode. Expected values come from tests/helpers/dna.py, which
reads the files and states DNA facts without bpe_core.
"""

import gzip
import hashlib
import itertools
import json
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import (
    BASES,
    BERT_SPECIALS,
    DNABERT2_CONFIG,
    DNABERT_6MER_CONFIG,
    FASTA_PATHS,
    IUPAC,
    NT_6MER_CONFIG,
    fasta_records,
    fastq_reads,
    kmer_index,
    reverse_complement,
    single_sequence,
    window_count,
    write_fasta,
)
from helpers.paths import CHR17_PATH, ECOLI_PATH, LAMBDA_PATH, MALFORMED_DIR, READS_PATH, TANDEM_PATH, require
from hypothesis import given
from hypothesis import strategies as st

import bpe_core
from bpe_core import BpeError, engine
from bpe_core.plugins import registry

COMPILED = engine.is_compiled()
# The pure engine runs the same tests on prefixes of the two long sequences.
GENOME_LENGTH = None if COMPILED else 500_000
TANDEM_LENGTH = None if COMPILED else 250_000
ROUND_TRIP_LENGTH = 1_000_000 if COMPILED else 200_000  # per record; the long ones have their own tests
NUCLEOTIDE_ALPHABET = BASES + "N" + IUPAC  # the documented alphabet of case: fold, iupac: split
MALFORMED = sorted(require(MALFORMED_DIR).glob("*.fastq"))


# ---------------------------------------------------------------------------------------------
# helpers


def nucleotide_config(
    reader: str = "fasta", vocab_size: int = 300, special: list[str] | None = None, **options: Any
) -> dict[str, Any]:
    return {
        "name": "dna-test",
        "input": {"reader": reader},
        "pretokenizer": {"name": "dna-nucleotides", **options},
        "trainer": {"vocab_size": vocab_size},
        "special_tokens": {"tokens": special or [], "position": "start"},
    }


def kmer_config(vocab_size: int, **options: Any) -> dict[str, Any]:
    return {
        "name": "kmer-test",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-kmers", **options},
        "trainer": {"vocab_size": vocab_size},
    }


def train(config: Any, files: list[Path], overrides: dict[str, Any] | None = None) -> bpe_core.Tokenizer:
    return bpe_core.train(config, [str(path) for path in files], overrides, progress=False)


def read_records(reader: str, paths: list[Any]) -> list[Any]:
    return list(registry().reader(reader, {}).documents([str(path) for path in paths]))


def kmer_alphabet_size(**options: Any) -> int:
    return len(registry().pretokenizer("dna-kmers", options).alphabet())


def merged_texts(tokenizer: bpe_core.Tokenizer) -> list[str]:
    return [tokenizer.token_text(token) for token in tokenizer.merged_ids()]


def merges_as_text(tokenizer: bpe_core.Tokenizer) -> list[tuple[str, str]]:
    return [(tokenizer.token_text(left), tokenizer.token_text(right)) for left, right in tokenizer.merges]


def chunks_between(sequence: str, standalone: str) -> list[str]:
    """Runs of bases and the standalone letters between them, in order (independent of the code)."""
    return re.findall(f"[^{standalone}]+|[{standalone}]", sequence)


@cache
def lambda_tokenizer(**options: Any) -> bpe_core.Tokenizer:
    """dna-nucleotides trained on the lambda genome, vocab 512, with the given policy."""
    return train(nucleotide_config(vocab_size=512, **options), [LAMBDA_PATH])


@cache
def reads_tokenizer(**options: Any) -> bpe_core.Tokenizer:
    """dna-nucleotides trained on the 10,000 lambda reads (they hold N), vocab 600."""
    return train(nucleotide_config(reader="fastq", vocab_size=600, **options), [READS_PATH])


@cache
def chr17_tokenizer(**options: Any) -> bpe_core.Tokenizer:
    """dna-nucleotides trained on the soft-masked chr17 part, vocab 600."""
    return train(nucleotide_config(vocab_size=600, **options), [CHR17_PATH])


@cache
def kmer_tokenizer(
    training_file: Path, k: int, stride: int, remainder: str, extra_merges: int = 20
) -> bpe_core.Tokenizer:
    options = {"k": k, "stride": stride, "remainder": remainder}
    return train(kmer_config(kmer_alphabet_size(**options) + extra_merges, **options), [training_file])


@cache
def plain_kmer_tokenizer(config: Path) -> bpe_core.Tokenizer:
    return train(config, [LAMBDA_PATH])


def reads_with_n(minimum: int = 3) -> list[tuple[str, str]]:
    return [read for read in fastq_reads() if read[1].count("N") >= minimum]


@pytest.fixture(scope="module")
def genome(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The E. coli genome (compiled) or its first 500 kbp (pure), and a FASTA file holding it."""
    sequence = single_sequence(ECOLI_PATH)
    if GENOME_LENGTH is None:
        return sequence, ECOLI_PATH
    sequence = sequence[:GENOME_LENGTH]
    return sequence, write_fasta(tmp_path_factory.mktemp("genome") / "ecoli-prefix.fa", [("ecoli-prefix", sequence)])


@pytest.fixture(scope="module")
def genome_tokenizer(genome: tuple[str, Path]) -> bpe_core.Tokenizer:
    """dnabert2-style (vocab 4096, min_frequency 2) trained on the genome as one sequence."""
    return train(DNABERT2_CONFIG, [genome[1]], {"trainer.vocab_size": 4096, "trainer.min_frequency": 2})


# ---------------------------------------------------------------------------------------------
# readers


@pytest.mark.parametrize("path", MALFORMED, ids=lambda path: path.name)
def test_every_malformed_fastq_file_is_a_clean_error_naming_file_and_record(path: Path) -> None:
    with pytest.raises(BpeError) as caught:
        read_records("fastq", [path])
    message = str(caught.value)
    assert str(path) in message
    assert "record" in message


def test_malformed_fastq_set_is_the_expected_one() -> None:
    assert len(MALFORMED) == 8


@pytest.mark.parametrize("path", MALFORMED, ids=lambda path: path.name)
def test_malformed_fastq_through_the_cli_exits_2_with_one_error_line(path: Path, tmp_path: Path) -> None:
    result = run_bpe(
        "train", DNABERT2_CONFIG, path, "-o", tmp_path / "out.json", "--set", "input.reader=fastq",
        "--set", "trainer.vocab_size=40", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert_clean_error(result, str(path))
    assert not (tmp_path / "out.json").exists()


def test_fasta_with_text_before_the_first_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "notes-first.fa"
    path.write_text("sequenced 2021, see lab book\n>chrA first record\nACGTACGTAC\n")
    with pytest.raises(BpeError, match=re.escape(str(path))):
        read_records("fasta", [path])


@pytest.mark.parametrize("content", ["", "\n\n", "ACGTACGT\nACGT\n"], ids=["empty", "blank-lines", "no-header"])
def test_fasta_without_records_is_an_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "nothing.fa"
    path.write_text(content)
    with pytest.raises(BpeError, match=re.escape(str(path))):
        read_records("fasta", [path])


def test_plain_and_gzip_fasta_give_the_same_records(tmp_path: Path) -> None:
    for gzipped in (LAMBDA_PATH, CHR17_PATH, TANDEM_PATH):
        plain = tmp_path / gzipped.name.removesuffix(".gz")
        with gzip.open(gzipped, "rb") as source, open(plain, "wb") as target:
            shutil.copyfileobj(source, target)
        from_gzip = [(record.id, record.sequence) for record in read_records("fasta", [gzipped])]
        from_plain = [(record.id, record.sequence) for record in read_records("fasta", [plain])]
        assert from_gzip == from_plain == list(fasta_records(gzipped))


def test_fastq_plain_and_gzip_give_the_same_reads(tmp_path: Path) -> None:
    plain = tmp_path / "reads.fq"
    with gzip.open(READS_PATH, "rb") as source, open(plain, "wb") as target:
        shutil.copyfileobj(source, target)
    expected = list(fastq_reads())
    assert [(record.id, record.sequence) for record in read_records("fastq", [plain])] == expected
    assert [(record.id, record.sequence) for record in read_records("fastq", [READS_PATH])] == expected


def test_globs_and_directories_find_the_sequence_files(tmp_path: Path) -> None:
    directory = tmp_path / "genomes"
    (directory / "more").mkdir(parents=True)
    shutil.copy(LAMBDA_PATH, directory / "lambda.fa.gz")
    write_fasta(directory / "more" / "small.fasta", [("s1", "ACGTTGCA"), ("s2", "GGGCCCAAAT")])
    (directory / "README.txt").write_text("not a sequence file\n")
    shutil.copy(READS_PATH, directory / "reads.fq.gz")
    lambda_id = fasta_records(LAMBDA_PATH)[0][0]

    from_directory = read_records("fasta", [directory])
    assert [(Path(record.source).name, record.id) for record in from_directory] == [
        ("lambda.fa.gz", lambda_id),
        ("small.fasta", "s1"),
        ("small.fasta", "s2"),
    ]
    from_glob = read_records("fasta", [f"{directory}/**/*.fa*"])
    assert [record.id for record in from_glob] == [lambda_id, "s1", "s2"]
    assert [record.id for record in read_records("fastq", [directory])] == [read[0] for read in fastq_reads()]

    tokenizer = train(nucleotide_config(vocab_size=40), [directory])
    assert sorted(Path(source["path"]).name for source in tokenizer.provenance["inputs"]) == [
        "lambda.fa.gz",
        "small.fasta",
    ]


@pytest.mark.parametrize("path", FASTA_PATHS, ids=lambda path: path.name)
def test_records_keep_their_file_and_id(path: Path) -> None:
    records = read_records("fasta", [path])
    assert [(record.source, record.id) for record in records] == [(str(path), name) for name, _ in fasta_records(path)]


def test_reads_keep_their_file_and_id_and_training_names_its_inputs() -> None:
    reads = read_records("fastq", [READS_PATH])
    assert {record.source for record in reads} == {str(READS_PATH)}
    assert [record.id for record in reads] == [read[0] for read in fastq_reads()]
    (source,) = reads_tokenizer().provenance["inputs"]
    assert source["path"] == str(READS_PATH)
    assert source["sha256"] == hashlib.sha256(READS_PATH.read_bytes()).hexdigest()


@pytest.mark.parametrize("letter", ["X", "U", "-", "*", "x"])
def test_a_letter_outside_the_policy_names_file_record_and_position(tmp_path: Path, letter: str) -> None:
    genome = single_sequence(LAMBDA_PATH)
    path = write_fasta(
        tmp_path / "bad.fa", [("fine", genome[:300]), ("broken", genome[300:357] + letter + genome[357:500])]
    )
    with pytest.raises(BpeError) as caught:
        train(nucleotide_config(vocab_size=40), [path])
    message = str(caught.value)
    assert str(path) in message and "broken" in message
    assert re.search(r"\b58\b", message), message  # 1-based position of the letter in its record
    assert repr(letter.upper()) in message or repr(letter) in message

    (_, broken) = read_records("fasta", [path])
    with pytest.raises(BpeError, match="broken"):
        lambda_tokenizer().encode(broken)


def test_an_iupac_letter_with_iupac_error_is_an_error(tmp_path: Path) -> None:
    genome = single_sequence(LAMBDA_PATH)
    path = write_fasta(
        tmp_path / "ambiguous.fa", [("clean", genome[:200]), ("ambiguous", genome[:99] + "R" + genome[99:200])]
    )
    with pytest.raises(BpeError) as caught:
        train(nucleotide_config(vocab_size=40, iupac="error"), [path])
    message = str(caught.value)
    assert str(path) in message and "ambiguous" in message and "'R'" in message and re.search(r"\b100\b", message)
    # the default policy (iupac: split) takes it
    tokenizer = train(nucleotide_config(vocab_size=40), [path])
    (_, ambiguous) = read_records("fasta", [path])
    assert tokenizer.decode(tokenizer.encode(ambiguous)) == ambiguous.sequence


# ---------------------------------------------------------------------------------------------
# dna-nucleotides: lossless


@pytest.mark.parametrize("path", FASTA_PATHS, ids=lambda path: path.name)
def test_every_fasta_record_round_trips_case_folded(path: Path) -> None:
    tokenizer = lambda_tokenizer()
    for record in read_records("fasta", [path]):
        sequence = record.sequence[:ROUND_TRIP_LENGTH]  # the two long records round-trip whole below
        if len(sequence) == len(record.sequence):
            ids = tokenizer.encode(record)
        else:
            ids = tokenizer.encode(sequence)
        assert tokenizer.decode(ids) == sequence.upper(), record.id


@pytest.mark.parametrize(
    "policy",
    [{"case": "keep"}, {"n": "symbol"}, {"iupac": "error"}, {"case": "keep", "n": "symbol", "iupac": "error"}],
    ids=lambda policy: ",".join(f"{key}={value}" for key, value in policy.items()),
)
@pytest.mark.parametrize("path", FASTA_PATHS, ids=lambda path: path.name)
def test_every_fasta_record_round_trips_under_each_policy(path: Path, policy: dict[str, str]) -> None:
    tokenizer = lambda_tokenizer(**policy)
    for _, sequence in fasta_records(path):
        sequence = sequence[:200_000]
        expected = sequence if policy.get("case") == "keep" else sequence.upper()
        assert tokenizer.decode(tokenizer.encode(sequence)) == expected


def test_all_reads_round_trip_with_their_n() -> None:
    reads = read_records("fastq", [READS_PATH])
    assert len(reads) == 10_000 and sum(read.sequence.count("N") for read in reads) > 0
    tokenizer = reads_tokenizer()
    for read in reads:
        assert tokenizer.decode(tokenizer.encode(read)) == read.sequence, read.id
    for tokenizer in (reads_tokenizer(n="symbol"), lambda_tokenizer()):
        for read in reads[:2000]:
            assert tokenizer.decode(tokenizer.encode(read)) == read.sequence, read.id


def test_case_keep_preserves_soft_masking_on_chr17() -> None:
    (record,) = read_records("fasta", [CHR17_PATH])
    lower = sum(letter.islower() for letter in record.sequence)
    assert 0.3 < lower / len(record.sequence) < 0.6  # the README says ~43% soft-masked
    keep = chr17_tokenizer(case="keep")
    assert keep.decode(keep.encode(record)) == record.sequence
    texts = merged_texts(keep)
    assert any(text.islower() for text in texts) and any(text.isupper() for text in texts)
    fold = chr17_tokenizer()
    assert fold.decode(fold.encode(record)) == record.sequence.upper()
    assert all(text.isupper() for text in merged_texts(fold))


def test_n_split_never_merges_n_and_n_runs_decode_back() -> None:
    tokenizer = reads_tokenizer()
    assert not [text for text in merged_texts(tokenizer) if "N" in text]
    (n_id,) = tokenizer.encode("N")
    for read_id, sequence in reads_with_n(1):
        ids = tokenizer.encode(sequence)
        assert ids.count(n_id) == sequence.count("N"), read_id
        assert tokenizer.decode(ids) == sequence
    run = "ACGTTAGC" + "N" * 25 + "GATTACA"
    ids = tokenizer.encode(run)
    assert ids.count(n_id) == 25 and tokenizer.decode(ids) == run


def test_n_symbol_lets_n_merge() -> None:
    tokenizer = reads_tokenizer(n="symbol")
    assert "N" in tokenizer.alphabet
    texts = merged_texts(tokenizer)
    assert any("N" in text and len(text) > 1 for text in texts)
    assert any("N" in text and set(text) - {"N"} for text in texts)  # N merges with bases too


def test_iupac_letters_stand_alone_and_decode_exactly() -> None:
    sequence_parts = [read[1] for read in fastq_reads()[:40]]
    letters = (IUPAC + IUPAC.lower()) * 2
    sequence = "".join(part + letter for part, letter in zip(sequence_parts, letters))
    for policy in ({}, {"n": "symbol"}):
        tokenizer = reads_tokenizer(**policy)
        ids = tokenizer.encode(sequence)
        assert tokenizer.decode(ids) == sequence.upper()
        for letter in IUPAC:
            (letter_id,) = tokenizer.encode(letter)
            assert tokenizer.token_text(letter_id) == letter
            assert ids.count(letter_id) == sequence.upper().count(letter)
    keep = lambda_tokenizer(case="keep")
    assert keep.decode(keep.encode(sequence)) == sequence


def test_max_chunk_windows_with_overlap_train_on_overlaps_and_decode_exactly() -> None:
    size, overlap = 1000, 100
    genome = single_sequence(LAMBDA_PATH)
    tokenizer = lambda_tokenizer(max_chunk=size, overlap=overlap)
    windows = window_count(len(genome), size, overlap)
    assert tokenizer.provenance["chunks"] == windows
    assert tokenizer.provenance["symbols"] == len(genome) + (windows - 1) * overlap
    ids, spans = tokenizer.encode_with_offsets(genome)
    assert tokenizer.decode(ids) == genome
    # encoding cuts windows without overlap: no token crosses a multiple of max_chunk
    assert all(start // size == (end - 1) // size for start, end in spans)
    for _, read in fastq_reads()[:500]:
        assert tokenizer.decode(tokenizer.encode(read)) == read


def test_reverse_complement_augment_trains_on_both_strands(tmp_path: Path) -> None:
    path = write_fasta(tmp_path / "asymmetric.fa", [("forward", "AAAAAAAAC" * 100)])
    config = nucleotide_config(vocab_size=len(NUCLEOTIDE_ALPHABET) + 16)
    forward_only = train(config, [path])
    both = train(config, [path], {"pretokenizer.reverse_complement": "augment"})
    assert not any(set(text) & set("GT") for text in merged_texts(forward_only))
    texts = merged_texts(both)
    assert "AAAAAAAAC" in texts and "GTTTTTTTT" in texts
    assert set(texts) == {reverse_complement(text) for text in texts}  # the strands mirror each other
    assert both.provenance["symbols"] == 2 * forward_only.provenance["symbols"] == 1800
    sequence = "AAAAAAAAC" * 10 + "GTTTTTTTT" * 10
    assert both.decode(both.encode(sequence)) == sequence
    assert len(both.encode("GTTTTTTTT" * 10)) < len(forward_only.encode("GTTTTTTTT" * 10))


NUCLEOTIDE_LETTERS = BASES * 4 + "N" + IUPAC + (BASES + "N" + IUPAC).lower()


@pytest.mark.both_modes
@given(sequence=st.text(alphabet=NUCLEOTIDE_LETTERS, max_size=300))
def test_random_sequences_round_trip_under_every_policy(sequence: str) -> None:
    for policy in ({}, {"n": "symbol"}):
        tokenizer = reads_tokenizer(**policy)
        ids = tokenizer.encode(sequence)
        assert tokenizer.decode(ids) == sequence.upper()
        assert tokenizer.encode_with_offsets(sequence)[0] == ids
    for policy in ({"case": "keep"}, {"case": "keep", "n": "symbol"}):
        tokenizer = chr17_tokenizer(**policy)
        assert tokenizer.decode(tokenizer.encode(sequence)) == sequence
    windows = lambda_tokenizer(max_chunk=7, overlap=3)
    assert windows.decode(windows.encode(sequence)) == sequence.upper()


# ---------------------------------------------------------------------------------------------
# whole-genome training


@pytest.mark.both_modes
def test_whole_genome_merges_equal_the_engine_on_the_symbol_list(
    genome: tuple[str, Path], genome_tokenizer: bpe_core.Tokenizer
) -> None:
    sequence, _ = genome
    num_merges = 4096 - len(BERT_SPECIALS) - len(NUCLEOTIDE_ALPHABET)
    assert len(genome_tokenizer.merges) == num_merges
    trainer = engine.train(
        4, [[BASES.index(letter) for letter in sequence]], [1], num_merges, min_frequency=2, tie_break=0
    )
    texts = list(BASES)
    expected = []
    for left, right in trainer.merges:
        expected.append((texts[left], texts[right]))
        texts.append(texts[left] + texts[right])
    assert merges_as_text(genome_tokenizer) == expected
    assert genome_tokenizer.merge_counts == list(trainer.merge_counts)
    assert genome_tokenizer.provenance["symbols"] == len(sequence)
    assert genome_tokenizer.provenance["unique_chunks"] == 1


def test_whole_genome_encodes_to_the_training_token_count_and_decodes(
    genome: tuple[str, Path], genome_tokenizer: bpe_core.Tokenizer
) -> None:
    sequence, path = genome
    (record,) = read_records("fasta", [path])
    ids = genome_tokenizer.encode(record)
    assert len(ids) == genome_tokenizer.provenance["tokens"]
    assert genome_tokenizer.decode(ids) == sequence
    assert 3.5 < len(sequence) / len(ids) < 6  # DNABERT-2 reports ~4-5 bp per token at 4096


@pytest.mark.parametrize("path,vocab_size", [(LAMBDA_PATH, 1024), (CHR17_PATH, 1024)], ids=["lambda", "chr17"])
def test_merges_equal_hugging_face_bpe_trainer_on_one_line(path: Path, vocab_size: int) -> None:
    from tokenizers import Tokenizer, models, trainers

    (sequence,) = [sequence.upper() for _, sequence in fasta_records(path)]
    assert set(sequence) <= set(BASES)
    peer = Tokenizer(models.BPE())
    peer_trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=list(BASES),
        special_tokens=BERT_SPECIALS,
        min_frequency=2,
        show_progress=False,
    )
    peer.train_from_iterator([sequence], peer_trainer)
    peer_merges = [
        tuple(merge.split(" ")) if isinstance(merge, str) else tuple(merge)
        for merge in json.loads(peer.to_str())["model"]["merges"]
    ]
    # our alphabet has 11 more symbols (N and the IUPAC letters), so 11 more ids for the same merges
    ours = train(DNABERT2_CONFIG, [path], {"trainer.vocab_size": vocab_size + 11, "trainer.tie_break": "hf"})
    assert merges_as_text(ours) == peer_merges
    assert len(peer_merges) > 500


def test_tandem_repeat_trains_with_max_token_length_and_decodes_exactly(tmp_path: Path) -> None:
    records = list(fasta_records(TANDEM_PATH))
    assert max(len(sequence) for _, sequence in records) == 10_000_000
    if TANDEM_LENGTH is None:
        path = TANDEM_PATH
    else:
        records = [(name, sequence[:TANDEM_LENGTH]) for name, sequence in records]
        path = write_fasta(tmp_path / "tandem-prefix.fa", records)
    tokenizer = train(DNABERT2_CONFIG, [path], {"trainer.max_token_length": 64})
    assert max(len(tokenizer.token_symbols(token)) for token in tokenizer.merged_ids()) <= 64
    longest = max(read_records("fasta", [path]), key=lambda record: len(record.sequence))
    ids = tokenizer.encode(longest)
    assert tokenizer.decode(ids) == longest.sequence
    assert len(ids) <= len(longest.sequence) // 32  # the repeat compresses into long tokens


# ---------------------------------------------------------------------------------------------
# dna-kmers


def test_nt_6mer_is_a_plain_non_overlapping_kmer_tokenizer_that_decodes_exactly() -> None:
    tokenizer = plain_kmer_tokenizer(NT_6MER_CONFIG)
    assert tokenizer.merges == [] and tokenizer.vocab_size == 4113
    genome = single_sequence(LAMBDA_PATH)
    ids = tokenizer.encode(genome)
    whole = len(genome) - len(genome) % 6
    specials = 2  # <pad> <mask> at the start
    expected = [specials + kmer_index(genome[start : start + 6]) for start in range(0, whole, 6)]
    expected += [specials + 4096 + BASES.index(letter) for letter in genome[whole:]]
    assert ids == expected
    assert tokenizer.decode(ids) == genome
    for _, read in fastq_reads():
        assert tokenizer.decode(tokenizer.encode(read)) == read
    (chr17,) = read_records("fasta", [CHR17_PATH])
    assert tokenizer.decode(tokenizer.encode(chr17)) == chr17.sequence.upper()


def test_dnabert_6mer_overlapping_kmers_decode_exactly() -> None:
    tokenizer = plain_kmer_tokenizer(DNABERT_6MER_CONFIG)
    assert tokenizer.merges == []
    genome = single_sequence(LAMBDA_PATH)
    ids = tokenizer.encode(genome)
    assert ids == [5 + kmer_index(genome[start : start + 6]) for start in range(len(genome) - 5)]
    assert tokenizer.decode(ids) == genome
    for _, read in fastq_reads()[:3000]:
        assert tokenizer.decode(tokenizer.encode(read)) == read


@pytest.mark.parametrize("k", [2, 4, 5])
def test_vocab_size_equal_to_the_alphabet_gives_kmer_index_ids(k: int) -> None:
    options = {"k": k, "stride": k, "remainder": "drop"}
    tokenizer = train(kmer_config(kmer_alphabet_size(**options), **options), [LAMBDA_PATH])
    assert tokenizer.merges == []
    genome = single_sequence(LAMBDA_PATH)[:20_000]
    assert tokenizer.encode(genome) == [
        kmer_index(genome[start : start + k]) for start in range(0, len(genome) - k + 1, k)
    ]


@pytest.mark.parametrize("k,stride", [(3, 3), (5, 2), (4, 1)])
def test_remainder_pad_decodes_exactly_and_drop_loses_only_the_tail(k: int, stride: int) -> None:
    pad = kmer_tokenizer(LAMBDA_PATH, k, stride, "pad")
    drop = kmer_tokenizer(LAMBDA_PATH, k, stride, "drop")
    standalone = "N" + IUPAC

    def kept(chunk: str) -> str:
        if chunk in standalone:
            return chunk
        if len(chunk) < k:
            return ""
        return chunk[: (len(chunk) - k) // stride * stride + k]

    for _, read in reads_with_n(1)[:1500] + [("lambda", single_sequence(LAMBDA_PATH))]:
        assert pad.decode(pad.encode(read)) == read
        assert drop.decode(drop.encode(read)) == "".join(kept(chunk) for chunk in chunks_between(read, standalone))


def test_canonical_kmers_give_a_kmer_and_its_reverse_complement_one_id() -> None:
    options = {"k": 6, "stride": 6, "canonical": True}
    tokenizer = train(kmer_config(kmer_alphabet_size(**options), **options), [LAMBDA_PATH])
    all_kmers = [""]
    for _ in range(6):
        all_kmers = [prefix + base for prefix in all_kmers for base in BASES]
    ids = {}
    for kmer in all_kmers:
        (token,) = tokenizer.encode(kmer)
        assert tokenizer.encode(reverse_complement(kmer)) == [token]
        assert tokenizer.decode([token]) == min(kmer, reverse_complement(kmer))  # documented as lossy
        ids[kmer] = token
    assert len(set(ids.values())) == (4**6 + 4**3) // 2  # classes: pairs, plus 64 palindromes


def test_k8_works() -> None:
    options = {"k": 8, "stride": 8, "remainder": "drop"}
    alphabet_size = kmer_alphabet_size(**options)
    assert alphabet_size >= 4**8
    tokenizer = train(kmer_config(alphabet_size, **options), [LAMBDA_PATH])
    genome = single_sequence(LAMBDA_PATH)
    ids = tokenizer.encode(genome)
    assert ids == [kmer_index(genome[start : start + 8]) for start in range(0, len(genome) - 7, 8)]
    assert tokenizer.decode(ids) == genome[: len(genome) - len(genome) % 8]


def test_k8_with_the_default_options_trains_and_decodes_exactly() -> None:
    options = {"k": 8, "stride": 8}
    tokenizer = train(kmer_config(kmer_alphabet_size(**options) + 10, **options), [LAMBDA_PATH])
    genome = single_sequence(LAMBDA_PATH)
    assert tokenizer.decode(tokenizer.encode(genome)) == genome


def test_pad_with_k8_decodes_a_tail_exactly() -> None:
    # 4**8 k-mers plus the N-padded partial k-mers: beyond 65,536 symbols, which the alphabet allows
    tokenizer = train(kmer_config(kmer_alphabet_size(k=8, remainder="pad"), k=8, remainder="pad"), [LAMBDA_PATH])
    sequence = "ACGTACGTACGTAC"  # one 8-mer and a 6-letter tail
    assert tokenizer.decode(tokenizer.encode(sequence)) == sequence


def test_pad_with_k1_keeps_n() -> None:
    tokenizer = train(kmer_config(kmer_alphabet_size(k=1, remainder="pad"), k=1, remainder="pad"), [LAMBDA_PATH])
    assert tokenizer.decode(tokenizer.encode("ANA")) == "ANA"


@pytest.mark.both_modes
@given(
    data=st.data(),
    k=st.integers(1, 7),
    remainder=st.sampled_from(["single", "pad"]),
    sequence=st.text(alphabet=NUCLEOTIDE_LETTERS, max_size=120),
)
def test_random_sequences_round_trip_through_kmers(data: st.DataObject, k: int, remainder: str, sequence: str) -> None:
    if remainder == "pad" and k == 1:
        remainder = "single"  # k=1 with pad has its own test above
    stride = data.draw(st.integers(1, k), label="stride")
    tokenizer = kmer_tokenizer(LAMBDA_PATH, k, stride, remainder)
    ids = tokenizer.encode(sequence)
    assert tokenizer.decode(ids) == sequence.upper()
    offsets_ids, spans = tokenizer.encode_with_offsets(sequence)
    assert offsets_ids == ids
    for token, (start, end) in zip(ids, spans):
        assert tokenizer.decode([token]) == sequence.upper()[start:end]


# ---------------------------------------------------------------------------------------------
# offsets


def assert_tiles(spans: list[tuple[int, int]], length: int) -> None:
    assert spans[0][0] == 0 and spans[-1][1] == length
    assert all(end == next_start for (_, end), (next_start, _) in itertools.pairwise(spans))


def test_nucleotide_offsets_point_at_each_token_on_chr17_and_reads(genome_tokenizer: bpe_core.Tokenizer) -> None:
    (chr17,) = read_records("fasta", [CHR17_PATH])
    read_id, read = reads_with_n(3)[0]
    for tokenizer, keep in (
        (genome_tokenizer, False),
        (chr17_tokenizer(case="keep"), True),
        (reads_tokenizer(), False),
    ):
        for document, sequence in ((chr17, chr17.sequence), (read, read)):
            ids, spans = tokenizer.encode_with_offsets(document)
            assert ids == tokenizer.encode(document)
            assert_tiles(spans, len(sequence))
            for token, (start, end) in zip(ids, spans):
                piece = sequence[start:end]
                assert tokenizer.token_text(token) == (piece if keep else piece.upper()), (read_id, start, end)


def test_kmer_offsets_cover_the_kmers_of_each_token() -> None:
    _, read = reads_with_n(3)[0]
    genome = single_sequence(LAMBDA_PATH)[:5000]
    non_overlapping = plain_kmer_tokenizer(NT_6MER_CONFIG)
    for sequence in (read, genome):
        ids, spans = non_overlapping.encode_with_offsets(sequence)
        assert_tiles(spans, len(sequence))
        for token, (start, end) in zip(ids, spans):
            assert non_overlapping.token_text(token) == sequence[start:end]
    overlapping = kmer_tokenizer(LAMBDA_PATH, 3, 1, "single", extra_merges=100)
    assert any(len(overlapping.token_symbols(token)) > 1 for token in overlapping.merged_ids())
    for sequence in (read, genome):
        ids, spans = overlapping.encode_with_offsets(sequence)
        assert [start for start, _ in spans] == sorted({start for start, _ in spans})
        assert spans[0][0] == 0 and spans[-1][1] == len(sequence)
        merged = 0
        for token, (start, end) in zip(ids, spans):
            symbols = overlapping.token_symbols(token)
            kmers = [label for label in symbols if len(label) == 3]
            if kmers:
                # stride 1: the token's k-mers start at start, start+1, ... and end at `end`
                assert kmers == [sequence[start + index : start + index + 3] for index in range(len(kmers))]
                assert end == start + len(kmers) + 2
                merged += len(kmers) > 1
            else:
                assert "".join(symbols) == sequence[start:end]
        assert merged > 0


# ---------------------------------------------------------------------------------------------
# Hugging Face export


@pytest.fixture(scope="module")
def exported(genome_tokenizer: bpe_core.Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    genome_tokenizer.to_hf(path)
    return path


def test_to_hf_gives_our_ids_on_chr17_with_lower_case_and_on_reads_with_n(
    genome_tokenizer: bpe_core.Tokenizer, exported: Path
) -> None:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    peer = Tokenizer.from_file(str(exported))
    fast = PreTrainedTokenizerFast(tokenizer_file=str(exported))
    ((_, chr17),) = fasta_records(CHR17_PATH)
    ours = genome_tokenizer.encode(chr17)
    assert (
        peer.encode(chr17, add_special_tokens=False).ids == ours
    )  # the template's [CLS]/[SEP]: tests/test_hf_export.py
    assert fast(chr17, add_special_tokens=False)["input_ids"] == ours
    reads = [read for _, read in fastq_reads()]
    ours_reads = [genome_tokenizer.encode(read) for read in reads]
    assert [encoding.ids for encoding in peer.encode_batch(reads, add_special_tokens=False)] == ours_reads
    assert fast(reads[:2000], add_special_tokens=False)["input_ids"] == ours_reads[:2000]


def test_to_hf_keeps_special_tokens_at_ids_0_to_4_and_bases_at_5_to_8(
    genome_tokenizer: bpe_core.Tokenizer, exported: Path
) -> None:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    assert [genome_tokenizer.special_ids[token] for token in BERT_SPECIALS] == [0, 1, 2, 3, 4]
    assert [genome_tokenizer.encode(base) for base in BASES] == [[5], [6], [7], [8]]
    peer = Tokenizer.from_file(str(exported))
    assert [peer.token_to_id(token) for token in [*BERT_SPECIALS, *BASES]] == list(range(9))
    assert [peer.id_to_token(token) for token in range(9)] == [*BERT_SPECIALS, *BASES]
    assert peer.encode("[CLS]ACGT[SEP]", add_special_tokens=False).ids == [1, *genome_tokenizer.encode("ACGT"), 2]
    fast = PreTrainedTokenizerFast(tokenizer_file=str(exported))
    assert fast.convert_ids_to_tokens(list(range(9))) == [*BERT_SPECIALS, *BASES]


def test_to_hf_decodes_our_ids_back_to_the_sequence(genome_tokenizer: bpe_core.Tokenizer, exported: Path) -> None:
    from tokenizers import Tokenizer

    peer = Tokenizer.from_file(str(exported))
    ((_, chr17),) = fasta_records(CHR17_PATH)
    assert peer.decode(genome_tokenizer.encode(chr17)) == chr17.upper()
    # every regular token keeps its id and text
    vocab = peer.get_vocab()
    for token in genome_tokenizer.regular_ids():
        assert vocab.get(genome_tokenizer.token_text(token)) == token
        assert peer.id_to_token(token) == genome_tokenizer.token_text(token)


# ---------------------------------------------------------------------------------------------
# CLI


@pytest.mark.both_modes
def test_cli_trains_inspects_and_encodes_a_dnabert2_style_tokenizer(genome: tuple[str, Path], tmp_path: Path) -> None:
    genome_sequence, genome_path = genome  # the whole E. coli genome (compiled) or a prefix (pure)
    output = tmp_path / "x.json"
    assert_ok(
        run_bpe("train", DNABERT2_CONFIG, genome_path, "-o", output, "--set", "trainer.vocab_size=1024", cwd=tmp_path)
    )
    tokenizer = bpe_core.load(output)
    assert tokenizer.vocab_size == 1024
    assert len(tokenizer.merges) == 1024 - len(BERT_SPECIALS) - len(NUCLEOTIDE_ALPHABET)
    assert tokenizer.provenance["symbols"] == len(genome_sequence)

    report = assert_ok(run_bpe("inspect", output, cwd=tmp_path))
    per_token = len(genome_sequence) / tokenizer.provenance["tokens"]
    assert re.search(rf"\b{per_token:.2f} base symbols \(nucleotides\) per token", report), report
    longest = max(len(tokenizer.token_symbols(token)) for token in tokenizer.merged_ids())
    longest_texts = {
        tokenizer.token_text(token)
        for token in tokenizer.merged_ids()
        if len(tokenizer.token_symbols(token)) == longest
    }
    section = report[report.index("longest") :]
    assert any(text in section.split("\n", 2)[1] for text in longest_texts), report

    small = write_fasta(tmp_path / "small.fa", [(name, sequence) for name, sequence in fasta_records(TANDEM_PATH)[:3]])
    encoded = assert_ok(run_bpe("encode", "-t", output, LAMBDA_PATH, small, cwd=tmp_path))
    lines = encoded.splitlines()
    sequences = [single_sequence(LAMBDA_PATH)] + [sequence for _, sequence in fasta_records(TANDEM_PATH)[:3]]
    assert len(lines) == len(sequences) == 4
    for line, sequence in zip(lines, sequences):
        ids = [int(token) for token in line.split()]
        assert ids == tokenizer.encode(sequence)
        assert tokenizer.decode(ids) == sequence


def test_bpe_demo_shows_a_dna_part(tmp_path: Path) -> None:
    output = assert_ok(run_bpe("demo", cwd=tmp_path))
    dna = output[output.index("DNA") :]
    assert "nucleotides per token" in dna
    assert "round trip exact: True" in dna
    assert not list(tmp_path.iterdir())  # the demo leaves nothing behind
