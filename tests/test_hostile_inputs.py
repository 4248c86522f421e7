"""Hostile inputs to the readers, streaming and training (issue 12, classes 2, 3, 4, 5, 12, 14).

Every case is generated here, small, and run through the installed `bpe` with its time and address
space bounded. A bad input gives exit status 2, one `error:` line naming the file (and record or
line), no traceback, and changes no file; where the right outcome is a result, the result is
checked. Case ids are `class-variant`:

- empty-input: training on nothing (empty files, empty gzip, a FASTA of only '>', no chunks counted)
- files-change: an input deleted or rewritten after it was read keeps the hash of what was read
- reader: undecodable bytes and damaged gzip in the text, JSONL, FASTA, FASTQ and MIDI readers
- midi-length: a tiny file that claims a song of a billion bars
- long-line: text with no newline, text with no place to cut, a FASTA record over the maximum
- jsonl-depth: a JSON line nested 100,000 deep
"""

import gzip
import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path

import distributed
import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe_bounded
from helpers.dna import DNABERT2_CONFIG as DNA
from helpers.midi import REMI_CONFIG as MIDI
from helpers.midi import pop909_paths
from helpers.outputs import snapshot
from helpers.paths import LAMBDA_PATH, READS_PATH
from helpers.text import GPT2_CONFIG as GPT2

import bpe_core
from bpe_core.errors import BpeError
from bpe_core.plugins import registry
from bpe_core.training import count
from bpe_dna.readers import FastaReader, FastqReader
from bpe_midi.reader import MidiReader
from bpe_text.readers import JsonlReader, TextReader

SMALL_VOCAB = ("--set", "trainer.vocab_size=300")
MEMORY_MB = 600  # any case here: a bound that a blow-up (gigabytes) cannot hide under
LINE_MEMORY_MB = 300  # a 40 MB line fits only if it is cut (base address space ~ 200 MB)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def corrupted(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[30:60] = b"\xff" * 30  # inside the deflate stream: zlib.error, not a gzip header error
    return bytes(damaged)


def long_song() -> bytes:
    """45 bytes: 1 tick per beat, 1/16 time, one note after a delta of 2^28 - 1 ticks (~10^9 bars)."""
    track = bytes(
        [0x00, 0xFF, 0x58, 0x04, 0x01, 0x04, 0x18, 0x08]  # time signature 1/16
        + [0xFF, 0xFF, 0xFF, 0x7F, 0x90, 0x3C, 0x40]  # 2^28 - 1 ticks later: note on
        + [0x01, 0x80, 0x3C, 0x40, 0x00, 0xFF, 0x2F, 0x00]  # note off, end of track
    )
    return b"MThd" + struct.pack(">IHHH", 6, 0, 1, 1) + b"MTrk" + struct.pack(">I", len(track)) + track


def long_silence() -> bytes:
    """A song with no notes whose track ends 2^28 - 1 ticks in: its bars are as many."""
    track = bytes([0x00, 0xFF, 0x58, 0x04, 0x01, 0x04, 0x18, 0x08, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0x2F, 0x00])
    return b"MThd" + struct.pack(">IHHH", 6, 0, 1, 1) + b"MTrk" + struct.pack(">I", len(track)) + track


LAMBDA = gzip.decompress(LAMBDA_PATH.read_bytes())
READS = gzip.decompress(READS_PATH.read_bytes())
SENTENCES = b"The reader streams text in blocks.\nEach block is cut where no chunk can change.\n" * 200
JSONL = b"".join(json.dumps({"text": line}).encode() + b"\n" for line in SENTENCES.decode().splitlines())


# ------------------------------------------------------------------ bad input to training

