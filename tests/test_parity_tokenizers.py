"""Parity-trained tokenizers are ordinary tokenizers: everything built for plain BPE keeps working.

- Text, DNA and MIDI tokenizers trained with `trainer.parity` on real data (three languages; three
  species; the melody and piano parts of POP909 songs), each group far from the others in size;
  text with plain merges first (`warmup_merges`), DNA with the moving `window`. The dev sets are
  each group's next stretch, not parallel: these tests are about the tokenizers, not about fairness.
- `bpe train --from` continues them: every id and merge of the base is kept, and continuing with
  the same parity config gives the merges of parity training to the larger vocabulary in one go.
- `bpe trim` (`--vocab-size`, `--residue`) shortens them and encoding stays lossless.
- Their Hugging Face and tiktoken exports give our ids in the `tokenizers` and `tiktoken`
  libraries themselves, trimmed or not.
- `bpe eval --groups` on DNA and MIDI groups: numbers worked out by hand for a one-merge DNA
  tokenizer, and for MIDI the events counted by a tokenizer without merges.
"""

import base64
import gzip
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mido
import pytest
import tiktoken
from helpers.cli_runner import assert_ok, run_bpe
from helpers.dna import ecoli_slice, fasta_records, write_fasta
from helpers.paths import BENCHMARK_TEXTS, CHR17_PATH, DOCS_PATH, LAMBDA_PATH, POP909_DIR, require
from helpers.patterns import GPT2_PATTERN
from tokenizers import Tokenizer as HfTokenizer

import bpe_core

TEXT_VOCAB = 1024
TEXT_WARMUP = 200  # text: the paper's hybrid, plain merges first; DNA: the moving window; MIDI: neither
LANGUAGES = ("en", "de", "ja")
TRAIN_CHARS = {"en": 240_000, "de": 40_000, "ja": 40_000}  # English far larger, as in a real mix
HELD_CHARS = 20_000  # each language's dev text, then as much again held back
DNA_VOCAB = 512
DNA_WINDOW = 20
STRETCH = 4_000  # bp of each genome's dev stretch and of its held-back stretch
MIDI_VOCAB = 600
MIDI_SONGS = 6  # training songs; the two after them are dev, the two after those held back


# ---------------------------------------------------------------------------------------------
# the data: groups of very different sizes, each with a dev part and a held-back part


def text_of(language: str) -> str:
    path = require(DOCS_PATH) if language == "en" else BENCHMARK_TEXTS[("ja", "de").index(language)]
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        return handle.read(TRAIN_CHARS[language] + 2 * HELD_CHARS)


def parity_config(
    name: str, reader: str, pretokenizer: dict[str, Any], vocab_size: int, parity: dict[str, Any]
) -> dict[str, Any]:
    return {
        "name": name,
        "input": {"reader": reader},
        "pretokenizer": pretokenizer,
        "trainer": {"vocab_size": vocab_size, "parity": parity},
    }


def parity_option(
    train: dict[str, list[Path]], dev: dict[str, list[Path]], warmup: int = 0, window: int | None = None
) -> dict[str, Any]:
    return {
        "groups": {name: [str(path) for path in paths] for name, paths in train.items()},
        "dev": {name: [str(path) for path in paths] for name, paths in dev.items()},
        "warmup_merges": warmup,
        "window": window,
    }


class Domain:
    """One domain's parity setup: the config, its training files per group, and held-back files."""

    def __init__(
        self, directory: Path, config: dict[str, Any], train: dict[str, list[Path]], held: dict[str, list[Path]]
    ):
        self.directory = directory
        self.config = config
        self.train = train
        self.held = held
        # a config file names its files relative to its own folder
        parity = config["trainer"]["parity"]
        relative = {
            part: {name: [Path(path).name for path in paths] for name, paths in parity[part].items()}
            for part in ("groups", "dev")
        }
        written = {**config, "trainer": {**config["trainer"], "parity": {**parity, **relative}}}
        self.config_path = directory / "parity.yaml"
        self.config_path.write_text(json.dumps(written), encoding="utf-8")  # JSON is YAML
        self.files = [path for paths in train.values() for path in paths]
        self.tokenizer = bpe_core.train(config, progress=False, workers=1)  # the groups' files
        self.path = directory / "parity.json"
        self.tokenizer.save(self.path)

    def held_files(self) -> list[Path]:
        return [path for paths in self.held.values() for path in paths]


