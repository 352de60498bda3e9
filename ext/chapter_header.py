"""Under each chapter's title on the site: its execution record and its notebook.

The record says when the chapter's cells were executed (myst-nb's execution data: for a
chapter taken from the cache, when the cache entry was made), with which Python and torch (the
build's own; the cache key carries the toolchain, so a cached run used the same versions), and
in how many seconds. The link downloads the chapter as a Jupyter notebook (``ext.notebook``):
prose, code cells and their recorded outputs, to run in a reader's own kernel against the
installed ``agentrl``. Notebooks are written to ``<outdir>/_notebooks/<docname>.ipynb``,
each through a temporary file renamed into place. Words come from ``ext.locale_table``.

Only the ``html`` builder is touched; the printed book has neither line.
"""

from __future__ import annotations

import html
import importlib.metadata
import os
import platform
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import nbformat
from docutils import nodes
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx

from .chapters import ChapterError, read_chapter
from .locale_table import by_language
from .notebook import chapter_notebook

BUILDER = "html"
FOLDER = "_notebooks"  # under the output directory
STYLE = Path(__file__).parent / "static" / "chapter-header.css"


def record_text(app: Sphinx, docname: str) -> str:
    locale = by_language(app.config.language)
    data = NbMetadataCollector.get_exec_data(app.env, docname) or {}
    if not data.get("mtime") or data.get("runtime") is None:
        return locale.not_executed
    when = datetime.fromtimestamp(data["mtime"], timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return locale.executed.format(when=when, python=platform.python_version(),
                                  torch=importlib.metadata.version("torch"),
                                  seconds=data["runtime"])


def notebook_href(docname: str) -> str:
    return "../" * docname.count("/") + f"{FOLDER}/{docname}.ipynb"


def add_header(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.name != BUILDER or docname not in getattr(app.env, "agentrl_chapters", ()):
        return
    title = doctree.next_node(nodes.title)
    if title is None:
        return
    link = (f'<a class="reference download chapter-notebook" href="{notebook_href(docname)}" '
            f'download="{Path(docname).name}.ipynb">'
            f'{html.escape(by_language(app.config.language).notebook)}</a>')
    # Raw HTML, not a paragraph of the text: a link preview's description (ext.hosting) is the
    # chapter's first paragraph, not its execution record.
    record = html.escape(record_text(app, docname))
    header = nodes.container(classes=["chapter-header"])
    header += nodes.raw("", f'<p class="execution-record">{record}</p>', format="html")
    header += nodes.raw("", f'<p class="chapter-download">{link}</p>', format="html")
    title.parent.insert(title.parent.index(title) + 1, header)


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False,
                                     suffix=".tmp") as handle:
        handle.write(text)
    os.replace(handle.name, path)


def write_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != BUILDER:
        return
    for docname in sorted(getattr(app.env, "agentrl_chapters", ())):
        try:
            chapter = read_chapter(app.env.doc2path(docname))
        except ChapterError:
            continue  # reported at its line by the gate
        target = Path(app.outdir, FOLDER, f"{docname}.ipynb")
        write_atomically(target, nbformat.writes(chapter_notebook(chapter)) + "\n")


def setup(app: Sphinx) -> dict:
    app.setup_extension("ext.stage")
    app.setup_extension("ext.callouts")  # serves ext/static, where the stylesheet is
    app.connect("doctree-resolved", add_header)
    app.connect("build-finished", write_notebooks)
    app.add_css_file(STYLE.name)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
