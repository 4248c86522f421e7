"""DNA as DNABERT-2 users expect it: the Hugging Face export of a tokenizer with `[UNK]` maps a
letter outside the alphabet to `[UNK]` in `tokenizers` and `transformers` (bpe-core's `encode`
refuses it, naming the letter and its position); `bpe encode --keep-description` keeps whole
FASTA headers through encode and decode; `Tokenizer.encode_file` reads a file's records, and a
path given to `encode` of DNA is an error that says to use it.

Data: a dnabert2-style tokenizer (configs/dnabert2-style.yaml, vocab 1024) trained on the lambda
genome and the soft-masked chr17 part; checked on E. coli (which it never saw), chr17 and the
lambda reads. Expected ids are our own `encode`; the peers must agree.
"""

import json
from pathlib import Path

import pytest
from Bio.SeqIO.FastaIO import SimpleFastaParser
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG, ecoli_slice, fasta_records, fastq_reads
from helpers.paths import CHR17_PATH, CONFIGS_DIR, LAMBDA_PATH, READS_PATH
from tokenizers import Tokenizer
from transformers import AutoTokenizer, PreTrainedTokenizerFast

import bpe_core


@pytest.fixture(scope="module")
def dna(tmp_path_factory: pytest.TempPathFactory) -> tuple[bpe_core.Tokenizer, Path]:
    """(tokenizer, folder with its tokenizer.json and the transformers files, max length 512)."""
    tokenizer = bpe_core.train(
        DNABERT2_CONFIG, [LAMBDA_PATH, CHR17_PATH], {"trainer.vocab_size": 1024, "max_length": 512}, progress=False
    )
    folder = tmp_path_factory.mktemp("dnabert2") / "export"
    tokenizer.to_hf(folder)
    tokenizer.save(folder.parent / "dna.json")
    return tokenizer, folder


@pytest.fixture(scope="module")
def sequences() -> list[str]:
    """Real sequences: E. coli pieces (never trained on), soft-masked chr17 pieces, reads with N."""
    ecoli = ecoli_slice(60_000)
    ((_, chr17),) = fasta_records(CHR17_PATH)
    reads = [sequence for _, sequence in fastq_reads(READS_PATH)[:200] if "N" in sequence][:20]
    return [ecoli[start : start + 3000] for start in range(0, 60_000, 3000)] + [chr17[:5000], chr17[20_000:]] + reads


def headers(path: Path) -> list[str]:
    """Each record's whole header line (without '>'), as Biopython reads it."""
    import gzip

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as handle:
        return [title for title, _ in SimpleFastaParser(handle)]


# the Hugging Face export ---------------------------------------------------------------------


def test_tokenizers_and_transformers_give_our_ids_on_real_sequences(
    dna: tuple[bpe_core.Tokenizer, Path], sequences: list[str]
) -> None:
    tokenizer, folder = dna
    cls, sep = tokenizer.special_ids["[CLS]"], tokenizer.special_ids["[SEP]"]
    rust = Tokenizer.from_file(str(folder / "tokenizer.json"))
    fast = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    for sequence in sequences:
        ours = tokenizer.encode(sequence)
        assert rust.encode(sequence, add_special_tokens=False).ids == ours
        assert fast(sequence, add_special_tokens=False)["input_ids"] == ours
        assert rust.encode(sequence).ids == [cls, *ours, sep]
    batch = fast(sequences[-20:])["input_ids"]
    assert batch == [[cls, *tokenizer.encode(read), sep] for read in sequences[-20:]]


@pytest.mark.parametrize("letters", ["X", "U", "-", "*", ".", " ", "x", "XX", "é", "🧬"])
def test_letters_outside_the_alphabet_are_unk_in_hugging_face_and_an_error_in_bpe_core(
    dna: tuple[bpe_core.Tokenizer, Path], sequences: list[str], letters: str
) -> None:
    """DNABERT-2's own tokenizer maps them to [UNK]; so does the export, one [UNK] per letter,
    and no merge crosses one. bpe-core refuses them: its ids never hide a letter it cannot read."""
    tokenizer, folder = dna
    left, right = sequences[0][:200], sequences[1][:200]
    sequence = left + letters + right
    with pytest.raises(bpe_core.BpeError, match=f"position {len(left) + 1} is not a nucleotide letter"):
        tokenizer.encode(sequence)
    unk = tokenizer.special_ids["[UNK]"]
    expected = [*tokenizer.encode(left), *[unk] * len(letters), *tokenizer.encode(right)]
    assert Tokenizer.from_file(str(folder / "tokenizer.json")).encode(sequence, add_special_tokens=False).ids == (
        expected
    )
    fast = AutoTokenizer.from_pretrained(str(folder))
    assert fast.unk_token == "[UNK]" and fast.unk_token_id == unk
    assert fast(sequence, add_special_tokens=False)["input_ids"] == expected


