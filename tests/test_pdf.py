"""The printed books: ``_build/pdf/agentrl-en.pdf`` and ``_build/pdf/agentrl-zh.pdf``.

Needs the PDFs made by ``make pdf`` (``scripts/build_pdf.py``) after the last change to the
book, and Debian ``poppler-utils``. A missing or stale PDF is a failure that says to run
``make pdf``, never a skip. Checked for each language, from the PDF's text (``pdftotext``), its
named destinations (``pdfinfo -dests``) and its pages rendered to greyscale (``pdftoppm``):

* the title page carries the book's title and the licences; the contents list every chapter
  with the page on which the chapter starts, and each chapter of the toctree starts a page
  with its title;
* every figure of the chapters is there: its caption is in the text and, on that page, a
  region without text holds a drawing (the SVG, drawn as paths);
* the mermaid chapter graph is drawn (all its node labels present, none of its source);
* every formula was typeset (no TeX delimiters left), nothing runs off the page, no page is
  blank, and (Chinese) the fonts are embedded and the Chinese text is extractable.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from ext.chapters import book_order
from ext.locale_table import SOURCE, by_folder, folders
from ext.site_settings import CODE_LICENCE, TEXT_LICENCE, TEXT_LICENCE_URL

PDF_DIR = ROOT / "_build" / "pdf"
LOCALES = folders()
CJK_LOCALES = [folder for folder in LOCALES if by_folder(folder).cjk]
CJK = re.compile(r"[\u4e00-\u9fff]")
# What the PDF is built from: a change to any of these makes the PDF stale.
INPUTS = ("book/{lang}/*.md", "book/{lang}/figures/*.svg", "ext/*.py", "ext/static*/*",
          "ext/templates/*", "conf.py", "scripts/build_pdf.py")
FIGURE = re.compile(r"^```\{figure\}\s+(\S+)\s*\n(?P<options>(?::[^\n]*\n)*)\n?(?P<caption>.*?)^```",
                    re.MULTILINE | re.DOTALL)
MERMAID = re.compile(r"^```\{mermaid\}\s*\n(.*?)^```", re.MULTILINE | re.DOTALL)
LEFTOVER_TEX = re.compile(r"\\\(.{0,300}?\\\)|\\\[.{0,300}?\\\]|\\begin\{|\$\$|\\frac\{|\\mathbb\{",
                          re.DOTALL)
DPI = 50
MARGIN_PT = 30  # text closer than this to a page edge has run off the text block
FIGURE_GAP_PT = 90  # a figure is a text-free band at least this tall ...
FIGURE_INK = 0.01  # ... with at least this share of dark pixels


TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def squash(text: str) -> str:
    """Without whitespace and with plain quotes (Sphinx's smart quotes), for comparing text."""
    return re.sub(r"\s+", "", text).translate(TYPOGRAPHY)


def run(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


# --- the PDFs --------------------------------------------------------------------------------

def pdf_path(lang: str) -> Path:
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext not found: install Debian poppler-utils (make pdf does it)")
    pdf = PDF_DIR / by_folder(lang).pdf_name
    if not pdf.is_file():
        pytest.fail(f"{pdf.relative_to(ROOT)} does not exist: run `make pdf` first")
    inputs = [p for pattern in INPUTS for p in ROOT.glob(pattern.format(lang=lang)) if p.is_file()]
    newer = sorted(p for p in inputs if p.stat().st_mtime > pdf.stat().st_mtime)
    if newer:
        pytest.fail(f"{pdf.relative_to(ROOT)} is older than {newer[0].relative_to(ROOT)} "
                    f"(and {len(newer) - 1} more): run `make pdf` again")
    return pdf


@lru_cache(maxsize=None)
def pages(lang: str) -> tuple[str, ...]:
    text = run("pdftotext", "-enc", "UTF-8", str(pdf_path(lang)), "-").split("\f")
    return tuple(text[:-1] if text and not text[-1].strip() else text)


@lru_cache(maxsize=None)
def layout_pages(lang: str) -> tuple[str, ...]:
    return tuple(run("pdftotext", "-layout", "-enc", "UTF-8", str(pdf_path(lang)), "-").split("\f"))


@lru_cache(maxsize=None)
def destinations(lang: str) -> dict[str, int]:
    found = {}
    for line in run("pdfinfo", "-dests", str(pdf_path(lang))).splitlines():
        match = re.match(r'\s*(\d+)\s+\[.*\]\s+"(.*)"\s*$', line)
        if match:
            found.setdefault(match.group(2), int(match.group(1)))
    return found


@lru_cache(maxsize=None)
def words(lang: str) -> tuple[tuple[float, float, tuple], ...]:
    """Per page: (width, height, ((xMin, yMin, xMax, yMax, text), ...)) in PDF points."""
    out, current = [], None
    for line in run("pdftotext", "-bbox", "-enc", "UTF-8", str(pdf_path(lang)), "-").splitlines():
        page = re.search(r'<page width="([\d.]+)" height="([\d.]+)"', line)
        if page:
            current = (float(page.group(1)), float(page.group(2)), [])
            out.append(current)
            continue
        word = re.search(r'<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" '
                         r'yMax="([-\d.]+)">(.*)</word>', line)
        if word and current is not None:
            current[2].append((*map(float, word.groups()[:4]), html.unescape(word.group(5))))
    return tuple((w, h, tuple(ws)) for w, h, ws in out)


@lru_cache(maxsize=None)
def rendered(lang: str, page: int, dpi: int = DPI) -> tuple[int, int, bytes]:
    """One page in 8-bit grey: (width, height, pixels)."""
    tmp = PDF_DIR / f".test-{lang}-{page}-{dpi}"
    subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-f", str(page), "-l", str(page),
                    "-singlefile", str(pdf_path(lang)), str(tmp)], check=True)
    data = tmp.with_suffix(".pgm").read_bytes()
    tmp.with_suffix(".pgm").unlink()
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    width, height = int(header.group(1)), int(header.group(2))
    return width, height, data[header.end():header.end() + width * height]