@pytest.fixture(scope="module")
def text(workdir: Path) -> Domain:
    directory = workdir / "text"
    directory.mkdir()
    train, dev, held = {}, {}, {}
    for language in LANGUAGES:
        whole = text_of(language)
        cut = TRAIN_CHARS[language]
        parts = {"train": whole[:cut], "dev": whole[cut : cut + HELD_CHARS], "held": whole[cut + HELD_CHARS :]}
        for part, chosen in zip(parts, (train, dev, held)):
            path = directory / f"{language}-{part}.txt"
            path.write_text(parts[part], encoding="utf-8", newline="")
            chosen[language] = [path]
    parity = parity_option(train, dev, warmup=TEXT_WARMUP)
    config = parity_config("text-parity", "text", {"name": "gpt2"}, TEXT_VOCAB, parity)
    return Domain(directory, config, train, held)


@pytest.fixture(scope="module")
def dna(workdir: Path) -> Domain:
    directory = workdir / "dna"
    directory.mkdir()
    genomes = {
        "E. coli": ecoli_slice(300_000),
        "phage lambda": fasta_records(LAMBDA_PATH)[0][1],
        "human": fasta_records(CHR17_PATH)[0][1],
    }
    train, dev, held = {}, {}, {}
    for index, (species, sequence) in enumerate(genomes.items()):
        end = len(sequence)
        parts = {
            "train": sequence[: end - 2 * STRETCH],
            "dev": sequence[end - 2 * STRETCH : end - STRETCH],
            "held": sequence[end - STRETCH :],
        }
        for part, chosen in zip(parts, (train, dev, held)):
            chosen[species] = [write_fasta(directory / f"{index}-{part}.fa", [(f"{index}-{part}", parts[part])])]
    pretokenizer = {"name": "dna-nucleotides", "case": "fold"}
    config = parity_config("dna-parity", "fasta", pretokenizer, DNA_VOCAB, parity_option(train, dev, window=DNA_WINDOW))
    return Domain(directory, config, train, held)


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


@pytest.fixture(scope="module")
def midi(midi_parts: Parts) -> Domain:
    train, dev, held = midi_parts["train"], midi_parts["dev"], midi_parts["held"]
    config = parity_config("midi-parity", "midi", {"name": "midi-events"}, MIDI_VOCAB, parity_option(train, dev))
    return Domain(train["PIANO"][0].parent, config, train, held)


def documents(domain: Domain) -> list[Any]:
    """What the held-back files hold, as `Tokenizer.encode` takes it: text, sequences, song paths."""
    if domain.config["input"]["reader"] == "text":
        return [path.read_text(encoding="utf-8") for path in domain.held_files()]
    if domain.config["input"]["reader"] == "fasta":
        return [sequence for path in domain.held_files() for _, sequence in fasta_records(path)]
    return [str(path) for path in domain.held_files()]


def symbols(tokenizer: bpe_core.Tokenizer, ids: Sequence[int]) -> list[str]:
    return [symbol for token in ids for symbol in tokenizer.token_symbols(token)]


def assert_lossless(tokenizer: bpe_core.Tokenizer, reference: bpe_core.Tokenizer, domain: Domain) -> None:
    """Encoding with `tokenizer` gives back what encoding with `reference` gives, symbol for symbol
    (text: the text itself)."""
    for document in documents(domain):
        ids = tokenizer.encode(document)
        if isinstance(document, str) and domain.config["input"]["reader"] == "text":
            assert tokenizer.decode(ids) == document
        assert symbols(tokenizer, ids) == symbols(reference, reference.encode(document))


DOMAINS = ("text", "dna", "midi")


@pytest.fixture(scope="module", params=DOMAINS)
def domain(request: pytest.FixtureRequest) -> Domain:
    return request.getfixturevalue(request.param)


# ---------------------------------------------------------------------------------------------
# parity training did something


def test_parity_training_differs_from_plain_bpe_and_makes_the_same_symbols(domain: Domain) -> None:
    plain_config = {**domain.config, "trainer": {"vocab_size": domain.config["trainer"]["vocab_size"]}}
    plain = bpe_core.train(plain_config, domain.files, progress=False, workers=1)
    assert domain.tokenizer.vocab_size == plain.vocab_size
    assert domain.tokenizer.merges != plain.merges
    assert_lossless(domain.tokenizer, plain, domain)


# ---------------------------------------------------------------------------------------------
# bpe train --from


def test_continuing_keeps_every_id_and_merge_of_the_parity_tokenizer(domain: Domain) -> None:
    base = domain.tokenizer
    grown = base.vocab_size + 64
    plain_config = {**domain.config, "trainer": {"vocab_size": grown}}
    config = domain.directory / "plain-grown.yaml"
    config.write_text(json.dumps(plain_config), encoding="utf-8")
    assert_ok(
        run_bpe(
            "train", config, *domain.files, "--from", domain.path, "-o", "continued.json", "-q", cwd=domain.directory
        )
    )
    continued = bpe_core.load(domain.directory / "continued.json")
    assert continued.vocab_size == grown
    assert continued.merges[: len(base.merges)] == base.merges
    assert [continued.token_symbols(token) for token in base.regular_ids()] == [
        base.token_symbols(token) for token in base.regular_ids()
    ]
    assert_lossless(continued, base, domain)