def test_without_an_unknown_token_a_letter_outside_the_alphabet_stays_an_error_in_both(tmp_path: Path) -> None:
    tokenizer = bpe_core.train(
        DNABERT2_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": 300, "special_tokens.tokens": []}, progress=False
    )
    tokenizer.to_hf(tmp_path / "tokenizer.json")
    exported = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert exported.encode("ACGTTGCA").ids == tokenizer.encode("ACGTTGCA")
    with pytest.raises(Exception, match="Unk token"):
        exported.encode("ACGTXACGT")


def test_model_max_length_comes_from_the_config_from_to_hf_and_from_bpe_export(
    dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, folder = dna
    assert json.loads((folder / "tokenizer_config.json").read_text())["model_max_length"] == 512
    assert AutoTokenizer.from_pretrained(str(folder)).model_max_length == 512
    tokenizer.to_hf(tmp_path / "short", max_length=128)
    assert AutoTokenizer.from_pretrained(str(tmp_path / "short")).model_max_length == 128
    assert_ok(run_bpe("export", "-t", folder.parent / "dna.json", "-o", "cli/", "--max-length", "2048", cwd=tmp_path))
    fast = AutoTokenizer.from_pretrained(str(tmp_path / "cli"))
    assert fast.model_max_length == 2048
    long_read = ecoli_slice(20_000)
    assert len(fast(long_read, truncation=True)["input_ids"]) == 2048
    assert_clean_error(
        run_bpe("export", "-t", folder.parent / "dna.json", "-o", "x.tiktoken", "--max-length", "9", cwd=tmp_path),
        "--max-length",
        "tiktoken",
    )


def test_without_a_max_length_transformers_has_no_limit_as_before(tmp_path: Path) -> None:
    tokenizer = bpe_core.train(DNABERT2_CONFIG, [LAMBDA_PATH], {"trainer.vocab_size": 300}, progress=False)
    tokenizer.to_hf(tmp_path)
    assert "model_max_length" not in json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert AutoTokenizer.from_pretrained(str(tmp_path)).model_max_length > 10**29


# whole FASTA headers -------------------------------------------------------------------------


def test_keep_description_keeps_whole_headers_through_an_ids_file_and_back_to_fasta(
    dna: tuple[bpe_core.Tokenizer, Path],
) -> None:
    tokenizer, folder = dna
    work = folder.parent
    inputs = [LAMBDA_PATH, CHR17_PATH]
    whole = [header for path in inputs for header in headers(path)]
    assert "gi|9626243|ref|NC_001416.1| Enterobacteria phage lambda, complete genome" in whole
    assert_ok(run_bpe("encode", "-t", "dna.json", *inputs, "--names", "--keep-description", "-o", "ids.txt", cwd=work))
    lines = (work / "ids.txt").read_text().splitlines()[1:]
    assert [line.rpartition("\t")[0] for line in lines] == whole
    assert_ok(run_bpe("decode", "-t", "dna.json", "ids.txt", "-o", "back.fa", cwd=work))
    assert headers(work / "back.fa") == whole
    with open(work / "back.fa") as handle:
        decoded = [sequence for _, sequence in SimpleFastaParser(handle)]
    assert decoded == [sequence.upper() for path in inputs for _, sequence in fasta_records(path)]
    # without it, the first word, as before
    assert_ok(run_bpe("encode", "-t", "dna.json", LAMBDA_PATH, "--names", "-o", "first.txt", cwd=work))
    assert (work / "first.txt").read_text().splitlines()[1].startswith("gi|9626243|ref|NC_001416.1|\t")


def test_keep_description_names_shard_records_and_windows_by_their_whole_headers(
    dna: tuple[bpe_core.Tokenizer, Path],
) -> None:
    tokenizer, folder = dna
    work = folder.parent
    assert_ok(
        run_bpe(
            "encode", "-t", "dna.json", LAMBDA_PATH, CHR17_PATH, "--keep-description", "--max-length", "4000",
            "--eos", "[SEP]", "-o", "shards/", cwd=work,
        )
    )  # fmt: skip
    index = json.loads((work / "shards" / "index.json").read_text())
    lambda_names = index["shards"][0]["names"]
    assert len(lambda_names) > 1
    assert lambda_names[:2] == [
        "gi|9626243|ref|NC_001416.1|/1 Enterobacteria phage lambda, complete genome",
        "gi|9626243|ref|NC_001416.1|/2 Enterobacteria phage lambda, complete genome",
    ]
    assert index["shards"][1]["names"][0] == "chr17/1"  # a header that is its id alone
    assert_ok(run_bpe("decode", "-t", "dna.json", "shards", "-o", "windows.fa.gz", cwd=work))
    assert headers(work / "windows.fa.gz") == [*lambda_names, *index["shards"][1]["names"]]


def test_a_header_holding_a_tab_comes_back_whole(dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path) -> None:
    tokenizer, folder = dna
    header = "read7 sample=A\tlane=3 source=lambda"
    (tmp_path / "tabbed.fa").write_text(f">{header}\nACGTTGCANNACGT\n>plain\nGGGCCC\n")
    assert_ok(
        run_bpe("encode", "-t", folder.parent / "dna.json", "tabbed.fa", "--names", "--keep-description", "-o",
                "ids.txt", cwd=tmp_path)
    )  # fmt: skip
    assert_ok(run_bpe("decode", "-t", folder.parent / "dna.json", "ids.txt", "-o", "back.fa", cwd=tmp_path))
    assert (tmp_path / "back.fa").read_text() == f">{header}\nACGTTGCANNACGT\n>plain\nGGGCCC\n"


def test_fastq_read_titles_are_kept_whole_too(dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path) -> None:
    tokenizer, folder = dna
    reads = fastq_reads(READS_PATH)[:3]
    titles = [f"{name} 1:N:0:ATCACG length={len(sequence)}" for name, sequence in reads]
    (tmp_path / "reads.fq").write_text(
        "".join(f"@{title}\n{sequence}\n+\n{'I' * len(sequence)}\n" for title, (_, sequence) in zip(titles, reads))
    )
    assert_ok(
        run_bpe("encode", "-t", folder.parent / "dna.json", "reads.fq", "--names", "--keep-description", "-o",
                "ids.txt", cwd=tmp_path)
    )  # fmt: skip
    assert_ok(run_bpe("decode", "-t", folder.parent / "dna.json", "ids.txt", "-o", "back.fa", cwd=tmp_path))
    assert headers(tmp_path / "back.fa") == titles


def test_keep_description_without_names_or_shards_is_one_clean_error(
    dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    _, folder = dna
    result = run_bpe("encode", "-t", folder.parent / "dna.json", LAMBDA_PATH, "--keep-description", cwd=tmp_path)
    assert_clean_error(result, "--keep-description", "--names")


def test_records_from_memory_keep_a_seqrecords_description() -> None:
    from Bio.Seq import Seq
    from Bio.SeqRecord import SeqRecord

    from bpe_core.contract import document_name
    from bpe_core.plugins import registry

    fasta = registry().reader("fasta", {})
    record = SeqRecord(Seq("ACGT"), id="chr1", description="chr1 Homo sapiens chromosome 1")
    (read,) = fasta.memory_documents([record])
    assert (document_name(read), document_name(read, whole=True)) == ("chr1", "chr1 Homo sapiens chromosome 1")


# files: encode_file, and paths given to encode ------------------------------------------------


def test_encode_file_gives_one_id_list_per_record_of_fasta_and_fastq(
    dna: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, _ = dna
    records = [*fasta_records(LAMBDA_PATH), *fasta_records(CHR17_PATH)]
    both = tmp_path / "both.fa"
    both.write_text("".join(f">{name} a description\n{sequence}\n" for name, sequence in records))
    assert tokenizer.encode_file(both) == [tokenizer.encode(sequence) for _, sequence in records]
    reads = tokenizer.encode_file(str(READS_PATH), workers=2)
    assert len(reads) == 10_000
    assert reads == tokenizer.encode_batch([sequence for _, sequence in fastq_reads(READS_PATH)], workers=1)


def test_encode_file_is_one_method_for_text_and_midi_too(
    docs_slice_path: Path, docs_text: str, songs: list[Path]
) -> None:
    text = bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 400}}, [docs_slice_path], progress=False
    )
    assert text.encode_file(docs_slice_path) == [text.encode(docs_text[:400_000])]
    midi = bpe_core.train(CONFIGS_DIR / "midi-remi-bpe.yaml", songs[:3], {"trainer.vocab_size": 600}, progress=False)
    assert midi.encode_file(songs[3]) == [midi.encode(songs[3])]


