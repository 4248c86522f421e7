"""MkDocs hook: the site's home page is README.md, with its links made relative to docs/.

The README sits at the repository root and links the pages as `docs/cli.md`; on the site the
pages sit beside the home page, so those links lose their `docs/` prefix, and the README's link
to the built site (`site/index.html`) becomes the home page itself. Any other relative link in
the README would point outside the site: `mkdocs build --strict` fails on it. This file is not
part of the package and is not a page (mkdocs.yml excludes docs/*.py from the site).
"""

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS_LINK = re.compile(r"\]\(docs/")
SITE_LINK = re.compile(r"\]\(site/index\.html\)")


def home_page(readme: str) -> str:
    """The README's text with its links pointing where the pages are on the site."""
    return SITE_LINK.sub("](index.md)", DOCS_LINK.sub("](", readme))


def on_files(files: Files, config: Any) -> Files:
    """Add index.md, made from README.md (there is no docs/index.md)."""
    files.append(File.generated(config, "index.md", content=home_page(README.read_text(encoding="utf-8"))))
    return files
