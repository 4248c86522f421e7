"""Training windows (`bpe encode --max-length N`): every window at most N tokens, the windows of a
document laid end to end are its unwindowed encoding, and MIDI windows begin at bar lines except
where the report counts a cut at a beat line, a chunk boundary or anywhere; text and DNA (no
boundaries of their own) are cut at chunk boundaries, then anywhere."""

import gzip
import json
import logging
from itertools import accumulate
from pathlib import Path
from typing import Any

import distributed
import mido
import pytest
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.paths import DOCS_PATH, LAMBDA_PATH, require
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe_core
from bpe_core.config import parse_runner
from bpe_core.contract import MarksBoundaries
from bpe_core.corpus.shards import ShardOptions, encode_to_shards
from bpe_core.corpus.streaming import corpus_reader
from bpe_core.corpus.training_windows import Windower, WindowReport
from bpe_core.idfiles import read_shards
from bpe_midi.song import read_song

GRAMMARS = ("remi", "tsd", "midilike")
SONGS = 12  # POP909 songs encoded whole and in windows
TEXT_SAMPLE = Path(bpe_core.__file__).with_name("samples") / "us-founding-texts.txt"


@pytest.fixture(scope="module")
def midi_tokenizers(songs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tokenizer per grammar (split by bar, vocab 1200) trained on POP909 songs 21-40, saved."""
    directory = tmp_path_factory.mktemp("midi-tokenizers")
    paths = {}
    for grammar in GRAMMARS:
        config = {
            "name": f"midi-{grammar}",
            "input": {"reader": "midi"},
            "pretokenizer": {"name": "midi-events", "grammar": grammar},
            "trainer": {"vocab_size": 1200},
        }
        paths[grammar] = directory / f"{grammar}.json"
        bpe_core.train(config, songs[20:40], progress=False).save(paths[grammar])
    return paths


def token_starts(tokenizer: bpe_core.Tokenizer, ids: list[int]) -> list[int]:
    """Where each token begins, in base symbols of the document."""
    return [0, *accumulate(len(tokenizer.token_symbols(token)) for token in ids)][:-1]


def bar_line_tokens(tokenizer: bpe_core.Tokenizer, song: Path, ids: list[int]) -> set[int]:
    """The indexes of the song's tokens that begin a bar: split by bar, every chunk is a bar, so
    bars begin where the chunks' symbols laid end to end reach a chunk that begins a bar."""
    pretokenizer: Any = tokenizer.pretokenizer
    chunks, bar_chunks, _ = pretokenizer.tokenize_bars(read_song(str(song)))
    chunk_starts = [0, *accumulate(len(chunk) for chunk in chunks)]
    bar_offsets = {chunk_starts[index] for index in bar_chunks}
    return {index for index, start in enumerate(token_starts(tokenizer, ids)) if start in bar_offsets}


def shard_windows(directory: Path, tokenizer: bpe_core.Tokenizer) -> dict[str, list[list[int]]]:
    """Each input's windows, as the shard index cuts them."""
    index = json.loads((directory / "index.json").read_text())
    windows: dict[str, list[list[int]]] = {}
    by_shard = {str(directory / entry["shard"]): entry["input"] for entry in index["shards"]}
    for where, _, ids in read_shards(str(directory), tokenizer.vocab_size):
        windows.setdefault(by_shard[where.split(", document")[0]], []).append(ids)
    return windows


def test_the_midi_pretokenizer_marks_bars_and_beats(midi_tokenizers: dict[str, Path]) -> None:
    for grammar, path in midi_tokenizers.items():
        pretokenizer = bpe_core.load(path).pretokenizer
        assert isinstance(pretokenizer, MarksBoundaries), grammar
        assert pretokenizer.boundary_names == ("bar", "beat")


@pytest.mark.both_modes
@pytest.mark.parametrize("grammar", GRAMMARS)
@pytest.mark.parametrize("max_length", (512, 24))
def test_midi_windows_fit_join_back_and_begin_at_bar_lines_but_the_counted_cuts(
    songs: list[Path], midi_tokenizers: dict[str, Path], grammar: str, max_length: int, tmp_path: Path
) -> None:
    """At 512 tokens a POP909 bar always fits, so every window begins at a bar line; at 24 some
    bars do not, and exactly the cuts the report counts at beat lines or anywhere begin elsewhere."""
    tokenizer = bpe_core.load(midi_tokenizers[grammar])
    sample = songs[:SONGS]
    result = run_bpe(
        "encode", "-t", midi_tokenizers[grammar], *sample, "--max-length", max_length, "-o", "shards/", cwd=tmp_path
    )
    assert_ok(result)
    index = json.loads((tmp_path / "shards" / "index.json").read_text())
    report = index["windows"]
    assert f"windows of at most {max_length} tokens: {report['windows']:,} from {SONGS} documents" in result.stderr
    assert report["documents"] == SONGS and report["max_length"] == max_length
    windows = shard_windows(tmp_path / "shards", tokenizer)
    assert index["documents"] == report["windows"] == sum(map(len, windows.values()))
    off_bar = 0
    for song in sample:
        ids = tokenizer.encode(song)
        song_windows = windows[str(song)]
        assert all(0 < len(window) <= max_length for window in song_windows), song.name
        assert [token for window in song_windows for token in window] == ids, song.name
        window_starts = list(accumulate(len(window) for window in song_windows))[:-1]
        bars = bar_line_tokens(tokenizer, song, ids)
        off_bar += sum(start not in bars for start in window_starts)
        if grammar == "remi":  # a REMI bar line is its Bar event
            firsts = [tokenizer.token_symbols(window[0])[0] for window in song_windows]
            assert sum(first != "Bar" for first in firsts) == sum(start not in bars for start in window_starts)
    cuts = report["cuts"]
    assert set(cuts) == {"bar", "beat", "chunk", "anywhere"}
    assert off_bar == cuts["beat"] + cuts["chunk"] + cuts["anywhere"]
    assert cuts["bar"] + off_bar == report["windows"] - SONGS
    if max_length == 512:
        assert off_bar == 0
    else:
        assert cuts["beat"] > 0 and cuts["anywhere"] > 0


def test_ids_windows_with_an_end_token_fit_with_it_and_are_quiet_with_quiet(tmp_path: Path) -> None:
    """Text: the end token counts in N; windows are cut at chunk boundaries (between two of the
    pretokenizer's chunks), so each window decodes to a piece of the text and they add up to it."""
    config = {
        "name": "text-windows",
        "input": {"reader": "text"},
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 400},
        "special_tokens": {"tokens": ["<|endoftext|>"]},
    }
    bpe_core.train(config, [str(TEXT_SAMPLE)], progress=False).save(tmp_path / "text.json")
    tokenizer = bpe_core.load(tmp_path / "text.json")
    end = tokenizer.special_ids["<|endoftext|>"]
    quiet = run_bpe(
        "encode",
        "-t",
        "text.json",
        TEXT_SAMPLE,
        "--max-length",
        48,
        "--eos",
        "<|endoftext|>",
        "-q",
        "-o",
        "w.ids",
        cwd=tmp_path,
    )
    assert_ok(quiet)
    assert quiet.stderr == ""
    lines = [[int(token) for token in line.split()] for line in (tmp_path / "w.ids").read_text().splitlines()]
    assert all(len(line) <= 48 and line[-1] == end and end not in line[:-1] for line in lines)
    text = TEXT_SAMPLE.read_text(encoding="utf-8")
    assert [token for line in lines for token in line[:-1]] == tokenizer.encode(text)
    assert "".join(tokenizer.decode(line[:-1]) for line in lines) == text
    loud = run_bpe("encode", "-t", "text.json", TEXT_SAMPLE, "--max-length", 48, "-o", "w2.ids", cwd=tmp_path)
    assert_ok(loud)
    lines = [[int(token) for token in line.split()] for line in (tmp_path / "w2.ids").read_text().splitlines()]
    assert max(map(len, lines)) == 48
    chunk_ends = set(accumulate(len(chunk) for chunk in tokenizer.pretokenizer.split(text)))
    ends = list(accumulate(len(tokenizer.decode(line)) for line in lines))[:-1]
    at_chunks = sum(end_at in chunk_ends for end_at in ends)
    assert f"cuts: {at_chunks:,} at chunk boundaries, {len(ends) - at_chunks:,} anywhere" in loud.stderr
    assert at_chunks > 0


