"""Links to chapters that are planned but not written yet render as plain text.

Chapters refer forward (``[Chapter 9](09-grpo-family.md)``) long before the target exists.
Such a link is kept in the source and becomes a real link as soon as the file appears; until
then its text is shown without a link instead of failing the build. Only the pages of the book
plan (``ext/book_plan.py``, the default of ``agentrl_planned_chapters``) are treated so: a link
to any other missing file (a typo) still warns. The rewrite happens at ``source-read`` and keeps
every line in place.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx

from .book_plan import files

_LINK = re.compile(r"\[([^\]\n]+)\]\(([A-Za-z0-9_-]+\.md)(#[^)\s]*)?\)")


def unlink_planned(text: str, planned: set[str], exists) -> str:
    """Replace ``[text](name.md)`` by ``text`` where ``name.md`` is planned but absent."""

    def replace(match: re.Match) -> str:
        target = match.group(2)
        return match.group(1) if target in planned and not exists(target) else match.group(0)

    return _LINK.sub(replace, text)


def rewrite_links(app: Sphinx, docname: str, source: list[str]) -> None:
    planned = set(app.config.agentrl_planned_chapters)
    if planned:
        folder = Path(app.env.doc2path(docname)).parent
        source[0] = unlink_planned(source[0], planned, lambda name: (folder / name).exists())


def setup(app: Sphinx) -> dict:
    app.add_config_value("agentrl_planned_chapters", files(), "env", types=[list, tuple])
    app.connect("source-read", rewrite_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
