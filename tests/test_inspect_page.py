"""`bpe inspect --html` and `Tokenizer.visualize`: the pages for text, DNA and MIDI, opened in
headless Chromium (tests/helpers/browser.py; a missing Chromium fails, never skips).

Each domain's tokenizer is trained small on the shared real data; the page's sample is real
data too. Every expectation comes from the tokenizer itself (`encode`, `merged_ids`,
`merge_counts`, `decode`), never from numbers written here: how many token elements the page has,
what one token's tooltip says, which bytes are shown in hex, which tokens hold N, how many notes
the piano roll draws. A page must load with no console error and show a screenshot that is not
blank.
"""

import gzip
import io
import re
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import mido
import pytest
from helpers.browser import Browser
from helpers.cli_runner import assert_clean_error, assert_ok, run_bpe
from helpers.paths import LAMBDA_PATH, POP909_DIR, READS_PATH, require
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import bpe_core
from bpe_core.corpus.streaming import corpus_reader
from bpe_core.plugins import registry
from bpe_core.visual.cuts import SAMPLE_TOKENS
from bpe_core.visual.page import NOTEBOOK_TOKENS
from bpe_midi.roll import roll_notes

MAIN_TOKENS = '.cut[data-side="main"] .t'
MIN_COLORS = 64  # a blank or unstyled page has a handful of colors; the charts and tokens give hundreds


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as opened:
        yield opened


@pytest.fixture(scope="module")
def text_sample(docs_text: str, workdir: Path) -> Path:
    """2,000 characters of the Python docs around their first non-ASCII character, so that some
    byte-level tokens are bytes that are not UTF-8 on their own."""
    first = next(index for index, character in enumerate(docs_text) if ord(character) > 127)
    start = max(0, first - 1000)
    path = workdir / "docs-sample.txt"
    path.write_text(docs_text[start : start + 2000], encoding="utf-8", newline="")
    return path


@pytest.fixture(scope="module")
def text_tokenizer(docs_slice_path: Path, workdir: Path) -> Path:
    config = {
        "name": "page-text",
        "pretokenizer": {"name": "gpt2"},
        "trainer": {"vocab_size": 256 + 300 + 1},
        "special_tokens": {"tokens": ["<|endoftext|>"], "position": "end"},
    }
    path = workdir / "text.json"
    bpe_core.train(config, [docs_slice_path], progress=False, workers=1).save(path)
    return path


@pytest.fixture(scope="module")
def reads_sample(workdir: Path) -> Path:
    """The first 2,000 simulated lambda reads (real FASTQ; the first read holds two N)."""
    with gzip.open(require(READS_PATH), "rt", encoding="ascii") as handle:
        lines = [next(handle) for _ in range(4 * 2000)]
    path = workdir / "reads.fq"
    path.write_text("".join(lines), encoding="ascii")
    return path


