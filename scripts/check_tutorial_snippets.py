"""Execute chapters outside Sphinx and compare every cell's stdout with its recorded block.

    python scripts/check_tutorial_snippets.py --chapters 00 02        # verify
    python scripts/check_tutorial_snippets.py --chapters 02 --refresh # rewrite Output blocks
    python scripts/check_tutorial_snippets.py --chapters all --locale zh --threads 1
    python scripts/check_tutorial_snippets.py --chapters 06 --slowest 5  # where the time goes

Each chapter runs in a fresh kernel, in a temporary directory, against a library staged from
the saves of earlier chapters only (the same staging as the build). Exit status 0 when every
block matches, 1 otherwise; problems are printed as ``file:line: message`` with a diff
*recorded -> executed*, each tagged with its kind (``[agentrl.drift]``; the kinds are listed in
``ext/problems.py``). With ``--refresh`` the recorded blocks are rewritten from the run, unless
a problem of a fatal kind (a cell that raised, a timeout ...) says the run cannot be recorded;
read every changed output afterwards.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ext.chapters import Chapter, ChapterError, read_chapter
from ext.execute import run_chapter
from ext.library import add_selection_arguments, check_imports, check_uses, load_selection
from ext.outputs import CellRun, Problem, check_chapter, refresh_text
from ext.problems import Kind, report_line

ROOT = Path(__file__).resolve().parent.parent


def refresh(chapter: Chapter, runs: list[CellRun], problems: list[Problem]) -> list[Problem]:
    """Record what the cells printed, unless a fatal problem says the run cannot be recorded.

    Returns the problems left: all of them when refused, else those a refresh does not repair.
    """
    if any(p.kind.fatal for p in problems):
        return problems
    text = refresh_text(chapter, runs)
    if text != chapter.text:
        chapter.path.write_text(text, encoding="utf-8")
        print(f"{chapter.path}: refreshed recorded outputs; read them and update the prose")
    return [p for p in problems if not p.kind.refreshable]


def check_one(path: Path, staging, stage_root: Path, args) -> bool:
    try:
        chapter = read_chapter(path)
    except ChapterError as error:
        print(report_line(error.location, Kind.FORMAT, error.message))
        return False
    try:
        check_imports(chapter)
        check_uses(chapter, staging)
    except ChapterError as error:
        print(report_line(error.location, Kind.ORDER, error.message))
        return False
    if not chapter.cells:
        return True
    staged = staging.stage(path.name, stage_root)
    result = run_chapter(chapter, staged, timeout=args.timeout, threads=args.threads)
    problems = check_chapter(chapter, result.runs)
    for problem in problems:
        print(report_line(f"{path}:{problem.line}", problem.kind, problem.message))
    if args.refresh:
        problems = refresh(chapter, result.runs, problems)
    status = "ok" if not problems else f"{len(problems)} problem(s)"
    print(f"{path.name}: {len(chapter.cells)} cells, {status} ({result.seconds:.1f} s)")
    for line in slowest_cells(chapter, result.cell_seconds, args.slowest):
        print(line)
    return not problems


def slowest_cells(chapter, seconds: list[float | None], count: int) -> list[str]:
    """The ``count`` slowest cells, each as ``path:line: N.N s``, slowest first."""
    timed = [(s, cell) for s, cell in zip(seconds, chapter.cells) if s is not None]
    timed.sort(key=lambda pair: -pair[0])
    return [f"  {chapter.path}:{cell.line}: {s:.1f} s" for s, cell in timed[:count]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_selection_arguments(parser, ROOT)
    parser.add_argument("--refresh", action="store_true", help="rewrite recorded outputs")
    parser.add_argument("--threads", type=int, default=None, help="torch/OpenMP threads")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    parser.add_argument("--slowest", type=int, default=0, metavar="N",
                        help="also print each chapter's N slowest cells (wall seconds)")
    args = parser.parse_args(argv)
    selection = load_selection(args.root, args.locale, args.chapters)
    if isinstance(selection, int):
        return selection
    staging, paths = selection
    ok = [check_one(p, staging, args.root / "_build" / "staged", args) for p in paths]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
