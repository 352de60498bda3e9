"""The data figures: committed SVGs equal what ``scripts/figures/`` computes, and each is placed.

``scripts/build_figures.py --check`` recomputes every figure (with ``agentrl`` and the chapters'
own cells) and fails naming any SVG under ``book/*/figures/`` that differs. Each figure must
also appear as a ``{figure}`` directive in its chapter, in every language that has the chapter,
and be self-contained (text drawn as paths: no font needed to view it, no external reference).
"""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from ext.locale_table import folders

FIGURES = ROOT / "scripts" / "figures"
LOCALES = folders()


def modules():
    sys.path.insert(0, str(FIGURES))
    return [importlib.import_module(p.stem) for p in sorted(FIGURES.glob("[!_]*.py"))]


def test_committed_figures_are_current():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_figures.py"), "--check"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"stale figures:\n{result.stderr}{result.stdout}"


@pytest.mark.parametrize("module", modules(), ids=lambda m: m.NAME)
def test_figure_is_placed_in_its_chapter(module):
    placed = 0
    for lang in LOCALES:
        chapter = ROOT / "book" / lang / module.CHAPTER
        if not chapter.exists():
            continue
        directive = f"```{{figure}} figures/{module.NAME}.svg"
        assert directive in chapter.read_text(encoding="utf-8"), \
            f"{chapter.relative_to(ROOT)} has no `{directive}`"
        placed += 1
    assert placed, f"{module.NAME}: its chapter {module.CHAPTER} exists in no language"


@pytest.mark.parametrize("lang", LOCALES)
def test_svgs_need_no_font_and_nothing_external(lang):
    for svg in sorted((ROOT / "book" / lang / "figures").glob("*.svg")):
        text = svg.read_text(encoding="utf-8")
        assert "<text" not in text, f"{svg.name}: text not drawn as paths (svg.fonttype)"
        assert not re.search(r'(?:href|src)="(?:https?:|file:)', text), f"{svg.name}: external reference"
        assert "<dc:date>" not in text, f"{svg.name}: has a date (not byte-stable)"


def test_a_figure_that_cannot_be_computed_is_named_and_fails(tmp_path):
    """A module whose compute() raises (say, a lab result not produced yet) fails the build with
    its file and the error, instead of a traceback from the process pool."""
    for folder in ("scripts", "ext"):  # the figure modules read the locale table in ext/
        shutil.copytree(ROOT / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "scripts" / "figures" / "zz_broken.py").write_text(
        'NAME = "zz-broken"\nCHAPTER = "00-notation.md"\nTEXT = {"en": {}, "zh": {}}\n\n\n'
        'def compute():\n    raise FileNotFoundError("results/lab.json is missing")\n\n\n'
        'def draw(data, text):\n    raise AssertionError("never reached")\n', encoding="utf-8")
    result = subprocess.run([sys.executable, str(tmp_path / "scripts" / "build_figures.py"),
                             "--only", "zz-broken"], capture_output=True, text=True)
    assert result.returncode == 1
    assert ("scripts/figures/zz_broken.py: FileNotFoundError: results/lab.json is missing"
            in result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_same_drawing_tolerates_only_invisible_moves():
    """Another CPU's rounding moves a coordinate by hundredths of a point: the same figure.
    A visible move, another element, another word or a changed colour is another figure."""
    sys.path.insert(0, str(FIGURES))
    import _common

    svg = (b'<path d="M 10.5 20.25 L 30 40.125" style="stroke: #0072b2"/><g id="a1"/>'
           b'<use xlink:href="#m8298e678" x="-3.5e-1"/>')
    assert _common.same_drawing(svg, svg)
    assert _common.same_drawing(svg, svg.replace(b"20.25", b"20.28"))
    assert not _common.same_drawing(svg, svg.replace(b"m8298e678", b"m8298e679"))
    assert _common.same_drawing(svg, svg.replace(b"40.125", b"40.2"))
    assert not _common.same_drawing(svg, svg.replace(b"20.25", b"20.5"))
    assert not _common.same_drawing(svg, svg.replace(b"L 30", b"L 30 31"))
    assert not _common.same_drawing(svg, svg.replace(b"#0072b2", b"#0072b3"))
    assert not _common.same_drawing(svg, svg.replace(b'id="a1"', b'id="b1"'))
    assert not _common.same_drawing(svg, svg + b"<g/>")


def test_a_figure_checks_the_chapters_numbers_at_the_chapters_precision():
    """check_numbers_against_chapter reads the precision from the recorded output: a value
    that rounds to the printed number passes whatever the precision, one that does not fails
    naming it, and a different count of numbers fails."""
    sys.path.insert(0, str(FIGURES))
    import _common

    recorded = "steps   0- 24: mean loss 2.77\nsteps  25- 49: mean loss 1.1\nsteps 50: mean loss -0.003"
    pattern = r"mean loss ([-\d.]+)"
    _common.check_numbers_against_chapter("loss", [2.7749, 1.05, -0.0034], recorded, pattern)
    with pytest.raises(AssertionError, match="number 1 is 2.7751"):
        _common.check_numbers_against_chapter("loss", [2.7751, 1.1, -0.003], recorded, pattern)
    with pytest.raises(AssertionError, match="number 3"):
        _common.check_numbers_against_chapter("loss", [2.77, 1.1, -0.0036], recorded, pattern)
    with pytest.raises(AssertionError, match="printed 3 numbers"):
        _common.check_numbers_against_chapter("loss", [2.77, 1.1], recorded, pattern)
