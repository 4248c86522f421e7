"""`bpe eval`: intrinsic measures of tokenizers per file or group (docs/eval.md).

- Each measure is checked against a value computed by hand on a tiny distribution: Rényi entropy
  and efficiency, the Gini coefficient, unused and rare ids, words counted from token ids, and
  the whole report of a tokenizer whose merges are worked out by hand, residue tokens included.
- End to end on real data, comparing two tokenizers: text in three languages as groups (the
  Python docs, the Debian Reference in German and Japanese) with a small trained tokenizer and
  cl100k_base from its `.tiktoken` file, whose token counts come from tiktoken itself; genomes of
  three species as groups; POP909 songs in two groups. The page opens in headless Chromium with
  no console error, asks for nothing but itself and draws a chart per measure.
"""

import gzip
import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from helpers.browser import Browser
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.dna import ecoli_slice, fasta_records, write_fasta
from helpers.interop import published_vocabulary_path, read_ranks
from helpers.paths import BENCHMARK_TEXTS, CHR17_PATH, LAMBDA_PATH, POP909_DIR, require
from helpers.patterns import CL100K_PATTERN
from hypothesis import given
from hypothesis import strategies as st

import bpe_core
from bpe_core.evaluation import (
    Group,
    WordCounter,
    evaluate,
    gini,
    renyi_efficiency,
    renyi_entropy,
    vocabulary_use,
)

TEXT_CHARS = 60_000  # of each language: enough for stable numbers, small enough for a quick test


# ---------------------------------------------------------------------------------------------
# the measures on tiny distributions


def test_renyi_entropy_of_a_uniform_distribution_is_log_of_its_size_at_every_order() -> None:
    for alpha in (1.0, 2.0, 2.5, 3.0):
        assert renyi_entropy([5, 5, 5, 5], alpha) == pytest.approx(2.0)


def test_renyi_entropy_of_a_half_quarter_quarter_distribution() -> None:
    # p = 1/2, 1/4, 1/4
    assert renyi_entropy([2, 1, 1], 1.0) == pytest.approx(1.5)  # Shannon: 1/2 * 1 + 2 * 1/4 * 2
    assert renyi_entropy([2, 1, 1], 2.0) == pytest.approx(math.log2(8 / 3))  # sum p^2 = 3/8
    assert renyi_entropy([2, 1, 1], 3.0) == pytest.approx((5 - math.log2(5)) / 2)  # sum p^3 = 5/32
    # sum p^2.5 = 2^-2.5 + 2 * 4^-2.5 = 2^-2.5 + 2^-4; H = log2(sum) / (1 - 2.5)
    assert renyi_entropy([2, 1, 1]) == pytest.approx(-(2 / 3) * math.log2(2**-2.5 + 2**-4))
    assert renyi_entropy([0, 2, 0, 1, 1]) == renyi_entropy([2, 1, 1])  # ids never made add nothing


def test_renyi_efficiency_divides_by_log_of_the_vocabulary_not_of_the_ids_seen() -> None:
    assert renyi_efficiency([7, 7, 7, 7], 16) == pytest.approx(2 / 4)
    assert renyi_efficiency([2, 1, 1], 8, alpha=2.0) == pytest.approx(math.log2(8 / 3) / 3)
    assert renyi_efficiency([1] * 8, 8) == pytest.approx(1.0)
    assert renyi_efficiency([], 8) is None
    assert renyi_efficiency([0, 0], 8) is None
    assert renyi_efficiency([3], 1) is None


def test_gini_of_hand_computed_cases() -> None:
    assert gini([1.0, 1.0, 1.0]) == 0.0
    assert gini([1.0, 3.0]) == pytest.approx(0.25)  # 2 * |1 - 3| / (2 * 2^2 * 2)
    assert gini([1.0, 2.0, 3.0]) == pytest.approx(2 / 9)  # 2 * (1 + 2 + 1) / (2 * 3^2 * 2)
    assert gini([0.0, 0.0, 3.0]) == pytest.approx(2 / 3)  # one holds all: (n - 1) / n
    assert gini([5.0]) is None
    assert gini([0.0, 0.0]) is None


def test_unused_and_rare_ids_are_disjoint_and_rare_means_at_least_once() -> None:
    usage = {0: 5, 1: 1, 3: 10, 7: 2}  # id 7 is outside the vocabulary
    assert vocabulary_use(usage, range(5), rare_below=10) == (2, 2)  # unused 2 and 4; rare 0 and 1
    assert vocabulary_use(usage, range(5), rare_below=11) == (2, 3)
    assert vocabulary_use(usage, range(5), rare_below=1) == (2, 0)


