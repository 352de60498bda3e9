"""A chapter as a Jupyter notebook: its prose, its code cells and their recorded outputs.

The site offers each chapter as ``.ipynb`` (``ext.chapter_header``) for a reader to run in a
plain kernel against the installed ``agentrl``: prose between cells becomes markdown cells (the
recorded ``Output:`` blocks are left out of them), each code cell keeps its tags and carries
its recorded output as the stdout it printed. Nothing here imports Sphinx.
"""

from __future__ import annotations

import nbformat

from .chapters import Chapter

KERNEL_KEYS = ("name", "display_name", "language")


def _markdown(lines: list[str], start: int, stop: int) -> list:
    text = "\n".join(lines[start:stop]).strip("\n")
    return [nbformat.v4.new_markdown_cell(text)] if text.strip() else []


def chapter_notebook(chapter: Chapter) -> nbformat.NotebookNode:
    lines = chapter.text.splitlines()
    cells, position = [], chapter.body_line
    for cell in chapter.cells:
        cells += _markdown(lines, position, cell.line - 1)
        outputs = [nbformat.v4.new_output("stream", name="stdout", text=cell.output.text + "\n")
                   ] if cell.output else []
        metadata = {"tags": list(cell.tags)} if cell.tags else {}
        cells.append(nbformat.v4.new_code_cell(cell.source, outputs=outputs, metadata=metadata))
        position = cell.output.end_line if cell.output else cell.end_line
    cells += _markdown(lines, position, len(lines))
    notebook = nbformat.v4.new_notebook(cells=cells)
    kernel = chapter.metadata.get("kernelspec") or {}
    notebook.metadata["kernelspec"] = {key: kernel[key] for key in KERNEL_KEYS if key in kernel}
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.validate(notebook)
    return notebook
