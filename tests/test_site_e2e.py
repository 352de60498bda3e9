"""The built site as a reader sees it: Playwright driving Debian's chromium, from file://, offline.

Needs the assembled site at ``_build/site`` (``make html``; ``make test`` builds it first),
Debian's ``chromium`` and the ``playwright`` package (the test extras). Playwright launches the
system browser (``executable_path``); it never downloads one. Every host name resolves nowhere,
and every request a page makes is recorded: one over http(s) is a failure. A missing site or
browser is a failure, never a skip.

Checked in every language: MathJax typeset every formula of chapter 0 with its own fonts; the
chapter graph is drawn whole at a desktop (1400 x 1000) and a phone (390 x 844) window, every
node inside the text column and the window, its labels at a readable size, with no blank band
around it (screenshots go to ``_build/screenshots/``); clicking the language switch of a page
lands on the same page in the other language; typing a word of chapter 0 into the search box
finds chapter 0; a chapter page shows its execution record and a notebook link, and its code
cells a working copy button; no page of the book scrolls sideways on a phone, and a long inline
path breaks only where ``ext.inline_code`` allows; and no HTML or CSS file references anything
remote.

The hosted site (``ext.hosting``, addresses from ``ext.site_settings``), in every language: a
sitemap of its pages, ``llms.txt`` and ``llms-full.txt`` (chapter 0's code and recorded output
in it), a 404 page that works when served under the site's path (a local HTTP server answering
a missing address with it, as the forge does), a canonical link and a link preview on every
page (the chapter's own first paragraph as its description), a link to the PDF of the page's
language, "edit this page" and "report a problem" on the forge, and the licences in the
footer; the header shows one search field at desktop and phone width (screenshots
``_build/screenshots/<lang>-<width>-header.png``).
"""

from __future__ import annotations

import html
import json
import mimetypes
import re
import shutil
import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parent.parent

from ext import site_settings
from ext.chapter_header import FOLDER
from ext.chapters import read_chapter
from ext.locale_table import SOURCE, by_folder, folders

SITE = ROOT / "_build" / "site"
SCREENSHOTS = ROOT / "_build" / "screenshots"
LOCALES = folders()
CHAPTER = "00-notation.html"  # has formulas and the mermaid chapter graph
CHAPTER_SOURCE = "00-notation.md"
VIEWPORTS = {"desktop": {"width": 1400, "height": 1000}, "phone": {"width": 390, "height": 844}}
BROWSERS = ("chromium", "chromium-browser")  # Debian's package
ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves: the site is offline
)
TIMEOUT_MS = 30000
NOT_FOUND = "404.html"  # ext.hosting (sphinx-notfound-page)
READABLE_PX = 10  # smallest rendered size of a graph label a reader can read
BLANK_PX = 80  # largest gap allowed between the graph and the text around it
CJK = re.compile(r"[\u4e00-\u9fff]")
# Sphinx's search page fetches each result page for a text snippet; browsers refuse fetch() from
# file://, so the results are listed without snippets there (served over http they have them).
SUMMARY_FETCH = re.compile(r"Access to fetch at 'file:|Failed to load resource: net::ERR_FAILED"
                           r"|Failed to fetch")
# pydata-sphinx-theme logs its fallback to the automatic light/dark mode as an error.
THEME_MODE = re.compile(r"Got invalid theme mode")
RAW_TEX = re.compile(r"\\\(|\\\[|(?<![\w$])\$[^\s$][^$]*?\$(?![\w$])")
MERMAID_SOURCE = re.compile(r"^```\{mermaid\}\s*\n(.*?)^```", re.MULTILINE | re.DOTALL)


# --- the browser ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site() -> Path:
    needed = [SITE / "index.html", *(SITE / locale / CHAPTER for locale in LOCALES)]
    absent = [str(p.relative_to(ROOT)) for p in needed if not p.is_file()]
    if absent:
        pytest.fail(f"no built site ({', '.join(absent)} missing): run `make html` first "
                    "(it builds every language and assembles _build/site)", pytrace=False)
    return SITE


@pytest.fixture(scope="module")
def browser():
    executable = next(filter(None, map(shutil.which, BROWSERS)), None)
    if executable is None:
        pytest.fail("Debian's chromium is needed: apt-get install -y chromium", pytrace=False)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=list(ARGS))
        yield launched
        launched.close()


