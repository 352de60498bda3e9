"""Sphinx builds of the fixture book that succeed: rendered outputs, callouts, timings, budget.

One module-scoped tree is built three times: English, Chinese (sharing the execution cache,
so it reuses the English runs) and English again with a zero budget into another output dir.
"""

from __future__ import annotations

import os
import re

import nbformat
import pytest

from press_helpers import (
    PRINTED_01,
    PRINTED_02,
    callouts,
    chapter,
    copy_book,
    output_blocks,
    sphinx_build,
)

from ext.chapters import read_chapter
from ext.locale_table import CALLOUT_KINDS, by_folder


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = copy_book(tmp_path_factory.mktemp("clean"))
    en = sphinx_build(root, "en", "agentrl_execution_jobs=2")
    zh = sphinx_build(root, "zh")
    budget = sphinx_build(root, "en", "agentrl_chapter_budget=0", out="budget")
    return root, {"en": en, "zh": zh, "budget": budget}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fixture_builds_clean_with_W(built, lang):
    _, builds = built
    build = builds[lang]
    assert build.returncode == 0, build.stderr[-3000:]
    assert build.warnings == []


def test_english_build_executes_and_chinese_build_reuses_it(built):
    _, builds = built
    assert builds["en"].executed("01-basics") and builds["en"].executed("02-next")
    assert not builds["zh"].executed("01-basics") and not builds["zh"].executed("02-next")


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: chapters execute while read")
def test_chapters_execute_two_at_a_time_before_they_are_read_from_the_cache(built):
    """ext.execute_ahead stores each chapter under the key myst-nb computes, so reading finds it
    there (and the gate compares its outputs, as test_fixture_builds_clean_with_W checks)."""
    _, builds = built
    stdout = builds["en"].stdout
    assert "[agentrl] executing 2 chapters, 2 at a time" in stdout, stdout[-3000:]
    for docname in ("01-basics", "02-next"):
        source = builds["en"].srcdir / f"{docname}.md"
        assert f"{source}: executed ahead in" in stdout
        assert f"{source}: Using cached notebook" in stdout
        assert f"{source}: Executing notebook" not in stdout


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_output_block_per_printing_cell(built, lang):
    _, builds = built
    build = builds[lang]
    for docname, printed in (("01-basics", PRINTED_01), ("02-next", PRINTED_02)):
        html = build.html(docname)
        assert output_blocks(html) == printed, docname
        # The recorded copy is dropped: no "Output:" label and no ```text block remain.
        assert "<p>Output:</p>" not in html
        assert "highlight-text" not in html


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_callouts_render_as_admonitions(built, lang):
    _, builds = built
    html = builds[lang].html("01-basics")
    assert callouts(html) == list(zip(CALLOUT_KINDS, by_folder(lang).callouts))
    assert "<blockquote>" not in html
    assert (builds[lang].outdir / "_static" / "callouts.css").exists()
    assert "_static/callouts.css" in html


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_timings_list_every_executed_chapter(built, lang):
    root, builds = built
    build = builds[lang]
    assert build.outdir.parent == root / "_build" / lang
    table = build.timings()
    assert sorted(table) == ["01-basics", "02-next"]
    for row in table.values():
        assert row["succeeded"] is True
        assert isinstance(row["seconds"], float) and 0 < row["seconds"] < 60
        # executed ahead, so the kernel's CPU time is measured, stored with the cached notebook
        # and read back by the Chinese build too
        assert isinstance(row["cpu_seconds"], float) and 0 < row["cpu_seconds"] < 60
    assert "[agentrl] 2 chapters," in build.stdout


def test_the_budget_is_held_against_cpu_time_where_measured_else_wall_time():
    from ext.timings import budgeted_seconds

    assert budgeted_seconds({"seconds": 90.0, "cpu_seconds": 40.5}) == (40.5, "s of CPU time")
    assert budgeted_seconds({"seconds": 90.0, "cpu_seconds": None}) == (90.0, "s")


def test_zero_budget_fails_the_build(built):
    root, builds = built
    build = builds["budget"]
    assert build.returncode == 1
    for rel in ("en/01-basics.md", "en/02-next.md"):
        warning = build.find(chapter(root, rel), 1, "agentrl.budget", "over its 0 s budget")
        assert warning.message.startswith("chapter took ")
        assert "s of CPU time, over its" in warning.message   # read from the cache's record
    assert len(build.warnings) == 2
    assert (root / "_build" / "budget" / "timings.json").exists()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_pages_carry_their_execution_record_and_notebook(built, lang):
    root, builds = built
    build = builds[lang]
    words = by_folder(lang)
    for docname in ("01-basics", "02-next"):
        html = build.html(docname)
        record = re.search(r'<p class="execution-record">(.*?)</p>', html)
        assert record, f"{docname}: no execution record"
        assert record.group(1).startswith(words.executed.split("{")[0]), record.group(1)
        assert "torch 2." in record.group(1) and "Python 3." in record.group(1)
        assert f'href="_notebooks/{docname}.ipynb"' in html
        notebook = nbformat.read(build.outdir / "_notebooks" / f"{docname}.ipynb", as_version=4)
        cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        chapter_cells = read_chapter(chapter(root, f"{lang}/{docname}.md")).cells
        assert [c["source"] for c in cells] == [c.source for c in chapter_cells]
        recorded = ["".join(o["text"] for o in c["outputs"]).rstrip("\n") for c in cells]
        assert recorded == [c.output.text if c.output else "" for c in chapter_cells]
        assert not any("Output:" in c["source"] for c in notebook["cells"])
