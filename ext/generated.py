"""A generated file of the repository: written atomically, or checked against its source.

The scripts that write a committed file from other files (``scripts/records_manifest.py``,
``scripts/labs_index.py``) share one way to do it: without ``--check`` they write the new text
over the file in one rename (a reader never sees half of it); with ``--check`` they compare and
name the command that brings the file up to date.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(path: Path, text: str, check: bool, command: str) -> bool:
    """Write ``text`` to ``path`` (True), or with ``check`` say whether ``path`` holds it, telling
    on stderr which ``command`` rewrites it when it does not."""
    if check:
        if (path.read_text(encoding="utf-8") if path.exists() else None) == text:
            return True
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{shown} is stale: run {command}", file=sys.stderr)
        return False
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return True
