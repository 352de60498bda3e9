"""Check that every page has the book's structure, and print a table of each chapter's size.

    python scripts/check_structure.py            # table for the English book, exit 1 on a problem
    python scripts/check_structure.py --locale zh

A thin command line over the press's rules (``ext/structure.py``, which the build applies too,
so both report the same problems): the prose-word ceiling of English pages, the length of
callouts, the chapter shape (4-8 numbered sections, then Design problems in practice >= 2,
a Summary opening with the saved API, Exercises >= 4, in the locale's words from
``ext/locale_table.py``) and the making-of phrases; problems listed in ``ext/structure_debt.py``
are not reported, and a listed problem that is gone is. It also holds the locale's index and
chapter graph to the book plan (``ext/book_plan.py``). Problems are printed as
``file:line: message [agentrl.kind]``. A CJK locale's size is counted in characters.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ext.book_plan import plan_problems
from ext.chapters import ChapterError, book_order
from ext.locale_table import SOURCE, by_folder, folders
from ext.structure import Shape, missing_files, shape

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["Shape", "main", "shape"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locale", default=SOURCE.folder, choices=folders())
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    book = args.root / "book"
    folder = book / args.locale
    failed = False
    unit = "chars" if by_folder(args.locale).cjk else "words"
    print(f"{'chapter':40} {unit:>6} {'max':>6} {'sect':>4} {'cells':>5} {'saves':>5} "
          f"{'design':>6} {'exer':>4} {'long':>4}")
    try:
        ordered = [folder / p.name for p in book_order(book / SOURCE.folder)]
        others = sorted(p for p in folder.glob("*.md") if p not in ordered)
        for path in ordered + others:
            if not path.exists():
                continue
            s = shape(path, args.locale)
            if path in ordered:
                ceiling = f"{s.ceiling:6}" if s.ceiling else f"{'-':>6}"
                print(f"{path.name:40} {s.words:6} {ceiling} {s.sections:4} {s.cells:5} "
                      f"{s.saves:5} {s.design_problems:6} {s.exercises:4} {s.long_callouts:4}")
            for problem in s.problems:
                print(problem.report())
                failed = True
    except ChapterError as error:
        print(error)
        return 1
    for problem in plan_problems(folder, by_folder(args.locale)) + missing_files(book,
                                                                                 args.locale):
        print(problem.report())
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