def test_words_are_counted_across_token_and_piece_boundaries() -> None:
    pieces = [b"he", b"llo", b" ", b"wor", b"ld\n", b"a b", b"  ", b"\t"]
    counter = WordCounter(pieces)
    assert counter.count([[0, 1, 2, 3, 4]]) == 2  # "hello world\n"
    assert counter.count([[0], [1, 2], [3], [4]]) == 2  # the same, in pieces
    assert counter.count([[5, 5]]) == 3  # "a ba b"
    assert counter.count([[6, 5, 6, 7, 0]]) == 3  # "  a b  \the"
    assert counter.count([[6, 7]]) == 0
    assert counter.count([]) == 0


@pytest.mark.both_modes
@given(
    pieces=st.lists(st.binary(min_size=1, max_size=4), min_size=1, max_size=8),
    data=st.data(),
)
def test_word_count_from_ids_equals_bytes_split_of_the_text(pieces: list[bytes], data: st.DataObject) -> None:
    ids = data.draw(st.lists(st.integers(0, len(pieces) - 1), max_size=40))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=4)))
    split = [ids[start:end] for start, end in zip([0, *cuts], [*cuts, len(ids)])]
    text = b"".join(pieces[token] for token in ids)
    assert WordCounter(pieces).count(split) == len(text.split())


# ---------------------------------------------------------------------------------------------
# a whole report worked out by hand


