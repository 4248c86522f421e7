"""DNA records survive the round trip: encode keeps each FASTA/FASTQ record's id (`--names`, the
shard index), decode to `x.fa` writes one FASTA record per document with its header, and
encoding that file again gives the same ids.

Data: the four records of tandem_repeat_stress.fa.gz (35 bp to 10 Mbp), the soft-masked chr17
part and the 10,000 lambda reads (FASTQ: decoding writes FASTA, qualities are not encoded).
Expected names and sequences come from tests/helpers/dna.py, which reads the files without
bpe_core; expected ids from the same tokenizer's `encode` in this process.
"""

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import DNABERT2_CONFIG, fasta_records, fastq_reads, write_fasta
from helpers.outputs import snapshot
from helpers.paths import CHR17_PATH, LAMBDA_PATH, READS_PATH, TANDEM_PATH
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe_core
from bpe_core.config import parse_runner
from bpe_core.corpus.shards import ShardOptions, encode_to_shards
from bpe_core.idfiles import read_shards


@pytest.fixture(scope="module")
def dna_tokenizer(workdir: Path) -> tuple[bpe_core.Tokenizer, Path]:
    """dnabert2-style ([UNK] [CLS] [SEP] [PAD] [MASK] at 0-4, case fold) trained on lambda, vocab 512."""
    tokenizer = bpe_core.train(DNABERT2_CONFIG, [str(LAMBDA_PATH)], {"trainer.vocab_size": 512}, progress=False)
    path = workdir / "dna.json"
    tokenizer.save(path)
    return tokenizer, path


@pytest.fixture(scope="module")
def small_fasta(workdir: Path) -> tuple[Path, list[tuple[str, str]]]:
    """(file, records): the three short tandem records and the chr17 part in one FASTA file, 70
    letters a line, lower case kept: the tests that need not encode the 10 Mbp record use it."""
    records = [*fasta_records(TANDEM_PATH)[:3], *fasta_records(CHR17_PATH)]
    assert max(len(sequence) for _, sequence in records) < 100_000
    return write_fasta(workdir / "small.fa", records), records


def read_fasta_file(path: Path) -> list[tuple[str, str]]:
    """(header, sequence) of each record of a FASTA file we wrote, read as plainly as possible."""
    text = gzip.decompress(path.read_bytes()).decode("ascii") if path.name.endswith(".gz") else path.read_text("ascii")
    assert text.endswith("\n"), "a FASTA file ends with a newline"
    records: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(">"):
            records.append((line[1:], []))
        else:
            records[-1][1].append(line)
    return [(header, "".join(lines)) for header, lines in records]


def named_ids(output: str) -> list[tuple[str, list[int]]]:
    """The rows of `bpe encode --names` output, after its header line (which tokenizer made them)."""
    header, _, rows_text = output.partition("\n")
    assert header.startswith("#bpe-core ids {"), f"no header line: {header[:60]!r}"
    rows = []
    for line in rows_text.splitlines():
        name, tab, ids = line.partition("\t")
        assert tab, f"no NAME<TAB> column in {line[:60]!r}"
        rows.append((name, [int(token) for token in ids.split()]))
    return rows


@pytest.fixture(scope="module")
def named_ids_file(dna_tokenizer: tuple[bpe_core.Tokenizer, Path], workdir: Path) -> Path:
    """`bpe encode --names` of the four tandem records (35 bp to 10 Mbp) and the chr17 part."""
    _, path = dna_tokenizer
    ids = workdir / "named-ids.txt"
    assert_ok(run_bpe("encode", "-t", path, TANDEM_PATH, CHR17_PATH, "--names", "-q", "-o", ids, cwd=workdir))
    return ids


def test_encode_names_writes_each_record_id_a_tab_and_its_ids(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], named_ids_file: Path
) -> None:
    tokenizer, _ = dna_tokenizer
    records = [*fasta_records(TANDEM_PATH), *fasta_records(CHR17_PATH)]
    assert len(records) == 5
    assert named_ids(named_ids_file.read_text()) == [(name, tokenizer.encode(sequence)) for name, sequence in records]


def test_named_ids_decode_to_one_fasta_record_per_document_that_encodes_back_to_the_same_ids(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], named_ids_file: Path, workdir: Path
) -> None:
    _, path = dna_tokenizer
    ids = named_ids_file
    assert_ok(run_bpe("decode", "-t", path, ids, "-o", "back.fa", cwd=workdir))
    expected = [
        (name, sequence.upper()) for name, sequence in [*fasta_records(TANDEM_PATH), *fasta_records(CHR17_PATH)]
    ]
    assert read_fasta_file(workdir / "back.fa") == expected
    lines = (workdir / "back.fa").read_text("ascii").splitlines()
    assert max(len(line) for line in lines if not line.startswith(">")) == 60
    again = assert_ok(run_bpe("encode", "-t", path, "back.fa", "--names", "-q", cwd=workdir))
    assert again == ids.read_text()