@pytest.fixture(scope="module")
def dna_tokenizer(reads_sample: Path, workdir: Path) -> Path:
    config = {
        "name": "page-dna",
        "input": {"reader": "fastq"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 200, "min_frequency": 2},
        "special_tokens": {"tokens": ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"], "position": "start"},
    }
    path = workdir / "dna.json"
    bpe_core.train(config, [reads_sample], progress=False, workers=1).save(path)
    return path


@pytest.fixture(scope="module")
def midi_songs(workdir: Path) -> list[Path]:
    return sorted(require(POP909_DIR).glob("*.mid"))[:12]


@pytest.fixture(scope="module")
def midi_tokenizer(midi_songs: list[Path], workdir: Path) -> Path:
    config = {
        "name": "page-midi",
        "input": {"reader": "midi"},
        "pretokenizer": {"name": "midi-events"},
        "trainer": {"vocab_size": 700},
    }
    path = workdir / "midi.json"
    bpe_core.train(config, midi_songs, progress=False, workers=1).save(path)
    return path


def write_page(tokenizer: Path, sample: Path, workdir: Path, *extra: object) -> Path:
    out = workdir / f"{tokenizer.stem}-{sample.stem}.html"
    assert_ok(run_bpe("inspect", tokenizer, "--html", out, "--on", sample, *extra, cwd=workdir))
    return out


def first_document(tokenizer: bpe_core.Tokenizer, path: Path) -> Any:
    return next(iter(corpus_reader(tokenizer).documents([str(path)], strict=True)))


def expected_tooltip(tokenizer: bpe_core.Tokenizer, token: int) -> str:
    """What the tooltip of a merged token must begin with, from the tokenizer's own records."""
    merged = tokenizer.merged_ids()
    rank = merged.index(token)
    symbols = tokenizer.token_symbols(token)
    return (
        f"id {token}\nsymbols ({len(symbols)}): {' '.join(symbols)}\n"
        f"training count {tokenizer.merge_counts[rank]:,}\nrank {rank} of {len(merged):,} merges"
    )


def opened_page(browser: Browser, page: Path) -> None:
    """Open the page: it loads with no console error and asks for nothing but itself (CSS, script
    and SVG are inline), and its screenshot is not blank."""
    browser.open(page)
    assert browser.errors() == []
    assert browser.requests() == [page.resolve().as_uri()]
    image = Image.open(io.BytesIO(browser.screenshot(full_page=True))).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > MIN_COLORS, f"{page.name}: the screenshot looks blank"


def shown_titles(browser: Browser) -> list[str]:
    return list(browser.evaluate(f"Array.from(document.querySelectorAll('{MAIN_TOKENS}')).map(e => e.title)"))


def shown_ids(browser: Browser) -> list[int]:
    return [
        int(value)
        for value in browser.evaluate(f"Array.from(document.querySelectorAll('{MAIN_TOKENS}')).map(e => e.dataset.id)")
    ]


@pytest.mark.both_modes
def test_text_page_shows_every_token_of_the_sample_with_its_tooltip_and_bad_bytes_in_hex(
    browser: Browser, text_tokenizer: Path, text_sample: Path, workdir: Path
) -> None:
    page = write_page(text_tokenizer, text_sample, workdir)
    tokenizer = bpe_core.load(text_tokenizer)
    ids = tokenizer.encode(text_sample.read_text(encoding="utf-8"))
    assert len(ids) < SAMPLE_TOKENS  # the whole sample is shown
    opened_page(browser, page)
    assert shown_ids(browser) == ids
    merged = set(tokenizer.merged_ids())
    index = next(index for index, token in enumerate(ids) if token in merged)
    assert shown_titles(browser)[index] == expected_tooltip(tokenizer, ids[index])

    def valid(token: int) -> bool:
        try:
            tokenizer.token_bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    not_utf8 = [index for index, token in enumerate(ids) if not valid(token)]
    assert not_utf8, "the sample was chosen to hold a character split across tokens"
    hex_shown = browser.evaluate(
        f"Array.from(document.querySelectorAll('{MAIN_TOKENS}')).map((e, i) => e.querySelector('.x') ? i : -1)"
        ".filter(i => i >= 0)"
    )
    assert hex_shown == not_utf8
    first_bad = tokenizer.token_bytes(ids[not_utf8[0]])
    shown_hex = browser.evaluate(f"document.querySelectorAll('{MAIN_TOKENS}')[{not_utf8[0]}].textContent")
    assert " ".join(f"{byte:02x}" for byte in first_bad) in shown_hex


@pytest.mark.both_modes
def test_dna_page_shows_positions_gc_and_n_of_each_token(
    browser: Browser, dna_tokenizer: Path, reads_sample: Path, workdir: Path
) -> None:
    page = write_page(dna_tokenizer, reads_sample, workdir)
    tokenizer = bpe_core.load(dna_tokenizer)
    read = first_document(tokenizer, reads_sample)
    ids, spans = tokenizer.encode_with_offsets(read)
    assert ids == tokenizer.encode(read)
    opened_page(browser, page)
    assert shown_ids(browser) == ids
    titles = shown_titles(browser)
    merged = set(tokenizer.merged_ids())
    index = next(index for index, token in enumerate(ids) if token in merged and index > 0)
    letters = "".join(tokenizer.token_symbols(ids[index]))
    gc = sum(letter in "GC" for letter in letters)
    assert titles[index] == (
        expected_tooltip(tokenizer, ids[index])
        + f"\npositions {spans[index][0] + 1}-{spans[index][1]}\nGC {gc}/{len(letters)} ({gc / len(letters):.0%})"
    )
    with_n = [index for index, token in enumerate(ids) if "N" in tokenizer.token_symbols(token)]
    assert with_n, "the first read holds N"
    marked = browser.evaluate(
        f"Array.from(document.querySelectorAll('{MAIN_TOKENS}')).map((e, i) => e.classList.contains('m-n') ? i : -1)"
        ".filter(i => i >= 0)"
    )
    assert marked == with_n
    runs = sum(1 for index in with_n if index - 1 not in with_n)  # N tokens next to each other make one run
    assert browser.evaluate("document.querySelectorAll('svg.gc rect.nrun').length") == runs


@pytest.mark.both_modes
def test_midi_page_draws_the_piano_roll_of_the_shown_tokens_capped(
    browser: Browser, midi_tokenizer: Path, workdir: Path
) -> None:
    song = sorted(require(POP909_DIR).glob("*.mid"))[100]  # not one the tokenizer was trained on
    page = write_page(midi_tokenizer, song, workdir)
    tokenizer = bpe_core.load(midi_tokenizer)
    ids = tokenizer.encode(song)
    shown = ids[:SAMPLE_TOKENS]
    opened_page(browser, page)
    assert shown_ids(browser) == shown
    if len(ids) > SAMPLE_TOKENS:
        assert f"showing the first {SAMPLE_TOKENS:,} of its {len(ids):,} tokens" in page.read_text(encoding="utf-8")
    index = next(index for index, token in enumerate(shown) if token in set(tokenizer.merged_ids()))
    assert shown_titles(browser)[index].startswith(expected_tooltip(tokenizer, shown[index]))
    decoded: mido.MidiFile = tokenizer.decode(shown)
    notes = sum(1 for track in decoded.tracks for message in track if message.type == "note_on")
    assert browser.evaluate("document.querySelectorAll('svg.roll rect.note').length") == notes
    starts = browser.evaluate("Array.from(document.querySelectorAll('svg.roll rect.note')).map(e => +e.dataset.k)")
    several = {token for token in starts if starts.count(token) > 1}
    boxes = browser.evaluate("Array.from(document.querySelectorAll('svg.roll rect.box')).map(e => +e.dataset.k)")
    assert sorted(boxes) == sorted(several)
    assert browser.evaluate("document.querySelectorAll('svg.roll line.bar').length") > 1


@pytest.mark.both_modes
def test_compare_shows_both_cuts_of_the_same_sample_with_their_counts(
    browser: Browser, text_tokenizer: Path, text_sample: Path, workdir: Path
) -> None:
    smaller = workdir / "text-trimmed.json"
    assert_ok(run_bpe("trim", text_tokenizer, "-o", smaller, "--vocab-size", 256 + 100 + 1, "-q", cwd=workdir))
    page = write_page(text_tokenizer, text_sample, workdir, "--compare", smaller)
    text = text_sample.read_text(encoding="utf-8")
    expected = {"main": bpe_core.load(text_tokenizer).encode(text), "compare": bpe_core.load(smaller).encode(text)}
    assert len(expected["compare"]) > len(expected["main"])
    opened_page(browser, page)
    for side, ids in expected.items():
        shown = browser.evaluate(
            f"Array.from(document.querySelectorAll('.cut[data-side=\"{side}\"] .t')).map(e => +e.dataset.id)"
        )
        assert shown == ids[:SAMPLE_TOKENS]  # the trimmed tokenizer's cut may be capped
        count = browser.evaluate(f"document.querySelector('.side[data-side=\"{side}\"] .count').textContent")
        assert count == f"{len(shown):,}"


def test_visualize_returns_the_page_for_a_document_and_the_notebook_a_small_sample_styled_in_its_box(
    text_tokenizer: Path, text_sample: Path
) -> None:
    tokenizer = bpe_core.load(text_tokenizer)
    text = text_sample.read_text(encoding="utf-8")
    page = tokenizer.visualize(text)
    assert page.startswith("<!DOCTYPE html>") and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert page.count('<span class="t ') == len(tokenizer.encode(text))
    notebook = tokenizer._repr_html_()
    assert "<html" not in notebook and notebook.count('<span class="t ') == NOTEBOOK_TOKENS
    style = notebook.split("<style>")[1].split("</style>")[0]
    selectors = [rule.split("{")[0] for rule in style.split("}") if rule]
    assert selectors and all(part.startswith(".bpe-view ") for rule in selectors for part in rule.split(","))


def test_inspect_html_refuses_a_missing_sample_a_bad_or_other_domain_compare_file_and_compare_alone(
    text_tokenizer: Path, midi_tokenizer: Path, workdir: Path
) -> None:
    out = workdir / "refused.html"
    missing = workdir / "no-such-sample.txt"
    assert_clean_error(run_bpe("inspect", text_tokenizer, "--html", out, "--on", missing, cwd=workdir), str(missing))
    bad = workdir / "not-a-tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    assert_clean_error(run_bpe("inspect", text_tokenizer, "--html", out, "--compare", bad, cwd=workdir), str(bad))
    assert_clean_error(run_bpe("inspect", text_tokenizer, "--compare", text_tokenizer, cwd=workdir), "--html")
    other_domain = run_bpe("inspect", text_tokenizer, "--html", out, "--compare", midi_tokenizer, cwd=workdir)
    assert_clean_error(other_domain, "'midi'", "'text'")
    assert not out.exists()
    assert not list(workdir.glob(".tmp-*"))


def test_inspect_html_without_on_shows_the_sample_shipped_for_the_domain(
    browser: Browser, dna_tokenizer: Path, workdir: Path
) -> None:
    fasta = workdir / "dna-fasta.json"
    config = {
        "name": "page-dna-fasta",
        "input": {"reader": "fasta"},
        "pretokenizer": {"name": "dna-nucleotides"},
        "trainer": {"vocab_size": 100},
    }
    bpe_core.train(config, [require(LAMBDA_PATH)], progress=False, workers=1).save(fasta)
    out = workdir / "shipped.html"
    assert_ok(run_bpe("inspect", fasta, "--html", out, cwd=workdir))
    opened_page(browser, out)
    assert "lambda_phage.fa.gz" in out.read_text(encoding="utf-8")
    assert browser.evaluate(f"document.querySelectorAll('{MAIN_TOKENS}').length") == SAMPLE_TOKENS
    fastq = run_bpe("inspect", dna_tokenizer, "--html", out, cwd=workdir)  # no sample ships for FASTQ
    assert_clean_error(fastq, "fastq", "--on")


@pytest.mark.both_modes
@pytest.mark.parametrize("grammar", ["remi", "tsd", "midilike"])
def test_piano_roll_draws_the_decoders_notes_each_from_the_token_of_its_onset(
    grammar: str, midi_songs: list[Path]
) -> None:
    config = {
        "name": f"roll-{grammar}",
        "input": {"reader": "midi"},
        "pretokenizer": {"name": "midi-events", "grammar": grammar},
        "trainer": {"vocab_size": 600},
    }
    tokenizer = bpe_core.train(config, midi_songs[:4], progress=False, workers=1)
    symbol_ids = {label: index for index, label in enumerate(tokenizer.alphabet)}
    ids = tokenizer.encode(midi_songs[6])
    tokens = [[symbol_ids[label] for label in tokenizer.token_symbols(token)] for token in ids]
    resolution = tokenizer.pretokenizer.grid.resolution  # type: ignore[attr-defined]
    notes, bar_lines = roll_notes(tokenizer.alphabet, tokens, grammar, resolution)
    _, _, decoded = tokenizer.decoder.music([symbol for token in tokens for symbol in token], tokenizer.alphabet)  # type: ignore[attr-defined]
    assert Counter((note.program, note.pitch, note.start, note.steps) for note in notes) == Counter(
        (program, pitch, start, steps) for program, pitch, _, start, steps in decoded
    )
    onset = "NoteOn" if grammar == "midilike" else "Pitch"
    assert all(f"{onset}_{note.pitch}" in tokenizer.token_symbols(ids[note.token]) for note in notes)
    if grammar == "remi":
        assert len(bar_lines) == sum(tokenizer.token_symbols(token).count("Bar") for token in ids)
    assert bar_lines == sorted(bar_lines) and bar_lines[0] == 0
    assert bar_lines[-1] <= max(note.start + note.steps for note in notes) < bar_lines[-1] + 16 * resolution


class ShownTokens(HTMLParser):
    """The bytes each token element of the main cut shows: its text, and its hex for bad bytes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple[int, bytes]] = []
        self.side = ""
        self.in_hex = False
        self.depth = 0  # of elements open inside the current token

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if "cut" in (attributes.get("class") or "").split():
            self.side = attributes.get("data-side") or ""
        classes = (attributes.get("class") or "").split()
        if self.side == "main" and tag == "span" and "t" in classes:
            self.tokens.append((int(attributes["data-id"] or -1), b""))
            self.depth = 1
        elif self.depth:
            self.depth += 1
            self.in_hex = "x" in classes

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1
            self.in_hex = False
        elif tag == "div":
            self.side = ""

    def handle_data(self, data: str) -> None:
        if not self.depth:
            return
        token, shown = self.tokens[-1]
        if self.in_hex:
            shown += bytes.fromhex(data)
        else:
            shown += data.replace("\u21b5\n", "\n").encode("utf-8")
        self.tokens[-1] = (token, shown)


@pytest.mark.both_modes
@settings(max_examples=60, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\u21b5"), max_size=300))
def test_the_cut_shows_exactly_the_texts_bytes_token_by_token(text_tokenizer: Path, text: str) -> None:
    tokenizer = bpe_core.load(text_tokenizer)
    parser = ShownTokens()
    parser.feed(tokenizer.visualize(text))
    ids = tokenizer.encode(text, allowed_special="all")  # the page marks special tokens in a sample
    assert [token for token, _ in parser.tokens] == ids
    assert [shown for _, shown in parser.tokens] == [tokenizer.token_bytes(token) for token in ids]


def test_html_to_standard_output_is_the_page_a_file_gets(
    text_tokenizer: Path, text_sample: Path, workdir: Path
) -> None:
    page = write_page(text_tokenizer, text_sample, workdir)
    printed = assert_ok(run_bpe("inspect", text_tokenizer, "--html", "-", "--on", text_sample, cwd=workdir))
    assert printed == page.read_text(encoding="utf-8")


@pytest.mark.both_modes
@pytest.mark.parametrize(
    "pretokenizer",
    [
        {"name": "dna-nucleotides"},
        {"name": "dna-kmers", "k": 3},
        {"name": "dna-kmers", "k": 4, "stride": 1},
        {"name": "dna-kmers", "k": 3, "remainder": "pad"},
    ],
    ids=["nucleotides", "3-mers", "overlapping-4-mers", "padded-3-mers"],
)
def test_dna_tooltips_give_the_gc_of_the_letters_each_token_covers(pretokenizer: dict[str, Any]) -> None:
    options = {key: value for key, value in pretokenizer.items() if key != "name"}
    alphabet = len(registry().pretokenizer(pretokenizer["name"], options).alphabet())
    config = {"name": "gc", "input": {"reader": "fasta"}, "pretokenizer": pretokenizer}
    config["trainer"] = {"vocab_size": alphabet + 60}
    tokenizer = bpe_core.train(config, [require(LAMBDA_PATH)], progress=False, workers=1)
    records = corpus_reader(tokenizer).documents([str(LAMBDA_PATH)], strict=True)
    sequence = next(iter(records)).sequence[:1001]
    ids, spans = tokenizer.encode_with_offsets(sequence)
    titles = re.findall(
        r'<span class="t [^"]*" data-id="\d+" data-k="\d+" title="([^"]*)"', tokenizer.visualize(sequence)
    )
    assert len(titles) == len(ids)
    for title, (start, end) in zip(titles, spans):
        letters = sequence[start:end].upper()
        gc = sum(letter in "GC" for letter in letters)
        assert title.endswith(f"\npositions {start + 1}-{end}\nGC {gc}/{len(letters)} ({gc / len(letters):.0%})")
