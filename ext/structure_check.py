"""Sphinx side of the structure rules: each problem of ``ext.structure`` is a warning at its line.

At ``builder-inited`` every page of the source folder is measured (``ext.structure.shape``, net
of the debt list ``ext/structure_debt.py``) and each problem is a warning of its kind
(``[agentrl.words]``, ``[agentrl.callout]``, ``[agentrl.sections]``, ``[agentrl.making-of]``,
``[agentrl.term]``, ``[agentrl.debt]``) at ``file:line``, so ``sphinx-build -W`` fails on it. All pages are checked
on every build, re-read or not, so an incremental build reports the same problems as a clean
one.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from .chapters import ChapterError
from .locale_table import by_language
from .problems import Kind, warn
from .structure import shape

logger = logging.getLogger(__name__)


def check_pages(app: Sphinx) -> None:
    locale = by_language(app.config.language)
    chapters = getattr(app.env, "agentrl_chapters", set())
    for path in sorted(Path(app.srcdir).glob("*.md")):
        try:
            problems = shape(path, locale.folder).problems
        except ChapterError as error:
            if path.stem not in chapters:  # a chapter's is reported by the gate, at its line
                warn(logger, Kind.FORMAT, error.message, error.location)
            continue
        for problem in problems:
            warn(logger, problem.kind, problem.message, problem.location)


def setup(app: Sphinx) -> dict:
    app.setup_extension("ext.stage")  # its harvest names the chapters (set up first)
    app.connect("builder-inited", check_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
