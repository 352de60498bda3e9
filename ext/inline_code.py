"""Long inline code breaks after a ``/``, ``_`` or ``.`` instead of widening a phone's page.

Sphinx writes each word of an inline literal as ``<span class="pre">`` with ``white-space:
nowrap``, so a path such as ``results/gym_v2_rl_fresh_hg_rloo_lr3e-4.json`` made the whole page
scroll sideways at 390 px. Letting such a word wrap anywhere would also break after a hyphen and
split a flag such as ``--train-on``. So each long word is cut, after every ``/``, ``_`` and
``.``, into pieces that each stay ``nowrap``, with a ``<wbr>`` between them: a line may end
there and nowhere else, and a copied path has no extra character in it. A plain word wider
than the column (a 40-character commit hash in the sources) may break anywhere; the stylesheet
says so for the article, on screens.

The PDF is printed from the ``singlehtml`` builder at A4 width, where only figure captions ever
held a literal too long for the line: there the pages keep Sphinx's markup, and the print rule of
the stylesheet lets a caption's literal break anywhere. (Moving a line break in print moves
pdftotext's reading order too, which the PDF tests read.)
"""

from __future__ import annotations

import html
import re

from sphinx.application import Sphinx

STYLE = "inline-code.css"
WORD = re.compile(r'<span class="pre">([^<]+)</span>')
BREAK_AFTER = re.compile(r"(?<=[/_.])(?=.)")


def breakable(body: str, min_chars: int) -> str:
    """``body`` with every inline-code word of at least ``min_chars`` characters cut into
    nowrap pieces joined by ``<wbr>``, after each ``/``, ``_`` and ``.``."""
    def cut(match: re.Match) -> str:
        word = match.group(1)
        if len(html.unescape(word)) < min_chars:
            return match.group(0)
        return "<wbr>".join(f'<span class="pre">{piece}</span>'
                            for piece in BREAK_AFTER.split(word))
    return WORD.sub(cut, body)


def add_break_opportunities(app: Sphinx, pagename: str, templatename: str, context: dict,
                            doctree) -> None:
    if app.builder.name in app.config.inline_code_break_builders and "body" in context:
        context["body"] = breakable(context["body"], app.config.inline_code_break_chars)


def setup(app: Sphinx) -> dict:
    app.add_config_value("inline_code_break_chars", 24, "html", types=[int],
                         description="inline-code words this long or longer may break after "
                                     "/ _ and . (shorter ones never break)")
    app.add_config_value("inline_code_break_builders", ["html", "dirhtml"], "html", types=[list],
                         description="builders whose pages get the break opportunities (not "
                                     "singlehtml, which the PDF is printed from)")
    app.setup_extension("ext.callouts")  # serves ext/static, where the stylesheet is
    app.add_css_file(STYLE)
    app.connect("html-page-context", add_break_opportunities)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
