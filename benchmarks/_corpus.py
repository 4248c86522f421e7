"""Texts built from real documentation that Debian ships: the large training corpus, the
validation texts shipped in benchmarks/data/validation/, and a large validation text.

The large training corpus (50 MB and more) is the training part of the Python docs
(`_common.training_docs()`: the held-back 20% stays out) followed by the plain text of:

- python-django-doc (the Django 3.2 documentation, HTML),
- debian-handbook (The Debian Administrator's Handbook, HTML, in all its translations),
- git-doc (the Git manual pages and guides, AsciiDoc text).

The validation texts are what only the report reads (issue 35: tune on one text, report on
another): nothing is optimised on them, so they are built from packages no other benchmark
reads. The shipped ones, one per script, are written by `python benchmarks/_corpus.py` (see
benchmarks/data/README.md); the large one (about 50 MB) is the LibreOffice help in seventeen
languages, built at run time like the training corpus.

The packages are fetched with `apt-get download` and unpacked with `dpkg -x` into a temporary
folder; HTML is reduced to its text with `html.parser` (scripts and styles dropped, a newline at
each block element), other files are taken as they are, files in sorted order, one after the
other. Built texts are kept, with the package versions beside them, in a folder of the temporary
directory, and rebuilt only when missing (about a minute each). Without apt-get (not Debian),
`large_corpus` and `large_validation_text` say so and return None, and the scripts leave the
large rows out.
"""

import gzip
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import regex
from _common import VALIDATION_DIR, training_docs

# outside the repository: a 53 MB file has no place in a source copy (tests/test_packaging.py copies the tree)
OUT_DIR = Path(tempfile.gettempdir()) / "bpe-core-bench-corpus"
CORPUS_PATH = OUT_DIR / "large-training-corpus.txt"
VERSIONS_PATH = OUT_DIR / "large-training-corpus.json"
LARGE_VALIDATION_PATH = OUT_DIR / "large-validation-text.txt"
# (package, folder inside it, file suffixes taken)
SOURCES = (
    ("python-django-doc", "usr/share/doc/python-django-doc/html", (".html",)),
    ("debian-handbook", "usr/share/doc/debian-handbook/html", (".html",)),
    ("git-doc", "usr/share/doc/git-doc", (".txt",)),
)
BLOCK_TAGS = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr", "dt", "dd", "title", "table"}

# The shipped validation texts: (file name, packages, files taken inside them in this order).
# English and Russian: three Debian guides as their packages ship them as plain text; Korean: the
# pages of the LibreOffice help whose letters are mostly Hangul (many pages are untranslated).
GUIDES = (
    "usr/share/developers-reference/{folder}developers-reference.txt.gz",
    "usr/share/doc/{maint_guide}/maint-guide.{language}.txt.gz",
    "usr/share/doc/debian/FAQ/debian-faq.{language}.txt.gz",
)
VALIDATION_SOURCES = {
    "en": ("debian-guides.en.txt.gz", ("developers-reference", "maint-guide", "debian-faq")),
    "ru": ("debian-guides.ru.txt.gz", ("developers-reference-ru", "maint-guide-ru", "debian-faq-ru")),
    "ko": ("libreoffice-help.ko.txt.gz", ("libreoffice-help-ko",)),
}
HANGUL = regex.compile(r"\p{Hangul}")
LETTER = regex.compile(r"\p{L}")
KOREAN_BYTES = 1_000_000  # pages are taken in sorted order until the text reaches this size
# The large validation text: the LibreOffice help of these languages (Korean is a shipped text)
LARGE_VALIDATION_LANGUAGES = (
    "en-us",
    "de",
    "fr",
    "es",
    "it",
    "pt-br",
    "nl",
    "pl",
    "cs",
    "sv",
    "fi",
    "hu",
    "tr",
    "el",
    "ru",
    "ja",
    "zh-cn",
)
LIBREOFFICE_HELP = "usr/share/libreoffice/help"
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")


class _HtmlText(html.parser.HTMLParser):
    """The text of an HTML page: scripts and styles dropped, a newline before each block; with a
    `container` id, only the text inside the element of that id (a help page's body, without its
    navigation)."""

    def __init__(self, container: str | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.container = container
        self.depth = 0 if container else 1  # open elements of the container's kind, inside it

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.container and self.depth == 0:
            if tag == "div" and dict(attrs).get("id") == self.container:
                self.depth = 1
            return
        if self.container and tag == "div":
            self.depth += 1
        if tag in ("script", "style"):
            self.hidden += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self.container and self.depth and tag == "div":
            self.depth -= 1
        if tag in ("script", "style"):
            self.hidden = max(0, self.hidden - 1)

    def handle_data(self, data: str) -> None:
        if self.depth and not self.hidden:
            self.parts.append(data)


def _file_text(path: Path, container: str | None = None) -> str:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".html":
        return text
    parser = _HtmlText(container)
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


def _help_page_text(path: Path) -> str:
    """A LibreOffice help page's body, its runs of blank lines made one blank line."""
    return PARAGRAPH_BREAK.sub("\n\n", _file_text(path, "DisplayArea")).strip() + "\n"


def _package_version(deb: Path) -> str:
    return subprocess.run(
        ["dpkg-deb", "--field", str(deb), "Version"], check=True, capture_output=True, text=True
    ).stdout.strip()


def _unpacked(packages: list[str], work: Path) -> tuple[Path, dict[str, str]]:
    """The packages downloaded and unpacked into `work`/unpacked, and their versions."""
    # apt downloads into the working directory; world-writable so its unprivileged user may write
    os.chmod(work, 0o777)
    subprocess.run(["apt-get", "download", "-q", *packages], cwd=work, check=True, capture_output=True)
    unpacked = work / "unpacked"
    versions = {}
    for deb in sorted(work.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(unpacked)], check=True)
        versions[deb.name.split("_")[0]] = _package_version(deb)
    return unpacked, versions


