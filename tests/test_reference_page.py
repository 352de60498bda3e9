"""The library reference page (``reference.html``, ``ext/reference.py``) lists every saved symbol.

Needs the built site (``make html``). For every language: every top-level symbol of the generated
``agentrl/__init__.py`` (functions, classes, constants) has an entry on the page, with its
signature, the first line of its docstring, and a link to an existing section of the chapter
that saves it. The parts of ``ext/reference.py`` that need no build are checked on their own.
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from ext.library import SaveBlock, load_book
from ext.locale_table import LOCALES
from ext.reference import block_symbols, library_symbols

SITE = ROOT / "_build" / "site"
ENTRY = re.compile(r'<div class="agentrl-symbol[^"]*" id="agentrl-(?P<name>\w+)">(?P<body>.*?)'
                   r'(?=<div class="agentrl-symbol|</article>|<footer)', re.DOTALL)
LINK = re.compile(r'<a class="reference internal" href="(?P<page>[\w.-]+\.html)#(?P<anchor>[\w-]+)"')


def library_names() -> set[str]:
    tree = ast.parse((ROOT / "agentrl" / "__init__.py").read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


@pytest.mark.parametrize("locale", [locale.folder for locale in LOCALES])
def test_every_saved_symbol_is_on_the_reference_page(locale):
    page = SITE / locale / "reference.html"
    if not page.is_file():
        pytest.fail(f"no {page.relative_to(ROOT)}: run `make html` first", pytrace=False)
    entries = {m.group("name"): m.group("body") for m in ENTRY.finditer(page.read_text("utf-8"))}
    missing = sorted(library_names() - set(entries))
    assert not missing, f"{locale}/reference.html lacks {missing}"
    _, staging = load_book(ROOT / "book" / LOCALES[0].folder)
    for symbol in library_symbols(list(staging.blocks)):
        body = entries[symbol.name]
        assert " ".join(symbol.signature.split()) in text_of(body), symbol.name
        if symbol.docstring:
            assert " ".join(symbol.docstring.splitlines()[0].split()) in text_of(body), symbol.name
        link = LINK.search(body)
        assert link, f"{symbol.name}: no link to the section that saves it"
        assert link.group("page") == Path(symbol.block.chapter).with_suffix(".html").name
        target = (SITE / locale / link.group("page")).read_text(encoding="utf-8")
        assert f'id="{link.group("anchor")}"' in target, f"{symbol.name}: {link.group(0)} leads nowhere"


def test_signatures_docstrings_and_the_last_save_wins():
    first = SaveBlock("01-a.md", 10, 'def f(x, *, y=2) -> int:\n    """Add.\n\n    More."""\n'
                      "    return x + y\n\n\nclass K(tuple):\n    pass\n\n\nLIMIT = 3\n",
                      ("f", "K", "LIMIT"))
    later = SaveBlock("02-b.md", 20, "LIMIT = 4\n", ("LIMIT",))
    symbols = block_symbols(first)
    assert [(s.name, s.signature, s.docstring) for s in symbols] == [
        ("f", "f(x, *, y=2) -> int", "Add.\n\nMore."), ("K", "class K(tuple)", ""),
        ("LIMIT", "LIMIT = 3", "")]
    chosen = library_symbols([first, later])
    assert [(s.name, s.block.chapter) for s in chosen] == [
        ("f", "01-a.md"), ("K", "01-a.md"), ("LIMIT", "02-b.md")]
