"""Assemble the bilingual site from the two per-language HTML builds.

Run from the repository root after both builds (the Makefile's ``html`` target does all three):

    .venv/bin/python scripts/assemble_site.py
    .venv/bin/python scripts/assemble_site.py --publish   # the tree the forge serves (make publish)

It replaces ``_build/site/en`` and ``_build/site/zh`` with copies of ``_build/en/html`` and
``_build/zh/html``, and writes ``_build/site/index.html``, a landing page linking both, from
the template ``ext/templates/site-index.html`` (one ``site-index-choice.html`` per language of
``ext/locale_table.py``) with each book's title taken from the heading of its built start page. Every link is relative, so the site opens from file://. (The per-page
language links are written by ``ext/lang_switch.py`` during the builds.)

For the hosted site it also writes, at the root, the source language's ``404.html`` (its links
are absolute under the site's path, see ``ext/hosting.py``), an ``llms.txt`` naming each
language's ``llms.txt`` and ``llms-full.txt``, and a ``sitemap.xml`` index of the languages'
sitemaps; the landing page gets the canonical link, the link preview and the licences. The
addresses come from ``ext/site_settings.py``. Each language's PDF (``make pdf``) is copied into
its folder (``_build/site/en/agentrl-en.pdf``), where every page's PDF link points.

``--publish`` makes the tree the publishing workflow uploads (``.github/workflows/publish.yml``):
both PDFs are required, and the tree is checked before it is declared ready: every language
with its start page, its PDF, its sitemap, ``llms.txt``, ``llms-full.txt`` and ``404.html``;
every chapter's notebook; no absolute path of the build machine in any text file; every
internal link and resource of every page resolving to a file (and its ``#fragment`` to an
``id`` there), the 404 pages' absolute links resolved under the site's path. Each problem is
printed as ``path: message`` and the exit status is 1.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from string import Template
from urllib.parse import unquote, urlsplit
from xml.sax.saxutils import escape as xml_escape

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the scripts beside this one
from build_pdf import OUT as PDF_DIR  # noqa: E402

from ext import site_settings as site  # noqa: E402
from ext.chapter_header import FOLDER as NOTEBOOKS  # noqa: E402
from ext.chapters import book_order, read_chapter  # noqa: E402
from ext.hosting import licence_html  # noqa: E402
from ext.locale_table import LOCALES, SOURCE  # noqa: E402

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


NOT_FOUND = "404.html"  # ext.hosting: sphinx-notfound-page's page name
PER_LANGUAGE = ("index.html", "sitemap.xml", "llms.txt", "llms-full.txt", NOT_FOUND)
TEXT_FILES = (".html", ".js", ".css", ".txt", ".xml", ".ipynb", ".json", ".svg", ".map")
# A path of the machine that built the site: the repository's, the home folder's, a file URI.
# (The book's own text may name paths such as /tmp/...: only the build's are a leak.)
LOCAL_PATH = re.compile("|".join(re.escape(path) for path in sorted(
    {str(ROOT), str(Path.home()).rstrip("/") + "/", "file:///"}, key=len, reverse=True)))
LINKED = {"a": "href", "link": "href", "script": "src", "img": "src", "source": "src",
          "iframe": "src"}


# --- the hosted site's root files --------------------------------------------------------------

def landing_head(titles: dict[str, str]) -> str:
    """The landing page's canonical link and link preview."""
    title = html.escape(" · ".join(titles.values()), quote=True)
    blurb = html.escape(SOURCE.landing_blurb, quote=True)
    url = html.escape(site.base_url(), quote=True)
    return (f'<link rel="canonical" href="{url}">\n'
            f'  <meta name="description" content="{blurb}">\n'
            f'  <meta property="og:title" content="{title}">\n'
            f'  <meta property="og:type" content="website">\n'
            f'  <meta property="og:url" content="{url}">\n'
            f'  <meta property="og:description" content="{blurb}">')


def landing_footer() -> str:
    return "\n".join(f'  <p lang="{locale.hreflang}">{licence_html(locale.licence)}</p>'
                      for locale in LOCALES)


def llms_index(titles: dict[str, str]) -> str:
    """The site's ``llms.txt``: the book in each language, by its ``llms.txt`` and full text."""
    lines = [f"# {' · '.join(titles.values())}", "", f"> {SOURCE.landing_blurb}", ""]
    for locale in LOCALES:
        url = site.site_url(locale)
        lines += [f"## {locale.label}", "",
                  f"- [{titles[locale.folder]}]({url}llms.txt): every page, linked to its "
                  "Markdown source",
                  f"- [{titles[locale.folder]}, full text]({url}llms-full.txt): every page's "
                  "source in one file, code cells and their outputs included",
                  f"- [PDF]({url}{locale.pdf_name})", ""]
    return "\n".join(lines)


