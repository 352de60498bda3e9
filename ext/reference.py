"""The library reference page: every ``agentrl`` symbol, generated from the chapters' saves.

``{agentrl-library}`` (a directive with no content) lists, chapter by chapter in book order
(each under the chapter's title), each symbol of the library (the harvest of ``ext.stage``): its signature, its docstring and a
link to the section of the chapter that saves it. A symbol saved more than once is listed
where its last save is (that is the one ``agentrl`` holds). The link is resolved once every
chapter has been read (``doctree-resolved``): on the site to the section's own anchor, in the
printed book (``singlehtml``) to the section's print anchor (``ext.print_layout``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from .chapters import ChapterError, read_chapter
from . import library
from .library import SaveBlock
from .locale_table import by_language
from .print_layout import BUILDER as PRINT_BUILDER, section_anchor
from .problems import Kind, warn

logger = logging.getLogger(__name__)
VALUE_WIDTH = 90  # a constant's value is shown up to this many characters


@dataclass(frozen=True)
class Symbol:
    name: str
    signature: str
    docstring: str
    block: SaveBlock


def _signature(node: ast.stmt, name: str) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        return f"{name}({ast.unparse(node.args)}){returns}"
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(base) for base in node.bases)
        return f"class {name}({bases})" if bases else f"class {name}"
    value = ast.unparse(node.value)
    if len(value) > VALUE_WIDTH:
        value = value[:VALUE_WIDTH].rstrip() + " ..."
    return f"{name} = {value}"


def block_symbols(block: SaveBlock) -> list[Symbol]:
    """The symbols a save block defines, in its order, each with signature and docstring."""
    found = []
    for node in ast.parse(block.source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(Symbol(node.name, _signature(node, node.name),
                                ast.get_docstring(node) or "", block))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [Symbol(t.id, _signature(node, t.id), "", block)
                      for t in targets if isinstance(t, ast.Name) and t.id in block.names]
    return found


def library_symbols(blocks: list[SaveBlock]) -> list[Symbol]:
    """Every symbol of the library once, at its last save, in book order."""
    last = {symbol.name: symbol for block in blocks for symbol in block_symbols(block)}
    return [s for block in blocks for s in block_symbols(block) if last[s.name] == s]


class saved_in(nodes.Inline, nodes.Element):
    """Placeholder for the link to the section at ``line`` of chapter ``docname``."""


class LibraryReference(SphinxDirective):
    has_content = False

    def _local_chapters(self, blocks: list[SaveBlock]) -> tuple[dict, dict]:
        """Each chapter's title in this locale, and (chapter, line of a save cell in the
        canonical file) -> its line in this locale's file."""
        canonical = Path(self.env.srcdir) / (self.config.agentrl_code_dir or ".")
        titles, lines = {}, {}
        for chapter in sorted({block.chapter for block in blocks}):
            local = Path(self.env.srcdir) / chapter
            self.env.note_dependency(str(local))
            source, translation = read_chapter(canonical / chapter), read_chapter(local)
            titles[chapter] = next((line[2:].strip() for line in translation.text.splitlines()
                                    if line.startswith("# ")), chapter)
            for en, here in zip(source.cells, translation.cells):
                lines[chapter, en.line] = here.line
        return titles, lines

    def run(self) -> list[nodes.Node]:
        staging = getattr(self.env, "agentrl_staging", None)
        if staging is None:
            return []  # the harvest failed and was reported at its line
        try:
            titles, lines = self._local_chapters(list(staging.blocks))
        except ChapterError as error:
            warn(logger, Kind.REFERENCE, error.message, error.location)
            return []
        for module in (__file__, library.__file__):  # the page changes with how it is made
            self.env.note_dependency(module)
        words = by_language(self.config.language)
        result = []
        chapter = None
        for symbol in library_symbols(list(staging.blocks)):
            if symbol.block.chapter != chapter:
                chapter = symbol.block.chapter
                result.append(nodes.rubric(titles[chapter], titles[chapter]))
            entry = nodes.container(classes=["agentrl-symbol"], ids=[f"agentrl-{symbol.name}"])
            entry += nodes.literal_block(symbol.signature, symbol.signature, language="python",
                                         classes=["agentrl-signature"])
            if symbol.docstring:  # verbatim, as help() shows it: no smart quotes in P[s, a, s']
                entry += nodes.literal_block(symbol.docstring, symbol.docstring, language="none",
                                             classes=["agentrl-docstring"])
            where = nodes.paragraph(classes=["agentrl-saved-in"])
            where += nodes.Text(f"{words.saved_in} ")
            where += saved_in(docname=Path(symbol.block.chapter).stem,
                              line=lines.get((symbol.block.chapter, symbol.block.line), 0))
            entry += where
            result.append(entry)
        return result


def _section_at(doctree: nodes.document, line: int) -> tuple[int, nodes.section] | None:
    """(1-based number, node) of the chapter's top-level section that holds ``line``."""
    chapter = doctree.next_node(nodes.section)
    if chapter is None:
        return None
    found = None
    sections = [child for child in chapter.children if isinstance(child, nodes.section)]
    for number, section in enumerate(sections, start=1):
        if section.line is not None and section.line <= line:
            found = (number, section)
    return found


def resolve_links(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    for placeholder in list(doctree.findall(saved_in)):
        docname = placeholder["docname"]
        found = None
        if docname in app.env.all_docs:
            found = _section_at(app.env.get_doctree(docname), placeholder["line"])
        if found is None:
            warn(logger, Kind.REFERENCE,
                 f"no section of {docname} holds the save at line {placeholder['line']}",
                 fromdocname)
            placeholder.replace_self(nodes.Text(docname))
            continue
        number, section = found
        if app.builder.name == PRINT_BUILDER:
            uri = f"#{section_anchor(docname, number)}"
        else:
            uri = f"{app.builder.get_relative_uri(fromdocname, docname)}#{section['ids'][0]}"
        title = section.next_node(nodes.title).astext()
        placeholder.replace_self(nodes.reference(title, title, refuri=uri, internal=True))


def setup(app: Sphinx) -> dict:
    app.setup_extension("ext.stage")
    app.add_node(saved_in)
    app.add_directive("agentrl-library", LibraryReference)
    app.connect("doctree-resolved", resolve_links)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
