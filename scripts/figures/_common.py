"""What the figure modules share: matplotlib settings for byte-stable SVGs, fonts per locale, and
running the cells of a chapter that a figure's data depends on.

A figure module (``scripts/figures/chNN_*.py``, ``appX_*.py`` for an appendix) defines ``NAME``
(the SVG's file stem), ``CHAPTER`` (the chapter file it illustrates), ``TEXT`` (its words per
locale folder of ``ext/locale_table.py``), ``compute()`` (the data, computed with ``agentrl``
and, where the chapter builds its own example objects, with the chapter's own cells) and ``draw(data, text)`` (a matplotlib figure).
``scripts/build_figures.py`` runs each in a fresh process and writes
``book/<locale>/figures/<NAME>.svg``.

Byte stability: a fixed ``svg.hashsalt`` (the ids of clip paths), no date in the metadata, text
drawn as paths (``svg.fonttype = 'path'``, so a reader needs no font), data rounded before it
is drawn (so the last bit of a float sum rarely moves a coordinate), seeded computations. A
figure computed on another CPU may still move a coordinate by a few hundredths of a point (a
training run's last bits): :func:`same_drawing` counts that as the same figure.
English labels use matplotlib's own DejaVu Sans; Chinese labels Noto Sans CJK SC (Debian
``fonts-noto-cjk``), which also sets their Latin letters and digits; formulas use mathtext.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import math
import random
import re
import symtable
import sys
import types
from pathlib import Path

import matplotlib

matplotlib.use("svg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from ext.locale_table import SOURCE, by_folder, folders  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

BOOK_EN = ROOT / "book" / SOURCE.folder
LOCALES = tuple(folders())
CJK_FONT = "Noto Sans CJK SC"
LATIN_FONT = "DejaVu Sans"  # ships with matplotlib
WIDTH_IN = 6.4  # figures are drawn at this width and scaled to the column

# One palette for the book (colour-blind safe, Okabe-Ito), readable in greyscale by lightness.
BLUE, ORANGE, GREEN, GREY, SKY, VERMILION = "#0072B2", "#E69F00", "#009E73", "#8C8C8C", "#56B4E9", "#D55E00"


def cjk_font_file() -> str:
    try:
        return font_manager.findfont(font_manager.FontProperties(family=CJK_FONT),
                                     fallback_to_default=False)
    except ValueError:
        raise RuntimeError(f"the font {CJK_FONT!r} is not installed; Chinese labels need it "
                           "(Debian: apt-get install fonts-noto-cjk)") from None


def use_locale(locale: str) -> None:
    """Reset matplotlib to the book's style for one locale."""
    plt.rcdefaults()
    # Mathtext sets the words around a formula in the first family, so for Chinese the CJK font
    # comes first (it has Latin letters and digits too); DejaVu Sans stays as the fallback.
    cjk = by_folder(locale).cjk
    families = [CJK_FONT, LATIN_FONT] if cjk else [LATIN_FONT]
    if cjk:
        cjk_font_file()
    plt.rcParams.update({
        "svg.fonttype": "path",
        "svg.hashsalt": "agentrl-figures",
        "font.family": families,
        "font.size": 9,
        "axes.titlesize": 9,
        "axes.labelsize": 9,
        "legend.fontsize": 8,
        "xtick.labelsize": 8,
        "ytick.labelsize": 8,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.color": "#dddddd",
        "grid.linewidth": 0.6,
        "axes.axisbelow": True,
        "legend.frameon": False,
        "figure.dpi": 100,
        "axes.unicode_minus": True,
    })


def svg_bytes(fig) -> bytes:
    """The figure as SVG bytes: no date, a fixed creator, so reruns give the same bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.05,
                metadata={"Date": None, "Creator": "scripts/build_figures.py (matplotlib)"})
    plt.close(fig)
    return buffer.getvalue()


# How far two drawings of a figure may differ and still be the same figure: 0.1 SVG units
# (1/720 inch, 0.035 mm), far below a printer's dot. Data computed on another CPU moves a few
# coordinates by a few hundredths (the last bits of a training run's losses), never more.
SVG_TOLERANCE = 0.1
# A number standing alone: not the digits inside an id such as "m8298e678" or a colour "#0072b2".
_SVG_NUMBER = re.compile(rb"(?<![\w.#])-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\w.])")


def same_drawing(a: bytes, b: bytes, tolerance: float = SVG_TOLERANCE) -> bool:
    """Two SVGs draw the same figure: identical but for numbers that differ by <= ``tolerance``.

    Elements, attributes, ids and text must match exactly; only the numbers may move, and only
    by an amount no reader can see. Used by ``build_figures.py`` both to check and to decide
    whether to rewrite a committed SVG, so a figure computed on another CPU is current."""
    if _SVG_NUMBER.sub(b"#", a) != _SVG_NUMBER.sub(b"#", b):
        return False
    return all(abs(float(x) - float(y)) <= tolerance
               for x, y in zip(_SVG_NUMBER.findall(a), _SVG_NUMBER.findall(b)))


def rounded(values, digits: int = 4) -> list[float]:
    """Round to ``digits`` significant digits: what the figure needs, and stable across CPUs."""
    return [float(f"{float(v):.{digits}g}") for v in values]


def trailing_mean(xs: list[float], window: int) -> list[float]:
    """Trailing mean over the last `window` values that are not NaN (NaN where there are none):
    a dashboard's smoothed line, where an update may not log a quantity."""
    out = []
    for i in range(len(xs)):
        part = [x for x in xs[max(0, i - window + 1):i + 1] if not math.isnan(x)]
        out.append(sum(part) / len(part) if part else math.nan)
    return out


