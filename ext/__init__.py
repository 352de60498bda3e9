"""The press: a Sphinx extension that executes, gates and publishes the book.

Each module does one job, said by the first line of its docstring and repeated here (a test
keeps this map equal to the modules; an entry may continue on indented lines). Sphinx
extensions, set up in this order by ``setup()`` below, each declaring its own settings:

* ``ext.stage``: Sphinx side of the order rule: each chapter's kernel imports a library of
  earlier saves.
* ``ext.execute_ahead``: Execute the chapters a build will read, two at a time, into the
  execution cache.
* ``ext.gate``: The drift gate: every executed cell must print exactly its recorded ``Output:``
  block.
* ``ext.parity``: In a translated build, warn where a chapter's cells or outputs depart from the
  English ones.
* ``ext.callouts``: Render the book's evidence callouts as three distinct admonitions.
* ``ext.structure_check``: Sphinx side of the structure rules: each problem of ``ext.structure``
  is a warning at its line.
* ``ext.timings``: Per-chapter execution times: a table written with every build, and a budget
  warning.
* ``ext.planned``: Links to chapters that are planned but not written yet render as plain text.
* ``ext.offline``: Serve MathJax and mermaid from the build's own ``_static``, so the site works
  from file://.
* ``ext.zh_search``: Chinese search that works in Sphinx 9.0 (sphinx-doc/sphinx#14229).
* ``ext.lang_switch``: A link on every page to the same page in the book's other language.
* ``ext.print_layout``: The printed book: a title page, a table of contents and a print
  stylesheet for ``singlehtml``.
* ``ext.chapter_header``: Under each chapter's title on the site: its execution record and its
  notebook.
* ``ext.reference``: The library reference page: every ``agentrl`` symbol, generated from the
  chapters' saves.
* ``ext.inline_code``: Long inline code breaks after a ``/``, ``_`` or ``.`` instead of widening a
  phone's page.
* ``ext.hosting``: The hosted site: canonical links, sitemap, llms.txt, 404 page, link previews,
  page links.

Pure modules, shared with ``scripts/`` and not importing Sphinx:

* ``ext.chapters``: Read a chapter file: its front matter, code cells and recorded output blocks.
* ``ext.outputs``: Compare what a cell printed with what the text records, and rewrite recorded
  blocks.
* ``ext.library``: The ``agentrl`` library: harvested from ``#@save`` cells, staged per chapter.
* ``ext.execute``: Run a chapter's code cells in a fresh kernel, outside Sphinx (the checker's
  executor).
* ``ext.locales``: Locale parity: a translation has the English chapter's cells and outputs,
  byte for byte.
* ``ext.problems``: Every kind of problem the press reports, in one table (like myst-nb's
  ``warnings_.py``).
* ``ext.structure``: The book's structure rules: prose words, callout length, chapter shape,
  making-of phrases.
* ``ext.structure_debt``: The structure debt: problems that predate the structure rules, listed so
  main stays green.
* ``ext.terms``: The term table: one Chinese term per concept, and the renderings the press
  rejects in zh prose.
* ``ext.book_plan``: The book plan: every chapter, written or planned, with its number, titles and
  part, once.
* ``ext.assets``: The browser assets the site serves itself: which npm packages, which files,
  where they live.
* ``ext.toolchain``: What, besides its cells and its library, decides a chapter's printed
  outputs.
* ``ext.kernel_guard``: Kernel start-up file (run as ``PYTHONSTARTUP``): the import rule,
  enforced at run time.
* ``ext.locale_table``: The book's languages: every fact that differs between them, in one
  table.
* ``ext.notebook``: A chapter as a Jupyter notebook: its prose, its code cells and their recorded
  outputs.
* ``ext.margins``: The margin check: a rounded print must not sit next to a rounding boundary.
* ``ext.margin_probe``: Kernel-side half of the margin check: record the value behind every
  rounded print.
* ``ext.site_settings``: The hosted site: where it is published and where its sources live, in
  one table.
* ``ext.generated``: A generated file of the repository: written atomically, or checked against
  its source.
"""

from __future__ import annotations

SUBMODULES = (
    "ext.stage",
    "ext.execute_ahead",
    "ext.gate",
    "ext.parity",
    "ext.callouts",
    "ext.structure_check",
    "ext.timings",
    "ext.planned",
    "ext.offline",
    "ext.zh_search",
    "ext.lang_switch",
    "ext.print_layout",
    "ext.chapter_header",
    "ext.reference",
    "ext.inline_code",
    "ext.hosting",
)


def setup(app) -> dict:
    for name in SUBMODULES:
        app.setup_extension(name)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