def _debian_available(what: str) -> bool:
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        print(f"no apt-get/dpkg here: {what} (Debian documentation packages) is left out")
        return False
    return True


def _kept(path: Path, what: str, build: Callable[[Path], tuple[Iterator[str], dict[str, str]]]) -> Path | None:
    """`path`, built once from Debian packages: build(work folder) gives the text's pieces and the
    package versions, kept beside it as JSON."""
    versions_path = path.with_suffix(".json")
    if path.exists() and versions_path.exists():
        return path
    if not _debian_available(what):
        return None
    print(f"building {what} (once, in the temporary directory; about a minute)", flush=True)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bpe-bench-corpus-") as temporary:
        pieces, versions = build(Path(temporary))
        partial = path.with_suffix(".tmp")
        with open(partial, "w", encoding="utf-8", newline="") as out:
            out.writelines(pieces)
        os.replace(partial, path)
    versions_path.write_text(json.dumps(versions, indent=1, sort_keys=True) + "\n")
    return path


def large_corpus() -> Path | None:
    """The path of the large training corpus (built if missing), or None where apt-get is not available."""

    def build(work: Path) -> tuple[Iterator[str], dict[str, str]]:
        unpacked, versions = _unpacked([package for package, _, _ in SOURCES], work)

        def pieces() -> Iterator[str]:
            yield training_docs()
            for _, folder, suffixes in SOURCES:
                for path in sorted((unpacked / folder).rglob("*")):
                    if path.is_file() and path.suffix in suffixes:
                        yield "\n" + _file_text(path)

        return pieces(), versions

    return _kept(CORPUS_PATH, "the large training corpus", build)


def corpus_versions() -> dict[str, str]:
    """The Debian package versions the large corpus was built from."""
    return dict(json.loads(VERSIONS_PATH.read_text())) if VERSIONS_PATH.exists() else {}


def large_validation_text() -> Path | None:
    """The large validation text (built if missing), or None where apt-get is not available: the
    bodies of the LibreOffice help pages in LARGE_VALIDATION_LANGUAGES, language after language,
    each paragraph once (an untranslated page repeats its English paragraphs in every language, and
    a repeat would be text a cache has seen)."""

    def build(work: Path) -> tuple[Iterator[str], dict[str, str]]:
        packages = [f"libreoffice-help-{language}" for language in LARGE_VALIDATION_LANGUAGES]
        unpacked, versions = _unpacked(packages, work)
        folders = {folder.name.lower(): folder for folder in (unpacked / LIBREOFFICE_HELP).iterdir()}
        # built here, not lazily: the unpacked packages go with the temporary folder
        seen: set[bytes] = set()
        pieces = []
        for language in LARGE_VALIDATION_LANGUAGES:
            for path in sorted(folders[language].rglob("*.html")):
                for paragraph in _help_page_text(path).split("\n\n"):
                    digest = hashlib.sha256(paragraph.strip().encode()).digest()
                    if paragraph.strip() and digest not in seen:
                        seen.add(digest)
                        pieces.append(paragraph.rstrip("\n") + "\n\n")
        return iter(pieces), versions

    return _kept(LARGE_VALIDATION_PATH, "the large validation text", build)


def large_validation_versions() -> dict[str, str]:
    path = LARGE_VALIDATION_PATH.with_suffix(".json")
    return dict(json.loads(path.read_text())) if path.exists() else {}


def _guides_text(unpacked: Path, language: str) -> str:
    folder = "" if language == "en" else f"{language}/"
    maint_guide = "maint-guide" if language == "en" else f"maint-guide-{language}"
    paths = [unpacked / path.format(folder=folder, maint_guide=maint_guide, language=language) for path in GUIDES]
    return "\n".join(_file_text(path) for path in paths)


def _korean_help_text(unpacked: Path) -> str:
    pages = []
    size = 0
    for path in sorted((unpacked / LIBREOFFICE_HELP / "ko").rglob("*.html")):
        page = _help_page_text(path)
        letters = len(LETTER.findall(page))
        if letters and len(HANGUL.findall(page)) * 2 >= letters:
            pages.append(page)
            size += len(page.encode("utf-8"))
            if size >= KOREAN_BYTES:
                break
    return "\n".join(pages)


def write_validation_texts() -> None:
    """Write the shipped validation texts and their packages' copyright files into
    benchmarks/data/validation/, and print the package versions for its README."""
    VALIDATION_DIR.mkdir(parents=True, exist_ok=True)
    for language, (name, packages) in VALIDATION_SOURCES.items():
        with tempfile.TemporaryDirectory(prefix="bpe-bench-validation-") as temporary:
            unpacked, versions = _unpacked(list(packages), Path(temporary))
            text = _korean_help_text(unpacked) if language == "ko" else _guides_text(unpacked, language)
            # mtime 0: the same text gives the same bytes
            with open(VALIDATION_DIR / name, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                out.write(text.encode("utf-8"))
            for package in packages:  # one file per document: its translations carry the same one
                document = package.removesuffix(f"-{language}")
                copyright_file = unpacked / "usr/share/doc" / package / "copyright"
                shutil.copyfile(copyright_file, VALIDATION_DIR / f"{document}.copyright")
            sources = ", ".join(f"{package} {version}" for package, version in versions.items())
            print(f"{name}: {len(text.encode('utf-8')):,} bytes from {sources}")


if __name__ == "__main__":
    if sys.argv[1:] != ["validation"]:
        raise SystemExit("usage: python benchmarks/_corpus.py validation   (rewrites benchmarks/data/validation/)")
    write_validation_texts()
