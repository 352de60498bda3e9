"""The one table of the book's languages (``ext/locale_table.py``): complete, and the only one.

* every book folder (``book/<folder>/index.md``) is a locale of the table, and every locale
  of the table has its book;
* a locale added to the table reaches every consumer: the build's settings (``conf.py``), the
  callouts, the language switch, the printed front matter, the structure check, the site's
  landing page, the figures and the tests' own lists;
* no other Python file restates a word of the table: no string constant (docstrings aside)
  holds a value that belongs to a translated locale.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import ext.locale_table as table

ROOT = Path(__file__).resolve().parents[1]

FAKE = dataclasses.replace(
    table.LOCALES[-1], folder="xx", sphinx_language="xx_XX", hreflang="xx-XX", label="Xish",
    html_title="Xish book", search_language=None, design_problems="Xdesign", summary="Xsum",
    exercises="Xex", saved_api="Xsaved", callouts=("Xev", "Xpit", "Xprod"), full_stop="!",
    contents="Xcontents", author="Xauthors", cjk=False, landing_blurb="Xblurb", landing_go="Xgo")
WORD_FIELDS = [f.name for f in dataclasses.fields(table.Locale)
               if f.name not in ("folder", "search_language", "cjk", "full_stop")]


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


def test_every_book_folder_is_a_locale_and_every_locale_has_its_book():
    books = sorted(p.parent.name for p in (ROOT / "book").glob("*/index.md"))
    assert books == sorted(table.folders())
    assert len({locale.sphinx_language for locale in table.LOCALES}) == len(table.LOCALES)
    assert table.by_folder(table.SOURCE.folder) is table.LOCALES[0]
    with pytest.raises(KeyError, match="no locale with folder 'nowhere'"):
        table.by_folder("nowhere")


@pytest.fixture
def with_fake_locale(monkeypatch):
    """The table with one more locale, and every consumer module loaded afresh from it."""
    monkeypatch.setattr(table, "LOCALES", (*table.LOCALES, FAKE))
    names = ("ext.callouts", "ext.lang_switch", "ext.print_layout")
    modules = {name: importlib.reload(importlib.import_module(name)) for name in names}
    modules["conf"] = load(ROOT / "conf.py", "conf_under_test")
    for script in ("check_structure", "assemble_site", "build_pdf"):
        modules[script] = load(ROOT / "scripts" / f"{script}.py", f"{script}_under_test")
    modules["_common"] = load(ROOT / "scripts" / "figures" / "_common.py", "_common_under_test")
    for test in ("test_pdf", "test_site_e2e", "test_figures"):
        modules[test] = load(ROOT / "tests" / f"{test}.py", f"{test}_under_test")
    yield modules
    monkeypatch.undo()
    for name in names:
        importlib.reload(sys.modules[name])


def test_a_new_locale_reaches_every_consumer(with_fake_locale, tmp_path):
    m = with_fake_locale
    config = SimpleNamespace(language=FAKE.sphinx_language)
    m["conf"].apply_locale(SimpleNamespace(srcdir=str(tmp_path / FAKE.folder)), config)
    assert config.html_title == FAKE.html_title
    assert config.agentrl_code_dir == f"../{table.SOURCE.folder}"
    assert m["ext.callouts"].LABELS["Xpit!"] == ("pitfall", "Xpit")
    assert m["ext.lang_switch"].DEFAULT_LANGUAGES[FAKE.sphinx_language] == {
        "folder": "xx", "label": "Xish", "hreflang": "xx-XX"}
    assert m["ext.print_layout"].DEFAULT_LABELS[FAKE.sphinx_language] == {
        "contents": "Xcontents", "author": "Xauthors"}
    assert FAKE.folder in m["assemble_site"].LANGUAGES
    assert FAKE.folder in m["_common"].LOCALES
    for test in ("test_pdf", "test_site_e2e", "test_figures"):
        assert FAKE.folder in m[test].LOCALES, test

    chapter = tmp_path / "01-introduction.md"  # a chapter of the book plan: it has the shape
    chapter.write_text("# 1 X\n\n## Xdesign\n\n## Xsum\n\n- Xsaved: none\n\n## Xex\n",
                       encoding="utf-8")
    problems = [p.message for p in m["check_structure"].shape(chapter, FAKE.folder).problems]
    assert "0 numbered sections (want 4-8)" in problems  # the rule applies ...
    assert not [p for p in problems if "no '##" in p or "saved API" in p], problems  # ... in Xish


def test_a_build_of_one_book_in_another_language_is_refused(tmp_path):
    conf = load(ROOT / "conf.py", "conf_under_test")
    other = table.LOCALES[-1]
    config = SimpleNamespace(language=table.SOURCE.sphinx_language)
    with pytest.raises(ValueError, match=f"language={other.sphinx_language}"):
        conf.apply_locale(SimpleNamespace(srcdir=str(tmp_path / other.folder)), config)
    with pytest.raises(ValueError, match="no locale with Sphinx language"):
        conf.apply_locale(SimpleNamespace(srcdir=str(tmp_path)), SimpleNamespace(language="qq"))


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_other_file_restates_the_table():
    words = {getattr(locale, name) for locale in table.LOCALES[1:] for name in WORD_FIELDS}
    words |= {title for locale in table.LOCALES[1:] for title in locale.callouts}
    words = {w for w in words if isinstance(w, str) and w}
    files = [ROOT / "conf.py", *(ROOT / "ext").rglob("*.py"), *(ROOT / "scripts").rglob("*.py"),
             *(ROOT / "tests").glob("*.py")]
    offenders = []
    for path in files:
        if path == ROOT / "ext" / "locale_table.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in skip):
                hits = [w for w in words if w in node.value]
                if hits:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {hits}")
    assert not offenders, "locale words outside ext/locale_table.py:\n" + "\n".join(offenders)


def test_the_makefiles_lookups():
    def lookup(*args):
        return subprocess.run([sys.executable, "-m", "ext.locale_table", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    assert lookup("folders").stdout.split() == table.folders()
    for locale in table.LOCALES:
        assert lookup("language", locale.folder).stdout.strip() == locale.sphinx_language
    unknown = lookup("language", "nowhere")
    assert unknown.returncode == 2 and "no locale with folder 'nowhere'" in unknown.stderr
