"""The committed results of the labs in ``book/labs/``, as the tests of Part II read them.

A lab takes minutes to hours and is run by hand, so a test that reads its results skips (it
does not fail) when the file has not been produced; once committed, the numbers a chapter
quotes from it are checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parent.parent / "book" / "labs" / "results"


def load_lab(stem: str) -> dict:
    """``results/<stem>.json`` as a dict, or skip the calling test if the lab has not been run."""
    path = RESULTS / f"{stem}.json"
    if not path.exists():
        pytest.skip(f"{path.name} not present (run book/labs/{stem}.py)")
    return json.loads(path.read_text())