class Visit:
    """A page opened in its own browser context, with what it asked the network for."""

    def __init__(self, browser: Browser, url: str, viewport: dict):
        self.context = browser.new_context(viewport=viewport)
        self.page: Page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.remote: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", self._request)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", self._console)
        self.page.goto(url, wait_until="load")

    def _request(self, request) -> None:
        if request.url.startswith(("http:", "https:")):
            self.remote.append(request.url)

    def _console(self, message) -> None:
        if message.type == "error" and not THEME_MODE.search(message.text):
            self.errors.append(message.text)

    def assert_clean(self, harmless: re.Pattern | None = None) -> None:
        errors = [e for e in self.errors if not (harmless and harmless.search(e))]
        assert not errors, f"script errors on {self.page.url}:\n" + "\n".join(errors)
        assert not self.remote, f"{self.page.url} asked the network for: {self.remote}"

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser):
    opened = []

    def open_page(url: str, viewport: str = "desktop") -> Visit:
        opened.append(Visit(browser, url, VIEWPORTS[viewport]))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()


def chapter_url(site: Path, locale: str, page: str = CHAPTER) -> str:
    return (site / locale / page).as_uri()


def wait_for_mathjax(page: Page) -> None:
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")


def wait_for_mermaid(page: Page) -> None:
    page.wait_for_selector("pre.mermaid[data-processed] svg g.node", state="attached")
    page.evaluate("() => document.fonts.ready.then(() => new Promise(requestAnimationFrame))")


# --- MathJax -------------------------------------------------------------------------------------

TEX_LEFT = """() => {
  const formulas = [...document.querySelectorAll('.math')];
  const raw = formulas.filter((f) => !f.querySelector('mjx-container'))
                      .map((f) => f.textContent.slice(0, 60));
  const prose = [...document.querySelectorAll('article p')].map((p) => {
    const copy = p.cloneNode(true);
    copy.querySelectorAll('code, pre, kbd, mjx-container, script, style').forEach((e) => e.remove());
    return copy.textContent;
  });
  return {count: formulas.length, raw, prose};
}"""

MATHJAX_FONTS = """() => document.fonts.ready.then(() => [...document.fonts]
  .filter((face) => face.family.includes('MJX'))
  .map((face) => [face.family.replace(/"/g, ''), face.status]))"""


@pytest.mark.parametrize("locale", LOCALES)
def test_chapter_formulas_are_typeset_by_mathjax(site, visit, locale):
    opened = visit(chapter_url(site, locale))
    wait_for_mathjax(opened.page)
    found = opened.page.evaluate(TEX_LEFT)
    opened.assert_clean()
    assert found["count"], f"{locale}/{CHAPTER} has no formula to check"
    assert not found["raw"], f"{len(found['raw'])} formulas left as TeX, e.g. {found['raw'][:3]}"
    leftovers = [text for text in found["prose"] if RAW_TEX.search(text)]
    assert not leftovers, f"raw TeX in a paragraph: {leftovers[0][:120]!r}"


def test_mathjax_fonts_load_offline(site, visit):
    opened = visit(chapter_url(site, LOCALES[0]))
    wait_for_mathjax(opened.page)
    faces = dict(opened.page.evaluate(MATHJAX_FONTS))
    opened.assert_clean()
    loaded = [family for family, status in faces.items() if status == "loaded"]
    assert loaded, f"no MathJax font loaded from file:// (font faces: {faces or 'none'})"
    assert "error" not in faces.values(), f"MathJax fonts failed to load: {faces}"


# --- the chapter graph ---------------------------------------------------------------------------

