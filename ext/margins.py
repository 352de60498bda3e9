"""The margin check: a rounded print must not sit next to a rounding boundary.

A value printed as ``f'{x:.4f}'`` comes out the same on every reader's CPU only if every CPU's
``x`` rounds to the same digits. The portability check (``scripts/check_portability.py``) runs
each chapter under several numeric paths and compares the text; a value that prints the same
under all of them today can still sit so close to a boundary (0.187650 at four decimals) that
another CPU's last bits tip it over. So the check also records the value behind every rounded
print (:mod:`ext.margin_probe`) under each path and reports, with :func:`fragile_prints`, those
whose distance to the nearest rounding boundary is under :data:`FACTOR` times their spread across
the paths. The spread is the measured size of the numeric noise, and a pessimistic one: the
portable kernels even draw ``torch.randn`` differently, so a model trained from scratch starts
from other weights. Four times that spread is a margin another CPU's noise is unlikely to cross;
a print measured between four and ten spreads from a boundary is worth another digit less when
its chapter is next refreshed, since the next machine measures its own spread. Values equal to the bit under every path (counts, exact
fractions, arithmetic whose order no kernel changes) are never reported: they round alike
everywhere, however near a boundary they sit.

The fix for a reported print is the one for a drifting one: another precision, or another
quantity (a bound or a check rather than the last digits).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from . import margin_probe
from .chapters import Chapter
from .library import SaveBlock, library_origin

FACTOR = 4.0
# [[fill]align][sign][z][#][0][width][grouping][.precision][type], as in format()'s mini-language
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?\d*[,_]?(?:\.(?P<precision>\d+))?(?P<type>[a-zA-Z%])?")


def probe_cells() -> tuple[str, str]:
    """The cell to run before a chapter's cells and the one to run after them."""
    return Path(margin_probe.__file__).read_text(encoding="utf-8"), margin_probe.REPORT_CELL


def read_notes(stdout: str) -> dict[str, list]:
    """The probe's notes from what :data:`ext.margin_probe.REPORT_CELL` printed."""
    lines = stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def last_digit(spec: str, x: float) -> float | None:
    """The value of one unit in the last digit ``spec`` prints ``x`` with, or None when the spec
    does not round a float to a fixed number of digits (``'s'``, ``'d'``, no precision, ...)."""
    if spec.startswith("round:"):
        return 10.0 ** -int(spec.removeprefix("round:"))
    match = _SPEC.fullmatch(spec)
    if not match:
        return None
    kind, precision = match["type"], match["precision"]
    if kind in ("f", "F", "%"):
        digits = 6 if precision is None else int(precision)
        return 10.0 ** -digits / (100 if kind == "%" else 1)
    if kind in ("e", "E", "g", "G", "n") or (kind is None and precision is not None):
        if kind in ("e", "E"):
            significant = (6 if precision is None else int(precision)) + 1
        else:
            significant = max(1, 6 if precision is None else int(precision))
        if x == 0 or not math.isfinite(x):
            return None
        return 10.0 ** (math.floor(math.log10(abs(x))) - significant + 1)
    return None


def boundary_distance(spec: str, x: float, signed: bool = True) -> float | None:
    """How far ``x`` is from the nearest value that ``spec`` rounds the other way; None when
    ``spec`` does not round (see :func:`last_digit`). With ``signed``, a value that rounds to
    zero also has zero itself as a boundary: ``'-0.000'`` against ``'0.000'``."""
    unit = last_digit(spec, x)
    if unit is None or not math.isfinite(x):
        return None
    scaled = abs(x) / unit
    distance = abs(scaled - math.floor(scaled) - 0.5) * unit
    if signed and abs(x) < unit / 2:
        distance = min(distance, abs(x))
    return distance


