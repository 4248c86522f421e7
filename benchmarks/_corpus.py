"""A training corpus of 50 MB and more, built from real documentation that Debian ships.

It is the training part of the Python docs (`_common.training_docs()`: the held-back 20% stays
out, so encoding benchmarks still meet text never trained on), followed by the plain text of:

- python-django-doc (the Django 3.2 documentation, HTML),
- debian-handbook (The Debian Administrator's Handbook, HTML, in all its translations),
- git-doc (the Git manual pages and guides, AsciiDoc text).

The packages are fetched with `apt-get download` and unpacked with `dpkg -x` into a temporary
folder; HTML is reduced to its text with `html.parser` (scripts and styles dropped, a newline at
each block element), other files are taken as they are, files in sorted order, one after the
other. The result is kept, with the package versions beside it, in a folder of the temporary
directory, and rebuilt only when missing (about a minute). Without apt-get (not Debian),
`large_corpus` says so and returns None, and the scripts leave the large rows out.
"""

import html.parser
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from _common import training_docs

# outside the repository: a 53 MB file has no place in a source copy (tests/test_packaging.py copies the tree)
OUT_DIR = Path(tempfile.gettempdir()) / "bpe-core-bench-corpus"
CORPUS_PATH = OUT_DIR / "large-training-corpus.txt"
VERSIONS_PATH = OUT_DIR / "large-training-corpus.json"
# (package, folder inside it, file suffixes taken)
SOURCES = (
    ("python-django-doc", "usr/share/doc/python-django-doc/html", (".html",)),
    ("debian-handbook", "usr/share/doc/debian-handbook/html", (".html",)),
    ("git-doc", "usr/share/doc/git-doc", (".txt",)),
)
BLOCK_TAGS = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr", "dt", "dd", "title", "table"}


class _HtmlText(html.parser.HTMLParser):
    """The text of an HTML page: scripts and styles dropped, a newline before each block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.hidden += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.hidden = max(0, self.hidden - 1)

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def _file_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".html":
        return text
    parser = _HtmlText()
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


def _package_version(deb: Path) -> str:
    return subprocess.run(
        ["dpkg-deb", "--field", str(deb), "Version"], check=True, capture_output=True, text=True
    ).stdout.strip()


def large_corpus() -> Path | None:
    """The path of the large corpus (built if missing), or None where apt-get is not available."""
    if CORPUS_PATH.exists() and VERSIONS_PATH.exists():
        return CORPUS_PATH
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        print("no apt-get/dpkg here: the large training corpus (Debian documentation packages) is left out")
        return None
    print("building the large training corpus (once, in the temporary directory; about a minute)", flush=True)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    versions: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bpe-bench-corpus-") as temporary:
        work = Path(temporary)
        # apt downloads into the working directory; world-writable so its unprivileged user may write
        os.chmod(work, 0o777)
        packages = [package for package, _, _ in SOURCES]
        subprocess.run(["apt-get", "download", "-q", *packages], cwd=work, check=True, capture_output=True)
        unpacked = work / "unpacked"
        for deb in sorted(work.glob("*.deb")):
            subprocess.run(["dpkg", "-x", str(deb), str(unpacked)], check=True)
            versions[deb.name.split("_")[0]] = _package_version(deb)
        partial = CORPUS_PATH.with_suffix(".tmp")
        with open(partial, "w", encoding="utf-8", newline="") as out:
            out.write(training_docs())
            for _, folder, suffixes in SOURCES:
                for path in sorted((unpacked / folder).rglob("*")):
                    if path.is_file() and path.suffix in suffixes:
                        out.write("\n" + _file_text(path))
        os.replace(partial, CORPUS_PATH)
    VERSIONS_PATH.write_text(json.dumps(versions, indent=1, sort_keys=True) + "\n")
    return CORPUS_PATH


def corpus_versions() -> dict[str, str]:
    """The Debian package versions the large corpus was built from."""
    return dict(json.loads(VERSIONS_PATH.read_text())) if VERSIONS_PATH.exists() else {}