@pytest.fixture(scope="module")
def ab_tokenizer(workdir: Path) -> bpe_core.Tokenizer:
    """Trained on "ab ab ab ab\\n": the gpt2 chunks are "ab", " ab" x 3, "\\n", so the merges are
    a+b (4 times, id 256), then " "+ab (3 times, id 257)."""
    corpus = workdir / "ab.txt"
    corpus.write_text("ab ab ab ab\n", encoding="utf-8")
    config = {"name": "ab", "pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 258}}
    tokenizer = bpe_core.train(config, [corpus], progress=False, workers=1)
    assert tokenizer.merges == [(ord("a"), ord("b")), (ord(" "), 256)]
    return tokenizer


@pytest.mark.both_modes
def test_report_of_a_tokenizer_with_merges_worked_out_by_hand(ab_tokenizer: bpe_core.Tokenizer, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("ab ab ab ab\n", encoding="utf-8")  # 256 257 257 257 10
    (tmp_path / "y.txt").write_text("ba\n", encoding="utf-8")  # 98 97 10
    groups = [Group("x", (str(tmp_path / "x.txt"),)), Group("y", (str(tmp_path / "y.txt"),))]
    results = evaluate([("ab.json", ab_tokenizer)], groups, workers=1, progress=False)
    (report,) = results["tokenizers"]
    x, y = report["groups"]
    assert (x["tokens"], x["symbols"], x["words"], x["documents"]) == (5, 12, 4, 1)
    assert x["symbols_per_token"] == pytest.approx(12 / 5)
    assert x["tokens_per_word"] == pytest.approx(5 / 4)
    assert x["cost"] == pytest.approx(5 / 12)
    assert (x["types"], x["unused"], x["rare"]) == (3, 258 - 3, 3)
    # counts 1, 3, 1 of 5 over log2 of the 258 regular ids
    hand = math.log2((1 / 5) ** 2.5 * 2 + (3 / 5) ** 2.5) / (1 - 2.5) / math.log2(258)
    assert x["renyi_efficiency"] == pytest.approx(hand)
    assert (y["tokens"], y["symbols"], y["words"], y["cost"]) == (3, 3, 1, 1.0)
    total = report["total"]
    assert (total["tokens"], total["symbols"], total["words"], total["unused"]) == (8, 15, 5, 258 - 5)
    # costs 5/12 and 1: 2 * 7/12 / (2 * 2^2 * 17/24)
    assert report["gini"] == pytest.approx(7 / 34)
    parallel = evaluate([("ab.json", ab_tokenizer)], groups, parallel=True, workers=1, progress=False)
    assert parallel["tokenizers"][0]["gini"] == pytest.approx(1 / 8)  # tokens 5 and 3: 2 * 2 / (2 * 4 * 4)
    rare = evaluate([("ab.json", ab_tokenizer)], groups[:1], rare_below=2, workers=1, progress=False)
    assert rare["tokenizers"][0]["total"]["rare"] == 2  # 256 and 10 once; 257 three times
    assert rare["tokenizers"][0]["gini"] is None  # one group
    # residue: "ab" (256) is given alone once and made inside " ab" three times, 1 of 4 makings;
    # " ab" (257) is given alone all 3 times
    assert total["residue"] == 0  # 1 < 0.1 * 4 is false
    residue = evaluate([("ab.json", ab_tokenizer)], groups[:1], residue_threshold=0.3, workers=1, progress=False)
    assert residue["tokenizers"][0]["total"]["residue"] == 1  # 1 < 0.3 * 4


# ---------------------------------------------------------------------------------------------
# end to end on real data


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as opened:
        yield opened


def opened_page(browser: Browser, page: Path, charts: int) -> None:
    """The page loads with no console error, asks for nothing but itself, and draws `charts` charts."""
    browser.open(page)
    assert browser.errors() == []
    assert browser.requests() == [page.resolve().as_uri()]
    assert browser.evaluate("document.querySelectorAll('figure svg.chart').length") == charts
    assert browser.evaluate("document.querySelectorAll('.side svg.chart').length") >= 2  # side by side


def language_texts(workdir: Path, docs_text: str) -> dict[str, Path]:
    """TEXT_CHARS characters of English (the Python docs, past the slice trained on), German and
    Japanese (the Debian Reference)."""
    texts = {"en": docs_text[400_000 : 400_000 + TEXT_CHARS]}
    by_language = dict(zip(("ja", "de"), BENCHMARK_TEXTS, strict=True))  # BENCHMARK_TEXTS' order
    for language in ("de", "ja"):
        with gzip.open(require(by_language[language]), "rt", encoding="utf-8") as handle:
            texts[language] = handle.read(TEXT_CHARS)
    paths = {}
    for language, text in texts.items():
        paths[language] = workdir / f"{language}.txt"
        paths[language].write_text(text, encoding="utf-8", newline="")
    return paths


def test_text_groups_compare_a_trained_tokenizer_with_cl100k_base(
    browser: Browser, docs_slice_path: Path, docs_text: str, workdir: Path
) -> None:
    config = {"name": "docs-1k", "pretokenizer": {"name": "gpt2"}, "trainer": {"vocab_size": 1256}}
    trained = workdir / "docs-1k.json"
    bpe_core.train(config, [docs_slice_path], progress=False, workers=1).save(trained)
    cl100k = published_vocabulary_path("cl100k")
    languages = language_texts(workdir, docs_text)
    groups = [f"{language}={path.name}" for language, path in languages.items()]
    printed = assert_ok(
        run_bpe("eval", trained, cl100k, "--groups", *groups, "--json", "out.json", "--html", "out.html", cwd=workdir)
    )
    results = json.loads((workdir / "out.json").read_text(encoding="utf-8"))
    ours, theirs = results["tokenizers"]
    assert [group["name"] for group in ours["groups"]] == ["en", "de", "ja"]
    encoding = tiktoken.Encoding(
        "cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=read_ranks(cl100k),
        special_tokens={},
    )
    usage: Counter[int] = Counter()
    for language, row in zip(languages, theirs["groups"]):
        data = languages[language].read_bytes()
        ids = encoding.encode(data.decode("utf-8"), disallowed_special=())
        usage.update(ids)
        assert (row["tokens"], row["symbols"], row["words"]) == (len(ids), len(data), len(data.split()))
        assert row["renyi_efficiency"] == pytest.approx(renyi_entropy(Counter(ids).values()) / math.log2(100256))
        assert row["cost"] == pytest.approx(len(ids) / len(data))
    assert theirs["vocabulary"] == 100256  # the regular ids; special tokens are not counted
    assert theirs["total"]["unused"] == 100256 - len(usage)
    assert theirs["gini"] == pytest.approx(gini([row["cost"] for row in theirs["groups"]]))
    for mine, big in zip(ours["groups"], theirs["groups"]):
        assert mine["symbols"] == big["symbols"] and mine["words"] == big["words"]
        assert big["symbols_per_token"] > mine["symbols_per_token"]  # 100k ids compress more than 1k
    assert ours["groups"][2]["tokens_per_word"] > ours["groups"][0]["tokens_per_word"]  # Japanese has few spaces
    assert ours["gini"] > theirs["gini"]  # trained on English alone, the small one favours it more
    for name in ("docs-1k", "cl100k_base"):
        assert name in printed
    assert "parity Gini of tokens per byte across the 3 groups" in printed and "residue(0.1)" in printed
    assert 0 < theirs["total"]["residue"] < theirs["vocabulary"] // 10  # a few of cl100k's merges on 180 KB
    opened_page(browser, workdir / "out.html", charts=4 + 2)  # 4 measures apply to text; a use chart each


@pytest.fixture(scope="module")
def genomes(workdir: Path) -> dict[str, Path]:
    """Three species: 100 kb of E. coli, the lambda phage genome, 40 kb of human chr17."""
    ecoli = write_fasta(workdir / "ecoli.fa", [("ecoli", ecoli_slice(100_000))])
    return {"E. coli": ecoli, "phage lambda": require(LAMBDA_PATH), "human": require(CHR17_PATH)}


def test_dna_species_as_groups_from_a_groups_file(browser: Browser, genomes: dict[str, Path], workdir: Path) -> None:
    tokenizers = []
    for vocab_size in (64, 512):
        config = {
            "name": f"dna-{vocab_size}",
            "input": {"reader": "fasta"},
            "pretokenizer": {"name": "dna-nucleotides"},
            "trainer": {"vocab_size": vocab_size},
        }
        path = workdir / f"dna-{vocab_size}.json"
        bpe_core.train(config, [genomes["E. coli"]], progress=False, workers=1).save(path)
        tokenizers.append(path)
    groups_file = workdir / "species.yaml"
    groups_file.write_text("".join(f"{name}: {path}\n" for name, path in genomes.items()), encoding="utf-8")
    printed = assert_ok(
        run_bpe("eval", *tokenizers, "--groups", groups_file, "--json", "-", "--html", "dna.html", "-q", cwd=workdir)
    )
    results = json.loads(printed)  # the JSON went to standard output, so no table
    small, large = results["tokenizers"]
    for species, row in zip(genomes, small["groups"]):
        assert row["symbols"] == sum(len(sequence) for _, sequence in fasta_records(genomes[species]))
        assert row["words"] is None and row["tokens_per_word"] is None
    assert small["unit"] == "nucleotides"
    assert all(
        big["symbols_per_token"] > tiny["symbols_per_token"] for big, tiny in zip(large["groups"], small["groups"])
    )
    assert large["groups"][0]["symbols_per_token"] == max(row["symbols_per_token"] for row in large["groups"])
    opened_page(browser, workdir / "dna.html", charts=3 + 2)


def test_midi_songs_in_two_groups_report_tokens_per_beat(workdir: Path) -> None:
    songs = sorted(require(POP909_DIR).glob("*.mid"))
    config = {
        "name": "midi-600",
        "input": {"reader": "midi"},
        "pretokenizer": {"name": "midi-events"},
        "trainer": {"vocab_size": 600},
    }
    path = workdir / "midi-600.json"
    bpe_core.train(config, songs[:8], progress=False, workers=1).save(path)
    first, later = songs[8:12], songs[400:404]
    groups = [f"first={song}" for song in first] + [f"later={song}" for song in later]
    printed = assert_ok(run_bpe("eval", path, "--groups", *groups, "--json", "midi.json", cwd=workdir))
    (report,) = json.loads((workdir / "midi.json").read_text(encoding="utf-8"))["tokenizers"]
    tokenizer = bpe_core.load(path)
    for row, group in zip(report["groups"], (first, later)):
        assert row["documents"] == len(group)
        assert row["tokens"] == sum(len(tokenizer.encode(song)) for song in group)
        assert row["beats"] > 0 and row["tokens_per_beat"] == pytest.approx(row["tokens"] / row["beats"])
    assert "tokens/beat" in printed and "events/token" in printed


def test_bad_inputs_are_one_error_line(ab_tokenizer: bpe_core.Tokenizer, tmp_path: Path) -> None:
    tokenizer = tmp_path / "ab.json"
    ab_tokenizer.save(tokenizer)
    text = tmp_path / "x.txt"
    text.write_text("ab ab\n", encoding="utf-8")
    assert_clean_error(run_bpe("eval", tokenizer, cwd=tmp_path), "--on", "--groups")
    assert_clean_error(run_bpe("eval", tokenizer, "--groups", "=x.txt", cwd=tmp_path), "NAME=PATH")
    assert_clean_error(run_bpe("eval", tokenizer, "--groups", "groups.txt", cwd=tmp_path), "groups.txt", ".yaml")
    (tmp_path / "bad.yaml").write_text("en: [1, 2]\n", encoding="utf-8")
    assert_clean_error(run_bpe("eval", tokenizer, "--groups", "bad.yaml", cwd=tmp_path), "bad.yaml", "'en'")
    assert_clean_error(run_bpe("eval", tokenizer, "--on", "missing.txt", cwd=tmp_path), "missing.txt")
    dna = tmp_path / "dna.json"
    config = {"name": "dna", "input": {"reader": "fasta"}, "pretokenizer": {"name": "dna-nucleotides"}}
    bpe_core.train({**config, "trainer": {"vocab_size": 20}}, [require(LAMBDA_PATH)], progress=False, workers=1).save(
        dna
    )
    assert_clean_error(run_bpe("eval", tokenizer, dna, "--on", text, cwd=tmp_path), "'fasta'", "'text'")
    assert_clean_error(run_bpe("eval", tokenizer, "--on", text, "--residue-threshold", "2", cwd=tmp_path), "threshold")
    both = run_bpe("eval", tokenizer, "--on", text, "--json", "-", "--html", "-", cwd=tmp_path)
    assert_clean_error(both, "standard output")
    assert not list(tmp_path.glob("*.json.*")) and not list(tmp_path.glob(".tmp-*"))
