"""The chapter notebooks the site offers run in a reader's own kernel against the installed agentrl.

The site offers every chapter as ``_notebooks/<chapter>.ipynb`` (``ext/chapter_header.py``), built
by ``ext.notebook.chapter_notebook`` from the chapter file; the tests build it with the same
function, so they need no site. A notebook is executed here with nbclient in a plain ``python3``
kernel started in an empty directory, with no ``PYTHONPATH`` (so no staged library: ``agentrl``
is the one installed from this repository with ``pip install -e .``) and no ``AGENTRL_BOOK``,
which only the press sets. Each cell must print what its recorded output says (cells tagged
``volatile-output`` only must not fail).

* the rule that makes this hold for every chapter, checked statically on both locales: chapters
  reach the labs' records only through ``load_record`` (Chapter 0), by stem. Only Chapter 0's
  save cells, which define that reader, may name ``AGENTRL_BOOK``, build a path from the
  environment, call ``lab_results()`` or open a record's file; no other chapter mentions
  ``AGENTRL_BOOK``, in code or prose;
* chapter 0, whole: it saves the reader;
* chapters 5, 13 and 14, their first cell and every cell that reads a record (the benchmark, the
  warm start and its checkpoint, the LoRA runs): cells a plain kernel must run;
* chapter 6, both locales, from its first cell to the cell that first reads a record;
* ``lab_results()`` with neither ``AGENTRL_BOOK`` nor a repository beside the package raises
  an error that says what to set.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent

from ext.chapters import book_order, read_chapter
from ext.execute import BOOK_VARIABLE
from ext.locale_table import LOCALES
from ext.notebook import chapter_notebook

BOOK = ROOT / "book"
READER_CHAPTER = "00-notation"   # its save cells define lab_results and load_record
READS_RECORD = "arl.load_record("

# What a chapter's code cell may not do outside Chapter 0's save cells: each pattern, on one line.
FORBIDDEN = {
    "names AGENTRL_BOOK": re.compile(BOOK_VARIABLE),
    "builds a path from the environment": re.compile(
        r"os\.(environ|getenv)\b.*(Path\(|os\.path|\s/\s|labs)"
        r"|(Path|os\.path\.\w+)\(\s*os\.(environ|getenv)"),
    "finds the records' folder itself": re.compile(r"\blab_results\("),
    "names the records' folder": re.compile(r"labs/results|['\"]labs['\"]\s*[/,]\s*['\"]results['\"]"),
    "reads a JSON file": re.compile(r"json\.loads?\(.*(read_text\(|open\()"),
    "globs for records": re.compile(r"\.glob\(\s*['\"][^'\"]*\.json"),
    "opens a checkpoint by its file name": re.compile(r"\.pt['\"]"),
}


def chapter_paths() -> list[tuple[str, Path]]:
    """(locale, path) of every chapter of the book, in both locales."""
    return [(locale.folder, BOOK / locale.folder / path.name)
            for locale in LOCALES for path in book_order(BOOK / "en")]


def test_chapters_read_records_only_through_load_record():
    found = []
    for locale, path in chapter_paths():
        chapter = read_chapter(path)
        for cell in chapter.cells:
            if path.stem == READER_CHAPTER and cell.is_save:
                continue
            first = cell.first_code_line or cell.line + 1
            for offset, line in enumerate(cell.source.splitlines()):
                found += [f"{locale}/{path.name}:{first + offset}: {what}: {line.strip()}"
                          for what, pattern in FORBIDDEN.items() if pattern.search(line)]
        if path.stem != READER_CHAPTER and BOOK_VARIABLE in chapter.prose():
            found.append(f"{locale}/{path.name}: the prose mentions {BOOK_VARIABLE}")
    assert not found, "\n".join(found)


def notebook(locale: str, chapter: str) -> nbformat.NotebookNode:
    """The notebook the site offers for book/<locale>/<chapter>.md."""
    return chapter_notebook(read_chapter(BOOK / locale / f"{chapter}.md"))


def reader_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", BOOK_VARIABLE)}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def execute(notebook: nbformat.NotebookNode, cwd: Path) -> list[dict]:
    """Run every code cell of a copy of ``notebook``; the executed code cells."""
    run = copy.deepcopy(notebook)
    for cell in run.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = NotebookClient(run, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}})
    client.execute(env=reader_environment(), cwd=str(cwd))
    return [cell for cell in run.cells if cell.cell_type == "code"]


def printed(cell: dict) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", [])
                   if out.get("output_type") == "stream" and out.get("name") == "stdout")


def assert_same_outputs(recorded: list[dict], executed: list[dict], chapter: str) -> None:
    assert len(recorded) == len(executed)
    for number, (old, new) in enumerate(zip(recorded, executed), start=1):
        errors = [out for out in new.get("outputs", []) if out.get("output_type") == "error"]
        assert not errors, f"{chapter} cell {number} failed: {errors[0]['ename']}: {errors[0]['evalue']}"
        if "volatile-output" not in old.get("metadata", {}).get("tags", []):
            assert printed(new).rstrip() == printed(old).rstrip(), f"{chapter} cell {number}"


def code_cells(notebook: nbformat.NotebookNode) -> list[dict]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_chapter_0_notebook_runs_in_a_plain_kernel(tmp_path):
    book = notebook(LOCALES[0].folder, READER_CHAPTER)
    assert_same_outputs(code_cells(book), execute(book, tmp_path), READER_CHAPTER)


@pytest.mark.parametrize("chapter", ["05-trajectories-and-templates", "13-rollout-systems",
                                     "14-efficiency"])
def test_a_chapters_record_cells_run_in_a_plain_kernel(chapter, tmp_path):
    """The chapter's first cell and every cell that reads a record, each printing what the book
    recorded; where the first cell defines the warm start's loader, its checkpoint loads too."""
    book = notebook(LOCALES[0].folder, chapter)
    cells = code_cells(book)
    wanted = [cells[0], *(cell for cell in cells[1:] if READS_RECORD in cell.source)]
    loads = "def load_warm_start" in cells[0].source
    probe = [nbformat.v4.new_code_cell("print(type(load_warm_start()).__name__)")] if loads else []
    trimmed = nbformat.v4.new_notebook(cells=[*wanted, *probe], metadata=book.metadata)
    executed = execute(trimmed, tmp_path)
    assert_same_outputs(wanted, executed[:len(wanted)], chapter)
    if loads:
        assert printed(executed[-1]).strip() == "TinyAgent"