GRAPH_LAYOUT = """() => {
  const pre = document.querySelector('pre.mermaid');
  const svg = pre.querySelector('svg');
  const column = pre.closest('article').getBoundingClientRect();
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const nodes = [...svg.querySelectorAll('g.node')].map((node) => {
    const label = node.querySelector('.nodeLabel') || node;
    const scale = node.getScreenCTM().a;  // user units -> screen px, whatever scaled the svg
    return {text: node.textContent.trim(), box: box(node),
            px: parseFloat(getComputedStyle(label).fontSize) * scale};
  });
  // The theme's sticky header hides what scrolls under it.
  const header = Math.max(0, ...[...document.querySelectorAll('body *')].filter((e) => {
    const style = getComputedStyle(e);
    return ['sticky', 'fixed'].includes(style.position) && style.display !== 'none';
  }).map((e) => e.getBoundingClientRect())
    .filter((r) => r.top <= 1 && r.height > 0 && r.height < 200 && r.width > innerWidth / 2)
    .map((r) => r.bottom));
  const before = pre.previousElementSibling, after = pre.nextElementSibling;
  return {nodes, column: box(pre.closest('article')), svg: box(svg), header,
          before: before ? box(before) : null, after: after ? box(after) : null,
          window: {width: window.innerWidth, height: window.innerHeight},
          overflow: pre.scrollWidth - pre.clientWidth};
}"""


def graph_node_count(locale: str) -> int:
    source = MERMAID_SOURCE.search((ROOT / "book" / locale / CHAPTER_SOURCE).read_text("utf-8"))
    assert source, f"book/{locale}/{CHAPTER_SOURCE} has no mermaid graph"
    return len(set(re.findall(r"\b(\w+)\[", source.group(1))))


def inside(box: dict, outer: dict, slack: float = 1.0) -> bool:
    return (box["left"] >= outer["left"] - slack and box["right"] <= outer["right"] + slack
            and box["top"] >= outer["top"] - slack and box["bottom"] <= outer["bottom"] + slack)


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("locale", LOCALES)
def test_chapter_graph_is_whole_and_readable(site, visit, locale, viewport):
    opened = visit(chapter_url(site, locale), viewport)
    wait_for_mermaid(opened.page)
    opened.page.evaluate("() => document.querySelector('pre.mermaid svg').scrollIntoView({block: 'end'})")
    layout = opened.page.evaluate(GRAPH_LAYOUT)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    opened.page.screenshot(path=str(SCREENSHOTS / f"{locale}-{viewport}.png"))
    opened.assert_clean()

    nodes = layout["nodes"]
    assert len(nodes) == graph_node_count(locale), f"{len(nodes)} nodes drawn: {nodes[:3]}"
    visible = {"left": 0, "top": layout["header"], "right": layout["window"]["width"],
               "bottom": layout["window"]["height"]}
    outside = [n["text"] for n in nodes
               if not (inside(n["box"], layout["column"]) and inside(n["box"], visible))]
    assert not outside, (f"{viewport}: nodes outside the column or the window: {outside} "
                         f"(column {layout['column']}, window {layout['window']})")
    assert layout["overflow"] <= 1, f"{viewport}: the graph scrolls sideways by {layout['overflow']} px"
    small = [(n["text"], round(n["px"], 1)) for n in nodes if n["px"] < READABLE_PX]
    assert not small, f"{viewport}: labels drawn below {READABLE_PX} px: {small}"
    top = min(n["box"]["top"] for n in nodes)
    bottom = max(n["box"]["bottom"] for n in nodes)
    if layout["before"]:
        gap = top - layout["before"]["bottom"]
        assert gap < BLANK_PX, f"{viewport}: {gap:.0f} px of blank space above the graph"
    if layout["after"]:
        gap = layout["after"]["top"] - bottom
        assert gap < BLANK_PX, f"{viewport}: {gap:.0f} px of blank space below the graph"


# --- a page's HTML, read without a browser -------------------------------------------------------

REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"""url\(\s*['"]?\s*((?:https?:)?//[^'")\s]*)""", re.IGNORECASE)
CSS_IMPORT = re.compile(r"""@import\s+['"]\s*((?:https?:)?//[^'"]*)""", re.IGNORECASE)
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
LOADED = {  # tag -> attributes whose URL the browser fetches by itself
    "script": ("src",), "link": ("href",), "img": ("src", "srcset"), "source": ("src", "srcset"),
    "iframe": ("src",), "embed": ("src",), "object": ("data",), "audio": ("src",),
    "video": ("src", "poster"), "track": ("src",), "image": ("href", "xlink:href"),
}


