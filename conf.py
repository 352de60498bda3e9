"""Sphinx configuration shared by both locales.

Build one locale at a time (the Makefile does both):
    sphinx-build -W -c . -D language=en    book/en _build/en/html
    sphinx-build -W -c . -D language=zh_CN book/zh _build/zh/html
``conf.py`` cannot see ``-D``, so locale-specific settings are applied in a ``config-inited``
hook from the table of languages in ``ext/locale_table.py``.
"""

from pathlib import Path

from ext.locale_table import SOURCE, by_folder, by_language, folders

ROOT = Path(__file__).resolve().parent

project = "Reinforcement learning for language-model agents"
author = "The agentrl authors"
copyright = "2026, the agentrl authors"
language = "en"

extensions = ["myst_nb", "sphinxcontrib.mermaid", "sphinx_copybutton", "ext"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# Execution: cached by cell text and kernelspec (which carries the staged library's hash).
nb_execution_mode = "cache"
nb_execution_cache_path = str(ROOT / "_build" / ".jupyter_cache")
nb_execution_timeout = 120
nb_execution_raise_on_error = False
nb_execution_in_temp = True
nb_execution_show_tb = True
nb_merge_streams = False  # its merge rewrites newlines at chunk joins; ext.gate merges exactly
nb_output_stderr = "show"  # shown on the page; the drift gate turns it into a warning

# A copy button on code cells only: not on their outputs, nor on the library reference's
# signatures.
copybutton_selector = "div.cell_input div.highlight pre"

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

html_theme = "sphinx_book_theme"
html_static_path: list[str] = []
html_theme_options = {
    # One search field: the sidebar's (on a phone, the article header's search button). With
    # pydata-sphinx-theme 0.20 the book theme otherwise also shows a header bar holding a
    # second one at every width (executablebooks/sphinx-book-theme#986).
    "navbar_persistent": [],
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
}


def apply_locale(app, config) -> None:
    """The locale's settings, from the one table of the book's languages (ext.locale_table)."""
    try:
        locale = by_language(config.language)
    except KeyError as error:
        raise ValueError(error.args[0]) from None
    folder = Path(app.srcdir).name
    if folder in folders() and folder != locale.folder:
        raise ValueError(f"{app.srcdir} is the {folder!r} book, but the build's language is "
                         f"{config.language!r}; use -D language={by_folder(folder).sphinx_language}")
    config.html_title = locale.html_title
    config.agentrl_code_dir = None if locale == SOURCE else f"../{SOURCE.folder}"
    if locale.search_language:
        config.html_search_language = locale.search_language


def setup(app) -> None:
    app.connect("config-inited", apply_locale)
