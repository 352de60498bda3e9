"""Sphinx side of the order rule: each chapter's kernel imports a library of earlier saves.

At ``builder-inited`` the canonical (English) chapters are harvested; a malformed save cell, a
forbidden import or a use of a later save is a warning at its file and line. At ``source-read``
the chapter's staged library is put first on the kernel's ``PYTHONPATH`` and its hash is written
into the kernelspec display name with the toolchain's fingerprint (:mod:`ext.toolchain`),
because jupyter-cache keys only on cell text and kernelspec: a changed library, an upgraded torch
or another numeric path must change the key. Chapters are re-read on every build so that the gate
(and its warnings) runs every time, while unchanged cells still come from the cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from .chapters import ChapterError, book_order, read_chapter, set_kernel_display_name
from . import toolchain
from .execute import kernel_variables
from .library import Staging, check_imports, check_uses, stage
from .problems import Kind, warn

logger = logging.getLogger(__name__)


def _canonical_dir(app: Sphinx) -> Path:
    """The tree whose cells are canonical: the English book, relative to the source dir."""
    return (Path(app.srcdir) / (app.config.agentrl_code_dir or ".")).resolve()


def _is_notebook(path: Path) -> bool:
    """A chapter is a text notebook: its front matter names a kernel."""
    try:
        return bool(read_chapter(path).metadata.get("kernelspec"))
    except ChapterError:
        return True  # malformed: let the gate report it at its line


def harvest_book(app: Sphinx) -> None:
    """Read the canonical chapters and build the staging plan (``app.env.agentrl_staging``)."""
    app.env.agentrl_staging = None
    app.env.agentrl_chapters = set()
    try:
        book_order(Path(app.srcdir))  # a broken toctree is reported here, with its line
        app.env.agentrl_chapters = {p.stem for p in Path(app.srcdir).glob("*.md")
                                    if _is_notebook(p)}
        chapters = [read_chapter(p) for p in book_order(_canonical_dir(app))]
        staging = Staging.of(chapters)
    except ChapterError as error:
        # Chapters then run against an empty library: fail fast.
        warn(logger, Kind.LIBRARY, error.message, error.location)
        return
    app.env.agentrl_staging = staging
    for chapter in chapters:
        for check in (check_imports, lambda c: check_uses(c, staging)):
            try:
                check(chapter)
            except ChapterError as error:
                warn(logger, Kind.ORDER, error.message, error.location)
    os.environ.update(kernel_variables(Path(app.srcdir).parent))


def staged_source(app: Sphinx, docname: str, text: str) -> tuple[Path, str]:
    """The chapter's staged library and its text with that library's kernelspec (the cache key)."""
    staging = app.env.agentrl_staging
    root = Path(app.confdir, app.config.agentrl_stage_dir)
    name = docname + ".md"
    if staging is not None and name in staging.order:
        directory = staging.stage(name, root)
    else:  # not in the book, or no valid library: never an installed or neighbour's agentrl
        directory = stage([], {}, root)
    return directory, set_kernel_display_name(text, kernel_display_name(directory.name))


def stage_chapter(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname not in getattr(app.env, "agentrl_chapters", set()):
        return
    directory, source[0] = staged_source(app, docname, source[0])
    os.environ["PYTHONPATH"] = str(directory)


def kernel_display_name(library_hash: str) -> str:
    """The cache key's extra part: the staged library and the toolchain that runs it."""
    return f"Python 3 (agentrl {library_hash}, toolchain {toolchain.fingerprint()})"


def reread_chapters(app, env, added, changed, removed) -> list[str]:
    """Re-read every chapter: execution comes from the cache, but the gate must run again."""
    return sorted(getattr(env, "agentrl_chapters", set()) - set(removed))


def setup(app: Sphinx) -> dict:
    # Relative to the source directory; None means this tree is canonical (English).
    app.add_config_value("agentrl_code_dir", None, "env", types=[str, type(None)])
    app.add_config_value("agentrl_stage_dir", "_build/staged", "env", types=[str])
    app.connect("builder-inited", harvest_book)
    app.connect("source-read", stage_chapter)
    app.connect("env-get-outdated", reread_chapters)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