def test_continuing_with_the_parity_config_equals_parity_training_in_one_go(domain: Domain) -> None:
    smaller = domain.config["trainer"]["vocab_size"] - 128
    base = bpe_core.train(domain.config, None, {"trainer.vocab_size": smaller}, progress=False, workers=1)
    base.save(domain.directory / "smaller.json")
    assert_ok(
        run_bpe(
            "train", domain.config_path, "--from", "smaller.json", "-o", "regrown.json", "-q",
            cwd=domain.directory,
        )
    )  # fmt: skip
    assert bpe_core.load(domain.directory / "regrown.json").merges == domain.tokenizer.merges


# ---------------------------------------------------------------------------------------------
# bpe trim


def test_trim_to_a_smaller_vocabulary_keeps_the_first_merges(domain: Domain) -> None:
    base = domain.tokenizer
    size = base.vocab_size - 100
    assert_ok(run_bpe("trim", domain.path, "--vocab-size", size, "-o", "trimmed.json", "-q", cwd=domain.directory))
    trimmed = bpe_core.load(domain.directory / "trimmed.json")
    assert trimmed.vocab_size == size
    assert trimmed.merges == base.merges[: len(trimmed.merges)]
    assert_lossless(trimmed, base, domain)


RESIDUE_THRESHOLD = 0.9  # high, so that these small vocabularies have residue that can go
RESIDUE_GOES = {"text": True, "dna": True, "midi": False}  # in MIDI every residue token builds a longer one


def trimmed_of_residue(domain: Domain) -> tuple[bpe_core.Tokenizer, dict[int, int], str]:
    """`bpe trim --residue --on TRAINING FILES --map`: the trimmed tokenizer, old id -> new id, and
    what the command said."""
    directory = domain.directory
    if not (directory / "residue.json").exists():
        result = run_bpe(
            "trim", domain.path, "--residue", "--threshold", RESIDUE_THRESHOLD, "--on", *domain.files,
            "-o", "residue.json", "--map", "residue.tsv", cwd=directory,
        )  # fmt: skip
        assert_ok(result)
        (directory / "residue.said").write_text(result.stderr, encoding="utf-8")
    lines = (directory / "residue.tsv").read_text(encoding="ascii").splitlines()
    id_map = dict(tuple(map(int, line.split("\t"))) for line in lines if line and line[0].isdigit())
    said = (directory / "residue.said").read_text(encoding="utf-8")
    return bpe_core.load(directory / "residue.json"), id_map, said


def test_trim_residue_removes_tokens_and_stays_lossless(domain: Domain) -> None:
    base = domain.tokenizer
    trimmed, id_map, said = trimmed_of_residue(domain)
    assert re.search(r"[1-9][0-9]* residue found", said)
    dropped = base.vocab_size - trimmed.vocab_size
    assert (dropped > 0) == RESIDUE_GOES[domain.config["name"].removesuffix("-parity")]
    assert sorted(id_map.values()) == list(range(trimmed.vocab_size))  # compact ids, one per token kept
    for old, new in id_map.items():
        assert trimmed.token_symbols(new) == base.token_symbols(old)
    assert_lossless(trimmed, base, domain)


# ---------------------------------------------------------------------------------------------
# exports: Hugging Face tokenizers and tiktoken give our ids


@pytest.mark.parametrize("trimmed", [False, True], ids=["parity", "parity-residue-trimmed"])
def test_hugging_face_export_gives_our_ids(text: Domain, dna: Domain, trimmed: bool) -> None:
    for domain in (text, dna):
        tokenizer = trimmed_of_residue(domain)[0] if trimmed else domain.tokenizer
        path = domain.directory / f"hf-{trimmed}.json"
        tokenizer.to_hf(path)
        peer = HfTokenizer.from_file(str(path))
        for document in documents(domain):
            assert peer.encode(document, add_special_tokens=False).ids == tokenizer.encode(document)


@pytest.mark.parametrize("trimmed", [False, True], ids=["parity", "parity-residue-trimmed"])
def test_tiktoken_export_gives_our_ids(text: Domain, trimmed: bool) -> None:
    tokenizer = trimmed_of_residue(text)[0] if trimmed else text.tokenizer
    path = text.directory / f"tiktoken-{trimmed}.tiktoken"
    tokenizer.to_tiktoken(path)
    ranks = {}
    for line in path.read_bytes().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    peer = tiktoken.Encoding("parity", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    for document in documents(text):
        assert peer.encode_ordinary(document) == tokenizer.encode(document)


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
    assert mixed["renyi_entropy_bits"] == pytest.approx(-(2 / 3) * math.log2(2**-2.5 + 2**-4))
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
