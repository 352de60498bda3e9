"""The agentrl library: scripts/build_library.py, save-cell rules, the order rule, staging.

build_library.py runs as a subprocess on the fixture book; the import and order rules and the
staged library's runtime guard are also exercised directly through ext/library.py.
"""

from __future__ import annotations

import concurrent.futures
import shutil

import pytest

from press_helpers import (
    EN01,
    EN02,
    PYTHON,
    add_to_save_cell,
    assert_reports,
    chapter,
    copy_book,
    edit,
    line_of,
    run,
    run_script,
)

from ext.chapters import ChapterError, read_chapter
from ext.library import check_imports, check_uses, load_book


@pytest.fixture
def book(tmp_path):
    return copy_book(tmp_path)


def build_library(book, *args, in_process=True):
    out = book / "agentrl" / "__init__.py"
    return out, run_script("build_library.py", "--book", book / "book" / "en", "--out", out, *args,
                           in_process=in_process)


def test_library_in_book_order_with_chapter_comments(book):
    out, result = build_library(book, in_process=False)
    assert result.returncode == 0, result.stderr
    assert "2 save blocks, 3 symbols" in result.stdout
    text = out.read_text(encoding="utf-8")
    marks = [text.index(s) for s in ("# ---- saved in 01-basics.md ----", "SCALE = 3",
                                     "def triple(x):", "# ---- saved in 02-next.md ----",
                                     "def later_fn():")]
    assert marks == sorted(marks)
    assert "\n#@save" not in text and "print(" not in text  # the mark line is dropped
    namespace: dict = {}
    exec(compile(text, str(out), "exec"), namespace)  # importing runs nothing, prints nothing
    assert namespace["triple"](2) == 6 and namespace["later_fn"]() == "later"


def test_check_is_clean_after_building_and_fails_when_stale(book):
    out, built = build_library(book)
    assert built.returncode == 0
    _, clean = build_library(book, "--check")
    assert clean.returncode == 0, clean.stderr
    assert "is up to date" in clean.stdout
    edit(chapter(book, EN02), "return 'later'", "return 'later, changed'")
    _, stale = build_library(book, "--check")
    assert stale.returncode == 1
    assert f"{out} is stale" in stale.stderr
    assert "return 'later, changed'" not in out.read_text(encoding="utf-8")  # nothing written


@pytest.mark.parametrize("statement, found", [
    ("print(1)", "found 'print(1)'"),
    ("x = f()", "may assign only UPPER_CASE constants, not 'x'"),
    ("for i in range(3):\n    pass", "found 'for i in range(3):'"),
])
def test_statement_in_save_cell_is_rejected_with_file_and_line(book, statement, found):
    path = add_to_save_cell(book, statement)
    out, result = build_library(book)
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, statement.splitlines()[0]), found, stream="stderr")
    assert not out.exists()


def test_symbol_saved_twice_names_the_first_save(book):
    path = chapter(book, EN02)
    edit(path, "def later_fn():", "def triple(x):\n    return x\n\n\ndef later_fn():")
    _, result = build_library(book)
    assert result.returncode == 1
    first = line_of(chapter(book, EN01), "```{code-cell} ipython3")
    assert_reports(result, path, line_of(path, "#@save") - 1,
                   f"'triple' is already saved by 01-basics.md:{first}", stream="stderr")


# ---------------------------------------------------------------------------- imports and order


