"""In a translated build, warn where a chapter's cells or outputs depart from the English ones.

The warning is located at the translation's line and names the English file and line; stale
prose (English changed since the translation) is reported by ``scripts/sync_locales.py``.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from .chapters import ChapterError, read_chapter
from .locales import first_difference
from .problems import Kind, warn

logger = logging.getLogger(__name__)


def check_parity(app: Sphinx, docname: str, source: list[str]) -> None:
    if not app.config.agentrl_code_dir or docname not in getattr(app.env, "agentrl_chapters", ()):
        return
    english = (Path(app.srcdir) / app.config.agentrl_code_dir / f"{docname}.md").resolve()
    translated = Path(app.env.doc2path(docname))
    if not english.exists():
        warn(logger, Kind.PARITY, f"no English chapter {english.name} to translate",
             (docname, 1))
        return
    try:
        difference = first_difference(read_chapter(english), read_chapter(translated, source[0]))
    except ChapterError as error:
        warn(logger, Kind.FORMAT, error.message, error.location)
        return
    if difference:
        warn(logger, Kind.PARITY, f"{difference.message} (see {english}:"
             f"{difference.source_line}); run scripts/sync_locales.py", (docname, difference.line))


def setup(app: Sphinx) -> dict:
    app.setup_extension("ext.stage")
    app.connect("source-read", check_parity, priority=400)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