def sitemap_index() -> str:
    entries = "".join(f"<sitemap><loc>{xml_escape(site.site_url(locale))}sitemap.xml</loc>"
                      "</sitemap>" for locale in LOCALES)
    return ('<?xml version="1.0" encoding="utf-8"?>\n<sitemapindex '
            f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>\n')


def copy_pdfs(required: bool) -> list[str]:
    """Each language's PDF into its folder; the names of those missing."""
    missing = []
    for locale in LOCALES:
        pdf = PDF_DIR / locale.pdf_name
        if pdf.is_file():
            shutil.copyfile(pdf, SITE / locale.folder / locale.pdf_name)
        else:
            missing.append(str(pdf.relative_to(ROOT)))
    if missing and required:
        sys.exit(f"assemble_site: no PDF at {', '.join(missing)}: run `make pdf` first")
    return missing


# --- the check of the publishable tree ---------------------------------------------------------

class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("id", "name"):
            if attrs.get(name):
                self.ids.add(attrs[name])
        if tag in LINKED and attrs.get(LINKED[tag]) and attrs.get("rel") not in (
                "canonical", "alternate"):
            self.links.append(attrs[LINKED[tag]])


@cache
def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def _target(site_dir: Path, page: Path, href: str) -> tuple[Path, str] | None:
    """The file and fragment an internal link points to; None for an external link."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None  # http(s), mailto, data, ...: not part of the tree
    path = unquote(parts.path)
    if path.startswith("/"):  # the 404 pages: absolute under the site's path
        prefix = site.site_path()
        if not path.startswith(prefix):
            return site_dir / "__outside_the_site__" / path.lstrip("/"), parts.fragment
        target = site_dir / path[len(prefix):]
    else:
        target = page.parent / path if path else page
    if target.is_dir():
        target = target / "index.html"
    return target, parts.fragment


def tree_problems(site_dir: Path) -> list[str]:
    """Everything that keeps ``site_dir`` from being published, as ``path: message``."""
    problems = []
    root = site_dir.resolve()

    def where(path: Path) -> str:
        return str(path.relative_to(site_dir))

    for name in ("index.html", NOT_FOUND, "llms.txt", "sitemap.xml"):
        if not (site_dir / name).is_file():
            problems.append(f"{name}: missing")
    for locale in LOCALES:
        for name in (*PER_LANGUAGE, locale.pdf_name):
            if not (site_dir / locale.folder / name).is_file():
                problems.append(f"{locale.folder}/{name}: missing")
        for chapter in book_order(ROOT / "book" / locale.folder):
            notebook = site_dir / locale.folder / NOTEBOOKS / f"{chapter.stem}.ipynb"
            if read_chapter(chapter).cells and not notebook.is_file():
                problems.append(f"{where(notebook)}: missing (the notebook of {chapter.name})")
    for path in sorted(site_dir.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_FILES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        local = LOCAL_PATH.search(text)
        if local:
            problems.append(f"{where(path)}: an absolute local path: {local.group(0)!r}")
        if path.suffix != ".html" or "_static" in path.relative_to(site_dir).parts:
            continue  # not a page (the themes leave template fragments in _static)
        for href in _parse(path).links:
            found = _target(site_dir, path, href)
            if found is None:
                continue
            target, fragment = found
            if not target.resolve().is_relative_to(root) or not target.is_file():
                problems.append(f"{where(path)}: {href} leads nowhere")
            elif fragment and target.suffix == ".html" and fragment not in _parse(target).ids:
                problems.append(f"{where(path)}: {href}: no id {fragment!r} in {where(target)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--publish", action="store_true",
                        help="require both PDFs and check the tree the forge will serve")
    args = parser.parse_args(argv)
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
        title=html.escape(" · ".join(titles.values())), choices=choices,
        head=landing_head(titles), footer=landing_footer())
    (SITE / "index.html").write_text(page, encoding="utf-8")
    shutil.copyfile(SITE / SOURCE.folder / NOT_FOUND, SITE / NOT_FOUND)
    (SITE / "llms.txt").write_text(llms_index(titles), encoding="utf-8")
    (SITE / "sitemap.xml").write_text(sitemap_index(), encoding="utf-8")
    missing = copy_pdfs(required=args.publish)
    pages = sum(1 for _ in SITE.rglob("*.html"))
    print(f"assemble_site: {SITE.relative_to(ROOT)} ({pages} HTML pages in "
          f"{len(LANGUAGES)} languages); open {SITE / 'index.html'}")
    if missing:
        print(f"assemble_site: no PDF yet ({', '.join(missing)}): the pages' PDF links lead "
              "nowhere until `make pdf` and `make publish`")
    if args.publish:
        problems = tree_problems(SITE)
        for problem in problems:
            print(f"{SITE.relative_to(ROOT)}/{problem}")
        if problems:
            print(f"assemble_site: {len(problems)} problem(s): not publishable", file=sys.stderr)
            return 1
        print(f"assemble_site: {SITE.relative_to(ROOT)} is ready to publish "
              f"({site.base_url()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
