"""The chapter notebooks the site offers run in a reader's own kernel against the installed agentrl.

Needs the built site (``make html``): each chapter page links ``_notebooks/<chapter>.ipynb``
(``ext/chapter_header.py``, built by ``ext/notebook.py``). A notebook is executed here with
nbclient in a plain ``python3`` kernel started in an empty directory, with no ``PYTHONPATH``
(so no staged library: ``agentrl`` is the one installed from this repository with
``pip install -e .``) and no ``AGENTRL_BOOK``. Each cell must print what its recorded output
says (cells tagged ``volatile-output`` only must not fail).

* chapter 0, whole;
* chapter 6 from its first cell to the cell that reads the labs' results: the saved
  ``lab_results()`` finds them beside the installed package; the chapters after it call
  ``agentrl.lab_results()``, checked the same way;
* ``lab_results()`` with neither ``AGENTRL_BOOK`` nor a repository beside the package raises
  an error that says what to set.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ext.chapter_header import FOLDER  # noqa: E402
from ext.execute import BOOK_VARIABLE  # noqa: E402
from ext.locale_table import LOCALES  # noqa: E402

SITE = ROOT / "_build" / "site"
READS_LABS = "lab_results()"


def downloaded(locale: str, chapter: str) -> nbformat.NotebookNode:
    path = SITE / locale / FOLDER / f"{chapter}.ipynb"
    if not path.is_file():
        pytest.fail(f"no notebook {path.relative_to(ROOT)}: run `make html` first", pytrace=False)
    return nbformat.read(path, as_version=4)


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
    notebook = downloaded(LOCALES[0].folder, "00-notation")
    assert_same_outputs(code_cells(notebook), execute(notebook, tmp_path), "00-notation")


@pytest.mark.parametrize("locale", [locale.folder for locale in LOCALES])
def test_chapter_6_notebook_reads_the_lab_results_without_the_press(locale, tmp_path):
    notebook = downloaded(locale, "06-policy-gradient")
    cells = code_cells(notebook)
    reading = next(i for i, cell in enumerate(cells) if cell.source.startswith(f"results = {READS_LABS}"))
    saving = next(i for i, cell in enumerate(cells) if "def lab_results" in cell.source)
    wanted = [cells[0], cells[saving], cells[reading]]
    later = nbformat.v4.new_code_cell("import agentrl\nprint(agentrl.lab_results() == results)")
    trimmed = nbformat.v4.new_notebook(cells=[*wanted, later], metadata=notebook.metadata)
    executed = execute(trimmed, tmp_path)
    assert_same_outputs(wanted, executed[:-1], "06-policy-gradient")
    assert printed(executed[-1]).strip() == "True"


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
