"""The press: a Sphinx extension that executes, gates and publishes the book.

Each submodule does one job and declares its own settings in its ``setup()``:

* ``ext.stage``    harvest ``#@save`` cells, stage a library per chapter, enforce the order rule
* ``ext.gate``     compare each cell's stdout with its recorded ``Output:`` block
* ``ext.parity``   in a translation, check cells and outputs equal the English ones
* ``ext.callouts`` render Evidence / Pitfall / In production callouts
* ``ext.timings``  per-chapter execution times and the budget warning
* ``ext.planned``  links to planned, unwritten chapters shown as plain text
* ``ext.offline``  serve MathJax and mermaid from ``_static`` (assets pinned in ``ext.assets``)
* ``ext.zh_search`` the Chinese search language, working around sphinx-doc/sphinx#14229
* ``ext.lang_switch`` a link on every page to the same page in the other language
* ``ext.print_layout`` the printed book's title page, contents and print stylesheet
* ``ext.chapter_header`` under each chapter's title: its execution record and its notebook
* ``ext.reference`` the library reference page, generated from the saves

Pure logic shared with ``scripts/`` lives in ``ext.chapters``, ``ext.outputs``, ``ext.library``,
``ext.locales``, ``ext.locale_table``, ``ext.notebook``, ``ext.execute`` and ``ext.assets``, which
do not import Sphinx.
"""

from __future__ import annotations

SUBMODULES = (
    "ext.stage",
    "ext.gate",
    "ext.parity",
    "ext.callouts",
    "ext.timings",
    "ext.planned",
    "ext.offline",
    "ext.zh_search",
    "ext.lang_switch",
    "ext.print_layout",
    "ext.chapter_header",
    "ext.reference",
)


def setup(app) -> dict:
    for name in SUBMODULES:
        app.setup_extension(name)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
