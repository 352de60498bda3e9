"""The chapter parser (ext/chapters.py): malformed chapters fail with the exact ``path:line``.

These run in-process on small chapter texts (no kernel): every case states the line a reader
would have to fix, counted by hand in the text below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from press_helpers import FIXTURE

from ext.chapters import ChapterError, read_chapter

FRONT = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# 1. Title
"""  # 12 lines; the next line written after it is line 13

CELL = "\n```{code-cell} ipython3\nprint(1)\n```\n"  # blank 13, fence 14, code 15, close 16


def parse(tmp_path: Path, body: str, front: str = FRONT):
    path = tmp_path / "01-case.md"
    path.write_text(front + body, encoding="utf-8")
    return path, read_chapter(path)


def error_of(tmp_path: Path, body: str, front: str = FRONT) -> tuple[Path, ChapterError]:
    path = tmp_path / "01-case.md"
    path.write_text(front + body, encoding="utf-8")
    with pytest.raises(ChapterError) as caught:
        read_chapter(path)
    return path, caught.value


def test_well_formed_chapter_locates_cells_and_blocks(tmp_path):
    body = CELL + "\nOutput:\n\n```text\n1\n```\n\nProse.\n" + CELL
    _, ch = parse(tmp_path, body)
    first, second = ch.cells
    assert (first.line, first.first_code_line, first.end_line) == (14, 15, 16)
    out = first.output
    assert (out.label_line, out.fence_line, out.end_line, out.text) == (18, 20, 22, "1")
    assert (second.line, second.end_line, second.output) == (26, 28, None)
    assert ch.metadata["kernelspec"]["name"] == "python3"


def test_fixture_chapters_parse(tmp_path):
    ch = read_chapter(FIXTURE / "en" / "01-basics.md")
    assert [c.is_save for c in ch.cells] == [True, False, False, False, False]
    assert [c.output is not None for c in ch.cells] == [False, True, False, True, True]
    assert ch.cells[4].is_volatile and not ch.cells[1].is_volatile


@pytest.mark.parametrize(
    "after_label, why",
    [
        ("\n```python\n1\n```\n", "a fence that is not ```text"),
        ("\n1\n", "prose instead of a fence"),
        ("", "end of file"),
    ],
)
def test_output_label_not_followed_by_text_fence(tmp_path, after_label, why):
    path, error = error_of(tmp_path, CELL + "\nOutput:\n" + after_label)
    assert str(error).startswith(f"{path}:18: "), why
    assert "```text" in error.message


def test_output_block_not_after_a_code_cell(tmp_path):
    body = "\nSome prose first.\n\nOutput:\n\n```text\n1\n```\n"
    path, error = error_of(tmp_path, body)
    assert str(error) == f"{path}:16: 'Output:' block does not follow a code cell"


def test_second_output_block_after_one_cell(tmp_path):
    body = CELL + "\nOutput:\n\n```text\n1\n```\n\nOutput:\n\n```text\n1\n```\n"
    path, error = error_of(tmp_path, body)
    assert str(error) == f"{path}:24: 'Output:' block does not follow a code cell"


def test_unclosed_code_cell_fence(tmp_path):
    body = "\n```{code-cell} ipython3\nprint(1)\n\nMore prose, but the fence never closes.\n"
    path, error = error_of(tmp_path, body)
    assert str(error) == f"{path}:14: code fence is never closed"


def test_unclosed_output_fence(tmp_path):
    body = CELL + "\nOutput:\n\n```text\n1\n\nProse swallowed by the open fence.\n"
    path, error = error_of(tmp_path, body)
    assert str(error) == f"{path}:20: code fence is never closed"


@pytest.mark.parametrize(
    "front, line",
    [
        # A value that breaks the mapping on line 5 of the file.
        ("---\njupytext:\n  text_representation:\n    extension: .md\n"
         "    format_name: myst: md\nkernelspec:\n  name: python3\n---\n\n# T\n", 5),
        # A tab where YAML expects indentation, on line 3.
        ("---\nkernelspec:\n\tname: python3\n---\n\n# T\n", 3),
    ],
    ids=["mapping-value", "tab"],
)
def test_bad_front_matter_names_its_line(tmp_path, front, line):
    path, error = error_of(tmp_path, CELL, front=front)
    assert str(error).startswith(f"{path}:{line}: bad front matter"), str(error)


def test_volatile_tag_is_read_from_cell_options(tmp_path):
    body = "\n```{code-cell} ipython3\n:tags: [volatile-output]\nprint(1)\n```\n"
    _, ch = parse(tmp_path, body)
    (cell,) = ch.cells
    assert cell.is_volatile and cell.source == "print(1)"
    assert (cell.line, cell.first_code_line, cell.end_line) == (14, 16, 17)


def test_bad_cell_option_names_its_line(tmp_path):
    body = "\n```{code-cell} ipython3\n:tags: [volatile-output\nprint(1)\n```\n"  # option: 15
    path, error = error_of(tmp_path, body)
    assert error.line == 15, error
    assert "cannot read cells" in str(error)


@pytest.mark.parametrize("cell, first", [
    ("\n```{code-cell} ipython3\nx = 1\nprint(x)\n\n\n```\n", 15),  # trailing blank lines
    ("\n```{code-cell} ipython3\n:tags: [volatile-output]\n\nx = 1\n```\n", 17),  # options
])
def test_first_code_line_is_where_the_code_starts(tmp_path, cell, first):
    """A problem in a cell is reported at the cell's own line, whatever surrounds the code
    (myst-nb strips a cell's trailing blank lines, so counting back from the fence is wrong)."""
    (cell_,) = parse(tmp_path, cell)[1].cells
    assert cell_.first_code_line == first
