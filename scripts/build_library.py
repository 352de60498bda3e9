"""Write agentrl/__init__.py from every #@save cell of the book, in book order.

    python scripts/build_library.py           # regenerate the package
    python scripts/build_library.py --check   # exit 1 if the committed package is stale

Save cells are validated on the way (only imports, definitions and UPPER_CASE constants);
a malformed one is reported as ``file:line: message`` and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ext.chapters import ChapterError
from ext.library import PACKAGE, library_text, load_book
from ext.problems import Kind, report_line

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the package is stale")
    parser.add_argument("--book", type=Path, default=ROOT / "book" / "en")
    parser.add_argument("--out", type=Path, default=ROOT / PACKAGE / "__init__.py")
    args = parser.parse_args(argv)
    try:
        _, staging = load_book(args.book)
    except ChapterError as error:
        print("error: " + report_line(error.location, Kind.LIBRARY, error.message),
              file=sys.stderr)
        return 1
    text = library_text(list(staging.blocks))
    current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
    if args.check:
        if current != text:
            print(f"{args.out} is stale: run python scripts/build_library.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date ({len(staging.blocks)} save blocks)")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    names = sum(len(b.names) for b in staging.blocks)
    print(f"wrote {args.out} ({len(staging.blocks)} save blocks, {names} symbols)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