@pytest.mark.parametrize(
    "given", ["LAMBDA", "genomes/lambda.fa", "reads.fastq.gz", "chr1.fa", "C:\\data\\x", "/tmp/ACGT"]
)
def test_a_path_given_to_encode_of_dna_says_to_use_encode_file(
    dna: tuple[bpe_core.Tokenizer, Path], given: str
) -> None:
    tokenizer, _ = dna
    path = str(LAMBDA_PATH) if given == "LAMBDA" else given
    with pytest.raises(bpe_core.BpeError, match="looks like a file path.*encode_file") as raised:
        tokenizer.encode(path)
    assert repr(path)[:40] in str(raised.value)
    with pytest.raises(bpe_core.BpeError, match="is a path, not a sequence.*encode_file"):
        tokenizer.encode(LAMBDA_PATH)


def test_a_sequence_with_a_bad_letter_still_names_the_letter(dna: tuple[bpe_core.Tokenizer, Path]) -> None:
    tokenizer, _ = dna
    with pytest.raises(bpe_core.BpeError, match="'J' at position 5 is not a nucleotide letter"):
        tokenizer.encode("ACGTJACGT")


def test_encode_file_of_a_missing_file_is_an_error_naming_it(dna: tuple[bpe_core.Tokenizer, Path]) -> None:
    tokenizer, _ = dna
    with pytest.raises(bpe_core.BpeError, match="missing.fa"):
        tokenizer.encode_file("missing.fa")
    with pytest.raises(bpe_core.BpeError, match=r"encode_file\(path\): expected a path"):
        tokenizer.encode_file(["ACGT"])  # type: ignore[arg-type]