class _Page(HTMLParser):
    """What the tests read from an HTML file without a browser: its language links, whether it
    has a mermaid block, the scripts it loads, every remote URL the browser would fetch by
    itself, and its inline CSS."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.switches: list[str] = []
        self.scripts: list[str] = []
        self.mermaid = False
        self.remote: list[str] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        classes = attrs.get("class", "").split()
        if tag == "a" and "lang-switch" in classes:
            self.switches.append(attrs.get("href", ""))
        elif tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        elif tag == "pre" and "mermaid" in classes:
            self.mermaid = True
        if not (tag == "link" and attrs.get("rel") in ("canonical", "alternate")):
            self.remote += [f"<{tag} {a}={attrs[a]}>" for a in LOADED.get(tag, ())
                            if any(REMOTE.match(part) for part in attrs.get(a, "").split(","))]
        self.css.append(attrs.get("style", ""))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.css.append(data)


def read_page(path: Path) -> _Page:
    parser = _Page()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


# --- the language switch -------------------------------------------------------------------------

def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html")
                  if not {"_static", "_sources", "_images"} & set(p.relative_to(site).parts))


def other_locale(locale: str) -> str:
    return next(other for other in LOCALES if other != locale)


def resolve(page: Path, href: str) -> Path:
    return (page.parent / unquote(urlsplit(href).path)).resolve()


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page_links_to_its_other_language(site, locale):
    other = other_locale(locale)
    checked = 0
    for path in pages(site / locale):
        if path.name == NOT_FOUND:
            continue  # absolute under the site's path: test_the_404_page_works_under_the_sites_path
        switches = read_page(path).switches
        where = path.relative_to(site)
        assert len(switches) == 1, f"{where}: {len(switches)} language links, expected 1"
        href = switches[0]
        assert not urlsplit(href).scheme and not href.startswith("/"), f"{where}: {href}"
        target = resolve(path, href)
        assert target.is_file(), f"{where}: language link {href} leads nowhere"
        assert target.is_relative_to((site / other).resolve()), f"{where}: {href}"
        twin = site / other / path.relative_to(site / locale)
        if twin.is_file():
            assert target == twin.resolve(), f"{where}: links {href}, not its translation"
        checked += 1
    assert checked, f"no pages in {site / locale}"


@pytest.mark.parametrize("page", [CHAPTER, "index.html", "reference.html"])
@pytest.mark.parametrize("locale", LOCALES)
def test_clicking_the_language_switch_lands_on_the_same_page(site, visit, locale, page):
    other = other_locale(locale)
    opened = visit(chapter_url(site, locale, page))
    switch = opened.page.locator("a.lang-switch")
    assert switch.count() == 1 and switch.is_visible(), f"{locale}/{page}: no visible language link"
    assert switch.inner_text().strip() == by_folder(other).label
    switch.click()
    opened.page.wait_for_load_state("load")
    assert opened.page.url == chapter_url(site, other, page), opened.page.url
    assert opened.page.locator("html").get_attribute("lang").startswith(other[:2])
    opened.assert_clean()


def test_landing_page_links_every_language(site, visit):
    opened = visit((site / "index.html").as_uri())
    for locale in LOCALES:
        link = opened.page.locator(f'a.choice[href="{locale}/index.html"]')
        assert link.count() == 1, f"the landing page does not link {locale}/index.html"
    opened.page.locator(f'a.choice[href="{LOCALES[-1]}/index.html"]').click()
    opened.page.wait_for_load_state("load")
    assert opened.page.url == chapter_url(site, LOCALES[-1], "index.html")
    opened.assert_clean()


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page_with_a_graph_loads_mermaid_locally(site, locale):
    for path in pages(site / locale):
        links = read_page(path)
        if links.mermaid:
            assert any(re.search(r"_static/offline/mermaid-[0-9a-f]+/mermaid\.min\.js", s)
                       for s in links.scripts), f"{path.relative_to(site)} does not load mermaid"


# --- search --------------------------------------------------------------------------------------

def chapter_search_term(site: Path, locale: str) -> str:
    """A word the search index maps to chapter 0 (a CJK one for a CJK locale), title words first."""
    text = (site / locale / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1: text.rindex(")")])
    chapter = index["docnames"].index(CHAPTER.removesuffix(".html"))
    cjk = by_folder(locale).cjk

    def words(table: dict) -> list[str]:
        found = [w for w, docs in table.items()
                 if chapter in (docs if isinstance(docs, list) else [docs])
                 and len(w) >= 2 and bool(CJK.search(w)) == cjk and w.isalpha()]
        return sorted(found, key=lambda w: (-len(w), w))

    candidates = words(index["titleterms"]) or words(index["terms"])
    assert candidates, f"the {locale} search index has no suitable word for {CHAPTER}"
    return candidates[0]


FOUND = """(chapter) => [...document.querySelectorAll('ul.search li a')]
  .some((a) => a.getAttribute('href').split('#')[0].split('?')[0] === chapter)"""


@pytest.mark.parametrize("locale", LOCALES)
def test_typing_into_search_finds_chapter_0(site, visit, locale):
    term = chapter_search_term(site, locale)
    opened = visit(chapter_url(site, locale))
    opened.page.locator("button.search-button__button").locator("visible=true").first.click()
    box = opened.page.locator("#pst-search-dialog input[name=q]")
    box.fill(term)
    box.press("Enter")
    opened.page.wait_for_url("**/search.html?q=*")
    try:
        opened.page.wait_for_function(FOUND, arg=CHAPTER)
    except PlaywrightTimeout:
        pass  # reported below with what was found
    results = opened.page.locator("ul.search li a").evaluate_all(
        "(links) => links.map((a) => a.getAttribute('href'))")
    assert any(href.split("#")[0].split("?")[0] == CHAPTER for href in results), (
        f"searching {term!r} on the {locale} site did not find {CHAPTER}: {results}")
    opened.assert_clean(harmless=SUMMARY_FETCH)


# --- what a reader of an executable book expects on a chapter page ---------------------------------

@pytest.mark.parametrize("locale", LOCALES)
def test_chapter_page_shows_its_execution_record_and_notebook(site, visit, locale):
    words = by_folder(locale)
    opened = visit(chapter_url(site, locale))
    record = opened.page.locator(".chapter-header .execution-record")
    assert record.is_visible(), f"{locale}/{CHAPTER}: no execution record"
    pattern = re.escape(words.executed).replace(r"\{when\}", r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
    pattern = re.sub(r"\\\{(python|torch)\\\}", r"[0-9.]+\\S*", pattern)
    pattern = pattern.replace(r"\{seconds:\.1f\}", r"\d+\.\d")
    assert re.fullmatch(pattern, record.inner_text().strip()), record.inner_text()
    link = opened.page.locator(".chapter-header a.chapter-notebook")
    assert link.inner_text().strip() == words.notebook
    opened.assert_clean()
    # Served over http the link downloads (its download attribute); from file:// the browser
    # ignores that attribute and shows the file, which is the chapter's notebook either way.
    link.click()
    opened.page.wait_for_load_state("load")
    assert opened.page.url == chapter_url(site, locale, f"{FOLDER}/{Path(CHAPTER).stem}.ipynb")
    shown = json.loads(opened.page.locator("pre").first.inner_text())
    assert shown["metadata"]["kernelspec"]["name"] == "python3"
    assert any(cell["cell_type"] == "code" and cell["outputs"] for cell in shown["cells"])


@pytest.mark.parametrize("locale", LOCALES)
def test_code_cells_have_a_copy_button_and_outputs_do_not(site, visit, locale):
    opened = visit(chapter_url(site, locale))
    opened.context.grant_permissions(["clipboard-read", "clipboard-write"])
    cells = opened.page.locator("div.cell_input div.highlight")
    assert cells.count() > 0
    assert opened.page.locator("div.cell_input button.copybtn").count() == cells.count()
    assert opened.page.locator("div.cell_output button.copybtn").count() == 0
    first = cells.first
    first.hover()
    first.locator("button.copybtn").click()
    copied = opened.page.evaluate("() => navigator.clipboard.readText()")
    assert copied.strip() == first.locator("pre").inner_text().strip()
    opened.assert_clean()


# --- nothing remote ------------------------------------------------------------------------------

def remote_in_css(css: str) -> list[str]:
    css = CSS_COMMENT.sub("", css)
    return CSS_URL.findall(css) + CSS_IMPORT.findall(css)


# --- phone width ---------------------------------------------------------------------------------

PAGE_WIDTH = """() => [document.documentElement.scrollWidth,
                        document.documentElement.clientWidth]"""


@pytest.mark.parametrize("locale", LOCALES)
def test_no_page_scrolls_sideways_on_a_phone(site, visit, locale):
    """A long inline literal (a path, a flag) must wrap inside the column, not widen the page:
    a page wider than the phone's window makes every line of it scroll sideways."""
    pages = sorted(p.name for p in (site / locale).glob("*.html")
                   if p.name[0].isdigit() or p.name[0] in "AB" or p.stem in ("index", "sources"))
    assert len(pages) > 10
    page = visit(chapter_url(site, locale), "phone").page
    wide = {}
    for name in pages:
        page.goto(chapter_url(site, locale, name))
        scroll, window = page.evaluate(PAGE_WIDTH)
        if scroll > window:
            wide[name] = scroll
    assert not wide, f"{locale}: pages wider than the 390 px window: {wide}"


