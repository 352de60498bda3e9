"""Assemble the bilingual site from the two per-language HTML builds.

Run from the repository root after both builds (the Makefile's ``html`` target does all three):

    .venv/bin/python scripts/assemble_site.py

It replaces ``_build/site/en`` and ``_build/site/zh`` with copies of ``_build/en/html`` and
``_build/zh/html``, and writes ``_build/site/index.html``, a landing page linking both, from
the template ``ext/templates/site-index.html`` (one ``site-index-choice.html`` per language of
``ext/locale_table.py``) with each book's title taken from the heading of its built start page. Every link is relative, so the site opens from file://. (The per-page
language links are written by ``ext/lang_switch.py`` during the builds.)
"""

from __future__ import annotations

import html
import re
import shutil
import sys
from pathlib import Path
from string import Template

from ext.locale_table import LOCALES

ROOT = Path(__file__).resolve().parent.parent

BUILD = ROOT / "_build"
SITE = BUILD / "site"
TEMPLATES = ROOT / "ext" / "templates"
LANGUAGES = {locale.folder: BUILD / locale.folder / "html" for locale in LOCALES}  # site folder -> build

HEADING = re.compile(r"<h1[^>]*>(.*?)</h1>", re.DOTALL)
PERMALINK = re.compile(r'<a class="headerlink".*?</a>', re.DOTALL)
TAG = re.compile(r"<[^>]+>")


def book_title(index_html: Path) -> str:
    match = HEADING.search(index_html.read_text(encoding="utf-8"))
    if match is None:
        sys.exit(f"assemble_site: no <h1> in {index_html}")
    return html.unescape(TAG.sub("", PERMALINK.sub("", match.group(1)))).strip()


def main() -> int:
    absent = [str(build.relative_to(ROOT)) for build in LANGUAGES.values()
              if not (build / "index.html").is_file()]
    if absent:
        sys.exit(f"assemble_site: no HTML build in {', '.join(absent)}; build both languages first "
                 "(make html)")
    SITE.mkdir(parents=True, exist_ok=True)
    for folder, build in LANGUAGES.items():
        target = SITE / folder
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(build, target, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
    choice = Template((TEMPLATES / "site-index-choice.html").read_text(encoding="utf-8"))
    titles = {locale.folder: book_title(LANGUAGES[locale.folder] / "index.html")
              for locale in LOCALES}
    choices = "".join(choice.substitute(
        folder=locale.folder, hreflang=locale.hreflang, title=html.escape(titles[locale.folder]),
        blurb=html.escape(locale.landing_blurb), go=html.escape(locale.landing_go))
        for locale in LOCALES)
    page = Template((TEMPLATES / "site-index.html").read_text(encoding="utf-8")).substitute(
        title=html.escape(" · ".join(titles.values())), choices=choices)
    (SITE / "index.html").write_text(page, encoding="utf-8")
    pages = sum(1 for _ in SITE.rglob("*.html"))
    print(f"assemble_site: {SITE.relative_to(ROOT)} ({pages} HTML pages in "
          f"{len(LANGUAGES)} languages); open {SITE / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
