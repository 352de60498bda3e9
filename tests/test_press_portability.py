"""The outputs of a chapter must not depend on the machine: the portability check, the import
rule at run time, and the execution cache's knowledge of the toolchain.

``scripts/check_portability.py`` must pass on a book whose cells print stable values and fail,
naming ``file:line`` and the numeric path, when a cell prints the last digits of a float sum
(which move with the ATen kernels, MKL's dispatch and the thread count). A chapter that reaches
numpy through ``__import__`` or ``importlib.import_module`` fails, with the file and line, while
torch itself may import what it likes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from press_helpers import (
    EN02,
    assert_reports,
    chapter,
    check,
    copy_book,
    edit,
    line_of,
    run_script,
    sphinx_build,
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
STABLE_CELL = FRAGILE_CELL.replace(
    "print(f'sum: {values.sum().item():.10f}, product: {(a @ b).sum().item():.10f}')",
    "print(f'sum: {values.sum().item():.0f}, product near its float64 value: '\n"
    "      f'{abs((a @ b).sum().item() - (a.double() @ b.double()).sum().item()) < 1e-2}')")


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