def ink(lang: str, page: int, top_pt: float, bottom_pt: float, left_pt: float = MARGIN_PT,
        right_pt: float | None = None) -> float:
    """Share of dark pixels in a band of a page."""
    width, height, pixels = rendered(lang, page)
    scale = DPI / 72
    right_pt = right_pt if right_pt is not None else width / scale - MARGIN_PT
    rows = range(max(0, int(top_pt * scale)), min(height, int(bottom_pt * scale)))
    cols = range(max(0, int(left_pt * scale)), min(width, int(right_pt * scale)))
    if not rows or not cols:
        return 0.0
    dark = sum(1 for y in rows for x in cols if pixels[y * width + x] < 160)
    return dark / (len(rows) * len(cols))


def chapters(lang: str) -> list[tuple[str, str]]:
    """(docname, title) of every chapter in the toctree of book/<lang>/index.md."""
    out = []
    for path in book_order(ROOT / "book" / lang):
        title = next(line[2:] for line in path.read_text(encoding="utf-8").splitlines()
                     if line.startswith("# "))
        out.append((path.stem, title.replace("`", "").strip()))
    return out


def figures(lang: str) -> list[tuple[str, str, str]]:
    """(chapter, image path, caption) of every figure directive in the language's chapters."""
    out = []
    for path in book_order(ROOT / "book" / lang):
        for match in FIGURE.finditer(path.read_text(encoding="utf-8")):
            out.append((path.name, match.group(1), match.group("caption").strip()))
    return out


def plain_run(caption: str) -> str:
    """The longest stretch of a caption without math or code (pdftotext may put those apart
    from the words around them), without whitespace."""
    pieces = re.split(r"\$[^$]*\$|`[^`]*`", caption)
    return max((squash(p) for p in pieces), key=len)


# --- the tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LOCALES)
def test_title_page_and_contents(lang):
    index_title = next(line[2:] for line in (ROOT / "book" / lang / "index.md")
                       .read_text(encoding="utf-8").splitlines() if line.startswith("# "))
    first = pages(lang)
    assert squash(index_title) in squash(first[0]), f"title page of {lang}: {first[0][:300]!r}"
    assert first[1].lstrip().startswith(by_folder(lang).contents), f"page 2 is not the contents: {first[1][:200]!r}"
    dests = destinations(lang)
    first_chapter = min(dests[f"print-{doc}"] for doc, _ in chapters(lang))
    contents = squash("".join(layout_pages(lang)[1:first_chapter - 1]))
    for doc, title in chapters(lang):
        page = dests.get(f"print-{doc}")
        assert page is not None, f"{lang}: no destination for chapter {doc} (not in the contents?)"
        assert squash(title) + str(page) in contents, \
            f"{lang}: the contents do not list {title!r} on page {page}"


@pytest.mark.parametrize("lang", LOCALES)
def test_the_title_page_states_the_licences(lang):
    """The licences of the code and of the text, in the book's language (ext.site_settings)."""
    stated = by_folder(lang).licence.format(text=f"{TEXT_LICENCE} ({TEXT_LICENCE_URL})",
                                            code=CODE_LICENCE)
    assert squash(stated) in squash(pages(lang)[0]), f"title page of {lang}: {pages(lang)[0]!r}"


@pytest.mark.parametrize("lang", LOCALES)
def test_every_chapter_starts_a_page_with_its_title(lang):
    dests = destinations(lang)
    for doc, title in chapters(lang):
        page = dests[f"print-{doc}"]
        lines = [squash(l) for l in pages(lang)[page - 1].splitlines() if l.strip()]
        # The number and the words may come out of the text layer in either order: a CJK
        # font's baseline sits a fraction of a point from the Latin one's.
        assert squash(title) in ("".join(lines[:1]), "".join(lines[:2]),
                                 "".join(reversed(lines[:2]))), \
            f"{lang}: page {page} should open chapter {title!r}; it starts {lines[:2]}"


