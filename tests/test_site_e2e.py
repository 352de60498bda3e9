"""The built site in a real browser: headless Chromium, pages opened from file://, no network.

Needs the assembled site at ``_build/site`` (``make html``; ``make test`` builds it first) and
Debian's ``chromium``. A missing site or browser is a failure, never a skip. Each page is
rendered with ``--dump-dom`` after a virtual-time budget; host names resolve nowhere, and the
browser's network log is read to prove that no page asked for anything over http(s).

Checked: MathJax typeset every formula of chapter 0 (with its own fonts), mermaid drew the
chapter graph, no page script threw, the language link of every page leads to the existing
page in the other language, the Chinese (and English) search finds a word of chapter 0, and no
HTML or CSS file references a remote script, stylesheet, image or font.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ext.locale_table import folders  # noqa: E402

SITE = ROOT / "_build" / "site"
LOCALES = folders()
CHAPTER = "00-notation.html"  # has formulas and the mermaid chapter graph
BUDGET_MS = 20000
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync", "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves: the site is offline
    "--enable-logging=stderr", "--v=0",  # page console messages go to stderr
)
CJK = re.compile(r"[\u4e00-\u9fff]")
# Sphinx's search page fetches each result page for a text snippet; browsers refuse fetch() from
# file://, so the results are listed without snippets there (served over http they have them).
SUMMARY_FETCH = re.compile(r"Failed to fetch.*_static/searchtools\.js")
RAW_TEX = re.compile(r"\\\(|\\\[|(?<![\w$])\$[^\s$][^$]*?\$(?![\w$])")
NOT_PROSE = frozenset({"code", "pre", "kbd", "mjx-container", "script", "style"})
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


# --- a small DOM built from HTML text ------------------------------------------------------------

class Element:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Element | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Element | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Element]:
        return [e for e in self.iter() if (tag is None or e.tag == tag)
                and (cls is None or cls in e.classes)]

    def text(self, skip: frozenset[str] = frozenset()) -> str:
        return "".join(c if isinstance(c, str) else "" if c.tag in skip else c.text(skip)
                       for c in self.children)


class _TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Element("#document", {}, None)

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node.parent is not None and node.tag != tag:
            node = node.parent
        if node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(html: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


# --- the browser ---------------------------------------------------------------------------------

class Rendered:
    def __init__(self, dom: str, console: list[str], remote: list[str]):
        self.dom, self.console, self.remote = dom, console, remote
        self.tree = parse(dom)


def remote_requests(netlog: Path) -> list[str]:
    """URLs a page (not the browser itself) asked for over the network."""
    if not netlog.is_file():
        return []
    text = netlog.read_text(encoding="utf-8", errors="replace").rstrip().rstrip(",")
    if not text.endswith("}"):
        text += "]}"  # the log of a killed browser lacks its closing brackets
    events = json.loads(text).get("events", [])
    urls = set()
    for event in events:
        params = event.get("params") or {}
        from_page = params.get("initiator") == "null" or "file://" in str(
            params.get("network_isolation_key", ""))
        if from_page and str(params.get("url", "")).startswith(("http:", "https:")):
            urls.add(params["url"])
    return sorted(urls)


def render(browser: str, url: str) -> Rendered:
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        netlog = Path(profile) / "netlog.json"
        result = subprocess.run(
            [browser, *FLAGS, f"--user-data-dir={profile}/data", f"--log-net-log={netlog}",
             f"--virtual-time-budget={BUDGET_MS}", "--dump-dom", url],
            capture_output=True, text=True, timeout=180,
        )
        remote = remote_requests(netlog)
    assert result.returncode == 0 and result.stdout.strip(), (
        f"chromium could not render {url} (exit {result.returncode}):\n{result.stderr[-3000:]}")
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return Rendered(result.stdout, console, remote)


def assert_clean(page: Rendered, url: str) -> None:
    errors = [line for line in page.console if ("Uncaught" in line or "could not draw" in line)
              and not SUMMARY_FETCH.search(line)]
    assert not errors, f"script errors on {url}:\n" + "\n".join(errors)
    assert not page.remote, f"{url} asked the network for: {page.remote}"


@pytest.fixture(scope="module")
def site() -> Path:
    needed = [SITE / "index.html", *(SITE / locale / CHAPTER for locale in LOCALES)]
    absent = [str(p.relative_to(ROOT)) for p in needed if not p.is_file()]
    if absent:
        pytest.fail(f"no built site ({', '.join(absent)} missing): run `make html` first "
                    "(it builds both languages and assembles _build/site)", pytrace=False)
    return SITE


@pytest.fixture(scope="module")
def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    pytest.fail("headless Chromium is needed: apt-get install -y chromium", pytrace=False)


@pytest.fixture(scope="module")
def chapter_pages(site, browser) -> dict[str, Rendered]:
    return {locale: render(browser, (site / locale / CHAPTER).as_uri()) for locale in LOCALES}


def pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html")
                  if not {"_static", "_sources", "_images"} & set(p.relative_to(site).parts))


# --- MathJax and mermaid -------------------------------------------------------------------------

@pytest.mark.parametrize("locale", LOCALES)
def test_chapter_formulas_are_typeset_by_mathjax(chapter_pages, locale):
    page = chapter_pages[locale]
    assert_clean(page, f"{locale}/{CHAPTER}")
    formulas = page.tree.find_all(cls="math")
    assert formulas, f"{locale}/{CHAPTER} has no formula to check"
    raw = [f.text()[:60] for f in formulas if not f.find_all("mjx-container")]
    assert not raw, f"{len(raw)} of {len(formulas)} formulas left as TeX, e.g. {raw[:3]}"
    prose = [p.text(skip=NOT_PROSE) for p in page.tree.find_all("p")]
    leftovers = [text for text in prose if RAW_TEX.search(text)]
    assert not leftovers, f"raw TeX in a paragraph: {leftovers[0][:120]!r}"


def test_mathjax_fonts_load_offline(site, browser, tmp_path):
    """MathJax's CHTML fonts come from _static: a probe added to a copy of the page lists them."""
    copy = tmp_path / "en"
    shutil.copytree(site / "en", copy)
    probe = """<script>
window.addEventListener("load", () => MathJax.startup.promise
  .then(() => document.fonts.ready)
  .then(() => { document.body.dataset.mjxFonts = [...document.fonts]
      .filter((face) => face.family.includes("MJX"))
      .map((face) => face.family.replace(/"/g, "") + "=" + face.status).join(" "); }));
</script></body>"""
    html = (copy / CHAPTER).read_text(encoding="utf-8")
    (copy / "probe.html").write_text(html.replace("</body>", probe, 1), encoding="utf-8")
    page = render(browser, (copy / "probe.html").as_uri())
    assert_clean(page, "probe.html")
    body = page.tree.find_all("body")[0]
    faces = dict(item.split("=") for item in body.attrs.get("data-mjx-fonts", "").split())
    loaded = [family for family, status in faces.items() if status == "loaded"]
    assert loaded, f"no MathJax font loaded from file:// (font faces: {faces or 'none'})"
    assert "error" not in faces.values(), f"MathJax fonts failed to load: {faces}"


