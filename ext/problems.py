"""Every kind of problem the press reports, in one table (like myst-nb's ``warnings_.py``).

A kind is the subtype of a Sphinx warning of type ``agentrl`` (``[agentrl.drift]`` in the
build log; ``suppress_warnings = ["agentrl.budget"]`` would silence one) and the tag the
scripts print after ``file:line: message``. A *fatal* kind means the chapter's text or its run
is broken, so nothing may be recorded from it: the checker's ``--refresh`` refuses a chapter
with one. A *refreshable* kind is one ``--refresh`` repairs by recording what the cells
printed; the others stay reported after a refresh. Pure: does not import Sphinx.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

WARNING_TYPE = "agentrl"


class Kind(enum.Enum):
    """A problem kind: its subtype, whether it is fatal, whether ``--refresh`` repairs it."""

    DRIFT = ("drift", False, True, "a cell printed something other than its recorded block")
    MISSING_OUTPUT = ("missing-output", False, True, "a cell prints but has no 'Output:' block")
    STALE_OUTPUT = ("stale-output", False, True, "a recorded block for a cell that prints nothing")
    DISPLAY = ("display", False, False, "a cell displays a value instead of printing it")
    STDERR = ("stderr", False, False, "a cell wrote to stderr")
    ERROR = ("error", True, False, "a cell raised, or the kernel died")
    TIMEOUT = ("timeout", True, False, "a cell ran past the execution timeout")
    NOT_RUN = ("not-run", True, False, "cells after a failing cell did not run")
    SAVE_PRINTS = ("save-prints", True, False, "a #@save cell prints")
    FORMAT = ("format", True, False, "a chapter file cannot be read, or cells went missing")
    LIBRARY = ("library", True, False, "the #@save cells cannot make a library")
    ORDER = ("order", True, False, "a forbidden import, or a use of a later chapter's save")
    PARITY = ("parity", True, False, "a translation's cells or outputs differ from the English")
    STALE_TRANSLATION = ("stale-translation", False, False,
                         "the English prose changed since the translation was stamped")
    UNTRANSLATED = ("untranslated", False, False, "an English chapter has no translation")
    BUDGET = ("budget", False, False, "a chapter ran longer than its time budget")
    MARGIN = ("margin", False, False,
              "a printed value sits so near a rounding boundary that another CPU may round it "
              "otherwise")
    REFERENCE = ("reference", True, False,
                 "the library reference page cannot place a save in its chapter's sections")
    # The book's structure (ext.structure): reported by the build and scripts/check_structure.py.
    WORDS = ("words", False, False, "a chapter has more prose words than its ceiling")
    CALLOUT = ("callout", False, False, "a callout is longer than its limit of lines")
    SECTIONS = ("sections", False, False,
                "a chapter lacks the book's shape: numbered sections, design problems, summary "
                "with the saved API, exercises")
    MAKING_OF = ("making-of", False, False,
                 "prose speaks of how the book was made (a work session, a review, a CI run)")
    TERM = ("term", False, False,
            "zh prose uses a rendering of a term that the term table forbids (ext/terms.py)")
    DEBT = ("debt", False, False,
            "ext/structure_debt.py lists a problem that is gone: shrink the list")
    PLAN = ("plan", False, False,
            "an index, toctree or chapter graph disagrees with the book plan (ext/book_plan.py)")

    def __init__(self, subtype: str, fatal: bool, refreshable: bool, description: str):
        self.subtype, self.fatal, self.refreshable = subtype, fatal, refreshable
        self.description = description

    @property
    def tag(self) -> str:
        """``agentrl.<subtype>``, as Sphinx prints it and ``suppress_warnings`` names it."""
        return f"{WARNING_TYPE}.{self.subtype}"


def warn(logger, kind: Kind, message: str, location) -> None:
    """Emit a Sphinx warning of ``kind`` through a ``sphinx.util.logging`` logger."""
    logger.warning(message, location=location, type=WARNING_TYPE, subtype=kind.subtype)


def report_line(location: str, kind: Kind, message: str) -> str:
    """How the scripts print a problem: ``file:line: message [agentrl.kind]`` and any detail.

    The tag ends the first line, so a diff that follows stays readable.
    """
    first, _, rest = message.partition("\n")
    return f"{location}: {first} [{kind.tag}]" + (f"\n{rest}" if rest else "")


@dataclass(frozen=True)
class FileProblem:
    """One problem found in a file by a pure check (``ext.structure``): where, which, what."""

    path: Path
    line: int
    kind: Kind
    message: str

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def report(self) -> str:
        """``file:line: message [agentrl.kind]``, as the scripts print it."""
        return report_line(self.location, self.kind, self.message)