# (id, config, extra arguments, file name, file bytes, fragments of the error line)
TRAIN_CASES: list[tuple[str, Path, tuple[str, ...], str, bytes, tuple[str, ...]]] = [
    ("empty-input-txt", GPT2, (), "empty.txt", b"", ("nothing to train on", "empty.txt")),
    ("empty-input-zero-byte-gz", GPT2, (), "zero.txt.gz", b"", ("nothing to train on", "zero.txt.gz")),
    (
        "empty-input-empty-gzip-stream",
        GPT2,
        (),
        "stream.txt.gz",
        gzip_bytes(b""),
        ("nothing to train on", "stream.txt.gz"),
    ),
    ("empty-input-fasta-only-header", DNA, (), "only.fa", b">", ("nothing to train on", "only.fa")),
    (
        "empty-input-jsonl-empty-strings",
        GPT2,
        ("--set", "input.reader=jsonl"),
        "empty.jsonl",
        b'{"text": ""}\n\n{"text": ""}\n',
        ("nothing to train on", "empty.jsonl"),
    ),
    ("reader-text-not-gzip", GPT2, (), "plain.txt.gz", SENTENCES, ("plain.txt.gz", "not a valid gzip file")),
    (
        "reader-text-truncated-gzip",
        GPT2,
        (),
        "cut.txt.gz",
        truncated(gzip_bytes(SENTENCES)),
        ("cut.txt.gz", "truncated"),
    ),
    (
        "reader-text-corrupt-gzip",
        GPT2,
        (),
        "bad.txt.gz",
        corrupted(gzip_bytes(SENTENCES)),
        ("bad.txt.gz", "not a valid gzip"),
    ),
    (
        "reader-text-binary",
        GPT2,
        (),
        "binary.txt",
        b"\x89PNG\r\n\x1a\n\xff\xfe" * 50,
        ("binary.txt", "not valid UTF-8"),
    ),
    (
        "reader-jsonl-not-gzip",
        GPT2,
        ("--set", "input.reader=jsonl"),
        "plain.jsonl.gz",
        JSONL,
        ("plain.jsonl.gz", "not a valid gzip"),
    ),
    (
        "reader-jsonl-truncated-gzip",
        GPT2,
        ("--set", "input.reader=jsonl"),
        "cut.jsonl.gz",
        truncated(gzip_bytes(JSONL)),
        ("cut.jsonl.gz", "truncated"),
    ),
    ("reader-fasta-not-gzip", DNA, (), "plain.fa.gz", LAMBDA, ("plain.fa.gz", "not a valid gzip file")),
    ("reader-fasta-truncated-gzip", DNA, (), "cut.fa.gz", truncated(gzip_bytes(LAMBDA)), ("cut.fa.gz", "truncated")),
    (
        "reader-fasta-corrupt-gzip",
        DNA,
        (),
        "bad.fa.gz",
        corrupted(gzip_bytes(LAMBDA)),
        ("bad.fa.gz", "not a valid gzip"),
    ),
    (
        "reader-fasta-latin1-header",
        DNA,
        (),
        "latin.fa",
        b">caf\xe9 phage\n" + LAMBDA,
        ("latin.fa", "not a UTF-8 text file", "0xe9"),
    ),
    ("reader-fasta-binary", DNA, (), "binary.fa", b"\x00\xff\xfe\x80" * 3000, ("binary.fa", "not a UTF-8 text file")),
    (
        "reader-fasta-binary-after-8kb",
        DNA,
        (),
        "late.fa",
        LAMBDA[:20_000] + b"\xff\xfe" + LAMBDA[20_000:],
        ("late.fa", "not a UTF-8 text file"),
    ),
    (
        "reader-fasta-non-ascii-sequence",
        DNA,
        (),
        "eszett.fa",
        ">r1\nACGT\u00dfACGT\n".encode(),
        ("eszett.fa, record r1", "'ß' at position 5", "not a nucleotide letter"),
    ),
    (
        "reader-fastq-not-gzip",
        DNA,
        ("--set", "input.reader=fastq"),
        "plain.fq.gz",
        READS,
        ("plain.fq.gz", "not a valid gzip"),
    ),
    (
        "reader-fastq-truncated-gzip",
        DNA,
        ("--set", "input.reader=fastq"),
        "cut.fq.gz",
        truncated(gzip_bytes(READS)),
        ("cut.fq.gz", "truncated"),
    ),
    (
        "reader-fastq-binary",
        DNA,
        ("--set", "input.reader=fastq"),
        "binary.fq",
        b"@r1\nAC\xff\xfeGT\n+\nIIIIII\n",
        ("binary.fq", "not a UTF-8 text file"),
    ),
    (
        "reader-midi-not-midi",
        MIDI,
        ("--strict",),
        "noise.mid",
        b"\x00\xff" * 500,
        ("noise.mid", "not a valid MIDI file"),
    ),
    (
        "midi-length-long-note",
        MIDI,
        ("--strict",),
        "long.mid",
        long_song(),
        ("long.mid", "268435456 beats", "limit is 100000"),
    ),
    (
        "midi-length-long-silence",
        MIDI,
        ("--strict",),
        "silent.mid",
        long_silence(),
        ("silent.mid", "beats", "limit is 100000"),
    ),
    (
        "jsonl-depth-100000",
        GPT2,
        ("--set", "input.reader=jsonl"),
        "deep.jsonl",
        b'{"text": "fine"}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        ("deep.jsonl, line 2", "nested too deeply"),
    ),
    (
        "jsonl-depth-object",
        GPT2,
        ("--set", "input.reader=jsonl"),
        "deep-object.jsonl",
        b'{"text": "x", "a": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001 + b"\n",
        ("deep-object.jsonl, line 1", "nested too deeply"),
    ),
    (
        "long-line-fasta-record-over-max-length",
        DNA,
        ("--set", "input.max_length=100000"),
        "long.fa.gz",
        gzip_bytes(b">chrLong a long one\n" + b"ACGT" * 250_000 + b"\n"),
        ("long.fa.gz, record chrLong", "longer than 100000 letters", "max_length"),
    ),
]


