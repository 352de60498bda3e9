"""The book plan (ext/book_plan.py) is the one list of chapters: every restatement agrees.

The contents table and toctree of each locale's index.md, Chapter 0's chapter graph, the links
to planned chapters (ext.planned) and the files that exist are all held to the plan; a row that
departs from it is named at its line with what the plan wants there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ext.planned
from ext import book_plan
from ext.book_plan import PLAN, contents_rows, graph_problems, index_problems, plan_problems
from ext.chapters import book_order
from ext.locale_table import LOCALES, SOURCE

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"


@pytest.mark.parametrize("locale", LOCALES, ids=lambda l: l.folder)
def test_each_locales_index_graph_and_files_agree_with_the_plan(locale):
    problems = plan_problems(BOOK / locale.folder, locale)
    assert not problems, "\n".join(p.report() for p in problems) + (
        "\n\nthe contents rows the plan wants:\n" + "\n".join(contents_rows(locale)))


def test_the_book_order_is_the_plans_written_pages():
    for locale in LOCALES:
        assert [p.stem for p in book_order(BOOK / locale.folder)] == \
            [e.stem for e in PLAN if e.written]


def test_written_means_the_english_file_exists():
    for entry in PLAN:
        assert (BOOK / SOURCE.folder / entry.file).exists() == entry.written, entry.file


def test_the_plan_is_well_formed():
    stems = [e.stem for e in PLAN]
    assert len(set(stems)) == len(stems)
    numbers = [e.number for e in PLAN if e.number]
    assert len(set(numbers)) == len(numbers)
    assert numbers[:6] == ["0", "1", "2", "3", "4", "5"]
    for entry in PLAN:
        if entry.titles is not None:
            assert set(entry.titles) >= {locale.folder for locale in LOCALES}, entry.stem
        assert 0 <= entry.part < len(book_plan.PARTS)
    assert {e.stem for e in PLAN if e.is_chapter} == (
        {e.stem for e in PLAN if e.number.isdigit() and e.number != "0"} | {"A-math", "C-case-study"})


def test_planned_links_are_the_plans_pages_and_conf_does_not_restate_them():
    planned = _config_default("agentrl_planned_chapters")
    assert planned == [e.file for e in PLAN]
    assert "agentrl_planned_chapters" not in (ROOT / "conf.py").read_text(encoding="utf-8")


def _config_default(name: str):
    values = {}

    class App:
        def add_config_value(self, key, default, *args, **kwargs):
            values[key] = default

        def connect(self, *args, **kwargs):
            pass

    ext.planned.setup(App())
    return values[name]


def _copy(tmp_path: Path, locale) -> Path:
    shutil.copytree(BOOK / locale.folder, tmp_path / locale.folder,
                    ignore=shutil.ignore_patterns("figures"))
    return tmp_path / locale.folder


@pytest.mark.parametrize("locale", LOCALES, ids=lambda l: l.folder)
def test_a_row_that_departs_from_the_plan_is_named_with_what_the_plan_wants(tmp_path, locale):
    book = _copy(tmp_path, locale)
    index = book / "index.md"
    text = index.read_text(encoding="utf-8")
    title = PLAN[3].title(locale)  # chapter 3
    wanted = f"[3. {title}]({PLAN[3].file})"
    assert text.count(wanted) == 1
    index.write_text(text.replace(wanted, f"[3. {title} (draft)]({PLAN[3].file})"),
                     encoding="utf-8")
    line = next(i for i, l in enumerate(index.read_text(encoding="utf-8").splitlines(), 1)
                if "(draft)" in l)
    problems = index_problems(book, locale)
    assert [(p.path, p.line, p.kind.subtype) for p in problems] == [(index, line, "plan")]
    assert wanted in problems[0].message


def test_a_toctree_entry_out_of_order_is_named(tmp_path):
    book = _copy(tmp_path, SOURCE)
    index = book / "index.md"
    text = index.read_text(encoding="utf-8")
    index.write_text(text.replace("\nA-math\n06-policy-gradient\n",
                                  "\n06-policy-gradient\nA-math\n"), encoding="utf-8")
    line = index.read_text(encoding="utf-8").splitlines().index("06-policy-gradient") + 1
    problems = index_problems(book, SOURCE)
    assert [(p.line, p.kind.subtype) for p in problems] == [(line, "plan")]
    assert "'A-math'" in problems[0].message


def test_a_graph_without_a_planned_chapter_is_named(tmp_path):
    book = _copy(tmp_path, SOURCE)
    notation = book / PLAN[0].file
    text = notation.read_text(encoding="utf-8")
    notation.write_text(text.replace("C19 --> C20[20 Frontier]\n", ""), encoding="utf-8")
    problems = graph_problems(notation)
    assert [p.kind.subtype for p in problems] == ["plan"]
    assert "no node for 20" in problems[0].message


def test_the_printed_table_is_what_the_index_holds():
    result = subprocess.run([sys.executable, "-m", "ext.book_plan", "table", SOURCE.folder],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    index = (BOOK / SOURCE.folder / "index.md").read_text(encoding="utf-8")
    assert result.stdout.strip() in index
