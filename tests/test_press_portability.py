"""The outputs of a chapter must not depend on the machine: the portability check, the import
rule at run time, and the execution cache's knowledge of the toolchain.

``scripts/check_portability.py`` must pass on a book whose cells print stable values and fail,
naming ``file:line`` and the numeric path, when a cell prints the last digits of a float sum
(which move with the ATen kernels, MKL's dispatch and the thread count). A chapter that reaches
numpy through ``__import__`` or ``importlib.import_module`` fails, with the file and line, while
torch itself may import what it likes.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from press_helpers import (
    EN01,
    EN02,
    assert_reports,
    chapter,
    check,
    copy_book,
    edit,
    line_of,
    run_script,
    sphinx_build,
    _script,
)

from ext import toolchain
from ext.chapters import read_chapter
from ext.execute import run_chapter
from ext.stage import kernel_display_name

# Full float32 digits of large sums: the vectorised kernels, MKL's path and the thread count all
# change the order of the additions, so these last digits differ under every numeric path.
FRAGILE_CELL = """
```{code-cell} ipython3
import torch

torch.manual_seed(0)
values = torch.randn(4_000_037)
a, b = torch.randn(64, 300), torch.randn(300, 64)
print(f'sum: {values.sum().item():.10f}, product: {(a @ b).sum().item():.10f}')
```
"""
# Stable: bounds, not digits (randn's own values move in their last bits with the kernels, so
# even the float64 sum of the same draw differs by 0.07 between paths).
STABLE_CELL = FRAGILE_CELL.replace(
    "print(f'sum: {values.sum().item():.10f}, product: {(a @ b).sum().item():.10f}')",
    "print(f'sum within 3 standard deviations of 0: {abs(values.sum().item()) < 3 * 2000.01}, '\n"
    "      f'product near its float64 value: '\n"
    "      f'{abs((a @ b).sum().item() - (a.double() @ b.double()).sum().item()) < 1e-2}')")


# A value that each numeric path computes a little differently (a stand-in for a float reduction
# whose order moves with the kernels): 2e-7 apart, in the seventh decimal.
NUDGE = ("import os\n\n\ndef nudged(x):\n"
         "    return x + (2e-7 if os.environ.get('ATEN_CPU_CAPABILITY') == 'avx2' else 4e-7)\n")
# 0.18765 is a rounding boundary at four decimals; 0.1876 is 0.00005 from the nearest one.
NEAR_CELL = """
```{code-cell} ipython3
near = arl.nudged(0.18765)
print(f'near a boundary: {near:.4f}, far from one: {arl.nudged(0.1876):.4f}')
print('through the library:', arl.four_decimals(0.18765))
```
"""


def portability(book, *args):
    return run_script("check_portability.py", "--root", book, "--no-figures", *args)


def add_recorded_cell(book, cell: str):
    """Append ``cell`` to chapter 2 and record its output (two threads) with --refresh."""
    path = chapter(book, EN02)
    path.write_text(path.read_text() + cell)
    refreshed = check(book, "--chapters", "02", "--refresh", "--threads", "2")
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    return path


@pytest.fixture(scope="module")
def fragile_book(tmp_path_factory):
    book = copy_book(tmp_path_factory.mktemp("fragile"))
    return book, add_recorded_cell(book, FRAGILE_CELL)


def test_stable_book_passes_under_every_path(tmp_path):
    book = copy_book(tmp_path)
    add_recorded_cell(book, STABLE_CELL)
    result = portability(book)
    assert result.returncode == 0, result.stdout + result.stderr
    for path in toolchain.NUMERIC_PATHS:
        assert f"02-next.md [{path.name}]: same outputs" in result.stdout


def test_fragile_cell_fails_naming_file_line_and_path(fragile_book):
    book, path = fragile_book
    result = portability(book, "--chapters", "02")
    assert result.returncode == 1
    line = line_of(path, "```text", occurrence=3)  # the fence of the new cell's block
    for numeric in toolchain.NUMERIC_PATHS:
        reported = assert_reports(result, path, line, f"[{numeric.name}]")
        assert "recorded" in result.stdout and "sum: " in result.stdout, reported
    assert "outputs depend on the numeric path" in result.stdout


def test_a_print_next_to_a_rounding_boundary_fails_naming_its_line(tmp_path):
    """Each path prints '0.1877', yet the value is within a spread of 0.18765: another CPU's
    last bits could print 0.1876. Reported where it is formatted, in a cell or in the library
    (traced back to the chapter that saved it); the print far from a boundary is not."""
    book = copy_book(tmp_path)
    first = chapter(book, EN01)
    edit(first, "#@save\nSCALE = 3\n",
         "#@save\n" + NUDGE + "\n\ndef four_decimals(x):\n    return f'{nudged(x):.4f}'\n\n\n"
         "SCALE = 3\n")
    path = add_recorded_cell(book, NEAR_CELL)
    result = portability(book, "--chapters", "02")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "02-next.md [avx2]: same outputs" in result.stdout  # the text agrees on every path
    cell_print = assert_reports(result, path, line_of(path, NEAR_CELL.splitlines()[3]),
                                "[agentrl.margin]")
    assert "'.4f'" in cell_print and "0.1876502" in cell_print, cell_print
    assert_reports(result, first, line_of(first, "    return f'{nudged(x):.4f}'"),
                   "[agentrl.margin]")
    assert result.stdout.count("[agentrl.margin]") == 2, result.stdout  # not the 0.1876 print
    assert "02-next.md: margins 2 print(s) near a rounding boundary" in result.stdout


def test_thread_count_alone_is_caught(fragile_book):
    """Recorded on two threads, the sum of 4M floats moves when the same kernels use one."""
    book, path = fragile_book
    result = check(book, "--chapters", "02", "--threads", "1")
    assert result.returncode == 1
    assert_reports(result, path, line_of(path, "```text", occurrence=3), "recorded")


@pytest.mark.parametrize("statement", [
    "np = __import__('numpy')",
    "import importlib\nnp = importlib.import_module('numpy')",
    "exec('import numpy')",
])
def test_import_rule_holds_at_run_time(tmp_path, statement):
    book = copy_book(tmp_path)
    path = chapter(book, EN02)
    edit(path, "print('from chapter 1:', arl.triple(2))",
         f"{statement}\nprint('from chapter 1:', arl.triple(2))")
    result = check(book, "--chapters", "02")
    assert result.returncode == 1
    cell_line = line_of(path, "import agentrl as arl") - 1
    assert_reports(result, path, cell_line, "import of 'numpy'")


def test_torch_may_import_numpy_and_a_chapter_the_standard_library(tmp_path):
    book = copy_book(tmp_path)
    path = chapter(book, EN02)
    edit(path, "print('from chapter 1:', arl.triple(2))",
         "json = __import__('json')\nassert torch_numpy_ok()\n"
         "print('from chapter 1:', arl.triple(2))")
    edit(path, "import agentrl as arl\n",
         "import agentrl as arl\nimport torch\n\n\ndef torch_numpy_ok():\n"
         "    return torch.zeros(2).numpy().shape == (2,)\n\n\n")
    result = check(book, "--chapters", "02")
    assert result.returncode == 0, result.stdout + result.stderr


def test_build_fails_on_a_hidden_import(tmp_path):
    book = copy_book(tmp_path)
    path = chapter(book, EN02)
    edit(path, "print('from chapter 1:', arl.triple(2))",
         "np = __import__('numpy')\nprint('from chapter 1:', arl.triple(2))")
    build = sphinx_build(book, "en")
    assert build.returncode != 0
    build.find(path, line_of(path, "import agentrl as arl") - 1, "agentrl.error", "numpy")


def test_cache_key_names_the_toolchain(monkeypatch):
    native = kernel_display_name("abc123")
    assert "abc123" in native and toolchain.fingerprint() in native
    monkeypatch.setattr(toolchain, "versions", lambda: {"python": "3.11.0", "torch": "9.9.9"})
    assert kernel_display_name("abc123") != native
    monkeypatch.undo()
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert kernel_display_name("abc123") != native


def test_numeric_paths_differ_from_the_native_one():
    for path in toolchain.NUMERIC_PATHS:
        assert path.variables and set(path.variables) <= set(toolchain.NUMERIC_VARIABLES)
    assert len({p.threads for p in toolchain.NUMERIC_PATHS}) == 2  # 1 and 2 threads both run


TRANSPORT_CHAPTER = """---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# 1. Transport