def test_a_long_inline_path_breaks_only_after_a_slash_an_underscore_or_a_dot(site, visit):
    page = visit(chapter_url(site, "en", "07-advantages.html"), "phone").page
    code = page.locator("code.literal", has_text="gym_v2_rl_fresh_hg_rloo_lr3e-4").first
    assert code.locator("wbr").count() > 3
    pieces = code.locator("span.pre").all_inner_texts()
    assert "".join(pieces) == "gym_v2_rl_fresh_hg_rloo_lr3e-4"
    assert all(p[-1] in "/_." for p in pieces[:-1]), pieces       # never after the hyphen
    assert page.evaluate("(c) => getComputedStyle(c.querySelector('span.pre')).whiteSpace",
                         code.element_handle()) == "nowrap"


def test_no_page_or_stylesheet_references_the_network(site):
    offenders = []
    for path in sorted(site.rglob("*.html")):
        parser = read_page(path)
        offenders += [f"{path.relative_to(site)}: {url}" for url in parser.remote]
        offenders += [f"{path.relative_to(site)}: {url}"
                      for css in parser.css for url in remote_in_css(css)]
    for path in sorted(site.rglob("*.css")):
        offenders += [f"{path.relative_to(site)}: {url}"
                      for url in remote_in_css(path.read_text(encoding="utf-8", errors="replace"))]
    assert not offenders, "remote references:\n" + "\n".join(offenders[:40])