def test_plain_ids_decode_to_fasta_headers_numbered_by_line(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], small_fasta: tuple[Path, list[tuple[str, str]]], workdir: Path
) -> None:
    """Without names, record N is the document on line N: `>1`, `>2`, ..."""
    _, path = dna_tokenizer
    fasta, expected = small_fasta
    plain = assert_ok(run_bpe("encode", "-t", path, fasta, "-q", cwd=workdir))
    (workdir / "plain-ids.txt").write_text(plain)
    assert_ok(run_bpe("decode", "-t", path, "plain-ids.txt", "-o", "numbered.fasta", cwd=workdir))
    records = read_fasta_file(workdir / "numbered.fasta")
    assert records == [(str(number), sequence.upper()) for number, (_, sequence) in enumerate(expected, start=1)]
    again = assert_ok(run_bpe("encode", "-t", path, "numbered.fasta", "-q", cwd=workdir))
    assert again == plain


def test_decode_to_a_name_that_is_not_fasta_writes_bare_sequences_one_per_line(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], small_fasta: tuple[Path, list[tuple[str, str]]], workdir: Path
) -> None:
    _, path = dna_tokenizer
    fasta, expected = small_fasta
    encoded = assert_ok(run_bpe("encode", "-t", path, fasta, "--names", "-q", cwd=workdir))
    (workdir / "for-text.txt").write_text(encoded)
    decoded = assert_ok(run_bpe("decode", "-t", path, "for-text.txt", cwd=workdir))
    assert decoded.split("\n") == [sequence.upper() for _, sequence in expected]
    assert_ok(run_bpe("decode", "-t", path, "for-text.txt", "-o", "sequences.txt", cwd=workdir))
    assert (workdir / "sequences.txt").read_text() == decoded


@pytest.mark.parametrize("eos", [None, "[SEP]"], ids=["no-eos-whole-tandem", "eos-sep-small"])
def test_shard_index_names_each_record_and_the_directory_decodes_to_fasta_that_encodes_to_the_same_shards(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path],
    small_fasta: tuple[Path, list[tuple[str, str]]],
    workdir: Path,
    eos: str | None,
) -> None:
    tokenizer, path = dna_tokenizer
    tag = eos is not None
    extra = ["--eos", eos] if eos else []
    # without --eos only the index can cut the records apart: the whole tandem file then
    inputs = (
        [(TANDEM_PATH, list(fasta_records(TANDEM_PATH))), (CHR17_PATH, list(fasta_records(CHR17_PATH)))]
        if eos is None
        else [small_fasta]
    )
    first = workdir / f"shards-{tag}"
    assert_ok(
        run_bpe(
            "encode",
            "-t",
            path,
            *(file for file, _ in inputs),
            "--format",
            "bin",
            "-o",
            f"{first}/",
            *extra,
            "-q",
            cwd=workdir,
        )
    )
    index = json.loads((first / "index.json").read_text())
    end = [tokenizer.special_ids[eos]] if eos else []
    assert len(index["shards"]) == len(inputs)
    for entry, (_, records) in zip(index["shards"], inputs):
        assert entry["names"] == [name for name, _ in records]
        assert entry["lengths"] == [len(tokenizer.encode(sequence) + end) for _, sequence in records]
        assert entry["documents"] == len(records) and entry["tokens"] == sum(entry["lengths"])

    back = workdir / f"from-shards-{tag}.fa.gz"
    assert_ok(run_bpe("decode", "-t", path, f"{first}/", "-o", back, cwd=workdir))
    expected = [(name, sequence.upper()) for _, records in inputs for name, sequence in records]
    assert read_fasta_file(back) == expected  # the --eos marker is not part of a sequence

    second = workdir / f"shards-again-{tag}"
    assert_ok(run_bpe("encode", "-t", path, back, "--format", "bin", "-o", f"{second}/", *extra, "-q", cwd=workdir))
    (shard,) = json.loads((second / "index.json").read_text())["shards"]
    assert (second / shard["shard"]).read_bytes() == b"".join(
        (first / entry["shard"]).read_bytes() for entry in index["shards"]
    )
    assert shard["names"] == [name for name, _ in expected]


def test_fastq_reads_decode_to_fasta_records_without_qualities_that_encode_to_the_same_ids(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], workdir: Path
) -> None:
    tokenizer, path = dna_tokenizer
    reads = fastq_reads()
    assert_ok(run_bpe("encode", "-t", path, READS_PATH, "--format", "bin", "-o", "read-shards/", "-q", cwd=workdir))
    assert_ok(run_bpe("decode", "-t", path, "read-shards/", "-o", "reads.fa", cwd=workdir))
    assert read_fasta_file(workdir / "reads.fa") == [(name, sequence) for name, sequence in reads]
    from_fastq = assert_ok(run_bpe("encode", "-t", path, READS_PATH, "--names", "-q", cwd=workdir))
    from_fasta = assert_ok(run_bpe("encode", "-t", path, "reads.fa", "--names", "-q", cwd=workdir))
    assert from_fasta == from_fastq
    assert named_ids(from_fastq)[:50] == [(name, tokenizer.encode(sequence)) for name, sequence in reads[:50]]