@pytest.mark.parametrize("lang", LOCALES)
def test_every_figure_is_drawn_above_its_caption(lang):
    found = figures(lang)
    if lang == SOURCE.folder:
        assert found, "no {figure} directive in the English chapters"
    texts = [squash(p) for p in pages(lang)]
    for chapter, image, caption in found:
        want = plain_run(caption)
        hits = [i for i, t in enumerate(texts) if want in t]
        assert hits, f"{lang}/{chapter}: the caption of {image} is not in the PDF ({want[:60]}...)"
        page = hits[0] + 1
        width, height, page_words = words(lang)[page - 1]
        # Text-free bands of the page: a figure (its labels are paths, not text) is one of them.
        spans = sorted((w[1], w[3]) for w in page_words)
        bands, bottom = [], MARGIN_PT
        for top, low in spans:
            if top - bottom >= FIGURE_GAP_PT:
                bands.append((bottom, top))
            bottom = max(bottom, low)
        best = max((ink(lang, page, top, low) for top, low in bands), default=0.0)
        assert best >= FIGURE_INK, (f"{lang}/{chapter}: page {page} has the caption of {image} "
                                    f"but no drawing (text-free bands {bands}, ink {best:.4f})")


@pytest.mark.parametrize("lang", LOCALES)
def test_chapter_graph_is_drawn(lang):
    """Mermaid draws node labels as HTML text, so a drawn graph puts every label's words on one
    page (a label may wrap inside its box, so each word is looked for separately)."""
    sources = [m.group(1) for path in book_order(ROOT / "book" / lang)
               for m in MERMAID.finditer(path.read_text(encoding="utf-8"))]
    assert sources, f"{lang}: no mermaid graph in the chapters"
    texts = [squash(p) for p in pages(lang)]
    for source in sources:
        labels = re.findall(r"\w+\[([^\]]+)\]", source)
        assert labels, f"{lang}: no node labels in the graph source"
        # A label may wrap inside its box, and a Chinese word wraps between any two characters,
        # so CJK words are looked for character by character.
        parts = [piece for label in labels for part in label.strip("\"'").split()
                 for piece in (list(part) if CJK.search(part) else [part])]
        page = max(range(len(texts)), key=lambda i: sum(squash(p) in texts[i] for p in parts))
        missing = [p for p in parts if squash(p) not in texts[page]]
        assert not missing, f"{lang}: page {page + 1} has the graph but not the words {missing}"
        assert ink(lang, page + 1, MARGIN_PT, words(lang)[page][1] - 45) > 0.005, \
            f"{lang}: the graph on page {page + 1} has no edges or boxes"
    for number, page_text in enumerate(pages(lang), start=1):
        assert not re.search(r"\w+\[[^\]\n]+\]\s*-->", page_text), \
            f"{lang}: page {number} shows mermaid source instead of the graph"


@pytest.mark.parametrize("lang", LOCALES)
def test_math_is_typeset(lang):
    for number, page in enumerate(pages(lang), start=1):
        leftover = LEFTOVER_TEX.search(page)
        assert leftover is None, (f"{lang}: page {number} still has TeX source: "
                                  f"{page[max(0, leftover.start() - 60):leftover.end() + 60]!r}")


@pytest.mark.parametrize("lang", LOCALES)
def test_nothing_runs_off_the_page(lang):
    for number, (width, height, page_words) in enumerate(words(lang), start=1):
        outside = [w for w in page_words if w[0] < MARGIN_PT or w[2] > width - MARGIN_PT]
        assert not outside, f"{lang}: page {number}: text beyond the margin: {outside[:5]}"


@pytest.mark.parametrize("lang", LOCALES)
def test_no_page_is_blank(lang):
    for number, (width, height, page_words) in enumerate(words(lang), start=1):
        body = [w for w in page_words if w[3] < height - 45]  # above the page number
        if body:
            continue
        assert ink(lang, number, MARGIN_PT, height - 45) > 0.002, f"{lang}: page {number} is blank"


@pytest.mark.parametrize("lang", CJK_LOCALES)
def test_chinese_text_and_fonts(lang):
    text = "".join(pages(lang))
    assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 20000, "too little Chinese text extracted"
    assert "\ufffd" not in text
    fonts = run("pdffonts", str(pdf_path(lang))).splitlines()[2:]
    not_embedded = [line for line in fonts if line.split()[-5] != "yes"]
    assert not not_embedded, f"fonts not embedded: {not_embedded[:3]}"
    installed = run("fc-list", ":lang=zh-cn", "family")
    assert "Noto Sans CJK SC" in installed, "Debian fonts-noto-cjk is not installed"