# --- the hosted site -----------------------------------------------------------------------------

class _Head(HTMLParser):
    """A page's canonical link, meta tags, links (class, href) and footer text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.canonical: list[str] = []
        self.meta: dict[str, str] = {}
        self.links: list[tuple[list[str], str]] = []
        self.footer: list[str] = []  # hrefs inside the theme's extra footer
        self._footer_depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "link" and attrs.get("rel") == "canonical":
            self.canonical.append(attrs.get("href", ""))
        elif tag == "meta" and (attrs.get("property") or attrs.get("name")):
            self.meta[attrs.get("property") or attrs.get("name")] = attrs.get("content", "")
        elif tag == "a":
            self.links.append((attrs.get("class", "").split(), attrs.get("href", "")))
            if self._footer_depth:
                self.footer.append(attrs.get("href", ""))
        if tag == "div" and "extra_footer" in attrs.get("class", "").split():
            self._footer_depth = 1
        elif tag == "div" and self._footer_depth:
            self._footer_depth += 1

    def handle_endtag(self, tag):
        if tag == "div" and self._footer_depth:
            self._footer_depth -= 1


def read_head(path: Path) -> _Head:
    parser = _Head()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def start_page_title(locale: str) -> str:
    text = (ROOT / "book" / locale / "index.md").read_text(encoding="utf-8")
    return re.search(r"^# (.+)$", text, re.MULTILINE).group(1).strip()


def in_site(site: Path, locale: str, url: str) -> Path:
    """The file of the site that a URL under the language's address names."""
    base = site_settings.site_url(by_folder(locale))
    assert url.startswith(base), f"{url} is not under {base}"
    return site / locale / unquote(urlsplit(url[len(base):]).path)


