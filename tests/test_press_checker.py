"""scripts/check_tutorial_snippets.py on the fixture book (and once on the real book).

Every failure must be reported as ``file:line: message`` with the line a reader has to look at,
and the checker must exit 1. Each test edits a fresh copy of the fixture.
"""

from __future__ import annotations

import re
import shutil

import pytest

from press_helpers import (
    EN01,
    EN02,
    FIXTURE,
    HALF_BLOCK,
    PRINTED_01,
    RIGHT,
    PYTHON,
    ROOT,
    SILENT_CELL,
    STALE_BLOCK,
    VOLATILE,
    WRONG,
    add_to_save_cell,
    assert_reports,
    break_outputs,
    chapter,
    check,
    copy_book,
    edit,
    line_of,
    make_drift,
    make_failing,
    problems,
    run,
    run_script,
    set_volatile_block,
    use_later_save,
)

from ext.chapters import read_chapter
from ext.outputs import CellRun, Problem
from ext.problems import Kind


@pytest.fixture
def book(tmp_path):
    return copy_book(tmp_path)


def test_fixture_book_passes(book):
    result = check(book, "--chapters", "all")
    assert result.returncode == 0, result.stdout + result.stderr
    assert problems(result.stdout) == []
    assert "01-basics.md: 5 cells, ok" in result.stdout
    assert "02-next.md: 3 cells, ok" in result.stdout


def test_slowest_names_each_chapters_slowest_cells_by_file_and_line(book):
    result = check(book, "--chapters", "01", "--slowest", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    timed = re.findall(r"^  (.+/01-basics\.md):(\d+): (\d+\.\d) s$", result.stdout, re.M)
    assert len(timed) == 2
    starts = {cell.line for cell in read_chapter(chapter(book, "en/01-basics.md")).cells}
    assert {int(line) for _, line, _ in timed} <= starts
    assert float(timed[0][2]) >= float(timed[1][2])


def test_changed_number_is_drift_at_the_fence_with_a_diff(book):
    path, fence = make_drift(book)
    # Other digits in the volatile cell's block are not drift (only cell 2 is reported).
    set_volatile_block(book, "elapsed: 97.5 ms over 30 runs")
    result = check(book, "--chapters", "01")
    assert result.returncode == 1
    assert_reports(result, path, fence, "output of cell 2 differs from the recorded block")
    assert "--- recorded\n+++ executed\n" in result.stdout
    assert f"-{WRONG}\n+{RIGHT}\n" in result.stdout
    assert problems(result.stdout) == [
        f"{path}:{fence}: output of cell 2 differs from the recorded block: [agentrl.drift]"
    ], result.stdout


def test_missing_and_stale_blocks_and_a_displayed_value(book):
    break_outputs(book)
    one, two = chapter(book, EN01), chapter(book, EN02)
    result = check(book, "--chapters", "01", "02")
    assert result.returncode == 1
    stale_label = line_of(one, "nothing is printed here") - 3  # the "Output:" label
    assert_reports(result, one, stale_label,
                   "cell 3 prints nothing but has a recorded 'Output:' block")
    printing = line_of(two, "print('inside chapter 2:', later_fn())") - 1
    assert_reports(result, two, printing, "cell 3 prints but has no 'Output:' block")
    display = line_of(two, "1 + 1") - 1
    assert_reports(result, two, display, "cell 4 displays a value; print it instead")
    assert len(problems(result.stdout)) == 3, result.stdout


@pytest.mark.parametrize("statement, found", [
    ("print(1)", "found 'print(1)'"),
    ("x = f()", "may assign only UPPER_CASE constants, not 'x'"),
])
def test_statement_in_save_cell(book, statement, found):
    path = add_to_save_cell(book, statement)
    result = check(book, "--chapters", "01", in_process=True)
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, statement), found)


def test_use_of_a_later_save_names_symbol_and_chapter(book):
    path = use_later_save(book)
    result = check(book, "--chapters", "01", in_process=True)
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, "print(arl.later_fn())"),
                   "uses agentrl.later_fn, which is saved by 02-next.md")


