"""Training and counting from documents in memory (`documents=`, `column=`): the merges equal
those of training on the same documents read from files, in every domain, from lists,
generators, bytes, Hugging Face style batches and real `datasets` objects built from the shared
data; a wrong argument is one BpeError naming it."""

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import datasets
import mido
import pytest
from Bio import SeqIO
from helpers.dna import DNABERT2_CONFIG
from helpers.midi import pop909_paths
from helpers.paths import LAMBDA_PATH, READS_PATH, require
from helpers.text import GPT2_CONFIG, docs_text, paragraphs

import bpe_core
from bpe_core import BpeError, progress, training

TEXT_OVERRIDES = {"trainer.vocab_size": 600, "input.reader": "jsonl"}
MIDI_CONFIG = GPT2_CONFIG.parent / "midi-remi-bpe.yaml"


@pytest.fixture(scope="module")
def documents() -> list[str]:
    """About 300,000 characters of documentation paragraphs, some with non-ASCII text."""
    found = paragraphs(docs_text()[:300_000])
    assert len(found) > 1000
    return found


@pytest.fixture(scope="module")
def from_files(documents: list[str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]]]:
    """The same documents as a JSON Lines file, and the merges of training on it."""
    path = tmp_path_factory.mktemp("memory") / "documents.jsonl"
    path.write_text("".join(json.dumps({"text": document}) + "\n" for document in documents), encoding="utf-8")
    tokenizer = bpe_core.train(GPT2_CONFIG, [path], TEXT_OVERRIDES, progress=False)
    assert len(tokenizer.spec.internal_merges) > 300
    return path, list(tokenizer.spec.internal_merges)


def merges(tokenizer: bpe_core.Tokenizer) -> list[tuple[int, int]]:
    return list(tokenizer.spec.internal_merges)


@pytest.mark.both_modes
def test_text_from_a_list_a_generator_bytes_and_batches_trains_as_from_a_file(
    documents: list[str], from_files: tuple[Path, list[tuple[int, int]]]
) -> None:
    _, expected = from_files
    given = {
        "list": documents,
        "generator, 2 workers": (document for document in documents),
        "bytes": [document.encode() for document in documents],
        "batches of 100": [documents[start : start + 100] for start in range(0, len(documents), 100)],
    }
    for name, items in given.items():
        workers = 2 if "workers" in name else 1
        tokenizer = bpe_core.train(
            GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=items, workers=workers, progress=False
        )
        assert merges(tokenizer) == expected, name
    # the text reader (a file is one document) takes them too, each still one document
    plain = bpe_core.train(
        GPT2_CONFIG, overrides={"trainer.vocab_size": 600}, documents=iter(documents), progress=False
    )
    assert merges(plain) == expected


def test_a_datasets_dataset_and_iterable_dataset_with_a_column(
    from_files: tuple[Path, list[tuple[int, int]]], tmp_path: Path
) -> None:
    path, expected = from_files
    dataset = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
    assert isinstance(dataset, datasets.Dataset)
    for items in (dataset, dataset.to_iterable_dataset()):
        tokenizer = bpe_core.train(
            GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=items, column="text", progress=False
        )
        assert merges(tokenizer) == expected, type(items).__name__
    with pytest.raises(BpeError, match=r"^documents: no column 'txt' \(columns: text\)$"):
        bpe_core.train(GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=dataset, column="txt")
    with pytest.raises(BpeError, match=r"^documents\[0\]: a row with fields text, not a document \(pass column="):
        bpe_core.train(GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=dataset)


def test_counts_from_memory_train_as_documents_do(
    documents: list[str], from_files: tuple[Path, list[tuple[int, int]]], tmp_path: Path
) -> None:
    counts = bpe_core.count(GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=documents, progress=False)
    counts.save(str(tmp_path / "memory.counts"))
    tokenizer = bpe_core.train(
        GPT2_CONFIG, overrides=TEXT_OVERRIDES, counts=[tmp_path / "memory.counts"], progress=False
    )
    assert merges(tokenizer) == from_files[1]
    (entry,) = tokenizer.provenance["inputs"]
    assert entry["path"] == "<documents>"
    assert entry["size"] == sum(len(document.encode()) for document in documents)  # bytes: byte-level symbols