@pytest.mark.parametrize("locale", LOCALES)
def test_every_language_has_a_sitemap_llms_txt_and_a_404_page(site, locale):
    folder = site / locale
    sitemap = folder / "sitemap.xml"
    assert sitemap.is_file(), f"no {sitemap.relative_to(site)}"
    listed = re.findall(r"<loc>(.*?)</loc>", sitemap.read_text(encoding="utf-8"))
    files = {in_site(site, locale, url) for url in listed}
    assert all(path.is_file() for path in files), sorted(files)
    assert {folder / "index.html", folder / CHAPTER} <= files
    assert not {folder / name for name in ("search.html", "genindex.html", NOT_FOUND)} & files

    llms = (folder / "llms.txt").read_text(encoding="utf-8")
    assert llms.startswith(f"# {start_page_title(locale)}\n"), llms[:200]
    linked = re.findall(r"\]\((\S+)\)", llms)
    assert any(url.endswith(CHAPTER_SOURCE) for url in linked), linked
    assert all(in_site(site, locale, url).is_file() for url in linked), linked
    full = (folder / "llms-full.txt").read_text(encoding="utf-8")
    chapter = read_chapter(ROOT / "book" / locale / CHAPTER_SOURCE)
    cell = next(cell for cell in chapter.cells if cell.output and cell.output.text.strip())
    assert cell.source in full, "llms-full.txt lacks a code cell of chapter 0"
    assert cell.output.text in full, "llms-full.txt lacks the cell's recorded output"

    not_found = (folder / NOT_FOUND).read_text(encoding="utf-8")
    assert by_folder(locale).not_found_title in not_found
    landing = read_head(site / "index.html")
    assert landing.canonical == [site_settings.base_url()]
    assert landing.meta.get("og:url") == site_settings.base_url() and landing.meta["og:title"]
    root = (site / "llms.txt").read_text(encoding="utf-8")
    assert f"{site_settings.site_url(by_folder(locale))}llms-full.txt" in root
    assert f"{site_settings.site_url(by_folder(locale))}sitemap.xml" in (
        site / "sitemap.xml").read_text(encoding="utf-8")


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page_has_a_canonical_link_and_a_link_preview(site, locale):
    words = by_folder(locale)
    record_opening = re.split(r"\{", words.executed)[0].strip()
    checked = 0
    for path in pages(site / locale):
        head = read_head(path)
        where = path.relative_to(site)
        url = site_settings.site_url(words) + path.relative_to(site / locale).as_posix()
        assert head.canonical == [url], f"{where}: canonical {head.canonical}"
        source = site / locale / "_sources" / path.relative_to(site / locale).with_suffix(".md")
        if not source.is_file():
            continue  # the 404, search and index pages: no text of their own, no preview
        assert head.meta.get("og:url") == url, f"{where}: og:url {head.meta.get('og:url')}"
        assert head.meta.get("og:title"), f"{where}: no og:title"
        assert head.meta.get("og:site_name") == start_page_title(locale), where
        if path.name in ("index.html", CHAPTER) or path.name[:2].isdigit():
            description = html.unescape(head.meta.get("og:description", ""))
            assert len(description) > 40, f"{where}: description {description!r}"
            assert record_opening not in description, f"{where}: {description!r}"
            assert head.meta.get("description") == head.meta["og:description"], where
            checked += 1
    assert checked > 10, f"{locale}: {checked} pages with a description"


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page_links_its_pdf_the_forge_and_states_the_licences(site, locale):
    words = by_folder(locale)
    repository = site_settings.repository_url()
    for path in pages(site / locale):
        if path.name == NOT_FOUND:
            continue  # its links are absolute: test_the_404_page_works_under_the_sites_path
        head = read_head(path)
        where = path.relative_to(site)
        pdfs = [href for classes, href in head.links if "pdf-link" in classes]
        assert len(pdfs) == 1, f"{where}: {len(pdfs)} PDF links"
        assert resolve(path, pdfs[0]) == (site / locale / words.pdf_name).resolve(), where
        assert (site / locale / words.pdf_name).is_file(), "no PDF in the site: make publish"
        hrefs = [href for _, href in head.links]
        issue = f"{repository}/issues/new?"
        assert any(href.startswith(issue) for href in hrefs), f"{where}: no 'report a problem'"
        source = site / locale / "_sources" / path.relative_to(site / locale).with_suffix(".md")
        if source.is_file():
            edit = (f"{repository}/edit/{site_settings.branch()}/"
                    f"{site_settings.source_path(words)}/{source.name}")
            assert edit in hrefs, f"{where}: no link to {edit}"
        assert site_settings.TEXT_LICENCE_URL in head.footer, f"{where}: footer {head.footer}"
        assert site_settings.licence_url() in head.footer, f"{where}: footer {head.footer}"