def test_dna_windows_of_named_records_are_named_and_join_back(tmp_path: Path) -> None:
    """A lambda genome (one chunk: no N) is cut anywhere; the record's windows are NAME/1, NAME/2..."""
    config = {
        "name": "dna-windows",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 300},
    }
    genome = require(LAMBDA_PATH)
    bpe_core.train(config, [str(genome)], progress=False).save(tmp_path / "dna.json")
    tokenizer = bpe_core.load(tmp_path / "dna.json")
    result = run_bpe("encode", "-t", "dna.json", genome, "--max-length", 1000, "-o", "shards/", cwd=tmp_path)
    assert_ok(result)
    index = json.loads((tmp_path / "shards" / "index.json").read_text())
    documents = list(read_shards(str(tmp_path / "shards"), tokenizer.vocab_size))
    record = next(iter(corpus_reader(tokenizer).documents([str(genome)])))
    ids = tokenizer.encode(record)
    assert [token for _, _, window in documents for token in window] == ids
    assert all(len(window) <= 1000 for _, _, window in documents)
    assert [name for _, name, _ in documents] == [f"{record.id}/{number}" for number in range(1, len(documents) + 1)]
    assert index["windows"]["cuts"] == {"chunk": 0, "anywhere": len(documents) - 1}
    assert len(documents) == -(-len(ids) // 1000)


def test_a_length_with_no_room_beside_the_end_token_is_a_clean_error(
    midi_tokenizers: dict[str, Path], songs: list[Path], tmp_path: Path
) -> None:
    result = run_bpe("encode", "-t", midi_tokenizers["remi"], songs[0], "--max-length", 0, cwd=tmp_path)
    assert result.returncode == 2 and "expected a whole number, 1 or more" in result.stderr
    text = tmp_path / "text.json"
    config = {
        "name": "t",
        "input": {"reader": "text"},
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 300},
        "special_tokens": {"tokens": ["<|endoftext|>"]},
    }
    bpe_core.train(config, [str(TEXT_SAMPLE)], progress=False).save(text)
    result = run_bpe(
        "encode", "-t", text, TEXT_SAMPLE, "--max-length", 1, "--eos", "<|endoftext|>", "-o", "x.ids", cwd=tmp_path
    )
    assert_clean_error(result, "--max-length 1", "end-of-document token")


