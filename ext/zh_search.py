"""Chinese search that works in Sphinx 9.0 (sphinx-doc/sphinx#14229).

Sphinx 9.0's ``language_data.js`` ends with ``window.Stemmer = <language_name>Stemmer``. The
Chinese search language stems Latin words with the English snowball stemmer
(``js_stemmer_rawcode = 'english-stemmer.js'``) but is named ``Chinese``, so the page refers to
an undefined ``ChineseStemmer`` and the search page stays at "Searching..." forever.

The subclass registered here for ``zh`` keeps the Python side (jieba word splitting, English
stemming of Latin words) and ships the same stemmer inline, bound under its real name. It is
correct before and after the upstream fix, so it needs no version check.
"""

from __future__ import annotations

from pathlib import Path

from sphinx import package_dir
from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

STEMMER_JS = Path(package_dir, "search", "minified-js")


def english_stemmer_js() -> str:
    parts = [(STEMMER_JS / name).read_text(encoding="utf-8")
             for name in ("base-stemmer.js", "english-stemmer.js")]
    return "\n".join([*parts, "window.Stemmer = EnglishStemmer;"])


class ChineseSearch(SearchChinese):
    js_stemmer_rawcode = ""  # no separate stemmer file: the code below goes into language_data.js
    js_stemmer_code = english_stemmer_js()


def setup(app: Sphinx) -> dict:
    app.add_search_language(ChineseSearch)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
