"""The hosted site: canonical links, sitemap, llms.txt, 404 page, link previews, page links.

What readers and tools expect of a hosted book, from well-kept Sphinx extensions configured from
the one table of the site's addresses (``ext.site_settings``) and the one table of languages
(``ext.locale_table``); this module writes no page itself:

* ``html_baseurl`` = ``<base_url><folder>/``: Sphinx writes ``<link rel="canonical">`` on every
  page, and ``sphinx-sitemap`` a ``sitemap.xml`` per language (search and index pages left out);
* ``sphinx-llms-txt``: ``llms.txt`` (the language's pages, linked to their Markdown sources)
  and ``llms-full.txt`` (every page's source, code cells and recorded outputs included);
* ``sphinx-notfound-page``: ``404.html`` with every link absolute under the language's path
  (``/<site path>/<folder>/``), so the forge can serve it for a missing page at any depth;
  ``scripts/assemble_site.py`` puts the source language's copy at the site's root;
* ``sphinxext-opengraph``: link previews (``og:title``, ``og:description`` from the page's
  first paragraph, ``og:url``, ``og:site_name`` = the start page's title) and the page's
  ``<meta name="description">``; no generated preview images;
* sphinx-book-theme's repository menu, in the page's language: "edit this page" (the page's
  Markdown file on the configured branch), "report a problem" (a new issue naming the page)
  and the repository;
* on every page, a link to the PDF of its language (``pdf-link.html``, beside the language
  switch; the PDF sits in the language's folder of the published site), and the licences in
  the footer.

Only the ``html`` builder writes these files; the printed book (``singlehtml``) has none of the
links. The words come from ``ext.locale_table``.
"""

from __future__ import annotations

import html
import re
from functools import partial
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from . import site_settings as site
from .assets import copy_style
from .locale_table import by_language

TEMPLATES = Path(__file__).parent / "templates"
COMPONENT = "pdf-link.html"
STYLE = "pdf-link.css"  # beside the template; copied to _static
AFTER = "lang-switch.html"  # the component goes right after the language switch
EXTENSIONS = ("sphinx_sitemap", "sphinx_llms_txt", "notfound.extension", "sphinxext.opengraph")
NOT_LISTED = ("search.html", "genindex.html")  # pages without content of their own
# sphinx-book-theme's repository buttons (its header_buttons labels) and the priority of the
# html-page-context handler that makes them
FORGE_BUTTONS = ("source-repository-button", "source-edit-button", "source-issues-button")
THEME_BUTTONS = 501
HEADING = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)


def start_page_title(app: Sphinx, config: Config) -> str:
    """The book's title: the heading of the language's start page (as on the landing page and
    the printed title page)."""
    for path in sorted(Path(app.srcdir).glob(f"{config.root_doc}.md")):  # MyST: `# Title`
        match = HEADING.search(path.read_text(encoding="utf-8"))
        if match:
            return match.group(1)
    return config.project


def licence_html(text: str) -> str:
    """A locale's licence sentence with both licences linked."""
    return html.escape(text).format(
        text=f'<a href="{site.TEXT_LICENCE_URL}" rel="license">{site.TEXT_LICENCE}</a>',
        code=f'<a href="{site.licence_url()}" rel="license">{site.CODE_LICENCE}</a>')


def configure(app: Sphinx, config: Config) -> None:
    try:
        locale = by_language(config.language)
    except KeyError:
        return  # conf.py's apply_locale names the problem
    url = site.site_url(locale)
    config.html_baseurl = url
    config.sitemap_url_scheme = "{link}"  # html_baseurl already ends in the language's folder
    config.sitemap_locales = [None]  # one sitemap per language: no alternates inside it
    config.sitemap_excludes = [*NOT_LISTED, f"{config.notfound_pagename}.html"]
    title = start_page_title(app, config)
    config.llms_txt_title = title
    config.ogp_site_url = url
    config.ogp_site_name = title
    config.ogp_social_cards = {"enable": False}  # drawn with matplotlib's fonts: no CJK glyphs
    prefix = site.site_path(locale)
    config.notfound_urls_prefix = prefix
    home = f'<a href="{prefix}{config.root_doc}.html">{html.escape(title)}</a>'
    config.notfound_context = {
        "title": locale.not_found_title,
        "body": f"<h1>{html.escape(locale.not_found_title)}</h1>\n"
                f"<p>{html.escape(locale.not_found_body).format(home=home)}</p>"}

    if str(TEMPLATES) not in map(str, config.templates_path):
        config.templates_path.append(str(TEMPLATES))
    options = dict(config.html_theme_options)
    options.update(
        repository_url=site.repository_url(), repository_branch=site.branch(),
        path_to_docs=site.source_path(locale), use_repository_button=True,
        use_edit_page_button=True, use_issues_button=True,
        extra_footer=f'<p class="licence">{licence_html(locale.licence)}</p>')
    end = options.get("article_header_end", "article-header-buttons.html")
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",") if item.strip()]
    if COMPONENT not in end:
        at = end.index(AFTER) + 1 if AFTER in end else 0
        end = [*end[:at], COMPONENT, *end[at:]]
    options["article_header_end"] = end
    config.html_theme_options = options


def page_links(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The PDF link; on the 404 page (served at any depth) both it and the language switch
    become absolute paths under the site's prefix."""
    if app.builder.name != "html":
        context["pdf_link"] = None
        return
    locale = by_language(app.config.language)
    if pagename == app.config.notfound_pagename:
        href = f"{site.site_path(locale)}{locale.pdf_name}"
        switch = context.get("lang_switch")
        if switch:
            other = next(spec for spec in app.config.lang_switch_languages.values()
                         if spec["folder"] == Path(switch["href"]).parent.name)
            switch["href"] = (f"{site.site_path()}{other['folder']}/"
                              f"{app.builder.get_target_uri(app.config.root_doc)}")
    else:
        href = "../" * pagename.count("/") + locale.pdf_name
    context["pdf_link"] = {"href": href, "label": locale.pdf_link}


def forge_words(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The repository menu's items in the page's language (the theme has them in English)."""
    if app.builder.name != "html":
        return
    words = dict(zip(FORGE_BUTTONS, by_language(app.config.language).forge_links))
    for group in context.get("header_buttons", ()):
        for button in group.get("buttons", [group]):
            if button.get("label") in words:
                button["text"] = button["tooltip"] = words[button["label"]]


def setup(app: Sphinx) -> dict:
    for name in EXTENSIONS:
        app.setup_extension(name)
    app.setup_extension("ext.lang_switch")  # its component comes first in the header
    app.connect("config-inited", configure)
    app.connect("builder-inited", partial(copy_style, source=TEMPLATES / STYLE))
    app.add_css_file(STYLE)
    app.connect("html-page-context", page_links)
    app.connect("html-page-context", forge_words, priority=THEME_BUTTONS + 1)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
