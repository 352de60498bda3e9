"""The structure debt: problems that predate the structure rules, listed so main stays green.

Three lists, each entry naming its page as ``<locale folder>/<file>``:

* ``OVER_WORDS``: English pages over their prose-word ceiling, with their count when listed
  (a record: the check asks only that the page is still over);
* ``LONG_CALLOUTS``: callouts longer than the limit, by the opening of their text after the
  label (whitespace collapsed: the start of what the report quotes after the label);
* ``MAKING_OF``: pages whose prose uses a making-of phrase, by the phrase's name in
  ``ext.structure.PHRASES`` (one entry covers every use of that phrase on the page);
* ``TERM_VARIANTS``: pages whose prose uses a variant that the term table (``ext.terms``)
  forbids, by the variant (one entry covers every use of it on the page).

**This list only shrinks.** A listed problem is not reported; a listed problem that is gone (a
page cut below its ceiling, a callout shortened, a phrase rewritten, a page renamed) is itself
reported, so its entry is deleted in the same change that fixes it. A new problem is never
added here: fix it. ``tests/test_structure.py`` holds each list's length at or below today's.
Pure: does not import Sphinx.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .problems import FileProblem, Kind

OVER_WORDS: tuple[tuple[str, int], ...] = (
)

LONG_CALLOUTS: tuple[tuple[str, str], ...] = (
)

MAKING_OF: tuple[tuple[str, str], ...] = (
)

TERM_VARIANTS: tuple[tuple[str, str], ...] = (
)


@dataclass(frozen=True)
class Debt:
    over_words: tuple[tuple[str, int], ...]
    long_callouts: tuple[tuple[str, str], ...]
    making_of: tuple[tuple[str, str], ...]
    source: Path | None = None  # the file that lists them, for the line of a stale entry
    term_variants: tuple[tuple[str, str], ...] = ()

    @property
    def over_words_files(self) -> set[str]:
        return {entry[0] for entry in self.over_words}

    def entries(self):
        """(list name, its entries) of the three lists."""
        return [("over_words", self.over_words), ("long_callouts", self.long_callouts),
                ("making_of", self.making_of), ("term_variants", self.term_variants)]

    def problem(self, name: str, entry: tuple, message: str) -> FileProblem:
        """A stale entry, located at its line in the list's file (or at the page)."""
        if self.source is None:
            return FileProblem(Path(entry[0]), 1, Kind.DEBT, message)
        lines = self.source.read_text(encoding="utf-8").splitlines()
        start = next((i for i, l in enumerate(lines) if l.startswith(name.upper())), 0)
        needles = [repr(part) if isinstance(part, str) else str(part) for part in entry]
        for i in range(start, len(lines)):
            if all(n in lines[i] or re.sub(r"\s+", " ", n) in lines[i] for n in needles[:2]):
                return FileProblem(self.source, i + 1, Kind.DEBT, message)
        return FileProblem(self.source, start + 1, Kind.DEBT, message)


DEBT = Debt(OVER_WORDS, LONG_CALLOUTS, MAKING_OF, Path(__file__), TERM_VARIANTS)