def _chapter_with(directory, code: str, name: str = "03-extra.md"):
    """A one-cell chapter file; its code starts on line 4."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("# 3. Extra\n\n```{code-cell} ipython3\n" + code + "\n```\n", encoding="utf-8")
    return path, read_chapter(path)


@pytest.mark.parametrize("code, module, line", [
    ("import numpy", "numpy", 4),
    ("import os\nfrom numpy.linalg import norm", "numpy.linalg", 5),
    ("import os, matplotlib.pyplot as plt", "matplotlib.pyplot", 4),
    ("def f():\n    import pandas\n    return pandas", "pandas", 5),
])
def test_forbidden_imports(tmp_path, code, module, line):
    path, ch = _chapter_with(tmp_path, code)
    with pytest.raises(ChapterError) as caught:
        check_imports(ch)
    assert str(caught.value).startswith(f"{path}:{line}: import of {module!r}")


def test_allowed_imports(tmp_path):
    _, ch = _chapter_with(tmp_path, "import torch.nn as nn\nfrom collections import Counter\n"
                                    "import agentrl as arl\nfrom transformers import AutoTokenizer")
    check_imports(ch)


def test_uses_of_unsaved_and_later_symbols(tmp_path):
    """Chapter bodies checked against the fixture's staging, under the fixture's file names."""
    _, staging = load_book(copy_book(tmp_path / "b") / "book" / "en")
    path, ch = _chapter_with(tmp_path / "one", "from agentrl import later_fn", "01-basics.md")
    with pytest.raises(ChapterError) as caught:
        check_uses(ch, staging)
    assert str(caught.value) == (
        f"{path}:4: uses agentrl.later_fn, which is saved by 02-next.md; "
        "a chapter may use only saves of earlier chapters")
    path, ch = _chapter_with(tmp_path / "two", "import agentrl as A\n\nprint(A.nowhere(1))",
                             "02-next.md")
    with pytest.raises(ChapterError) as caught:
        check_uses(ch, staging)
    assert str(caught.value) == f"{path}:6: uses agentrl.nowhere, which no chapter saves"
    _, ch = _chapter_with(tmp_path / "three", "import agentrl as A\nA.triple(1)", "02-next.md")
    check_uses(ch, staging)


# ---------------------------------------------------------------------------- staged libraries


def _in_stage(directory, code: str):
    """Run ``code`` in a fresh Python that imports agentrl from a staged directory."""
    return run([PYTHON, "-c", f"import sys; sys.path.insert(0, {str(directory)!r}); {code}"])


def test_staged_library_guards_later_saves(tmp_path):
    _, staging = load_book(copy_book(tmp_path / "b") / "book" / "en")
    first = staging.stage("01-basics.md", tmp_path / "staged")
    second = staging.stage("02-next.md", tmp_path / "staged")
    assert first != second and first.parent == second.parent == tmp_path / "staged"

    result = _in_stage(first, "import agentrl; agentrl.later_fn")
    assert result.returncode == 1
    assert ("AttributeError: agentrl.later_fn is saved by 02-next.md, a later chapter"
            in result.stderr)
    result = _in_stage(first, "import agentrl; agentrl.triple")
    assert "AttributeError: agentrl.triple is saved by 01-basics.md" in result.stderr

    result = _in_stage(second, "import agentrl; print(agentrl.triple(2), agentrl.SCALE)")
    assert (result.returncode, result.stdout) == (0, "6 3\n"), result.stderr
    result = _in_stage(second, "import agentrl; agentrl.later_fn")
    assert "AttributeError: agentrl.later_fn is saved by 02-next.md" in result.stderr
    result = _in_stage(second, "import agentrl; agentrl.nowhere")
    assert "AttributeError: module agentrl has no attribute 'nowhere'" in result.stderr


def test_stage_name_changes_only_with_earlier_saves(tmp_path):
    book = copy_book(tmp_path / "b")
    _, staging = load_book(book / "book" / "en")
    before = {n: staging.stage(n, tmp_path / "staged").name for n in staging.order}
    edit(chapter(book, EN01), '"""Multiply by SCALE."""', '"""Multiply by SCALE (edited)."""')
    _, staging = load_book(book / "book" / "en")
    after = {n: staging.stage(n, tmp_path / "staged").name for n in staging.order}
    assert after["01-basics.md"] == before["01-basics.md"]  # chapter 1 sees no earlier saves
    assert after["02-next.md"] != before["02-next.md"]
    assert "(edited)" in (tmp_path / "staged" / after["02-next.md"] / "agentrl" /
                          "__init__.py").read_text(encoding="utf-8")


def test_truncated_stage_is_rebuilt(tmp_path):
    """A stage cut short (a builder killed mid-write by the old in-place writer, a full disk)
    has the right name but not the right text: the next stage rebuilds it."""
    _, staging = load_book(copy_book(tmp_path / "b") / "book" / "en")
    directory = staging.stage("02-next.md", tmp_path / "staged")
    library = directory / "agentrl" / "__init__.py"
    whole = library.read_text(encoding="utf-8")
    library.write_text(whole[: len(whole) // 2], encoding="utf-8")
    assert staging.stage("02-next.md", tmp_path / "staged") == directory
    assert library.read_text(encoding="utf-8") == whole
    result = _in_stage(directory, "import agentrl; print(agentrl.triple(2))")
    assert (result.returncode, result.stdout) == (0, "6\n"), result.stderr


def test_stage_without_its_library_and_left_over_temporary_are_repaired(tmp_path):
    _, staging = load_book(copy_book(tmp_path / "b") / "book" / "en")
    root = tmp_path / "staged"
    directory = staging.stage("02-next.md", root)
    whole = (directory / "agentrl" / "__init__.py").read_text(encoding="utf-8")
    shutil.rmtree(directory / "agentrl")
    (root / ".staging-killed").mkdir()  # what a process killed before its rename leaves
    assert staging.stage("02-next.md", root) == directory
    assert (directory / "agentrl" / "__init__.py").read_text(encoding="utf-8") == whole
    assert sorted(p.name for p in root.iterdir()) == [".lock", directory.name]


def test_concurrent_stagings_of_one_library_agree(tmp_path):
    _, staging = load_book(copy_book(tmp_path / "b") / "book" / "en")
    root = tmp_path / "staged"
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        directories = set(pool.map(lambda _: staging.stage("02-next.md", root), range(16)))
    assert len(directories) == 1
    result = _in_stage(directories.pop(), "import agentrl; print(agentrl.SCALE)")
    assert (result.returncode, result.stdout) == (0, "3\n"), result.stderr
    assert not list(root.glob(".staging-*"))
