"""Compare what a cell printed with what the text records, and rewrite recorded blocks.

Shared by the build's drift gate and by ``scripts/check_tutorial_snippets.py``.
Normalisation is deliberately small: line endings, trailing spaces and trailing blank lines.
Only cells tagged ``volatile-output`` are compared with their numbers masked.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from .chapters import OUTPUT_LABEL, Chapter, CodeCell
from .problems import Kind

_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class CellRun:
    """What one executed cell produced."""

    stdout: str = ""
    stderr: str = ""
    error: str | None = None  # "ExcName: message" when the cell raised
    displays: int = 0  # rich outputs (a bare expression's repr, display() calls)
    timed_out: bool = False  # the error is the execution timeout, not the cell's own


def normalise(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def mask_numbers(text: str) -> str:
    return _NUMBER.sub("#", text)


def output_diff(recorded: str, executed: str, volatile: bool = False) -> str | None:
    """A unified diff *recorded -> executed*, or None when they agree."""
    want, got = normalise(recorded), normalise(executed)
    if volatile:
        if mask_numbers(want) == mask_numbers(got):
            return None
    elif want == got:
        return None
    lines = difflib.unified_diff(
        want.splitlines(), got.splitlines(), "recorded", "executed", lineterm="", n=2
    )
    return "\n".join(lines)


@dataclass(frozen=True)
class Problem:
    """One gate failure, located at a file line."""

    line: int
    kind: Kind
    message: str


def check_cell(cell: CodeCell, run: CellRun) -> list[Problem]:
    """Every way a cell's run can disagree with the chapter text."""
    problems: list[Problem] = []
    where = f"cell {cell.index + 1}"
    if run.error:
        problems.append(Problem(cell.line, Kind.TIMEOUT if run.timed_out else Kind.ERROR,
                                f"{where} raised {run.error}"))
    if run.displays:
        problems.append(
            Problem(cell.line, Kind.DISPLAY, f"{where} displays a value; print it instead")
        )
    if run.stderr.strip():
        first = normalise(run.stderr).splitlines()[0]
        problems.append(Problem(cell.line, Kind.STDERR, f"{where} wrote to stderr: {first}"))
    if cell.is_save and run.stdout:
        problems.append(Problem(cell.line, Kind.SAVE_PRINTS,
                                f"{where} is a #@save cell and prints"))
    if cell.output is None:
        if normalise(run.stdout) and not cell.is_save:
            problems.append(
                Problem(cell.line, Kind.MISSING_OUTPUT, f"{where} prints but has no 'Output:' block")
            )
        return problems
    if run.error:  # output after a failure says nothing new
        return problems
    if not normalise(run.stdout):
        problems.append(
            Problem(cell.output.label_line, Kind.STALE_OUTPUT,
                    f"{where} prints nothing but has a recorded 'Output:' block")
        )
        return problems
    diff = output_diff(cell.output.text, run.stdout, cell.is_volatile)
    if diff:
        problems.append(
            Problem(cell.output.fence_line, Kind.DRIFT,
                    f"output of {where} differs from the recorded block:\n{diff}")
        )
    return problems


def check_chapter(chapter: Chapter, runs: list[CellRun]) -> list[Problem]:
    """Problems of a whole run; cells after one that failed are reported once, not each."""
    problems: list[Problem] = []
    if len(runs) != len(chapter.cells):
        problems.append(Problem(1, Kind.FORMAT, f"{len(runs)} cells ran but the chapter has "
                                             f"{len(chapter.cells)}"))
    for cell, run in zip(chapter.cells, runs):
        problems.extend(check_cell(cell, run))
        if run.error:
            rest = len(chapter.cells) - cell.index - 1
            if rest:
                problems.append(Problem(cell.line, Kind.NOT_RUN,
                                        f"the {rest} cells after cell {cell.index + 1} did not run"))
            break
    return problems


def refresh_text(chapter: Chapter, runs: list[CellRun]) -> str:
    """The chapter text with every recorded block replaced by what the cells printed."""
    lines = chapter.text.splitlines()
    trailing_newline = chapter.text.endswith("\n")
    # Edit from the bottom so earlier line numbers stay valid.
    for cell, run in sorted(zip(chapter.cells, runs), key=lambda p: -p[0].line):
        printed = normalise(run.stdout)
        if cell.output and cell.is_volatile and not output_diff(cell.output.text, run.stdout, True):
            continue  # keep the recorded numbers: only their shape is checked
        block = [OUTPUT_LABEL, "", "```text", *printed.splitlines(), "```"] if printed else []
        set_output_block(lines, cell, block)
    return "\n".join(lines) + ("\n" if trailing_newline else "")


def set_output_block(lines: list[str], cell: CodeCell, block: list[str]) -> None:
    """Replace, remove (``block == []``) or insert the recorded block after ``cell``, in place.

    Line numbers after the cell shift, so callers edit cells from the bottom up.
    """
    if cell.output:
        start, stop = cell.output.label_line - 1, cell.output.end_line
        lines[start:stop] = block
        if not block and start < len(lines) and not lines[start].strip():
            del lines[start]  # the blank line that separated the block from what follows
    elif block:
        lines[cell.end_line : cell.end_line] = ["", *block]