@dataclass(frozen=True)
class FragilePrint:
    """A rounded print whose value sits within ``FACTOR`` spreads of a rounding boundary."""

    key: str  # the probe's: '<cell<i> or agentrl>:<line>:<column>@<running cell>'
    spec: str
    values: dict[str, float]  # numeric path -> the value, at the worst occurrence
    distance: float  # from the nearest boundary, smallest over the paths
    occurrences: int  # how many of the key's values are fragile

    @property
    def spread(self) -> float:
        return max(self.values.values()) - min(self.values.values())

    def message(self) -> str:
        shown = ", ".join(f"{v!r} ({name})" for name, v in self.values.items())
        times = f" ({self.occurrences} times)" if self.occurrences > 1 else ""
        return (f"a value printed with '{self.spec}' sits {self.distance:.1e} from a rounding "
                f"boundary, {self.distance / self.spread:.1f} times its spread across numeric "
                f"paths{times}: {shown}; another CPU may print other digits")


def fragile_prints(notes: dict[str, dict[str, list]], factor: float = FACTOR) -> list[FragilePrint]:
    """Rounded prints of one chapter that another CPU may round otherwise.

    ``notes`` maps each numeric path's name to the probe's notes of the chapter run under it.
    A key is compared where every path noted it as often; where the counts differ, the run took
    other branches and the portability check's own comparison of the outputs speaks for it.
    """
    paths = list(notes)
    if len(paths) < 2:
        return []
    found = []
    for key in sorted(set.intersection(*(set(notes[p]) for p in paths))):
        spec = notes[paths[0]][key][0]
        series = [notes[p][key][1] for p in paths]
        if len({len(s) for s in series}) != 1:
            continue
        worst, count = None, 0
        for values in zip(*series):
            if not all(math.isfinite(v) for v in values):
                continue
            spread = max(values) - min(values)
            # zero is a boundary only for a quantity seen negative: a chapter prints a norm, a
            # probability or an abs() that rounds to zero as '0.000' on every machine
            signed = min(values) < 0
            distances = [boundary_distance(spec, v, signed) for v in values]
            if spread == 0 or None in distances or min(distances) >= factor * spread:
                continue
            count += 1
            if worst is None or min(distances) / spread < worst[0] / worst[1]:
                worst = (min(distances), spread, values)
        if worst:
            found.append(FragilePrint(key, spec, dict(zip(paths, worst[2])), worst[0], count))
    return found


def running_cell(key: str) -> int:
    """The index of the chapter's code cell that was running when the probe noted ``key``."""
    return int(key.rpartition("@")[2])


def locate(key: str, chapter: Chapter, blocks: list[SaveBlock]) -> tuple[Path, int]:
    """The file and line of the print a probe key names.

    Library keys are lines of the staged ``agentrl/__init__.py``, traced back to the chapter
    that saved them; a line the press wrote itself is charged to the chapter's top."""
    where, line, _ = key.rpartition("@")[0].rsplit(":", 2)
    if where.startswith("cell"):
        cell = chapter.cells[int(where.removeprefix("cell"))]
        return chapter.path, cell.first_code_line + int(line) - 1
    origin = library_origin(blocks, int(line))
    if origin is None:
        return chapter.path, 1
    return chapter.path.parent / origin[0], origin[1]


def chapter_margins(chapter: Chapter, notes: dict[str, dict[str, list]], blocks: list[SaveBlock],
                    factor: float = FACTOR) -> list[tuple[str, str]]:
    """``(file:line, message)`` for each fragile print of one chapter run under several paths.

    Prints made while a ``volatile-output`` cell ran are left out: the gate masks their numbers.
    A print in the library also names the cell that called it."""
    found = []
    for fragile in fragile_prints(notes, factor):
        cell = chapter.cells[running_cell(fragile.key)]
        if cell.is_volatile:
            continue
        path, line = locate(fragile.key, chapter, blocks)
        message = fragile.message()
        if not fragile.key.startswith("cell"):
            message += f" (called by the cell at {chapter.path}:{cell.line})"
        found.append((f"{path}:{line}", message))
    return found