@pytest.mark.parametrize(
    ("config", "extra", "name", "data", "fragments"),
    [case[1:] for case in TRAIN_CASES],
    ids=[case[0] for case in TRAIN_CASES],
)
def test_hostile_input_to_training_is_one_error_naming_the_file(tmp_path, config, extra, name, data, fragments):
    (tmp_path / name).write_bytes(data)
    before = snapshot(tmp_path)
    result = run_bpe_bounded(
        "train", config, name, "-o", "out.json", *extra, cwd=tmp_path, timeout=60, memory_mb=MEMORY_MB
    )
    assert_clean_error(result, *fragments)
    assert snapshot(tmp_path) == before


def test_empty_input_a_counts_file_of_no_chunks_trains_nothing(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    assert_ok(
        run_bpe_bounded("count", GPT2, "empty.txt", "-o", "empty.counts", cwd=tmp_path)
    )  # counting nothing is a fact
    before = snapshot(tmp_path)
    result = run_bpe_bounded(
        "train", GPT2, "--from-counts", "empty.counts", "-o", "out.json", cwd=tmp_path, memory_mb=MEMORY_MB
    )
    assert_clean_error(result, "nothing to train on", "empty.counts")
    assert snapshot(tmp_path) == before


def test_empty_input_every_midi_file_skipped_is_an_error_after_the_warnings(tmp_path):
    (tmp_path / "long.mid").write_bytes(long_song())
    before = snapshot(tmp_path)
    result = run_bpe_bounded("train", MIDI, "long.mid", "-o", "out.json", cwd=tmp_path, timeout=60, memory_mb=MEMORY_MB)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: nothing to train on: long.mid holds no chunks (empty, or only what is skipped)"]
    assert "warning: skipped long.mid: the song lasts 268435456 beats" in result.stderr
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ bad input to encoding


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    """Small text, DNA and MIDI tokenizer files (the text one knows the long line's words)."""
    directory = tmp_path_factory.mktemp("tokenizers")
    (directory / "sentences.txt").write_bytes(SENTENCES + b"the quick brown fox jumps over the lazy dog\n" * 200)
    paths = {}
    for domain, config, files in (
        ("text", GPT2, [directory / "sentences.txt"]),
        ("dna", DNA, [LAMBDA_PATH]),
        ("midi", MIDI, pop909_paths()[:3]),
    ):
        paths[domain] = directory / f"{domain}.json"
        bpe_core.train(config, files, {"trainer.vocab_size": 500} if domain == "text" else None, progress=False).save(
            paths[domain]
        )
    return paths


# (id, domain, file name, file bytes, fragments of the error line)
ENCODE_CASES: list[tuple[str, str, str, bytes, tuple[str, ...]]] = [
    ("reader-text-not-gzip", "text", "plain.txt.gz", SENTENCES, ("plain.txt.gz", "not a valid gzip file")),
    ("reader-text-truncated-gzip", "text", "cut.txt.gz", truncated(gzip_bytes(SENTENCES)), ("cut.txt.gz", "truncated")),
    ("reader-fasta-not-gzip", "dna", "plain.fa.gz", LAMBDA, ("plain.fa.gz", "not a valid gzip file")),
    ("reader-fasta-latin1-header", "dna", "latin.fa", b">caf\xe9\nACGT\n", ("latin.fa", "not a UTF-8 text file")),
    ("reader-fasta-binary", "dna", "binary.fa", b"\x00\xff\xfe\x80" * 3000, ("binary.fa", "not a UTF-8 text file")),
    ("reader-fastq-not-gzip", "dna", "plain.fq.gz", READS, ("plain.fq.gz", "not a valid gzip file")),
    ("midi-length-long-note", "midi", "long.mid", long_song(), ("long.mid", "268435456 beats")),
]


@pytest.mark.parametrize(
    ("domain", "name", "data", "fragments"), [case[1:] for case in ENCODE_CASES], ids=[case[0] for case in ENCODE_CASES]
)
def test_hostile_input_to_encoding_is_one_error_naming_the_file(tmp_path, tokenizers, domain, name, data, fragments):
    (tmp_path / name).write_bytes(data)
    before = snapshot(tmp_path)
    result = run_bpe_bounded(
        "encode", "-t", tokenizers[domain], name, "-o", "out.ids", cwd=tmp_path, timeout=60, memory_mb=MEMORY_MB
    )
    assert_clean_error(result, *fragments)
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ what is read correctly


def test_reader_fasta_with_a_byte_order_mark_and_utf8_header_reads_like_plain_fasta(tmp_path):
    plain = LAMBDA
    header_end = plain.index(b"\n")
    (tmp_path / "plain.fa").write_bytes(plain)
    (tmp_path / "marked.fa").write_bytes(
        b"\xef\xbb\xbf" + plain[:header_end] + " phage λ, café".encode() + plain[header_end:]
    )
    for name in ("plain.fa", "marked.fa"):
        assert_ok(run_bpe_bounded("train", DNA, name, "-o", f"{name}.json", cwd=tmp_path, memory_mb=MEMORY_MB))
    assert (
        json.loads((tmp_path / "plain.fa.json").read_text())["merges"]
        == json.loads((tmp_path / "marked.fa.json").read_text())["merges"]
    )
    records = list(FastaReader({}).documents([str(tmp_path / "marked.fa")]))
    assert [record.id for record in records] == [plain[1:header_end].split()[0].decode()]


def test_midi_length_a_long_song_is_skipped_and_named_while_the_others_train(tmp_path):
    songs = tmp_path / "songs"
    songs.mkdir()
    for path in pop909_paths()[:3]:
        (songs / path.name).write_bytes(path.read_bytes())
    (songs / "long.mid").write_bytes(long_song())
    result = run_bpe_bounded("train", MIDI, "songs", "-o", "out.json", cwd=tmp_path, timeout=60, memory_mb=MEMORY_MB)
    assert_ok(result)
    assert "warning: skipped songs/long.mid: the song lasts 268435456 beats; the limit is 100000" in result.stderr
    assert "skipped 1 of 4 MIDI files" in result.stderr
    provenance = json.loads((tmp_path / "out.json").read_text())["provenance"]
    assert provenance["files_skipped"] == 1 and len(provenance["inputs"]) == 3


def test_midi_length_is_checked_on_a_mido_file_given_to_the_api(tmp_path, tokenizers):
    import mido

    (tmp_path / "long.mid").write_bytes(long_song())
    with pytest.raises(BpeError, match="268435456 beats; the limit is 100000"):
        bpe_core.load(tokenizers["midi"]).encode(mido.MidiFile(tmp_path / "long.mid"))


# ------------------------------------------------------------------ files that change under us


def _read_all(documents) -> None:
    for document in documents:
        blocks = getattr(document, "blocks", None)
        if blocks is not None:
            for _ in blocks():
                pass


READERS: list[tuple[str, Callable[[], object], str, bytes]] = [
    ("files-change-text", TextReader, "a.txt", SENTENCES),
    ("files-change-text-gz", TextReader, "a.txt.gz", gzip_bytes(SENTENCES)),
    ("files-change-jsonl", lambda: JsonlReader("text"), "a.jsonl", JSONL),
    ("files-change-jsonl-gz", lambda: JsonlReader("text"), "a.jsonl.gz", gzip_bytes(JSONL)),
    ("files-change-fasta", lambda: FastaReader({}), "a.fa", LAMBDA),
    ("files-change-fasta-gz", lambda: FastaReader({}), "a.fa.gz", gzip_bytes(LAMBDA)),
    ("files-change-fastq", lambda: FastqReader({}), "a.fq", b"".join(READS.splitlines(keepends=True)[:400])),
    ("files-change-midi", lambda: MidiReader({}), "a.mid", pop909_paths()[0].read_bytes()),
]


@pytest.mark.parametrize(
    ("make_reader", "name", "data"), [case[1:] for case in READERS], ids=[case[0] for case in READERS]
)
@pytest.mark.parametrize("change", ["deleted", "rewritten"])
def test_files_change_a_reader_hashes_the_bytes_it_read_not_the_file_afterwards(
    tmp_path, make_reader, name, data, change
):
    path = tmp_path / name
    path.write_bytes(data)
    reader = make_reader()
    _read_all(reader.documents([str(path)]))
    if change == "deleted":
        path.unlink()
    else:
        path.write_bytes(data[:100])
    [source] = reader.sources()
    assert (source.path, source.size, source.sha256) == (str(path), len(data), sha256(data))


@pytest.mark.parametrize(
    "make_reader",
    [TextReader, lambda: JsonlReader("text")],
    ids=["files-change-text-range", "files-change-jsonl-range"],
)
def test_files_change_a_file_read_in_ranges_is_hashed_as_it_was_when_its_first_range_opened(tmp_path, make_reader):
    path = tmp_path / "a.txt"
    data = JSONL if isinstance(make_reader(), JsonlReader) else SENTENCES
    path.write_bytes(data)
    reader = make_reader()
    safe_cut = registry().pretokenizer("gpt2", {}).safe_cut
    _read_all(reader.range_documents(str(path), 0, 4096, safe_cut))
    path.unlink()  # a Dask task hashes at the end of its count: the path may be gone by then
    [source] = reader.sources()
    assert (source.size, source.sha256) == (len(data), sha256(data))


def test_files_change_an_input_deleted_after_counting_keeps_its_provenance(tmp_path, monkeypatch):
    path = tmp_path / "a.txt"
    path.write_bytes(SENTENCES)
    documents = TextReader.documents

    def then_delete(self, paths, strict=False):
        yield from documents(self, paths, strict)
        path.unlink()  # after the last document, before the provenance is asked for

    monkeypatch.setattr(TextReader, "documents", then_delete)
    tokenizer = bpe_core.train(GPT2, [path], {"trainer.vocab_size": 300}, workers=1, progress=False)
    assert not path.exists()
    assert tokenizer.provenance["inputs"] == [{"path": str(path), "size": len(SENTENCES), "sha256": sha256(SENTENCES)}]


def test_files_change_counts_on_dask_record_the_hash_of_each_file(tmp_path):
    plain, packed = tmp_path / "plain.txt", tmp_path / "packed.txt.gz"
    plain.write_bytes(SENTENCES * 10)
    packed.write_bytes(gzip_bytes(SENTENCES))
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    ) as cluster:
        runner = {"kind": "dask", "address": cluster.scheduler_address, "range_bytes": 4096}  # the plain file in ranges
        counts = count(GPT2, [plain, packed], runner=runner, progress=False)
    recorded = {item["path"]: (item["size"], item["sha256"]) for item in counts.inputs}
    assert recorded == {str(path): (path.stat().st_size, sha256(path.read_bytes())) for path in (plain, packed)}