@pytest.mark.parametrize("locale", [locale.folder for locale in LOCALES])
def test_chapter_6_notebook_reads_a_record_without_the_press(locale, tmp_path):
    book = notebook(locale, "06-policy-gradient")
    cells = code_cells(book)
    reading = next(i for i, cell in enumerate(cells) if READS_RECORD in cell.source)
    wanted = [cells[0], cells[reading]]
    later = nbformat.v4.new_code_cell("print(warm.folder == arl.lab_results(), warm.checkpoint.name)")
    trimmed = nbformat.v4.new_notebook(cells=[*wanted, later], metadata=book.metadata)
    executed = execute(trimmed, tmp_path)
    assert_same_outputs(wanted, executed[:-1], "06-policy-gradient")
    assert printed(executed[-1]).strip() == "True warm_start.pt"


def test_lab_results_says_what_to_set_when_it_finds_nothing(tmp_path):
    package = tmp_path / "elsewhere" / "agentrl"
    package.mkdir(parents=True)
    shutil.copyfile(ROOT / "agentrl" / "__init__.py", package / "__init__.py")
    result = subprocess.run([sys.executable, "-c", "import agentrl; agentrl.lab_results()"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={**reader_environment(), "PYTHONPATH": str(package.parent)})
    assert result.returncode == 1
    assert "FileNotFoundError" in result.stderr and BOOK_VARIABLE in result.stderr
    assert "pip install -e ." in result.stderr
