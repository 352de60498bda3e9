"""Long inline code in a figure caption breaks instead of widening a phone's page.

Sphinx's stylesheet keeps each word of an inline literal on one line (``span.pre`` is
``white-space: nowrap``), so a path such as ``scripts/figures/ch07_rloo_new_placements.py`` in a
figure caption made the whole page scroll sideways at 390 px. The rule here lets such a word
break where it must, in captions only: in running text and callouts a break after a hyphen would
split a flag such as ``--train-on``, so long literals there are the author's to avoid.
"""

from __future__ import annotations

from sphinx.application import Sphinx

STYLE = "inline-code.css"


def setup(app: Sphinx) -> dict:
    app.setup_extension("ext.callouts")  # serves ext/static, where the stylesheet is
    app.add_css_file(STYLE)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
