"""Build the book as PDF: ``_build/pdf/agentrl-en.pdf`` and ``_build/pdf/agentrl-zh.pdf``.

    .venv/bin/python scripts/build_pdf.py              # both languages (``make pdf``)
    .venv/bin/python scripts/build_pdf.py --lang zh    # one
    .venv/bin/python scripts/build_pdf.py --no-sphinx  # reprint the existing singlehtml builds
    .venv/bin/python scripts/build_pdf.py --side-by-side  # after make html (make publish)

What it does, per language:

1. ``sphinx-build -W -b singlehtml`` of ``book/<lang>`` into ``_build/<lang>/singlehtml``, with
   the root ``conf.py``: the same execution cache as the HTML build (``_build/.jupyter_cache``),
   so no chapter executes again once ``make html`` has run, and the same drift gate.
   ``ext/print_layout.py`` adds the title page, the table of contents and the print stylesheet
   (A4, page numbers, a page break before each chapter, wrapped code, fitted figures).
2. Headless Chromium (Debian ``chromium``) opens that page from file:// with every host name
   unresolvable, lets MathJax and mermaid finish within a virtual-time budget, and prints it
   with ``--print-to-pdf`` (PDF outline from the headings, no browser header or footer).
3. Page numbers for the contents: Chromium writes a named destination for every heading the
   contents link to, and ``pdfinfo -dests`` (Debian ``poppler-utils``) reads its page from the
   first print; the numbers are written into a copy of the page (``index.print.html``), which
   is printed again; a print whose headings moved is repeated (at most three prints). The
   numbers are kept in ``_build/pdf/agentrl-<lang>.contents.json``, so when nothing moved since
   the last build, the first print already has the right numbers and is the only one.
4. Checks on the result: no formula left as TeX source (MathJax finished), the mermaid graph
   drawn, every chapter found.

Why this route rather than Sphinx's LaTeX builder with xelatex: it needs no TeX installation
(texlive-xetex and texlive-lang-chinese, about 540 MB), MathJax and mermaid draw the formulas
and the chapter graph exactly as on the site (LaTeX would need mermaid rendered to PDF at build
time), and the callouts, outputs and figures keep the site's styles.

Setup on first use: the Debian packages ``chromium``, ``poppler-utils`` and ``fonts-noto-cjk``
(Chinese glyphs) are installed with apt-get when missing (as root; otherwise the script stops
and names them). Nothing is downloaded from anywhere else.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ext.locale_table import by_folder, folders

ROOT = Path(__file__).resolve().parent.parent

BUILD = ROOT / "_build"
OUT = BUILD / "pdf"
PACKAGES = {  # Debian package -> how to tell it is installed
    "chromium": lambda: shutil.which("chromium") is not None,
    "poppler-utils": lambda: shutil.which("pdftotext") is not None,
    "fonts-noto-cjk": lambda: _has_font("Noto Sans CJK SC"),
}
BUDGET_MS = 60000  # virtual time for MathJax and mermaid; idle time is skipped, so it is cheap
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: no page may fetch anything remote
    "--no-pdf-header-footer", "--generate-pdf-document-outline",
)
TOC_PAGE = '<span class="toc-page">'
TOC_ENTRY = re.compile(
    r'<li class="(?P<kind>toc-chapter|toc-section)"><p>'
    r'<a class="[^"]*toc-link[^"]*" href="#(?P<anchor>print-[^"]+)">'
    r'<span class="toc-title">(?P<title>.*?)</span><span class="toc-dots"></span>'
    r'<span class="toc-page">[^<]*</span></a>', re.DOTALL)
LEFTOVER_TEX = re.compile(r"\\\(.{0,300}?\\\)|\\\[.{0,300}?\\\]|\\begin\{|\$\$", re.DOTALL)


def log(message: str) -> None:
    print(f"build_pdf: {message}", flush=True)


def fail(message: str) -> None:
    sys.exit(f"build_pdf: error: {message}")


# --- setup -----------------------------------------------------------------------------------

def _has_font(family: str) -> bool:
    if shutil.which("fc-list") is None:
        return False
    result = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True)
    return any(family in line for line in result.stdout.splitlines())


def ensure_packages() -> None:
    missing = [name for name, present in PACKAGES.items() if not present()]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        fail(f"missing Debian packages: {' '.join(missing)}; install them "
             f"(apt-get install {' '.join(missing)}) and run again")
    log(f"installing {' '.join(missing)} with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                   check=True, env=env)
    still = [name for name, present in PACKAGES.items() if not present()]
    if still:
        fail(f"apt-get did not provide {' '.join(still)}")


# --- the steps -------------------------------------------------------------------------------

def singlehtml(folder: str) -> Path:
    outdir = BUILD / folder / "singlehtml"
    command = [str(ROOT / ".venv" / "bin" / "sphinx-build"), "-W", "--keep-going", "-q",
               "-c", str(ROOT), "-D", f"language={by_folder(folder).sphinx_language}", "-b", "singlehtml",
               str(ROOT / "book" / folder), str(outdir)]
    if not Path(command[0]).exists():
        command[0] = shutil.which("sphinx-build") or fail("sphinx-build not found (make setup)")
    log(f"{folder}: sphinx-build -b singlehtml -> {outdir.relative_to(ROOT)}")
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        fail(f"the singlehtml build of book/{folder} failed (see above)")
    return outdir


def print_pdf(page: Path, pdf: Path, budget_ms: int) -> None:
    with tempfile.TemporaryDirectory(prefix="agentrl-pdf-") as profile:
        command = ["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                   f"--virtual-time-budget={budget_ms}", f"--print-to-pdf={pdf}", page.as_uri()]
        if pdf.exists():
            pdf.unlink()
        result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if result.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
        fail(f"chromium did not print {page} (exit {result.returncode}):\n{result.stderr[-3000:]}")


def pdf_pages(pdf: Path) -> list[str]:
    """The text of every page."""
    result = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                            text=True, check=True)
    pages = result.stdout.split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages


def toc_entries(page_html: str) -> list[tuple[str, str, str]]:
    """(kind, anchor, heading text) of every contents entry in order (kind: toc-chapter or
    toc-section)."""
    return [(match.group("kind"), match.group("anchor"),
             html.unescape(re.sub(r"<[^>]+>", "", match.group("title"))).strip())
            for match in TOC_ENTRY.finditer(page_html)]


def destinations(pdf: Path) -> dict[str, int]:
    """Named destination -> 1-based page. Chromium writes one for every element id that a link
    of the page points to, so every heading the contents link to has one."""
    result = subprocess.run(["pdfinfo", "-dests", str(pdf)], capture_output=True, text=True,
                            check=True)
    found = {}
    for line in result.stdout.splitlines():
        match = re.match(r'\s*(\d+)\s+\[.*\]\s+"(.*)"\s*$', line)
        if match:
            found.setdefault(match.group(2), int(match.group(1)))
    return found


def locate(entries: list[tuple[str, str, str]], pdf: Path) -> list[int]:
    """The page of each contents entry's heading."""
    pages = destinations(pdf)
    missing = [title for _, anchor, title in entries if anchor not in pages]
    if missing:
        fail(f"{pdf.name}: no destination for the heading(s) {', '.join(map(repr, missing))}")
    return [pages[anchor] for _, anchor, _ in entries]