@pytest.mark.parametrize("locale", LOCALES)
def test_chapter_graph_is_drawn_by_mermaid(chapter_pages, locale):
    page = chapter_pages[locale]
    assert_clean(page, f"{locale}/{CHAPTER}")
    graphs = page.tree.find_all("pre", cls="mermaid")
    assert graphs, f"{locale}/{CHAPTER} has no mermaid block (the chapter graph)"
    for graph in graphs:
        svgs = graph.find_all("svg")
        assert svgs, f"mermaid block not drawn: {graph.text()[:80]!r}"
        assert svgs[0].find_all("g"), "mermaid drew an empty svg"


@pytest.mark.parametrize("locale", LOCALES)
def test_every_mermaid_block_in_the_site_loads_mermaid_locally(site, locale):
    for path in pages(site / locale):
        tree = parse(path.read_text(encoding="utf-8"))
        if tree.find_all("pre", cls="mermaid"):
            sources = [s.attrs.get("src", "") for s in tree.find_all("script")]
            assert any(re.search(r"_static/offline/mermaid-[0-9a-f]+/mermaid\.min\.js", s)
                       for s in sources), f"{path.relative_to(site)} does not load mermaid"


# --- the language links --------------------------------------------------------------------------

def resolve(page: Path, href: str) -> Path:
    return (page.parent / unquote(urlsplit(href).path)).resolve()


