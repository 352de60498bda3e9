"""The margin check's arithmetic (:mod:`ext.margins`): where a format rounds, how far a value is
from the nearest boundary, and which prints are fragile given their spread across numeric paths.
The probe itself, in a kernel and through the library, is tested end to end in
``test_press_portability.py``."""

from __future__ import annotations

import math

import pytest

from ext.chapters import read_chapter
from ext.library import SaveBlock, library_text
from ext.margins import (FACTOR, boundary_distance, chapter_margins, fragile_prints, last_digit,
                         locate)


@pytest.mark.parametrize("spec, x, unit", [
    (".4f", 0.1876, 1e-4),
    ("11.3f", 5.66, 1e-3),
    (">8,.2f", 1234.5, 1e-2),
    ("f", 0.5, 1e-6),
    (".1%", 0.25, 1e-3),
    (".3g", 0.0123, 1e-4),
    (".3g", 263.5, 1.0),
    ("10.2g", 0.089, 1e-3),
    (".2e", 12345.0, 100.0),
    (".3", 2.5, 1e-2),
    ("round:4", 0.3, 1e-4),
])
def test_last_digit_is_the_unit_of_the_last_printed_digit(spec, x, unit):
    assert last_digit(spec, x) == pytest.approx(unit)


@pytest.mark.parametrize("spec", ["d", "s", ">10", "", "x", "3"])
def test_formats_that_do_not_round_a_float_have_no_last_digit(spec):
    assert last_digit(spec, 0.5) is None and boundary_distance(spec, 0.5) is None


def test_distance_to_the_nearest_rounding_boundary():
    assert boundary_distance(".4f", 0.18765053) == pytest.approx(5.3e-7)
    assert boundary_distance(".4f", 0.18764982) == pytest.approx(1.8e-7)
    assert boundary_distance(".4f", 0.1876) == pytest.approx(5e-5)
    assert boundary_distance(".1%", 0.12345) == pytest.approx(5e-5)  # 12.345% from 12.35%
    assert boundary_distance(".3g", 263.49) == pytest.approx(0.01)
    assert boundary_distance(".2f", math.nan) is None


def test_zero_is_a_boundary_only_for_a_signed_quantity():
    """'-0.000' and '0.000' differ; a value seen only >= 0 (a norm, an abs()) cannot flip."""
    assert boundary_distance(".3f", 2e-17, signed=True) == pytest.approx(2e-17)
    assert boundary_distance(".3f", 2e-17, signed=False) == pytest.approx(5e-4)


def notes(spec, *series):
    """Probe notes of one key under paths 'a', 'b', ... with the given value series."""
    return {name: {"cell0:1:0@0": [spec, list(values)]} for name, values in zip("abc", series)}


def test_a_value_within_a_few_spreads_of_a_boundary_is_fragile():
    [found] = fragile_prints(notes(".4f", [0.18765053, 0.3], [0.18764982, 0.3]))
    assert found.key == "cell0:1:0@0" and found.values == {"a": 0.18765053, "b": 0.18764982}
    assert found.distance == pytest.approx(1.8e-7) and found.occurrences == 1
    assert found.spread == pytest.approx(7.1e-7)
    assert "'.4f'" in found.message() and "0.18764982 (b)" in found.message()


def test_values_far_from_a_boundary_or_equal_on_every_path_are_not():
    far = 0.1876 + FACTOR * 1e-6  # 4.9e-5 from the boundary, spread 1e-6
    assert fragile_prints(notes(".4f", [far], [far + 1e-6])) == []
    assert fragile_prints(notes(".4f", [0.18765], [0.18765])) == []  # exact: rounds alike
    assert fragile_prints(notes(".4f", [0.18765053])) == []  # one path: nothing to compare


def test_runs_that_took_other_branches_are_not_compared():
    assert fragile_prints(notes(".4f", [0.18765053], [0.18764982, 0.1])) == []


def test_the_worst_occurrence_is_shown_and_all_are_counted():
    [found] = fragile_prints(notes(".2f", [0.1250001, 0.5, 0.3750004], [0.1249999, 0.5, 0.3750001]))
    assert found.occurrences == 2  # worst: 1e-7 from 0.375 with a spread of 3e-7
    assert found.values == {"a": 0.3750004, "b": 0.3750001}


CHAPTER = """# T

```{code-cell} ipython3
#@save
import math


def f(x):
    return f'{x:.3f}'
```

```{code-cell} ipython3
x = 1
print(f'{x:.2f}', f(0.0625))
```

```{code-cell} ipython3
:tags: [volatile-output]
print(f'{x:.2f} ms')
```
"""


def chapter_and_block(tmp_path):
    path = tmp_path / "01-t.md"
    path.write_text(CHAPTER)
    chapter = read_chapter(path)
    save = chapter.cells[0]
    block = SaveBlock(path.name, save.line, save.source.removeprefix("#@save\n"), ("f",),
                      save.first_code_line + 1)
    return chapter, block


def test_keys_are_located_in_cells_and_traced_from_the_library_to_the_saving_chapter(tmp_path):
    chapter, block = chapter_and_block(tmp_path)
    path = chapter.path
    assert locate("cell1:2:6@1", chapter, [block]) == (path, 14)
    library = library_text([block]).splitlines()
    line = library.index("    return f'{x:.3f}'") + 1
    assert locate(f"agentrl:{line}:14@1", chapter, [block]) == (path, 9)
    assert locate("agentrl:1:0@1", chapter, [block]) == (path, 1)  # the press's own header


def test_a_library_print_names_its_caller_and_volatile_cells_are_left_out(tmp_path):
    chapter, block = chapter_and_block(tmp_path)
    library = library_text([block]).splitlines()
    in_library = f"agentrl:{library.index('    return f' + repr('{x:.3f}')) + 1}:14"
    near = {p: {f"{in_library}@1": [".3f", [v]], "cell2:1:9@2": [".2f", [v]]}
            for p, v in (("a", 0.0625001), ("b", 0.0624999))}
    [(where, message)] = chapter_margins(chapter, near, [block])
    assert where == f"{chapter.path}:9"
    assert message.endswith(f"(called by the cell at {chapter.path}:{chapter.cells[1].line})")