def test_the_progress_bar_counts_documents_against_their_length(
    documents: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[progress.Bar] = []
    make_bar = progress.bar

    def kept(*arguments: Any, **options: Any) -> progress.Bar:
        shown.append(make_bar(*arguments, **options))
        return shown[-1]

    monkeypatch.setattr(training.progress_bars, "bar", kept)
    for items, total in ((documents, len(documents)), (iter(documents), None)):
        shown.clear()
        bpe_core.count(GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=items, progress=True)
        bars = [bar for bar in shown if bar.unit == "doc"]
        # a hidden bar counts nothing: n proves it was shown
        assert [(bar.total, bar.n) for bar in bars] == [(total, len(documents))]


def test_dna_from_seqrecords_and_strings_trains_as_from_fasta_and_fastq(tmp_path: Path) -> None:
    overrides = {"trainer.vocab_size": 300}
    with gzip.open(require(LAMBDA_PATH), "rt") as handle:
        records = list(SeqIO.parse(handle, "fasta"))
    expected = merges(bpe_core.train(DNABERT2_CONFIG, [LAMBDA_PATH], overrides, progress=False))
    for items in (records, [str(record.seq) for record in records], [bytes(record.seq) for record in records]):
        assert merges(bpe_core.train(DNABERT2_CONFIG, overrides=overrides, documents=items, progress=False)) == expected
    with gzip.open(require(READS_PATH), "rt") as handle:
        reads = list(itertools.islice(SeqIO.parse(handle, "fastq"), 4000))
    fastq = {"trainer.vocab_size": 300, "input.reader": "fastq"}
    SeqIO.write(reads, tmp_path / "reads.fq", "fastq")
    expected = merges(bpe_core.train(DNABERT2_CONFIG, [tmp_path / "reads.fq"], fastq, progress=False))
    assert merges(bpe_core.train(DNABERT2_CONFIG, overrides=fastq, documents=reads, progress=False)) == expected
    with pytest.raises(BpeError, match=r"^documents\[1\], record #2: 'X' at position 3 is not a nucleotide letter"):
        bpe_core.train(DNABERT2_CONFIG, overrides=overrides, documents=["ACGT", "ACXT"], progress=False)
    with pytest.raises(BpeError, match=r"^documents\[0\]: a int, not a sequence"):
        bpe_core.train(DNABERT2_CONFIG, overrides=overrides, documents=[7], progress=False)


def test_midi_from_paths_midifiles_and_songs_trains_as_from_files() -> None:
    songs = pop909_paths()[:12]
    overrides = {"trainer.vocab_size": 600}
    expected = merges(bpe_core.train(MIDI_CONFIG, songs, overrides, progress=False))
    given = {
        "paths": songs,
        "strings": [str(path) for path in songs],
        "MidiFiles": [mido.MidiFile(path) for path in songs],
    }
    for name, items in given.items():
        tokenizer = bpe_core.train(MIDI_CONFIG, overrides=overrides, documents=items, progress=False)
        assert merges(tokenizer) == expected, name
    with pytest.raises(BpeError, match=r"^documents\[0\]: a MIDI pretokenizer takes a path, a mido.MidiFile or a Song"):
        bpe_core.train(MIDI_CONFIG, overrides=overrides, documents=[b"MThd"], progress=False)


def test_wrong_arguments_are_one_error_naming_them(documents: list[str]) -> None:
    cases = [
        ({"files": "corpus.txt"}, r"^files: one path, not a list of paths \(give \['corpus.txt'\]\)$"),
        ({"files": (line for line in ["a\n"])}, r"^files: a generator, not a list of paths \(to train on documents"),
        ({"files": ["a.txt", 3]}, r"^files\[1\]: a int, not a path"),
        ({"documents": "one long text"}, r"^documents: one str, not an iterable of documents"),
        ({"documents": ["text", 3.5]}, r"^documents\[1\]: a float, not text \(give str or UTF-8 bytes\)$"),
        ({"documents": [b"\xff"]}, r"^documents\[0\]: not valid UTF-8 \(byte 0: invalid start byte\)$"),
        ({"documents": documents, "files": ["a.txt"]}, r"^give input files or documents to train from, not both$"),
        ({"column": "text"}, r"^column names a field of the documents: give documents too$"),
        ({"documents": [{"txt": "a"}], "column": "text"}, r"^documents\[0\]: no column 'text' \(columns: txt\)$"),
    ]
    for arguments, message in cases:
        with pytest.raises(BpeError, match=message):
            bpe_core.train(GPT2_CONFIG, overrides=TEXT_OVERRIDES, progress=False, **arguments)  # type: ignore[arg-type]
    with pytest.raises(BpeError, match=r"^documents in memory are counted on this machine"):
        bpe_core.count(GPT2_CONFIG, overrides=TEXT_OVERRIDES, documents=documents, runner={"kind": "dask"})
