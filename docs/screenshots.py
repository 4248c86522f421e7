"""Screenshots of `bpe inspect --html` for docs/inspect.md (`make screenshots` runs this).

Trains a small text, DNA and MIDI tokenizer on the shared real data (../shared/data), writes
each page with the installed `bpe inspect --html`, opens it in headless Chromium (the tests'
driver, tests/helpers/browser.py) and saves the top of the page as docs/img/inspect-*.png, with
a reduced palette so the images stay small. Run it from the repository root, after `make install`.
"""

import gzip
import io
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

import bpe_core

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
IMAGES = ROOT / "docs" / "img"
sys.path.insert(0, str(ROOT / "tests"))  # the Chromium driver the tests use

from helpers.browser import Browser  # noqa: E402

BPE = Path(sys.executable).parent / "bpe"
HEIGHT = 1100  # pixels of each page kept: the sample and the first charts
COLORS = 96
# hover the first token that shows bytes in hex (text), or starts several notes (MIDI), or is merged, so the
# shot shows a tooltip
HOVER = """(function(){
  var tokens = Array.from(document.querySelectorAll('.cut[data-side="main"] .t'));
  var token = tokens.find(function(e){ return e.querySelector('.x'); })
    || tokens.find(function(e){ return /starts [2-9]/.test(e.title); })
    || tokens.find(function(e){ return /rank/.test(e.title); }) || tokens[40];
  token.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
})()"""


def tokenizers(directory: Path) -> dict[str, tuple[Path, list[str]]]:
    """name -> (tokenizer file, extra arguments of `bpe inspect`)."""
    with gzip.open(DATA / "text" / "python-3.11-docs.txt.gz", "rt", encoding="utf-8", newline="") as handle:
        docs = handle.read(400_000)
    corpus = directory / "docs.txt"
    corpus.write_text(docs, encoding="utf-8", newline="")
    sample = directory / "docs-sample.txt"
    first = next(index for index, character in enumerate(docs) if ord(character) > 127)
    sample.write_text(docs[max(0, first - 150) : first + 2000], encoding="utf-8", newline="")
    text = bpe_core.train(
        {
            "name": "text-gpt2-2k",
            "pretokenizer": {"name": "gpt2"},
            "trainer": {"vocab_size": 2048},
            "special_tokens": {"tokens": ["<|endoftext|>"], "position": "end"},
        },
        [corpus],
        progress=False,
    )
    text.save(directory / "text.json")
    small = bpe_core.trim(text, vocab_size=512)[0]
    small.save(directory / "text-512.json")
    dna = bpe_core.train(
        {
            "name": "dna-lambda-512",
            "input": {"reader": "fasta"},
            "pretokenizer": {"name": "dna-nucleotides"},
            "trainer": {"vocab_size": 512, "min_frequency": 2},
            "special_tokens": {"tokens": ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"], "position": "start"},
        },
        [DATA / "dna" / "lambda_phage.fa.gz"],
        progress=False,
    )
    dna.save(directory / "dna.json")
    reads = bpe_core.train(
        {
            "name": "dna-reads-256",
            "input": {"reader": "fastq"},
            "pretokenizer": {"name": "dna-nucleotides"},
            "trainer": {"vocab_size": 256, "min_frequency": 2},
        },
        [DATA / "dna" / "lambda_reads_1.fq.gz"],
        progress=False,
    )
    reads.save(directory / "reads.json")
    songs = sorted((DATA / "midi" / "pop909").glob("*.mid"))
    midi = bpe_core.train(
        {
            "name": "midi-remi-1k",
            "input": {"reader": "midi"},
            "pretokenizer": {"name": "midi-events"},
            "trainer": {"vocab_size": 1024},
        },
        songs[:40],
        progress=False,
    )
    midi.save(directory / "midi.json")
    return {
        "text": (directory / "text.json", ["--on", sample.name, corpus.name]),
        "compare": (directory / "text.json", ["--on", sample.name, "--compare", "text-512.json"]),
        "dna": (directory / "dna.json", ["--on", str(DATA / "dna" / "lambda_phage.fa.gz")]),
        "dna-reads": (directory / "reads.json", ["--on", str(DATA / "dna" / "lambda_reads_1.fq.gz")]),
        "midi": (directory / "midi.json", ["--on", str(songs[100])]),
    }


def main() -> None:
    IMAGES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, Browser(width=1280, height=HEIGHT) as browser:
        directory = Path(scratch)
        for name, (tokenizer, arguments) in tokenizers(directory).items():
            page = directory / f"{name}.html"
            command = [str(BPE), "inspect", tokenizer.name, "--html", page.name, *arguments]
            subprocess.run(command, check=True, cwd=directory)
            browser.open(page)
            errors = browser.errors()
            if errors:
                raise SystemExit(f"{name}: the page logged errors: {errors}")
            browser.evaluate(HOVER)
            image = Image.open(io.BytesIO(browser.screenshot())).convert("RGB")
            small = image.quantize(colors=COLORS, method=Image.Quantize.MEDIANCUT)
            target = IMAGES / f"inspect-{name}.png"
            small.save(target, optimize=True)
            sizes = f"{target.stat().st_size / 1024:.0f} KiB, page {page.stat().st_size / 1024:.0f} KiB"
            print(f"{target.relative_to(ROOT)}: {sizes}")


if __name__ == "__main__":
    main()
