"""Run a chapter's code cells in a fresh kernel, outside Sphinx (the checker's executor).

The build executes chapters through myst-nb and jupyter-cache; the checker runs them here with
nbclient directly. Both turn executed notebook cells into :class:`~ext.outputs.CellRun` with
:func:`cell_runs`, so both gates compare exactly the same thing.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from . import kernel_guard
from .chapters import Chapter
from .library import ALLOWED_THIRD_PARTY
from .outputs import CellRun


BOOK_VARIABLE = "AGENTRL_BOOK"  # the book/ directory, so a chapter can read book/labs/results


def kernel_variables(book_dir: Path) -> dict[str, str]:
    """The variables the press sets in every chapter's kernel, in the build and the checker.

    Chapters run in a temporary directory; one that reads a lab's saved results finds them
    under ``os.environ['AGENTRL_BOOK']``. IPython runs :mod:`ext.kernel_guard` before the first
    cell, so the import rule also holds for imports no statement shows.
    """
    return {
        BOOK_VARIABLE: str(Path(book_dir).resolve()),
        "PYTHONSTARTUP": str(Path(kernel_guard.__file__).resolve()),
        kernel_guard.ALLOWED_VARIABLE: ",".join(sorted(ALLOWED_THIRD_PARTY)),
        "PYTHONHASHSEED": "0",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def kernel_environment(staged_dir: Path, book_dir: Path, threads: int | None = None,
                       numeric: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus :func:`kernel_variables`, the staged library first.

    ``numeric`` overrides variables of the numeric path (:mod:`ext.toolchain`)."""
    env = {**os.environ, **kernel_variables(book_dir), **(numeric or {})}
    env["PYTHONPATH"] = os.pathsep.join([str(staged_dir), *filter(None, [env.get("PYTHONPATH")])])
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    return env


def cell_runs(cells) -> list[CellRun]:
    """Summarise executed nbformat code cells as stdout / stderr / error / rich displays."""
    runs = []
    for cell in cells:
        stdout, stderr, error, displays = [], [], None, 0
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                (stdout if out.get("name") == "stdout" else stderr).append(out.get("text", ""))
            elif kind == "error":
                error = f"{out.get('ename')}: {out.get('evalue')}"
            elif kind in ("execute_result", "display_data"):
                displays += 1
        runs.append(CellRun("".join(stdout), "".join(stderr), error, displays))
    return runs


def socket_files_in(directory: Path) -> Config:
    """Kernel configuration: talk over Unix sockets in ``directory`` instead of TCP ports.

    Over TCP, jupyter_client picks free ports and the kernel binds them a moment later; two
    kernels starting at once (the checker runs two) can pick the same port, and the second dies
    with ``Address already in use``. Socket files in each run's own directory cannot collide.
    """
    return Config({"KernelManager": {"transport": "ipc", "ip": str(directory / "kernel")}})


def cell_seconds(cell) -> float | None:
    """Wall seconds from a cell's start to its reply, as nbclient records them in its metadata
    (None for a cell that never ran)."""
    stamps = cell.get("metadata", {}).get("execution", {})
    try:
        start, end = (datetime.fromisoformat(stamps[key].replace("Z", "+00:00"))
                      for key in ("iopub.execute_input", "shell.execute_reply"))
    except KeyError:
        return None
    return (end - start).total_seconds()


@dataclass
class ChapterRun:
    runs: list[CellRun]
    seconds: float
    failure: str | None  # why execution stopped early, if it did
    probe_stdout: str = ""  # what the probe's closing cell printed, when run with one
    cell_seconds: list[float | None] = field(default_factory=list)  # each cell's, in order


def run_chapter(chapter: Chapter, staged_dir: Path, timeout: int = 120,
                threads: int | None = None, numeric: dict[str, str] | None = None,
                probe: tuple[str, str] | None = None) -> ChapterRun:
    """Execute every code cell in order in a new kernel inside a temporary directory.

    ``probe`` is a pair of cells run before the chapter's first cell and after its last (the
    margin check's, :func:`ext.margins.probe_cells`); their runs are not among ``runs``."""
    opening, closing = probe or (None, None)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(opening)] if probe else []
    notebook.cells += [
        nbformat.v4.new_code_cell(c.source, metadata={"tags": list(c.tags)}) for c in chapter.cells
    ]
    notebook.cells += [nbformat.v4.new_code_cell(closing)] if probe else []
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    failure, timed_out = None, False
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agentrl-check-") as cwd:
        client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": cwd}},
                                config=socket_files_in(Path(cwd)))
        try:
            book_dir = chapter.path.resolve().parent.parent  # book/<locale>/NN.md -> book/
            client.execute(env=kernel_environment(staged_dir, book_dir, threads, numeric), cwd=cwd)
        except CellTimeoutError:
            failure, timed_out = f"TimeoutError: ran past the {timeout} s timeout", True
        except DeadKernelError as exc:
            failure = f"the kernel died: {exc}"
        except CellExecutionError:
            failure = None  # the error output is recorded in the failing cell
    runs = attach_failure(notebook.cells, cell_runs(notebook.cells), failure, timed_out)
    timings = [cell_seconds(cell) for cell in notebook.cells]
    if not probe:
        return ChapterRun(runs, time.perf_counter() - start, failure, cell_seconds=timings)
    if runs[0].error:
        raise RuntimeError(f"the margin probe failed in the kernel: {runs[0].error}")
    return ChapterRun(runs[1:-1], time.perf_counter() - start, failure, runs[-1].stdout,
                      timings[1:-1])


def attach_failure(cells, runs: list[CellRun], failure: str | None,
                   timed_out: bool = False) -> list[CellRun]:
    """Charge a failure that left no error output (timeout, dead kernel) to the cell it hit.

    A timeout interrupts the kernel, so that cell may show only a bare ``KeyboardInterrupt``;
    the failure's own message replaces it.
    """
    if not failure or not runs:
        return runs
    errors = [i for i, r in enumerate(runs) if r.error]
    if errors and not runs[errors[0]].error.startswith("KeyboardInterrupt"):
        return runs
    started = [i for i, c in enumerate(cells) if c.get("execution_count") is not None]
    index = errors[0] if errors else (started[-1] if started else 0)
    runs = list(runs)
    runs[index] = CellRun(runs[index].stdout, runs[index].stderr, failure, runs[index].displays,
                          timed_out)
    return runs