def note_ons(midi: Any) -> int:
    return sum(message.type == "note_on" and message.velocity > 0 for track in midi.tracks for message in track)


@pytest.mark.parametrize("grammar", GRAMMARS)
def test_decode_to_a_directory_writes_each_window_as_a_midi_file_mido_reads(
    songs: list[Path], midi_tokenizers: dict[str, Path], grammar: str, tmp_path: Path
) -> None:
    """One .mid per document, numbered; REMI and TSD windows hold every note of the song (each note
    is whole at its onset), MIDILike windows those whose NoteOff falls in the same window."""
    tokenizer = bpe_core.load(midi_tokenizers[grammar])
    sample = songs[:2]
    assert_ok(
        run_bpe("encode", "-t", midi_tokenizers[grammar], *sample, "--max-length", 64, "-q", "-o", "w/", cwd=tmp_path)
    )
    windows = json.loads((tmp_path / "w" / "index.json").read_text())["windows"]["windows"]
    assert_ok(run_bpe("decode", "-t", midi_tokenizers[grammar], "w/", "-o", "songs/", cwd=tmp_path))
    names = sorted(path.name for path in (tmp_path / "songs").iterdir())
    assert names == [f"{number:06d}.mid" for number in range(windows)]  # no temporary file left
    decoded_notes = sum(note_ons(mido.MidiFile(tmp_path / "songs" / name)) for name in names)
    whole_notes = sum(note_ons(tokenizer.decode(tokenizer.encode(song))) for song in sample)
    if grammar == "midilike":
        assert 0 < decoded_notes <= whole_notes
    else:
        assert decoded_notes == whole_notes
    # decoding fewer documents into the same directory replaces the set; a stranger there is refused
    command = ("encode", "-t", midi_tokenizers[grammar], sample[0], "--max-length", 64, "-q", "-o", "one/")
    assert_ok(run_bpe(*command, cwd=tmp_path))
    fewer = json.loads((tmp_path / "one" / "index.json").read_text())["windows"]["windows"]
    assert_ok(run_bpe("decode", "-t", midi_tokenizers[grammar], "one/", "-o", "songs/", cwd=tmp_path))
    assert sorted(path.name for path in (tmp_path / "songs").iterdir()) == names[:fewer] and fewer < windows
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "notes.txt").write_text("mine\n")
    refused = run_bpe("decode", "-t", midi_tokenizers[grammar], "w/", "-o", "mixed/", cwd=tmp_path)
    assert_clean_error(refused, "mixed/", "'notes.txt'")
    assert [path.name for path in (tmp_path / "mixed").iterdir()] == ["notes.txt"]


