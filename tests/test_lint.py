"""The linter: ruff, with the conservative rules of pyproject.toml ([tool.ruff]), finds nothing.

Pyflakes-level errors only (unused imports and variables, undefined names, ...) in the press,
the scripts, the tests and the labs; agentrl/ is generated from the chapters and left out.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    assert importlib.util.find_spec("ruff"), "ruff is missing: pip install -e '.[test]'"
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                             "--output-format", "concise", "."],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_generated_library_is_not_linted():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                             "--show-files", "."], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    files = result.stdout.splitlines()
    assert files, result.stderr
    assert not [f for f in files if "/agentrl/" in f]
    assert [f for f in files if f.endswith("ext/structure.py")]