def seed_everything(seed: int = 0) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


# --- the chapter's own cells --------------------------------------------------------------------

def _bound_names(cell: ast.Module) -> set[str]:
    """Names a cell binds at top level (assignments, defs, imports, loop and with targets)."""
    bound: set[str] = set()

    def targets(node):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                bound.add(sub.id)

    for stmt in cell.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                targets(target)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets(stmt.target)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            targets(stmt.target)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    targets(item.optional_vars)
    return bound


def _used_names(source: str, bound: set[str]) -> set[str]:
    """Names a cell reads from earlier cells: global names read at top level or inside its
    functions and comprehensions, less the names the cell binds itself (a cell that rebinds a
    name it reads, ``x = f(x)``, fails loudly with a NameError rather than silently)."""
    used: set[str] = set()

    def visit(table: symtable.SymbolTable, top: bool) -> None:
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                used.add(symbol.get_name())
        for child in table.get_children():
            visit(child, False)

    visit(symtable.symtable(source, "cell", "exec"), True)
    return used - bound - set(dir(builtins))


def run_chapter_cells(chapter: str, names: tuple[str, ...],
                      every_cell: bool = False) -> tuple[dict, list[tuple[str, str]]]:
    """Run the cells of the English ``chapter`` that ``names`` depend on.

    Returns their namespace and, for every cell run, (its source, what it printed). The cells
    run in book order, in one namespace: the first cell (imports and seeds, by the book's
    convention), the cell that first binds each of ``names``, and, transitively, every earlier
    cell binding a name those cells read. With ``every_cell``, every cell up to the last of
    those runs: needed when a result depends on state no name carries (the global random
    generator consumed by earlier cells). This is the chapter's own code, so the chapter and
    its figure cannot disagree about the example; a figure module also checks what it draws
    against the chapter's recorded output, which catches a slice that left out such state.
    """
    from ext.chapters import read_chapter

    cells = read_chapter(BOOK_EN / chapter).cells
    bound = [_bound_names(ast.parse(cell.source)) for cell in cells]
    first = {}
    for index, names_here in enumerate(bound):
        for name in names_here:
            first.setdefault(name, index)
    missing = [name for name in names if name not in first]
    if missing:
        raise LookupError(f"{chapter}: no cell binds {', '.join(missing)}")
    last = max(first[name] for name in names)
    needed, chosen = set(names), {0} | (set(range(last + 1)) if every_cell else set())
    for index in range(last, -1, -1):
        if bound[index] & needed or index == last:
            chosen.add(index)
            needed |= _used_names(cells[index].source, bound[index])
    module = types.ModuleType(f"figure_{Path(chapter).stem.replace('-', '_')}")
    sys.modules[module.__name__] = module
    printed = []
    for index in sorted(chosen):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(cells[index].source, f"{chapter} cell {index}", "exec"), module.__dict__)
        printed.append((cells[index].source, out.getvalue()))
    return module.__dict__, printed


def chapter_namespace(chapter: str, names: tuple[str, ...], every_cell: bool = False) -> dict:
    """The namespace of :func:`run_chapter_cells` (what the cells printed is discarded)."""
    return run_chapter_cells(chapter, names, every_cell)[0]


def recorded_output(chapter: str, marker: str) -> str:
    """The recorded ``Output:`` block of the English chapter's cell whose source has ``marker``."""
    from ext.chapters import read_chapter

    for cell in read_chapter(BOOK_EN / chapter).cells:
        if marker in cell.source and cell.output is not None:
            return cell.output.text
    raise LookupError(f"{chapter}: no cell with a recorded output contains {marker!r}")


def check_against_chapter(what: str, drawn: str, recorded: str) -> None:
    """Fail when the figure's text (counts, labels) is not the one the chapter printed."""
    if drawn.strip() != recorded.strip():
        raise AssertionError(f"{what}: the figure's data disagree with the chapter's recorded "
                             f"output\n--- recorded\n{recorded}\n--- figure\n{drawn}")


def check_numbers_against_chapter(what: str, values, recorded: str, pattern: str) -> None:
    """Fail unless each of ``values`` is the number the chapter printed for it, at the
    chapter's precision: ``pattern`` (a regex with one group) finds the printed numbers in
    ``recorded``, in order, and a value matches when it lies within half a unit of the printed
    number's last digit. The figure never restates the chapter's format, so a chapter may
    print at another precision without breaking its figure."""
    printed = re.findall(pattern, recorded)
    values = [float(v) for v in values]
    if len(printed) != len(values):
        raise AssertionError(f"{what}: the chapter printed {len(printed)} numbers matching "
                             f"{pattern!r}, the figure has {len(values)}")
    for i, (text, value) in enumerate(zip(printed, values)):
        decimals = len(text.partition(".")[2])
        if abs(value - float(text)) > 0.5 * 10 ** -decimals + 1e-12:
            raise AssertionError(f"{what}: number {i + 1} is {value!r} in the figure, "
                                 f"{text} in the chapter's recorded output")
