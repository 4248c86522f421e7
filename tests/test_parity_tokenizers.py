"""Tokenizers for groups of data (issue 38).

- `bpe eval --groups` on DNA and MIDI groups: numbers worked out by hand for a one-merge DNA
  tokenizer, and for MIDI the events counted by a tokenizer without merges.
"""

import json
import math
from pathlib import Path

import mido
import pytest
from helpers.cli_runner import assert_ok, run_bpe
from helpers.dna import write_fasta
from helpers.paths import POP909_DIR, require

import bpe_core
from bpe_core.evaluation import renyi_entropy

MIDI_VOCAB = 600
MIDI_SONGS = 6  # training songs; the two after them are dev, the two after those held back


# ---------------------------------------------------------------------------------------------
# the data


def split_parts(song: Path, directory: Path) -> dict[str, Path]:
    """A POP909 song as one MIDI file per part (the tempo track and that part's track)."""
    midi = mido.MidiFile(song)
    tempo, *tracks = midi.tracks
    parts = {}
    for track in tracks:
        single = mido.MidiFile(type=1, ticks_per_beat=midi.ticks_per_beat)
        single.tracks = [tempo, track]
        parts[track.name] = directory / f"{song.stem}-{track.name.lower()}.mid"
        single.save(parts[track.name])
    return parts


Parts = dict[str, dict[str, list[Path]]]  # "train" | "dev" | "held" -> group -> files


@pytest.fixture(scope="module")
def midi_parts(workdir: Path) -> Parts:
    """The melody and piano parts of the first POP909 songs: training, dev and held-back songs."""
    directory = workdir / "midi"
    directory.mkdir()
    songs = sorted(require(POP909_DIR).glob("*.mid"))[: MIDI_SONGS + 4]
    split = [split_parts(song, directory) for song in songs]
    chosen = {"train": split[:MIDI_SONGS], "dev": split[MIDI_SONGS : MIDI_SONGS + 2], "held": split[MIDI_SONGS + 2 :]}
    return {
        part: {group: [parts[group] for parts in of] for group in ("MELODY", "PIANO")} for part, of in chosen.items()
    }


# ---------------------------------------------------------------------------------------------
# bpe eval --groups on DNA and MIDI


@pytest.mark.both_modes
def test_eval_of_dna_groups_against_numbers_worked_out_by_hand(tmp_path: Path) -> None:
    # one merge, (A, C): ACACAC is 3 tokens of 6 nt; GACAG is G AC A G, 4 tokens of 5 nt
    write_fasta(tmp_path / "ac.fa", [("ac", "ACACACAC")])
    config = {
        "name": "ac",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 16},
    }
    tokenizer = bpe_core.train(config, [tmp_path / "ac.fa"], progress=False, workers=1)
    assert [tokenizer.token_symbols(token) for token in tokenizer.merged_ids()] == [("A", "C")]
    tokenizer.save(tmp_path / "ac.json")
    write_fasta(tmp_path / "repeat.fa", [("repeat", "ACACAC")])
    write_fasta(tmp_path / "mixed.fa", [("mixed", "GACAG")])
    groups = ["repeat=repeat.fa", "mixed=mixed.fa"]
    report = json.loads(assert_ok(run_bpe("eval", "ac.json", "--groups", *groups, "--json", "-", cwd=tmp_path)))
    (measured,) = report["tokenizers"]
    repeat, mixed = measured["groups"]
    assert (repeat["tokens"], repeat["symbols"], repeat["symbols_per_token"]) == (3, 6, 2.0)
    assert (mixed["tokens"], mixed["symbols"], mixed["symbols_per_token"]) == (4, 5, 1.25)
    assert measured["total"]["symbols_per_token"] == pytest.approx(11 / 7)
    assert (repeat["cost"], mixed["cost"]) == (0.5, 0.8)  # tokens per nucleotide
    # Gini of (0.5, 0.8): 2 * 0.3 / (2 * 2^2 * 0.65)
    assert measured["gini"] == pytest.approx(3 / 26)
    # 16 ids: repeat makes one of them, mixed three (G twice, AC once, A once)
    assert (repeat["types"], repeat["unused"], mixed["types"], mixed["unused"]) == (1, 15, 3, 13)
    assert repeat["renyi_efficiency"] == 0.0  # one id: no entropy
    # p = 1/2, 1/4, 1/4: sum p^2.5 = 2^-2.5 + 2^-4, H = log2(that) / (1 - 2.5), over log2(16)
    assert mixed["renyi_efficiency"] == pytest.approx(-(2 / 3) * math.log2(2**-2.5 + 2**-4) / 4)
    assert mixed["renyi_entropy_bits"] == pytest.approx(renyi_entropy([2, 1, 1]))
    parallel = json.loads(
        assert_ok(run_bpe("eval", "ac.json", "--groups", *groups, "--parallel", "--json", "-", cwd=tmp_path))
    )
    # parallel groups cost their tokens: Gini of (3, 4) = 2 * 1 / (2 * 2^2 * 3.5)
    assert parallel["tokenizers"][0]["gini"] == pytest.approx(1 / 14)


def test_eval_of_midi_parts_counts_the_events_a_tokenizer_without_merges_makes(midi_parts: Parts) -> None:
    train, held = midi_parts["train"], midi_parts["held"]
    directory = held["PIANO"][0].parent
    files = [path for paths in train.values() for path in paths]
    config = {"name": "midi", "input": {"reader": "midi"}, "pretokenizer": {"name": "midi-events"}}
    merged = bpe_core.train({**config, "trainer": {"vocab_size": MIDI_VOCAB}}, files, progress=False, workers=1)
    merged.save(directory / "plain.json")
    unmerged = bpe_core.train({**config, "trainer": {"vocab_size": merged.alphabet_size}}, files, progress=False)
    assert not unmerged.merges
    groups = [f"{part}={path}" for part, paths in held.items() for path in paths]
    report = json.loads(assert_ok(run_bpe("eval", "plain.json", "--groups", *groups, "--json", "-", cwd=directory)))
    (measured,) = report["tokenizers"]
    assert [row["name"] for row in measured["groups"]] == list(held)
    costs = []
    for row, paths in zip(measured["groups"], held.values()):
        events = sum(len(unmerged.encode(str(path))) for path in paths)
        tokens = sum(len(merged.encode(str(path))) for path in paths)
        assert (row["documents"], row["symbols"], row["tokens"]) == (len(paths), events, tokens)
        assert row["symbols_per_token"] == pytest.approx(events / tokens)
        assert row["beats"] > 0
        costs.append(tokens / events)
    # two groups: 2 |c1 - c2| / (2 * 2^2 * (c1 + c2) / 2)
    assert measured["gini"] == pytest.approx(abs(costs[0] - costs[1]) / (2 * (costs[0] + costs[1])))
