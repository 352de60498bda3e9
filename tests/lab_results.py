"""The committed records of the labs in ``book/labs/``, as the tests of Part II read them.

A lab takes minutes to hours and is run by hand, so its record is committed; the tests check the
numbers the chapters quote from it. They read it through the book's own reader, so a missing
record, or one in another schema, fails the test that needs it: it never turns into a skip.
"""

from __future__ import annotations

from pathlib import Path

import agentrl as arl

RESULTS = Path(__file__).resolve().parent.parent / "book" / "labs" / "results"


def load_lab(stem: str) -> arl.Record:
    """The record ``results/<stem>.json`` through ``agentrl.load_record`` (its view for its kind)."""
    return arl.load_record(stem, RESULTS)