def test_forbidden_import(book):
    path = chapter(book, EN02)
    edit(path, "import agentrl as arl\n", "import agentrl as arl\nimport numpy\n")
    result = check(book, "--chapters", "02", in_process=True)
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, "import numpy"), "import of 'numpy'")


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    """Chapter 01 drifts in cell 2 and raises in cell 3; chapter 02 sleeps past a 3 s timeout
    in cell 3. Run with --refresh, which must leave both files alone."""
    book = copy_book(tmp_path_factory.mktemp("failing"))
    make_failing(book)
    make_drift(book)
    before = {rel: chapter(book, rel).read_bytes() for rel in (EN01, EN02)}
    result = check(book, "--chapters", "01", "02", "--timeout", "3", "--refresh")
    return book, result, before


def test_raising_cell_names_chapter_and_cell(failing_run):
    book, result, _ = failing_run
    path = chapter(book, EN01)
    cell = line_of(path, "half = total // 2") - 1
    fence = line_of(path, WRONG) - 1
    assert result.returncode == 1
    # Cells before the failure are still compared; the blocks of cells that never ran are not
    # reported one by one.
    assert [p for p in problems(result.stdout) if p.startswith(f"{path}:")] == [
        f"{path}:{fence}: output of cell 2 differs from the recorded block: [agentrl.drift]",
        f"{path}:{cell}: cell 3 raised ValueError: boom in the fixture [agentrl.error]",
        f"{path}:{cell}: the 2 cells after cell 3 did not run [agentrl.not-run]",
    ]


def test_timeout_names_chapter_and_cell(failing_run):
    book, result, _ = failing_run
    path = chapter(book, EN02)
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, "import time") - 1, "cell 3")


def test_timeout_message_says_it_was_the_timeout(failing_run):
    """The runner knows the cell ran past --timeout; the report should say so."""
    book, result, _ = failing_run
    path = chapter(book, EN02)
    line = assert_reports(result, path, line_of(path, "import time") - 1, "cell 3")
    assert "timeout" in line.removesuffix("[agentrl.timeout]") and line.endswith(
        "[agentrl.timeout]"), line


def test_refresh_never_touches_a_chapter_whose_cell_raised(failing_run):
    book, result, before = failing_run
    assert "refreshed" not in result.stdout
    for rel, content in before.items():
        assert chapter(book, rel).read_bytes() == content, rel


def test_volatile_output_with_other_words_is_drift(book):
    path = set_volatile_block(book, "elapsed: 12 s over 3 runs")
    result = check(book, "--chapters", "01")
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, "elapsed: 12 s over 3 runs") - 1,
                   "output of cell 5 differs from the recorded block")
    assert f"-elapsed: 12 s over 3 runs\n+{VOLATILE}" in result.stdout


def test_refresh_rewrites_changed_inserted_and_removed_blocks(book):
    path, _ = make_drift(book)  # changed
    edit(path, HALF_BLOCK, "")  # a printing cell without a block: inserted
    edit(path, SILENT_CELL, SILENT_CELL + STALE_BLOCK)  # a silent cell with one: removed
    set_volatile_block(book, "elapsed: 40 ms over 3 runs")  # volatile: kept
    refreshed = check(book, "--chapters", "01", "--refresh")
    assert refreshed.returncode == 0, refreshed.stdout
    assert f"{path}: refreshed recorded outputs" in refreshed.stdout
    # The first three edits are undone exactly; the volatile cell keeps its recorded numbers.
    expected = (FIXTURE / "en" / "01-basics.md").read_text(encoding="utf-8")
    expected = expected.replace(f"```text\n{VOLATILE}\n", "```text\nelapsed: 40 ms over 3 runs\n")
    assert path.read_text(encoding="utf-8") == expected
    again = check(book, "--chapters", "01")
    assert again.returncode == 0, again.stdout