```{code-cell} ipython3
import json
import sys

connection_file = sys.argv[sys.argv.index('-f') + 1]
print(json.load(open(connection_file))['transport'])
```
"""


def test_kernels_started_at_once_talk_over_their_own_socket_files(tmp_path):
    """Over TCP two kernels starting at once could pick the same free port (CI saw one die with
    ``Address already in use``); the checker's kernels use socket files in their own directory."""
    path = tmp_path / "book" / "en" / "01-transport.md"
    path.parent.mkdir(parents=True)
    path.write_text(TRANSPORT_CHAPTER)
    chapter_ = read_chapter(path)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: run_chapter(chapter_, tmp_path, timeout=60), range(4)))
    for result in results:
        assert result.failure is None and not result.runs[0].error, result.runs[0].error
        assert [run.stdout for run in result.runs] == ["ipc\n"]


def test_jobs_start_longest_first_by_the_last_builds_timings(tmp_path):
    """check_portability submits the chapters by the time the last English build recorded for
    them (CPU time where measured), longest first; without a record, in the order given."""
    script = _script("check_portability.py")
    paths = [tmp_path / f"{name}.md" for name in ("01-a", "02-b", "03-c")]
    jobs = [(p, numeric) for numeric in toolchain.NUMERIC_PATHS for p in paths]
    assert script.recorded_seconds(tmp_path) == {}
    assert script.longest_first(jobs, {}) == jobs
    timings = tmp_path / "_build" / "en" / "timings.json"
    timings.parent.mkdir(parents=True)
    timings.write_text(json.dumps({
        "01-a": {"seconds": 5.0, "cpu_seconds": 4.0},
        "02-b": {"seconds": 90.0, "cpu_seconds": None},
        "03-c": {"seconds": 70.0, "cpu_seconds": 60.0}}), encoding="utf-8")
    seconds = script.recorded_seconds(tmp_path)
    assert seconds == {"01-a.md": 4.0, "02-b.md": 90.0, "03-c.md": 60.0}
    order = [(p.stem, numeric.name) for p, numeric in script.longest_first(jobs, seconds)]
    first, second = (numeric.name for numeric in toolchain.NUMERIC_PATHS)
    assert order == [("02-b", first), ("02-b", second), ("03-c", first), ("03-c", second),
                     ("01-a", first), ("01-a", second)]