def test_a_tokenizer_trained_on_reads_encodes_a_fasta_genome_by_its_suffix(workdir: Path) -> None:
    tokenizer = bpe_core.train(
        DNABERT2_CONFIG, [str(READS_PATH)], {"input.reader": "fastq", "trainer.vocab_size": 300}, progress=False
    )
    tokenizer.save(workdir / "reads-tok.json")
    output = assert_ok(run_bpe("encode", "-t", "reads-tok.json", CHR17_PATH, "--names", "-q", cwd=workdir))
    ((name, sequence),) = fasta_records(CHR17_PATH)
    assert named_ids(output) == [(name, tokenizer.encode(sequence))]


def test_names_need_records_and_a_text_format(dna_tokenizer: tuple[bpe_core.Tokenizer, Path], workdir: Path) -> None:
    _, path = dna_tokenizer
    result = run_bpe("encode", "-t", path, CHR17_PATH, "--names", "--format", "bin", "-o", "x.bin", cwd=workdir)
    assert_clean_error(result, "--names", "--format ids or tokens")
    assert not (workdir / "x.bin").exists()
    text = workdir / "text-tok.json"
    (workdir / "words.txt").write_text("some words and some more words\n")
    bpe_core.train(
        {"pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 260}}, [str(workdir / "words.txt")], progress=False
    ).save(text)
    result = run_bpe("encode", "-t", text, "words.txt", "--names", "-o", "words.ids", cwd=workdir)
    assert_clean_error(result, "--names", "document 1 has no name", "FASTA/FASTQ")
    assert not (workdir / "words.ids").exists()


def test_decoding_a_bad_id_to_fasta_names_the_line_and_writes_nothing(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, path = dna_tokenizer
    (tmp_path / "ids.txt").write_text(f"first\t5 6 7\nsecond\t5 {tokenizer.vocab_size + 3}\n")
    before = snapshot(tmp_path)
    assert_clean_error(
        run_bpe("decode", "-t", path, "ids.txt", "-o", "out.fa", cwd=tmp_path),
        "ids.txt, line 2",
        "not in this tokenizer",
    )
    assert snapshot(tmp_path) == before


def test_shards_of_another_vocabulary_are_refused(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], tmp_path: Path
) -> None:
    _, path = dna_tokenizer
    other = bpe_core.train(DNABERT2_CONFIG, [str(LAMBDA_PATH)], {"trainer.vocab_size": 300}, progress=False)
    other.save(tmp_path / "other.json")
    assert_ok(run_bpe("encode", "-t", "other.json", CHR17_PATH, "--format", "bin", "-o", "shards/", "-q", cwd=tmp_path))
    before = snapshot(tmp_path)
    assert_clean_error(run_bpe("decode", "-t", path, "shards/", "-o", "out.fa", cwd=tmp_path), "300", "512")
    assert snapshot(tmp_path) == before


record_names = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters=">"), min_size=1, max_size=12
)
sequences = st.text(alphabet="ACGTNacgtnRY", max_size=300)


@pytest.mark.both_modes
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.tuples(record_names, sequences), min_size=1, max_size=6), eos=st.booleans())
def test_any_named_records_survive_shards_and_the_fasta_writer(
    dna_tokenizer: tuple[bpe_core.Tokenizer, Path], tmp_path: Path, records: list[tuple[str, str]], eos: bool
) -> None:
    tokenizer, _ = dna_tokenizer
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        source = write_fasta(Path(scratch) / "in.fa", records)
        options = ShardOptions(eos_id=tokenizer.special_ids["[SEP]"] if eos else None)
        encode_to_shards(
            tokenizer, [str(source)], f"{scratch}/shards", options, parse_runner({"workers": 1}, "test"), progress=False
        )
        documents = list(read_shards(f"{scratch}/shards", tokenizer.vocab_size))
        assert [name for _, name, _ in documents] == [name for name, _ in records]
        specials = set(tokenizer.special_ids.values())
        decoded = [
            (str(name), tokenizer.decode([token for token in ids if token not in specials]))
            for _, name, ids in documents
        ]
        assert decoded == [(name, sequence.upper()) for name, sequence in records]
        tokenizer.decoder.write_records(decoded, f"{scratch}/back.fa.gz")  # type: ignore[attr-defined]
        assert read_fasta_file(Path(scratch) / "back.fa.gz") == decoded