def with_page_numbers(page_html: str, numbers: list[int], title: str) -> str:
    """The page with the contents' page numbers filled in (0: left empty) and the book's title
    as the document title (Chromium's PDF title)."""
    parts = page_html.split(TOC_PAGE)
    if len(parts) - 1 != len(numbers):
        fail(f"{len(parts) - 1} page-number slots in the contents but {len(numbers)} entries")
    out = [parts[0]]
    for number, rest in zip(numbers, parts[1:]):
        out.append(TOC_PAGE + (str(number) if number else "") + rest[rest.index("</span>"):])
    return re.sub(r"<title>.*?</title>", f"<title>{html.escape(title)}</title>", "".join(out),
                  count=1, flags=re.DOTALL)


def book_title(page_html: str) -> str:
    match = re.search(r'<p class="print-book-title">(.*?)</p>', page_html, re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip() if match else "agentrl"


def check_rendered(pdf: Path, pages: list[str], page_html: str) -> None:
    text = "\n".join(pages)
    leftover = LEFTOVER_TEX.search(text)
    if leftover:
        context = text[max(0, leftover.start() - 80): leftover.end() + 80]
        fail(f"{pdf.name}: a formula is still TeX source (MathJax did not finish; raise "
             f"--budget): ...{context}...")
    if 'class="mermaid"' in page_html and re.search(r"^\s*(flowchart|graph)\s+(TD|TB|LR|BT|RL)\b",
                                                    text, re.MULTILINE):
        fail(f"{pdf.name}: the mermaid graph was printed as source (mermaid did not run)")


def build(folder: str, outdir: Path, budget_ms: int) -> Path:
    """Print ``outdir``'s singlehtml page as the language's PDF and check it."""
    index = outdir / "index.html"
    if not index.is_file():
        fail(f"no singlehtml build at {index.relative_to(ROOT)}; run without --no-sphinx")
    page_html = index.read_text(encoding="utf-8")
    entries = toc_entries(page_html)
    if not entries:
        fail(f"{index.relative_to(ROOT)} has no contents (is ext.print_layout enabled?)")
    title = book_title(page_html)
    printable = outdir / "index.print.html"
    OUT.mkdir(parents=True, exist_ok=True)
    final = OUT / by_folder(folder).pdf_name
    pdf = OUT / f".{final.stem}.printing.pdf"  # renamed to final once it passed the checks
    # Start from the page numbers of the last build when the contents have the same entries:
    # if nothing moved, one print is enough.
    remembered = OUT / f"{final.stem}.contents.json"
    anchors = [anchor for _, anchor, _ in entries]
    numbers = [0] * len(entries)
    if remembered.is_file():
        last = json.loads(remembered.read_text(encoding="utf-8"))
        if last.get("anchors") == anchors:
            numbers = last["pages"]
    for attempt in range(1, 4):
        printable.write_text(with_page_numbers(page_html, numbers, title), encoding="utf-8")
        start = time.perf_counter()
        print_pdf(printable, pdf, budget_ms)
        pages = pdf_pages(pdf)
        log(f"{folder}: print {attempt}: {len(pages)} pages in {time.perf_counter() - start:.1f} s")
        located = locate(entries, pdf)
        if located == numbers:
            break
        numbers = located
        remembered.write_text(json.dumps({"anchors": anchors, "pages": numbers}), encoding="utf-8")
    else:
        fail(f"{final.name}: the page numbers of the contents did not settle after 3 prints")
    check_rendered(final, pages, page_html)
    os.replace(pdf, final)
    chapters = sum(1 for kind, _, _ in entries if kind == "toc-chapter")
    log(f"{folder}: {final.relative_to(ROOT)}: {len(pages)} pages, {chapters} chapters, "
        f"{final.stat().st_size / 1e6:.1f} MB")
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", nargs="+", choices=folders(), default=folders())
    parser.add_argument("--no-sphinx", dest="sphinx", action="store_false",
                        help="print the existing _build/<lang>/singlehtml without rebuilding it")
    parser.add_argument("--budget", type=int, default=BUDGET_MS,
                        help=f"Chromium's virtual-time budget in ms (default {BUDGET_MS})")
    parser.add_argument("--side-by-side", action="store_true",
                        help="build the languages' singlehtml at the same time, not one after "
                             "the other: for when the execution cache holds every chapter, as "
                             "after `make html` (`make publish` passes it)")
    args = parser.parse_args(argv)
    ensure_packages()
    start = time.perf_counter()
    # One language prints while the next one's singlehtml builds and prints: Chromium's print
    # keeps about one core busy, so the two languages take little more than the longer one.
    # The singlehtml builds run one after the other: the first executes any chapter missing
    # from the cache, and the next then finds it there instead of executing it again. With
    # --side-by-side the cache already holds every chapter, so neither executes one, and the
    # second build need not wait for the first: each takes a core (a Sphinx build is one).
    def page(folder: str) -> Path:
        return singlehtml(folder) if args.sphinx else BUILD / folder / "singlehtml"

    with ThreadPoolExecutor(max_workers=len(args.lang)) as pool:
        if args.side_by_side:
            printing = [pool.submit(lambda f: build(f, page(f), args.budget), folder)
                        for folder in args.lang]
        else:
            printing = [pool.submit(build, folder, page(folder), args.budget)
                        for folder in args.lang]
        for future in printing:
            future.result()
    log(f"done in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
