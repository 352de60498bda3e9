"""The drift gate: every executed cell must print exactly its recorded ``Output:`` block.

Runs at ``doctree-read``, after myst-nb has executed (or fetched from the cache) a chapter and
written the executed notebook to ``jupyter_execute/``. Each problem is a warning at the file
line of the recorded block (or of the cell), of a kind listed in ``ext.problems`` (``drift``,
``error``, ``missing-output`` ...). The page keeps the executed output and drops the recorded
copy, so a reader sees one output per cell.

The gate reads what myst-nb renders, so it is only right under the myst-nb settings in
:data:`REQUIRED_MYST_NB`; ``builder-inited`` refuses to build with any other value, and a
chapter may not override them in its front matter.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from docutils import nodes
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging

from .chapters import OUTPUT_LABEL, ChapterError, read_chapter
from .execute import attach_failure, cell_runs
from .outputs import CellRun, check_chapter
from .problems import Kind, warn

logger = logging.getLogger(__name__)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: myst-nb setting (without ``nb_``) -> (the value the gate needs, why).
REQUIRED_MYST_NB = {
    "execution_mode": ("cache", "chapters run through jupyter-cache, keyed by the staged "
                       "library's hash (ext.stage); 'off' or an excluded chapter is never "
                       "gated, and the other modes ignore that key"),
    "execution_excludepatterns": ((), "an excluded chapter is not executed, so its recorded "
                                  "outputs would pass unchecked"),
    "execution_raise_on_error": (False, "a failing cell must become a warning at its file and "
                                 "line (and the cells after it 'not run'), not abort the build"),
    "execution_allow_errors": (False, "execution must stop at the first failing cell, as the "
                               "checker's does, so both report the same cells"),
    "execution_in_temp": (True, "the checker runs each chapter in a fresh temporary directory; "
                          "the build must give it the same working directory"),
    "merge_streams": (False, "myst-nb's merge rewrites newlines where a print spans a flush, "
                      "which changes the text compared; the gate joins the chunks exactly"),
    "output_stderr": ("show", "the gate finds stderr in the rendered page; any other value "
                      "removes it or reports it in myst-nb's words instead of at the cell"),
}


def _executed_cells(app: Sphinx, docname: str):
    """Code cells of the notebook myst-nb wrote; only complete when it executed (not cached)."""
    path = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    return [c for c in notebook.cells if c.cell_type == "code"]


def _runs_from_doctree(doctree: nodes.document) -> list[CellRun]:
    """What each code cell produced, read from myst-nb's rendered output nodes.

    The doctree is the one place that holds outputs whether they were just executed or came
    from the cache (myst-nb writes ``jupyter_execute/*.ipynb`` without cached outputs).
    """
    runs = []
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") != "cell_code":
            continue
        stdout, stderr, error, displays = [], [], None, 0
        for output in cell.findall(nodes.container):
            if output.get("nb_element") != "cell_code_output":
                continue
            for node in output.children:
                classes = set(node.get("classes", []))
                text = _ANSI.sub("", node.astext())
                if "stream" in classes:
                    stdout.append(text)  # chunks split at flush times: join them as written
                elif "stderr" in classes:
                    stderr.append(text)
                elif "traceback" in classes:
                    lines = [l for l in text.splitlines() if l.strip()]
                    error = lines[-1].strip() if lines else "an exception"
                else:
                    displays += 1
        runs.append(CellRun("".join(stdout), "".join(stderr), error, displays))
    return runs


def _merge_stream_blocks(doctree: nodes.document) -> None:
    """Show each cell's stdout as one block, its chunks joined exactly as they were written.

    A print that spans an output flush arrives in two chunks. myst-nb's own merging
    (``nb_merge_streams``) strips and re-adds newlines at chunk boundaries, which changes the
    text, so the conf turns it off and the chunks are joined here instead.
    """
    for output in doctree.findall(nodes.container):
        if output.get("nb_element") != "cell_code_output":
            continue
        streams = [n for n in output.children if "stream" in n.get("classes", [])]
        if len(streams) < 2:
            continue
        text = "".join(n.astext() for n in streams)
        merged = nodes.literal_block(text, text, classes=list(streams[0]["classes"]))
        for key in ("language", "linenos", "highlight_args"):
            if key in streams[0]:
                merged[key] = streams[0][key]
        output.replace(streams[0], merged)
        for node in streams[1:]:
            output.remove(node)


def _drop_recorded_blocks(doctree: nodes.document) -> None:
    for label in list(doctree.findall(nodes.paragraph)):
        block = label.next_node(descend=False, siblings=True)
        if label.astext().strip() == OUTPUT_LABEL and isinstance(block, nodes.literal_block):
            block.parent.remove(block)
            label.parent.remove(label)


def _comparable(value):
    return tuple(value) if isinstance(value, list) else value  # conf.py may give a list


def check_myst_nb_settings(app: Sphinx) -> None:
    """Refuse to build under a myst-nb setting that would make the gate wrong or blind."""
    wrong = [f"  nb_{name} = {app.config[f'nb_{name}']!r}: the press needs {required!r}, "
             f"because {why}" for name, (required, why) in REQUIRED_MYST_NB.items()
             if _comparable(app.config[f"nb_{name}"]) != required]
    if wrong:
        raise ConfigError("myst-nb settings the drift gate depends on are changed "
                          "(conf.py or -D):\n" + "\n".join(wrong))


def _overridden_settings(chapter) -> list[str]:
    """Required settings a chapter overrides in its front matter (``mystnb:``)."""
    overrides = chapter.metadata.get("mystnb") or {}
    return sorted(set(overrides) & set(REQUIRED_MYST_NB)) if isinstance(overrides, dict) else []


def gate_chapter(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    if docname not in getattr(app.env, "agentrl_chapters", set()):
        return
    path = Path(app.env.doc2path(docname))
    try:
        chapter = read_chapter(path)
    except ChapterError as error:
        warn(logger, Kind.FORMAT, error.message, (docname, error.line))
        return
    overridden = _overridden_settings(chapter)
    if overridden:
        warn(logger, Kind.FORMAT, f"the front matter overrides mystnb {', '.join(overridden)}, "
             "which the drift gate needs as conf.py sets them", (docname, 1))
    exec_data = NbMetadataCollector.get_exec_data(app.env, docname)
    if not exec_data:
        return  # not executed: the override warned above fails the build
    runs = _runs_from_doctree(doctree)
    if exec_data.get("error"):  # executed just now and failed: the written notebook is complete
        cells = _executed_cells(app, docname)
        timeout = app.config.nb_execution_timeout
        timed_out = exec_data["error"] == "CellTimeoutError"
        failure = (f"TimeoutError: ran past nb_execution_timeout ({timeout} s)" if timed_out
                   else f"execution failed: {exec_data['error']}")
        runs = attach_failure(cells, cell_runs(cells), failure, timed_out)
    for problem in check_chapter(chapter, runs):
        warn(logger, problem.kind, problem.message, (docname, problem.line))
    _merge_stream_blocks(doctree)
    _drop_recorded_blocks(doctree)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", check_myst_nb_settings)
    app.connect("doctree-read", gate_chapter)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