def test_decode_to_a_directory_is_for_decoders_of_files(tmp_path: Path) -> None:
    config = {
        "name": "t",
        "input": {"reader": "text"},
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 300},
    }
    bpe_core.train(config, [str(TEXT_SAMPLE)], progress=False).save(tmp_path / "text.json")
    assert_ok(run_bpe("encode", "-t", "text.json", TEXT_SAMPLE, "-o", "t.ids", cwd=tmp_path))
    result = run_bpe("decode", "-t", "text.json", "t.ids", "-o", "out/", cwd=tmp_path)
    assert_clean_error(result, "out/", "decodes to text")


def test_tokens_format_shows_a_window_a_line_with_events_joined_by_plus(
    songs: list[Path], midi_tokenizers: dict[str, Path], tmp_path: Path
) -> None:
    """--format tokens with --max-length: a line per window, a word per token, its events joined by `+`."""
    tokenizer = bpe_core.load(midi_tokenizers["tsd"])
    command = ("encode", "-t", midi_tokenizers["tsd"], songs[3], "--max-length", 100, "--format", "tokens", "-q")
    lines = assert_ok(run_bpe(*command, cwd=tmp_path)).splitlines()
    ids = tokenizer.encode(songs[3])
    words = [word for line in lines for word in line.split(" ")]
    assert words == ["+".join(tokenizer.token_symbols(token)) for token in ids]
    assert len(lines) > 1 and all(len(line.split(" ")) <= 100 for line in lines)
    assert any("+" in word for word in words)


