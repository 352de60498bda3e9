"""Check that every chapter has the book's shape, and print a table of its size.

    python scripts/check_structure.py            # table for the English book, exit 1 on a problem
    python scripts/check_structure.py --locale zh

A numbered chapter or Appendix A (not 00, B or sources) needs 4-8 numbered sections, the three
closing sections in order (Design problems in practice / Summary / Exercises, in the locale's
words from ``ext/locale_table.py``), at least 2 design problems, at least 4 exercises, and a
Summary whose first item names the saved API: every public symbol the chapter's ``#@save``
cells define, in backticks. Problems are printed as ``file:line: message``.
Word counts are of prose only (code cells, outputs and fenced blocks removed); a CJK locale is
counted in characters.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ext.chapters import ChapterError, book_order, read_chapter  # noqa: E402
from ext.library import save_block  # noqa: E402
from ext.locale_table import SOURCE, by_folder, folders  # noqa: E402


@dataclass
class Shape:
    words: int
    sections: int
    cells: int
    saves: int
    design_problems: int
    exercises: int
    problems: list[str]


def _section(text: str, heading: str) -> tuple[int, str]:
    """(1-based line, body) of a level-2 section, or (0, '') when absent."""
    match = re.search(rf"^## {re.escape(heading)}\s*$", text, flags=re.M)
    if not match:
        return 0, ""
    line = text.count("\n", 0, match.start()) + 1
    rest = text[match.end():]
    end = re.search(r"^## ", rest, flags=re.M)
    return line, rest[: end.start()] if end else rest


def shape(path: Path, folder: str) -> Shape:
    locale = by_folder(folder)
    chapter = read_chapter(path)
    prose = re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", "", chapter.prose(), flags=re.M | re.S)
    words = (len(re.findall(r"[\u4e00-\u9fff]", prose)) if locale.cjk
             else len(re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]*", prose)))
    sections = len(re.findall(r"^## (\d+|[A-Z])\.\d+ ", chapter.text, flags=re.M))
    design_heading, summary_heading, exercises_heading = locale.closing_headings
    design_line, design = _section(chapter.text, design_heading)
    summary_line, summary = _section(chapter.text, summary_heading)
    exercise_line, exercises = _section(chapter.text, exercises_heading)
    design_count = len(re.findall(r"^(###|\*\*|\d+\. \*\*)", design, flags=re.M))
    exercise_count = len(re.findall(r"^\d+\. ", exercises, flags=re.M))
    problems = []
    numbered = re.match(r"^(\d\d|A)-", path.name) and not path.name.startswith("00-")
    if numbered:
        where = f"{path}:"
        if not 4 <= sections <= 8:
            problems.append(f"{where}1: {sections} numbered sections (want 4-8)")
        lines = [design_line, summary_line, exercise_line]
        for heading, line in zip(locale.closing_headings, lines):
            if not line:
                problems.append(f"{where}1: no '## {heading}' section")
        if all(lines) and lines != sorted(lines):
            problems.append(f"{where}{design_line}: closing sections out of order")
        if design_line and design_count < 2:
            problems.append(f"{where}{design_line}: {design_count} design problems (want >= 2)")
        if exercise_line and exercise_count < 4:
            problems.append(f"{where}{exercise_line}: {exercise_count} exercises (want >= 4)")
        first_item = summary.strip().split("\n\n", 1)[0]
        if summary_line and locale.saved_api.lower() not in first_item.lower():
            problems.append(f"{where}{summary_line}: the Summary must open with the saved API")
        elif summary_line:
            listed = set(re.findall(r"`([^`]+)`", first_item))
            saved = [n for c in chapter.cells if c.is_save
                     for n in save_block(c, chapter).names if not n.startswith("_")]
            left_out = [n for n in saved if n not in listed]
            if left_out:
                problems.append(f"{where}{summary_line}: the Summary's saved API leaves out "
                                + ", ".join(f"`{n}`" for n in left_out))
    return Shape(words, sections, len(chapter.cells), sum(c.is_save for c in chapter.cells),
                 design_count, exercise_count, problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locale", default=SOURCE.folder, choices=folders())
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    book = args.root / "book"
    failed = False
    unit = "chars" if by_folder(args.locale).cjk else "words"
    print(f"{'chapter':40} {unit:>6} {'sect':>4} {'cells':>5} {'saves':>5} {'design':>6} {'exer':>4}")
    try:
        paths = [book / args.locale / p.name for p in book_order(book / SOURCE.folder)]
        for path in paths:
            if not path.exists():
                continue
            s = shape(path, args.locale)
            print(f"{path.name:40} {s.words:6} {s.sections:4} {s.cells:5} {s.saves:5} "
                  f"{s.design_problems:6} {s.exercises:4}")
            for problem in s.problems:
                print(problem)
                failed = True
    except ChapterError as error:
        print(error)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
