"""A link on every page to the same page in the book's other language.

The published site puts each language in a sibling folder (``site/en/<page>.html``,
``site/zh/<page>.html``, see ``scripts/assemble_site.py``), and the sources of each language sit
in sibling folders with the same names (``book/en``, ``book/zh``). The link is relative, so it
works from file://. A chapter not yet translated links to the other language's start page.

The link is the template ``lang-switch.html`` (``ext/templates/``, with its stylesheet
``lang-switch.css``), placed first in the sphinx-book-theme article header
(``article_header_end``), in a row with the theme's own buttons.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from .assets import copy_style
from .locale_table import LOCALES

TEMPLATES = Path(__file__).parent / "templates"
COMPONENT = "lang-switch.html"
STYLE = "lang-switch.css"  # beside the template; copied to _static

# language -> its folder in book/ and in the site, the link text, the hreflang attribute
DEFAULT_LANGUAGES = {locale.sphinx_language: {"folder": locale.folder, "label": locale.label,
                                              "hreflang": locale.hreflang}
                     for locale in LOCALES}


def add_component(app: Sphinx, config: Config) -> None:
    """Put the template on the search path and the component in the article header."""
    if str(TEMPLATES) not in map(str, config.templates_path):
        config.templates_path.append(str(TEMPLATES))
    options = dict(config.html_theme_options)
    end = options.get("article_header_end", "article-header-buttons.html")
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",") if item.strip()]
    if COMPONENT not in end:
        options["article_header_end"] = [COMPONENT, *end]
    config.html_theme_options = options


def other_language(app: Sphinx) -> dict | None:
    languages = app.config.lang_switch_languages
    others = [spec for lang, spec in languages.items() if lang != app.config.language]
    return others[0] if app.config.language in languages and len(others) == 1 else None


def switch_link(app: Sphinx, pagename: str, context: dict, doctree) -> dict | None:
    other = other_language(app)
    if other is None or app.builder.name != "html":
        return None
    target = pagename
    if doctree is not None:  # a source page: is it translated yet?
        counterpart = Path(app.srcdir).parent / other["folder"]
        if not any((counterpart / pagename).with_suffix(suffix).is_file()
                   for suffix in app.config.source_suffix):
            target = app.config.root_doc
    up = "../" * (pagename.count("/") + 1)
    return {"href": f"{up}{other['folder']}/{app.builder.get_target_uri(target)}",
            "label": other["label"], "hreflang": other["hreflang"]}


def add_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    context["lang_switch"] = switch_link(app, pagename, context, doctree)


def setup(app: Sphinx) -> dict:
    app.add_config_value("lang_switch_languages", DEFAULT_LANGUAGES, "html", types=[dict],
                         description="the two languages: folder, link text, hreflang")
    app.connect("config-inited", add_component)
    app.connect("builder-inited", partial(copy_style, source=TEMPLATES / STYLE))
    app.add_css_file(STYLE)
    app.connect("html-page-context", add_link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