def test_every_page_links_to_its_other_language(site):
    for locale, other in (("en", "zh"), ("zh", "en")):
        checked = 0
        for path in pages(site / locale):
            links = parse(path.read_text(encoding="utf-8")).find_all("a", cls="lang-switch")
            where = path.relative_to(site)
            assert len(links) == 1, f"{where}: {len(links)} language links, expected 1"
            href = links[0].attrs["href"]
            assert not urlsplit(href).scheme and not href.startswith("/"), f"{where}: {href}"
            target = resolve(path, href)
            assert target.is_file(), f"{where}: language link {href} leads nowhere"
            assert target.is_relative_to((site / other).resolve()), f"{where}: {href}"
            twin = site / other / path.relative_to(site / locale)
            if twin.is_file():
                assert target == twin.resolve(), f"{where}: links {href}, not its translation"
            checked += 1
        assert checked, f"no pages in {site / locale}"


@pytest.mark.parametrize("locale", LOCALES)
def test_chapter_language_link_is_in_the_rendered_header(chapter_pages, locale):
    header = chapter_pages[locale].tree.find_all(cls="header-article-items__end")
    assert header and header[0].find_all("a", cls="lang-switch"), "no language link in the header"


def test_landing_page_links_both_languages(site):
    links = {a.attrs.get("href") for a in parse((site / "index.html").read_text("utf-8")).find_all("a")}
    for locale in LOCALES:
        assert f"{locale}/index.html" in links and (site / locale / "index.html").is_file()


# --- search --------------------------------------------------------------------------------------

def chapter_search_term(site: Path, locale: str) -> str:
    """A word the search index maps to chapter 0 (a Chinese one for zh), title words first."""
    text = (site / locale / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1: text.rindex(")")])
    chapter = index["docnames"].index(CHAPTER.removesuffix(".html"))

    def words(table: dict) -> list[str]:
        found = [w for w, docs in table.items()
                 if chapter in (docs if isinstance(docs, list) else [docs])
                 and len(w) >= 2 and (bool(CJK.search(w)) == (locale == "zh")) and w.isalpha()]
        return sorted(found, key=lambda w: (-len(w), w))

    candidates = words(index["titleterms"]) or words(index["terms"])
    assert candidates, f"the {locale} search index has no suitable word for {CHAPTER}"
    return candidates[0]


@pytest.mark.parametrize("locale", LOCALES)
def test_search_finds_a_chapter_word(site, browser, locale):
    term = chapter_search_term(site, locale)
    url = (site / locale / "search.html").as_uri() + "?q=" + quote(term)
    page = render(browser, url)
    assert_clean(page, f"{locale}/search.html?q={term}")
    results = [a.attrs.get("href", "") for ul in page.tree.find_all("ul", cls="search")
               for a in ul.find_all("a")]
    assert results, f"searching {term!r} on the {locale} site returned nothing"
    assert any(href.split("#")[0].split("?")[0] == CHAPTER for href in results), (
        f"searching {term!r} did not find {CHAPTER}: {results}")


# --- nothing remote ------------------------------------------------------------------------------

REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"""url\(\s*['"]?\s*((?:https?:)?//[^'")\s]*)""", re.IGNORECASE)
CSS_IMPORT = re.compile(r"""@import\s+['"]\s*((?:https?:)?//[^'"]*)""", re.IGNORECASE)
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
LOADED = {  # tag -> attributes whose URL the browser fetches by itself
    "script": ("src",), "link": ("href",), "img": ("src", "srcset"), "source": ("src", "srcset"),
    "iframe": ("src",), "embed": ("src",), "object": ("data",), "audio": ("src",),
    "video": ("src", "poster"), "track": ("src",), "image": ("href", "xlink:href"),
}


def remote_in_css(css: str) -> list[str]:
    css = CSS_COMMENT.sub("", css)
    return CSS_URL.findall(css) + CSS_IMPORT.findall(css)


def test_no_page_or_stylesheet_references_the_network(site):
    offenders = []
    for path in sorted(site.rglob("*.html")):
        tree = parse(path.read_text(encoding="utf-8", errors="replace"))
        for element in tree.iter():
            for attr in LOADED.get(element.tag, ()):
                value = element.attrs.get(attr, "")
                if element.tag == "link" and element.attrs.get("rel") in ("canonical", "alternate"):
                    continue
                if any(REMOTE.match(part) for part in value.split(",")):
                    offenders.append(f"{path.relative_to(site)}: <{element.tag} {attr}={value}>")
            inline = element.attrs.get("style", "")
            if element.tag == "style":
                inline += element.text()
            offenders += [f"{path.relative_to(site)}: {url}" for url in remote_in_css(inline)]
    for path in sorted(site.rglob("*.css")):
        offenders += [f"{path.relative_to(site)}: {url}"
                      for url in remote_in_css(path.read_text(encoding="utf-8", errors="replace"))]
    assert not offenders, "remote references:\n" + "\n".join(offenders[:40])