# ------------------------------------------------------------------ memory on long lines


@pytest.fixture(scope="module")
def one_line(tmp_path_factory):
    """40 MB of prose with no newline, gzipped (about 250 KB)."""
    path = tmp_path_factory.mktemp("line") / "line.txt.gz"
    with gzip.open(path, "wb", compresslevel=1) as handle:
        for _ in range(40):
            handle.write(b"the quick brown fox jumps over the lazy dog " * 23_831)
    return path


def test_long_line_of_text_trains_in_bounded_memory(tmp_path, one_line):
    result = run_bpe_bounded(
        "train", GPT2, one_line, "-o", "out.json", *SMALL_VOCAB, cwd=tmp_path, timeout=300, memory_mb=LINE_MEMORY_MB
    )
    assert_ok(result)
    provenance = json.loads((tmp_path / "out.json").read_text())["provenance"]
    # every word once, and the last space alone: no chunk lost, doubled or split at a cut
    assert provenance["chunks"] == 40 * 23_831 * 9 + 1


def test_long_line_that_no_pattern_can_cut_runs_out_of_memory_with_one_error_line(tmp_path, one_line):
    """The same bound is real: a custom pattern never cuts, so the line is held whole."""
    config = tmp_path / "custom.yaml"
    config.write_text(
        'name: custom\npretokenizer: {name: regex, pattern: "\\\\S+|\\\\s+"}\ntrainer: {vocab_size: 300}\n'
    )
    before = snapshot(tmp_path)
    result = run_bpe_bounded(
        "train", config, one_line, "-o", "out.json", cwd=tmp_path, timeout=300, memory_mb=LINE_MEMORY_MB
    )
    assert_clean_error(result, "out of memory", str(one_line))
    assert snapshot(tmp_path) == before