def test_windows_on_dask_equal_local_windows_and_a_file_is_never_cut_into_ranges(
    songs: list[Path], midi_tokenizers: dict[str, Path], tmp_path: Path
) -> None:
    """A 1 MB text file (which Dask would encode in byte ranges) and three songs: the same windows,
    shards and report on a two-worker LocalCluster as locally, each file one task."""
    text = gzip.open(require(DOCS_PATH), "rt", encoding="utf-8").read(1_000_000)
    plain = tmp_path / "docs.txt"
    plain.write_text(text, encoding="utf-8", newline="")
    config = {
        "name": "text",
        "input": {"reader": "text"},
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 600},
        "special_tokens": {"tokens": ["<|endoftext|>"]},
    }
    text_tokenizer = bpe_core.train(config, [str(TEXT_SAMPLE)], progress=False)
    options = ShardOptions(eos_id=text_tokenizer.special_ids["<|endoftext|>"], max_length=1000)
    cases = [(text_tokenizer, [str(plain)], options)]
    cases.append(
        (bpe_core.load(midi_tokenizers["tsd"]), [str(song) for song in songs[:3]], ShardOptions(max_length=64))
    )
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as cluster:
        runner = parse_runner({"kind": "dask", "address": cluster.scheduler_address, "range_bytes": 1 << 16}, "test")
        for number, (tokenizer, files, shard_options) in enumerate(cases):
            local = encode_to_shards(
                tokenizer, files, str(tmp_path / f"local-{number}"), shard_options, parse_runner({}, "test")
            )
            remote = encode_to_shards(tokenizer, files, str(tmp_path / f"dask-{number}"), shard_options, runner)
            assert remote == local and local["windows"]["windows"] > len(files)
            for entry in local["shards"]:
                shard = entry["shard"]
                assert (tmp_path / f"dask-{number}" / shard).read_bytes() == (
                    tmp_path / f"local-{number}" / shard
                ).read_bytes()
                assert max(entry["lengths"]) <= shard_options.max_length
        with distributed.Client(cluster.scheduler_address) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert "encode_file_task" in prefixes and "encode_range_task" not in prefixes
    assert local["windows"]["cuts"]["bar"] > 0


def reference_windows(length: int, marks: list[set[int]], limit: int) -> tuple[list[tuple[int, int]], list[int]]:
    """The greedy rule spelled out: from each window's start, the furthest mark of the first kind
    with one in (start, start + limit], else start + limit; returns the (start, end) of each
    window and the kind index of each cut (len(marks): anywhere)."""
    spans, kinds, start = [], [], 0
    while length - start > limit:
        for kind_number, kind_marks in enumerate(marks):
            reachable = [mark for mark in kind_marks if start < mark <= start + limit]
            if reachable:
                kind, end = kind_number, max(reachable)
                break
        else:
            kind, end = len(marks), start + limit
        spans.append((start, end))
        kinds.append(kind)
        start = end
    if length > start:
        spans.append((start, length))
    return spans, kinds


@pytest.mark.both_modes
@settings(max_examples=300, deadline=None)
@given(
    length=st.integers(0, 300),
    limit=st.integers(1, 40),
    marks=st.lists(st.sets(st.integers(1, 299)), min_size=1, max_size=3),
    cuts=st.lists(st.integers(1, 299), max_size=6),
)
def test_the_windower_cuts_like_the_greedy_rule_however_the_ids_arrive(
    length: int, limit: int, marks: list[set[int]], cuts: list[int]
) -> None:
    """Pushed in pieces (cut at `cuts`, which begin chunks, as streamed text's pieces do) or whole,
    windows are at most `limit` ids, join back to the ids and end where the greedy rule says."""
    marks = [{mark for mark in kind if mark < length} for kind in marks]
    piece_starts = sorted({cut for cut in cuts if cut < length})
    marks[-1] |= set(piece_starts)  # the last kind is the chunk boundaries
    kinds = tuple(f"kind{number}" for number in range(len(marks) - 1)) + ("chunk", "anywhere")
    ids = list(range(1000, 1000 + length))
    report = WindowReport(limit, kinds)
    windower = Windower(limit, kinds, report, 0)
    windows: list[list[int]] = []
    bounds = [0, *piece_starts, length]
    for start, end in zip(bounds, bounds[1:]):
        piece_marks = [sorted(mark - start for mark in kind if start <= mark < end) for kind in marks]
        windows.extend(windower.push(ids[start:end], piece_marks))
    windows.extend(windower.finish())
    spans, cut_kinds = reference_windows(length, marks, limit)
    assert windows == [ids[start:end] for start, end in spans]
    assert all(0 < len(window) <= limit for window in windows)
    assert report.cuts == {kinds[kind]: cut_kinds.count(kind) for kind in set(cut_kinds)}
    assert report.windows == len(windows) and report.documents == 1
    assert [number for _, number, _ in report.numbers] == list(range(1, len(windows) + 1))
