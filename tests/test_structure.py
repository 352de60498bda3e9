"""scripts/check_structure.py: the real book has the book's shape; a broken chapter is named."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ext.locale_table import folders  # noqa: E402

SPEC = importlib.util.spec_from_file_location("check_structure", ROOT / "scripts" / "check_structure.py")
check_structure = importlib.util.module_from_spec(SPEC)
sys.modules["check_structure"] = check_structure  # dataclasses look the module up
SPEC.loader.exec_module(check_structure)


@pytest.mark.parametrize("locale", folders())
def test_real_book_has_the_shape(locale, capsys):
    assert check_structure.main(["--locale", locale]) == 0, capsys.readouterr().out


def _copy_book(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("labs"))
    return tmp_path / "book" / "en" / "02-rl-fundamentals.md"


def test_too_few_exercises_is_named_with_its_line(tmp_path, capsys):
    chapter = _copy_book(tmp_path)
    text = chapter.read_text(encoding="utf-8")
    head, exercises = text.split("## Exercises", 1)
    kept = "\n".join(l for l in exercises.splitlines() if not re.match(r"^[4-9]\. ", l))
    chapter.write_text(head + "## Exercises" + kept, encoding="utf-8")
    line = head.count("\n") + 1
    assert check_structure.main(["--root", str(tmp_path)]) == 1
    assert f"{chapter}:{line}: 3 exercises (want >= 4)" in capsys.readouterr().out


def test_missing_closing_section_is_reported(tmp_path, capsys):
    chapter = _copy_book(tmp_path)
    text = chapter.read_text(encoding="utf-8")
    chapter.write_text(text.replace("## Summary", "## Recap"), encoding="utf-8")
    assert check_structure.main(["--root", str(tmp_path)]) == 1
    assert f"{chapter}:1: no '## Summary' section" in capsys.readouterr().out


def test_a_save_missing_from_the_summarys_saved_api_is_named(tmp_path, capsys):
    chapter = _copy_book(tmp_path)
    text = chapter.read_text(encoding="utf-8")
    head, summary = text.split("## Summary", 1)
    api, rest = summary.strip().split("\n\n", 1)
    dropped = re.findall(r"`([^`]+)`", api)[0]
    api = re.sub(rf"`{dropped}`,?\s*", "", api, count=1)
    chapter.write_text(head + "## Summary\n\n" + api + "\n\n" + rest, encoding="utf-8")
    line = head.count("\n") + 1
    assert check_structure.main(["--root", str(tmp_path)]) == 1
    assert (f"{chapter}:{line}: the Summary's saved API leaves out `{dropped}`"
            in capsys.readouterr().out)