def test_long_line_of_text_encodes_in_bounded_memory_and_decodes_to_itself(tmp_path, tokenizers, one_line):
    result = run_bpe_bounded(
        "encode",
        "-t",
        tokenizers["text"],
        one_line,
        "-o",
        "out.ids",
        cwd=tmp_path,
        timeout=300,
        memory_mb=LINE_MEMORY_MB,
    )
    assert_ok(result)
    ids = [int(token) for token in (tmp_path / "out.ids").read_text().split()]
    assert len(ids) == 40 * 23_831 * 9 + 1  # a token per word and the last space: the ids of the whole line
    assert bpe_core.load(tokenizers["text"]).decode(ids) == gzip.decompress(one_line.read_bytes()).decode()


def test_long_line_with_no_place_to_cut_is_one_error_in_bounded_memory(tmp_path):
    from bpe_core.chunking import MAX_UNCUT_CHARS

    path = tmp_path / "word.txt.gz"
    with gzip.open(path, "wb", compresslevel=1) as handle:
        for _ in range(MAX_UNCUT_CHARS // (1 << 20) + 1):
            handle.write(b"a" * (1 << 20))  # one word: a single gpt2 chunk, no place to cut
    before = snapshot(tmp_path)
    result = run_bpe_bounded(
        "train", GPT2, "word.txt.gz", "-o", "out.json", cwd=tmp_path, timeout=120, memory_mb=LINE_MEMORY_MB
    )
    assert_clean_error(result, "word.txt.gz", f"more than {MAX_UNCUT_CHARS} characters", "gpt2")
    assert snapshot(tmp_path) == before


def test_long_line_fasta_record_in_one_line_is_stopped_before_it_is_held_whole(tmp_path):
    path = tmp_path / "line.fa.gz"
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write(b">chrLine\n")
        for _ in range(64):
            handle.write(b"ACGT" * (1 << 18))  # 64 Mbp on one line
    before = snapshot(tmp_path)
    result = run_bpe_bounded(
        "train",
        DNA,
        path.name,
        "-o",
        "out.json",
        "--set",
        "input.max_length=1000000",
        cwd=tmp_path,
        timeout=60,
        memory_mb=MEMORY_MB,
    )
    assert_clean_error(result, "line.fa.gz, record chrLine", "longer than 1000000 letters")
    assert snapshot(tmp_path) == before


def test_reader_fasta_max_length_must_be_a_positive_number(tmp_path):
    (tmp_path / "a.fa").write_bytes(LAMBDA)
    result = run_bpe_bounded("train", DNA, "a.fa", "-o", "out.json", "--set", "input.max_length=-5", cwd=tmp_path)
    assert_clean_error(result, "input.max_length", "-5")


def test_jsonl_depth_in_a_byte_range_names_the_line_offset(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b'{"text": "fine"}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    safe_cut = registry().pretokenizer("gpt2", {}).safe_cut
    with pytest.raises(BpeError, match=r"deep\.jsonl, line at byte 17: JSON nested too deeply"):
        list(JsonlReader("text").range_documents(str(path), 0, 1 << 20, safe_cut))