SEARCH_CONTROLS = """() => [...document.querySelectorAll(
    '.search-button-field, button.search-button, form.bd-search input')].filter((e) => {
  const r = e.getBoundingClientRect(), s = getComputedStyle(e);
  return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'
         && r.bottom > 0 && r.top < innerHeight;
}).map((e) => e.className)"""


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("locale", LOCALES)
def test_one_search_field_in_the_header(site, visit, locale, viewport):
    opened = visit(chapter_url(site, locale), viewport)
    opened.page.evaluate("() => document.fonts.ready")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    opened.page.screenshot(path=str(SCREENSHOTS / f"{locale}-{viewport}-header.png"))
    shown = opened.page.evaluate(SEARCH_CONTROLS)
    assert len(shown) == 1, f"{locale} {viewport}: {len(shown)} search fields shown: {shown}"
    header = opened.page.locator("header.bd-header")
    assert header.count() == 0 or not header.is_visible() or header.bounding_box()["height"] < 1, (
        f"{locale} {viewport}: the theme's header bar is shown")
    assert opened.page.locator("a.pdf-link").is_visible(), f"{locale} {viewport}: no PDF link"
    opened.assert_clean()


class _Forge(BaseHTTPRequestHandler):
    """The site served under its path, a missing address answered with the root 404 page."""

    site: Path = SITE
    prefix: str = "/"

    def do_GET(self):
        path = unquote(urlsplit(self.path).path)
        target = None
        if path.startswith(self.prefix):
            target = self.site / path[len(self.prefix):]
            if target.is_dir():
                target = target / "index.html"
        status = 200 if target is not None and target.is_file() else 404
        body = (target if status == 200 else self.site / NOT_FOUND).read_bytes()
        self.send_response(status)
        self.send_header("Content-Type", mimetypes.guess_type(
            str(target if status == 200 else NOT_FOUND))[0] or "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def forge(site):
    handler = type("Forge", (_Forge,), {"site": site, "prefix": site_settings.site_path()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


STYLED = """() => [...document.styleSheets].filter((s) => s.href).map((s) => {
  try { return [s.href, s.cssRules.length]; } catch (e) { return [s.href, -1]; } })"""


def test_the_404_page_works_under_the_sites_path(site, browser, forge):
    assert (site / NOT_FOUND).read_bytes() == (site / SOURCE.folder / NOT_FOUND).read_bytes()
    # The same offline browser, except that it may reach the local server.
    args = [arg + ", EXCLUDE 127.0.0.1" if arg.startswith("--host-resolver-rules") else arg
            for arg in ARGS]
    local = browser.browser_type.launch(
        executable_path=next(filter(None, map(shutil.which, BROWSERS))), args=args)
    context = local.new_context(viewport=VIEWPORTS["desktop"])
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    failed = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    try:
        missing = f"{forge}{site_settings.site_path(SOURCE)}no/such/chapter.html"
        response = page.goto(missing, wait_until="load")
        assert response.status == 404
        assert SOURCE.not_found_title in page.locator("article").inner_text()
        sheets = dict(page.evaluate(STYLED))
        theme = [href for href in sheets if "pydata-sphinx-theme.css" in href]
        assert theme and sheets[theme[0]] > 0, f"the theme's stylesheet did not load: {sheets}"
        assert failed == [f"404 {missing}"], f"requests that failed: {failed}"
        switch = page.locator("a.lang-switch")
        assert switch.is_visible()
        page.locator("article a", has_text=start_page_title(SOURCE.folder)).first.click()
        page.wait_for_load_state("load")
        assert page.url == f"{forge}{site_settings.site_path(SOURCE)}index.html"
        page.goto(missing, wait_until="load")
        switch.click()
        page.wait_for_load_state("load")
        other = other_locale(SOURCE.folder)
        assert page.url == f"{forge}{site_settings.site_path(by_folder(other))}index.html"
        assert failed == [f"404 {missing}"] * 2, f"requests that failed: {failed}"
    finally:
        context.close()
        local.close()
