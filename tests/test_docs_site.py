"""The documentation site: mkdocs.yml builds docs/ with `mkdocs build --strict`, and its pages work
in a browser with nothing from the internet.

The site is built here into a temporary folder, exactly as `make docs` builds it into site/
(--strict: a broken link, anchor or API cross-reference fails the build), then served from that
folder by a local http.server and opened in headless Chromium (tests/helpers/browser.py): the
home page (README.md), the Python API guide, the API reference generated from the docstrings,
the inspect page with its screenshots and the benchmarks with their plots. Each must load with
no console error, ask for nothing but the local server, show every image it has, and every
internal link on it must lead to a built page and, for a `#fragment`, to an element with that
id. The built HTML must not load anything from another host either (links to other sites that
a reader follows are fine), and the home page opened straight from disk (`site/index.html`, as
the README says) must load with no console error too.
"""

import http.server
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import cache, partial
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from helpers.browser import Browser
from helpers.paths import PROJECT_ROOT

PAGES = ["index.html", "api.html", "reference.html", "inspect.html", "benchmarks.html"]
# elements whose URL the browser loads by itself (an <a href> only when followed)
LOADED = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data)=\"(https?:)?//"
)
# where a stylesheet or script asks for another file
CSS_URL = re.compile(r"(?:@import\s+|url\()\s*[\"']?(?:https?:)?//")
LINKS = """Array.from(document.querySelectorAll('a[href], link[href], script[src], img[src]'))
  .map(function(e){ return e.href || e.src; })"""
SEARCH = """(function(){ var input = document.querySelector('input[data-md-component=search-query]');
  input.focus(); input.value = 'QUERY'; input.dispatchEvent(new Event('input', {bubbles: true})); })()"""
SEARCH_RESULTS = "document.querySelectorAll('.md-search-result__item').length"
BROKEN_IMAGES = """Array.from(document.images)
  .filter(function(i){ return !(i.complete && i.naturalWidth > 0); }).map(function(i){ return i.src; })"""


class Anchors(HTMLParser):
    """The ids (and old-style names) of one page's elements: where a `#fragment` may lead."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value or "")


@cache
def anchors(page: Path) -> set[str]:
    parser = Anchors()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.ids


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it, here in a temporary folder."""
    folder = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=PROJECT_ROOT,
        # no bytecode of docs/hooks.py left in the tree; no banner about mkdocs 2 on stderr
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return folder


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    """The base URL of the site, served from its folder on a free local port."""
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(site))) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
        httpd.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as opened:
        yield opened


def built_file(site: Path, base: str, url: str) -> Path | None:
    """The built file a URL of the local server names (a folder: its index.html), if it is one."""
    path = unquote(urlsplit(url).path).removeprefix(urlsplit(base).path)
    target = site / path
    if path == "" or path.endswith("/"):
        target = target / "index.html"
    return target if target.is_file() else None


def test_the_site_has_a_page_for_every_markdown_page_and_the_home_page_is_the_readme(site: Path) -> None:
    pages = {path.with_suffix(".html").name for path in (PROJECT_ROOT / "docs").glob("*.md")}
    assert pages | {"index.html"} <= {path.name for path in site.glob("*.html")}
    home = (site / "index.html").read_text(encoding="utf-8")
    first_heading = next(
        line for line in (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("## ")
    )
    assert first_heading.removeprefix("## ") in home


def test_the_api_reference_is_generated_from_the_docstrings(site: Path) -> None:
    reference = anchors(site / "reference.html")
    for name in ("bpe_core.training.train", "bpe_core.loading.load", "bpe_core.tokenizer.Tokenizer.encode"):
        assert name in reference, f"the API reference has no entry for {name}"


def test_no_built_file_loads_anything_from_another_host(site: Path) -> None:
    loading = [
        str(path.relative_to(site))
        for path in site.rglob("*")
        if (path.suffix == ".html" and LOADED.search(path.read_text(encoding="utf-8")))
        or (path.suffix == ".css" and CSS_URL.search(path.read_text(encoding="utf-8")))
    ]
    assert not loading, f"these files load something from another host: {loading}"


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_with_no_error_and_every_internal_link_resolves(
    page: str, site: Path, server: str, browser: Browser
) -> None:
    browser.open(server + page)
    assert browser.errors() == [], f"{page}: console errors"
    elsewhere = [
        url for url in browser.requests() if urlsplit(url).scheme in ("http", "https") and not url.startswith(server)
    ]
    assert elsewhere == [], f"{page} asked another host for {elsewhere}"
    assert browser.evaluate(BROKEN_IMAGES) == [], f"{page}: images that did not load"
    links = [url for url in browser.evaluate(LINKS) if url.startswith(server)]
    assert links, f"{page} has no internal link"
    broken = []
    for url in links:
        target = built_file(site, server, url)
        fragment = unquote(urlsplit(url).fragment)
        if target is None or (fragment and target.suffix == ".html" and fragment not in anchors(target)):
            broken.append(url.removeprefix(server))
    assert broken == [], f"{page}: internal links that lead nowhere"


def test_the_home_page_opened_from_disk_has_no_error_and_finds_pages(site: Path, browser: Browser) -> None:
    """As the README says to open it: site/index.html from the file system, where search runs in
    the Web Worker shim the site ships (a browser refuses a plain worker from file://)."""
    browser.open(site / "index.html")
    browser.evaluate(SEARCH.replace("QUERY", "tokenizer"))
    deadline = time.monotonic() + 20
    while not browser.evaluate(SEARCH_RESULTS) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert browser.evaluate(SEARCH_RESULTS) > 0, "search found nothing for 'tokenizer'"
    assert browser.errors() == []
