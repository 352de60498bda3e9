"""The printed book: a title page, a table of contents and a print stylesheet for ``singlehtml``.

Only the ``singlehtml`` builder is touched (``scripts/build_pdf.py`` prints its page with headless
Chromium); the HTML site is unchanged. On the assembled single document (``doctree-resolved``
of the root document) this module

* moves every chapter out of the start page's toctree to the top level, so a chapter title is an
  ``<h1>`` and its sections ``<h2>`` (as in the HTML site; the PDF outline follows the headings);
* gives each chapter and section a unique anchor (``print-<docname>[-<n>]``: ids such as
  ``summary`` repeat across chapters in one document);
* puts in front a title page (the start page's title and first paragraph, the author, the
  licences of ``ext.site_settings`` in the book's language) and a
  table of contents of the chapters and their sections, each entry with an empty
  ``<span class="toc-page">`` that ``scripts/build_pdf.py`` fills with the page number;
* marks the start page's own section ``print-front-matter`` (the stylesheet hides it in print:
  its plan of the book lists chapters not yet written).

The stylesheet ``ext/static-print/print-layout.css`` applies only to print (A4 pages, page
numbers, a page break before each chapter, wrapped code, diagrams and figures fitted to the
page); on screen it only hides the title page and the contents, which are for paper.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

from .locale_table import LOCALES, SOURCE, by_language
from .site_settings import CODE_LICENCE, TEXT_LICENCE, TEXT_LICENCE_URL

BUILDER = "singlehtml"
STYLE_DIR = Path(__file__).parent / "static-print"
STYLE = "print-layout.css"
ANCHOR = "print-"  # prefix of the anchors this module adds

DEFAULT_LABELS = {  # "author": None prints the configuration's ``author``
    locale.sphinx_language: {"contents": locale.contents, "author": locale.author}
    for locale in LOCALES
}


def chapter_anchor(docname: str) -> str:
    return f"{ANCHOR}{docname}"


def section_anchor(docname: str, number: int) -> str:
    """The anchor of a chapter's ``number``-th section (from 1) in the printed book."""
    return f"{chapter_anchor(docname)}-{number}"


def licence_text(app: Sphinx) -> str:
    """The licences of the book, in the printed book's language (ext.site_settings)."""
    try:
        locale = by_language(app.config.language)
    except KeyError:
        locale = SOURCE
    return locale.licence.format(text=f"{TEXT_LICENCE} ({TEXT_LICENCE_URL})", code=CODE_LICENCE)


def _labels(app: Sphinx) -> dict:
    labels = app.config.print_layout_labels
    return labels.get(app.config.language) or labels[SOURCE.sphinx_language]


def add_style(app: Sphinx) -> None:
    if app.builder.name != BUILDER:
        return
    static = Path(app.outdir, "_static")
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STYLE_DIR / STYLE, static / STYLE)
    app.add_css_file(STYLE)


def _top_level_files(document: nodes.document) -> list[addnodes.start_of_file]:
    """The chapters inlined from the start page's toctree (not files nested inside them)."""
    found = []
    for node in document.findall(addnodes.start_of_file):
        parent = node.parent
        while parent is not None and not isinstance(parent, addnodes.start_of_file):
            parent = parent.parent
        if parent is None:
            found.append(node)
    return found


def _title_children(section: nodes.section) -> list[nodes.Node]:
    title = section.next_node(nodes.title)
    return [child.deepcopy() for child in title.children] if title is not None else []


def _toc_entry(section: nodes.section, anchor: str, classes: list[str]) -> nodes.list_item:
    link = nodes.reference("", "", refid=anchor, internal=True, classes=["toc-link"])
    link += nodes.inline("", "", *_title_children(section), classes=["toc-title"])
    link += nodes.inline("", "", classes=["toc-dots"])
    link += nodes.inline("", "", classes=["toc-page"])
    return nodes.list_item("", nodes.paragraph("", "", link), classes=classes)


def _sections(chapter: nodes.section) -> list[nodes.section]:
    return [child for child in chapter.children if isinstance(child, nodes.section)]


def lay_out_book(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.name != BUILDER or docname != app.config.root_doc:
        return
    files = _top_level_files(doctree)
    if not files:
        return
    front = doctree.next_node(nodes.section)
    wrappers = {f.parent for f in files}
    for node in files:
        node.parent.remove(node)
        doctree += node
    for wrapper in wrappers:
        if not wrapper.children and wrapper.parent is not None:
            wrapper.parent.remove(wrapper)
    if front is not None:
        front["classes"].append("print-front-matter")

    toc = nodes.bullet_list(classes=["print-toc-list"])
    for node in files:
        chapter = node.next_node(nodes.section)
        if chapter is None:
            continue
        anchor = chapter_anchor(node["docname"])
        chapter["ids"].append(anchor)
        chapter["classes"].append("print-chapter")
        entry = _toc_entry(chapter, anchor, ["toc-chapter"])
        sections = nodes.bullet_list(classes=["toc-sections"])
        for number, section in enumerate(_sections(chapter), start=1):
            anchor_of_section = section_anchor(node["docname"], number)
            section["ids"].append(anchor_of_section)
            sections += _toc_entry(section, anchor_of_section, ["toc-section"])
        if sections.children:
            entry += sections
        toc += entry

    title_page = nodes.container(classes=["print-title-page", "print-only"])
    if front is not None:
        title_page += nodes.paragraph("", "", *_title_children(front), classes=["print-book-title"])
        blurb = front.next_node(nodes.paragraph)
        if blurb is not None:
            copy = blurb.deepcopy()
            copy["classes"].append("print-blurb")
            title_page += copy
    author = _labels(app).get("author") or app.config.author
    title_page += nodes.paragraph("", author, classes=["print-author"])
    title_page += nodes.paragraph("", licence_text(app), classes=["print-licence"])
    contents = nodes.container(classes=["print-toc", "print-only"])
    contents += nodes.paragraph("", _labels(app)["contents"], classes=["print-toc-heading"])
    contents += toc
    doctree.insert(0, contents)
    doctree.insert(0, title_page)


def setup(app: Sphinx) -> dict:
    app.add_config_value("print_layout_labels", DEFAULT_LABELS, "html", types=[dict],
                         description="words of the printed front matter, per language")
    app.connect("builder-inited", add_style)
    app.connect("doctree-resolved", lay_out_book)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