def test_unknown_chapter_is_an_error_listing_the_known_ones(book):
    result = check(book, "--chapters", "01", "1", in_process=True)
    assert result.returncode == 2
    assert "no chapter '1' in the book (known: 01, 02)" in result.stderr
    assert result.stdout == ""  # not even chapter 01 ran


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.subtype)
def test_refresh_refuses_exactly_the_fatal_kinds(book, kind):
    """A drifted chapter with one problem of ``kind``: refreshed unless the kind is fatal, and
    the problem is still reported afterwards unless a refresh repairs it."""
    path, _ = make_drift(book)
    before = path.read_text(encoding="utf-8")
    printed = iter(PRINTED_01)
    chapter_ = read_chapter(path)
    runs = [CellRun(next(printed) if cell.output else "") for cell in chapter_.cells]
    problem = Problem(1, kind, "the problem")
    checker = run_script.__globals__["_script"]("check_tutorial_snippets.py")
    left = checker.refresh(chapter_, runs, [problem])
    refreshed = path.read_text(encoding="utf-8")
    assert (refreshed == before) == kind.fatal
    if not kind.fatal:
        assert refreshed == (FIXTURE / EN01).read_text(encoding="utf-8")
    assert left == ([] if kind.refreshable else [problem])


# ---------------------------------------------------------------------------- the real book


def _change_first_recorded_digit(path) -> tuple[int, str, str]:
    """Change one digit in a chapter's first recorded output: (fence line, old line, new line)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    label = next(i for i, l in enumerate(lines) if l.rstrip() == "Output:")
    fence = next(i for i in range(label + 1, len(lines)) if lines[i].startswith("```text"))
    for i in range(fence + 1, len(lines)):
        match = re.search(r"\d", lines[i])
        if match:
            old = lines[i]
            lines[i] = old[: match.start()] + str((int(match.group()) + 1) % 10) + old[match.end():]
            path.write_text("".join(lines), encoding="utf-8")
            return fence + 1, old.rstrip("\n"), lines[i].rstrip("\n")
    raise AssertionError(f"no digit in the first recorded output of {path}")


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_real_book_chapter_0_drift(tmp_path, locale):
    source = ROOT / "book" / locale / "00-notation.md"
    if not source.exists():
        pytest.skip(f"book/{locale}/00-notation.md is not written yet")
    shutil.copytree(ROOT / "book", tmp_path / "book")
    path = tmp_path / "book" / locale / "00-notation.md"
    fence, old, new = _change_first_recorded_digit(path)
    args = ["--chapters", "00"] + (["--locale", locale] if locale != "en" else [])
    result = check(tmp_path, *args)
    assert result.returncode == 1
    assert_reports(result, path, fence, "differs from the recorded block")
    assert f"-{new}\n+{old}\n" in result.stdout


# ---------------------------------------------------------------------------- remote_check.sh


def test_remote_check_runs_a_private_copy_and_brings_refreshed_chapters_back(tmp_path):
    """No $CHECK_HOST: the copy is local. A minimal repository (press code + fixture book)."""
    repo = copy_book(tmp_path / "repo")
    for part in ("ext", "scripts"):
        shutil.copytree(ROOT / part, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
    path, fence = make_drift(repo)
    env = {"CHECK_PYTHON": PYTHON}
    checked = run(["bash", repo / "scripts" / "remote_check.sh", "01"], env=env)
    assert checked.returncode == 1
    # It ran in the private copy (no staged library here), but names this repository's file.
    assert f"{path}:{fence}: output of cell 2 differs" in checked.stdout, checked.stdout
    assert "agentrl-check." not in checked.stdout
    assert not (repo / "_build").exists()
    assert WRONG in path.read_text(encoding="utf-8")

    refreshed = run(["bash", repo / "scripts" / "remote_check.sh", "--refresh", "01"], env=env)
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    assert "updated book/en/01-basics.md" in refreshed.stdout
    assert path.read_text(encoding="utf-8") == (FIXTURE / "en" / "01-basics.md").read_text(
        encoding="utf-8")
    assert not (repo / "_build").exists()  # the copy's staged libraries stay in the copy
