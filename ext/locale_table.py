"""The book's languages: every fact that differs between them, in one table.

Each :class:`Locale` names its folder (``book/<folder>``, ``_build/<folder>``,
``_build/site/<folder>``), its Sphinx language, the words the press writes or looks for (the
closing headings that ``scripts/check_structure.py`` checks, the callout labels, the printed
front matter, the page furniture of the site) and how its text is set. The first locale is the
canonical one: its chapters hold the code that the others copy.

The build (``conf.py``, ``ext/``), the scripts and the tests import this table; nothing restates
it. Nothing here imports Sphinx.

    python -m ext.locale_table folders           # en zh        (the Makefile's list)
    python -m ext.locale_table language zh       # zh_CN
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

CALLOUT_KINDS = ("evidence", "pitfall", "production")  # the CSS class callout-<kind>


@dataclass(frozen=True)
class Locale:
    folder: str
    sphinx_language: str  # sphinx-build -D language=...
    hreflang: str
    label: str  # the language switch's link text
    html_title: str
    search_language: str | None  # Sphinx's html_search_language; None: the language's own
    design_problems: str  # the closing headings of a chapter, in order
    summary: str
    exercises: str
    saved_api: str  # how the Summary's first item opens
    callouts: tuple[str, str, str]  # callout titles, in the order of CALLOUT_KINDS
    full_stop: str  # ends a callout label: ``> **Evidence.**``, ``> **证据。**``
    contents: str  # the printed table of contents
    author: str | None  # the printed author line; None prints conf.py's ``author``
    cjk: bool  # set in CJK fonts; sizes are counted in characters, not words
    executed: str  # the execution record of a chapter page (str.format fields below)
    not_executed: str
    notebook: str  # the link to the chapter's notebook
    reference: str  # title of the library reference page
    saved_in: str  # "saved in <chapter section>" on the reference page
    landing_blurb: str  # the site's landing page (scripts/assemble_site.py)
    landing_go: str
    licence: str  # the site's footer and the printed title page: {text} and {code} are the
    # licences' names (ext.site_settings), linked on the site
    pdf_link: str  # the link on every page to the PDF of its language
    forge_links: tuple[str, str, str]  # the page header's repository menu: the repository,
    # "edit this page", "report a problem" (ext.hosting)
    not_found_title: str  # the 404 page
    not_found_body: str  # its sentence; {home} is a link to the language's start page

    @property
    def closing_headings(self) -> tuple[str, str, str]:
        return (self.design_problems, self.summary, self.exercises)

    @property
    def callout_labels(self) -> dict[str, tuple[str, str]]:
        """The bold label a callout opens with -> (kind, title)."""
        return {f"{title}{self.full_stop}": (kind, title)
                for kind, title in zip(CALLOUT_KINDS, self.callouts)}

    @property
    def pdf_name(self) -> str:
        return f"agentrl-{self.folder}.pdf"


LOCALES: tuple[Locale, ...] = (
    Locale(
        folder="en", sphinx_language="en", hreflang="en", label="English",
        html_title="RL for LM agents", search_language=None,
        design_problems="Design problems in practice", summary="Summary", exercises="Exercises",
        saved_api="Saved API",
        callouts=("Evidence", "Pitfall", "In production"), full_stop=".",
        contents="Contents", author=None, cjk=False,
        executed="Executed {when} with Python {python} and torch {torch} in {seconds:.1f} s.",
        not_executed="Not executed in this build.",
        notebook="Download this chapter as a Jupyter notebook",
        reference="Library reference", saved_in="saved in",
        landing_blurb="An executable book: every number is printed by the code above it.",
        landing_go="Read in English →",
        licence="Text and figures: {text}. Code, including the code cells: {code}.",
        pdf_link="PDF",
        forge_links=("Repository", "Edit this page", "Report a problem"),
        not_found_title="Page not found",
        not_found_body="There is no page at this address. The book starts at {home}.",
    ),
    Locale(
        folder="zh", sphinx_language="zh_CN", hreflang="zh-CN", label="中文",
        html_title="语言模型智能体的强化学习", search_language="zh",
        design_problems="实践中的设计问题", summary="小结", exercises="练习",
        saved_api="保存的 API",
        callouts=("证据", "陷阱", "生产实践"), full_stop="。",
        contents="目录", author="agentrl 作者", cjk=True,
        executed="执行于 {when}，Python {python}，torch {torch}，用时 {seconds:.1f} 秒。",
        not_executed="本次构建未执行。",
        notebook="下载本章的 Jupyter 笔记本",
        reference="库参考", saved_in="保存于",
        landing_blurb="一本可执行的书：书中每个数字都由它上方的代码打印出来。",
        landing_go="阅读中文版 →",
        licence="正文与插图采用 {text} 许可；代码（包括各章的代码单元）采用 {code} 许可。",
        pdf_link="PDF 版",
        forge_links=("代码仓库", "编辑此页", "报告问题"),
        not_found_title="找不到页面",
        not_found_body="这个地址没有页面。本书从 {home} 开始。",
    ),
)

SOURCE = LOCALES[0]  # the canonical chapters


def by_folder(folder: str) -> Locale:
    for locale in LOCALES:
        if locale.folder == folder:
            return locale
    raise KeyError(f"no locale with folder {folder!r}; the book has {folders()}")


def by_language(language: str) -> Locale:
    for locale in LOCALES:
        if locale.sphinx_language == language:
            return locale
    raise KeyError(f"no locale with Sphinx language {language!r}; the book has "
                   f"{[locale.sphinx_language for locale in LOCALES]}")


def folders() -> list[str]:
    return [locale.folder for locale in LOCALES]


def all_callout_labels() -> dict[str, tuple[str, str]]:
    """Every locale's callout labels: a chapter's label maps to the same kind in any language."""
    return {label: kind for locale in LOCALES for label, kind in locale.callout_labels.items()}


def main(argv: list[str]) -> int:
    if argv == ["folders"]:
        print(" ".join(folders()))
    elif len(argv) == 2 and argv[0] == "language":
        try:
            print(by_folder(argv[1]).sphinx_language)
        except KeyError as error:
            print(f"ext.locale_table: {error.args[0]}", file=sys.stderr)
            return 2
    else:
        print("usage:\n" + "\n".join(__doc__.strip().splitlines()[-2:]), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
