"""Render the book's evidence callouts as three distinct admonitions.

A block quote whose first paragraph opens with a bold label (``> **Evidence.** ...``) becomes an
admonition with classes ``callout callout-<kind>``; the label becomes its title. The labels of
every language (``ext.locale_table``) map to the same kinds, so all share one stylesheet.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

from .locale_table import all_callout_labels

LABELS = all_callout_labels()  # "Evidence." / "证据。" -> ("evidence", "Evidence" / "证据")


def _label(paragraph: nodes.paragraph) -> nodes.Node | None:
    """The paragraph's first child that is not blank text (myst-parser puts '' before **...**)."""
    for child in paragraph.children:
        if not (isinstance(child, nodes.Text) and not child.astext().strip()):
            return child
    return None


def callout_kind(quote: nodes.block_quote) -> tuple[str, str] | None:
    first = quote.children[0] if quote.children else None
    if not isinstance(first, nodes.paragraph):
        return None
    label = _label(first)
    if not isinstance(label, nodes.strong):
        return None
    return LABELS.get(label.astext().strip())


class CalloutTransform(SphinxTransform):
    default_priority = 210

    def apply(self, **kwargs) -> None:
        for quote in list(self.document.findall(nodes.block_quote)):
            kind = callout_kind(quote)
            if kind is None:
                continue
            css, title = kind
            paragraph = quote.children[0]
            del paragraph.children[: paragraph.index(_label(paragraph)) + 1]
            if paragraph.children and isinstance(paragraph.children[0], nodes.Text):
                paragraph.children[0].parent.replace(
                    paragraph.children[0], nodes.Text(paragraph.children[0].astext().lstrip())
                )
            admonition = nodes.admonition("", classes=["callout", f"callout-{css}"])
            admonition += nodes.title(title, title)
            admonition.extend(quote.children)
            admonition.source, admonition.line = quote.source, quote.line
            quote.replace_self(admonition)


def add_static(app: Sphinx) -> None:
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app: Sphinx) -> dict:
    app.add_transform(CalloutTransform)
    app.connect("builder-inited", add_static)
    app.add_css_file("callouts.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
