"""The term table: one Chinese term per concept, and the renderings the press rejects in zh prose.

Each :class:`Term` names an English concept, the one Chinese term the book uses for it (as
chapters 6-10 settled them), and the variants that must not stand in for it. The check looks at
prose only: code cells, recorded outputs, plain code blocks, math, inline code spans and link
targets are left out (``structure.prose_lines``, then :data:`_NOT_PROSE`). An English gloss in
parentheses, as in ``回合（episode）``, is the book's way to give the English at first use and
passes: a variant inside a pair of parentheses that holds no Chinese character is not reported.

``ext.structure.shape`` reports a variant as a ``term`` problem (a warning, so ``sphinx-build
-W`` fails on it); variants that predate the table are listed in
``ext.structure_debt.TERM_VARIANTS`` and only shrink, like the other debt lists.
Pure: does not import Sphinx.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str
    variants: tuple[str, ...]  # plain text; a space matches any run of spaces, or none

    @cached_property
    def patterns(self) -> tuple[tuple[str, re.Pattern], ...]:
        """(variant, its pattern): ASCII ends match only at an ASCII word boundary."""
        out = []
        for variant in self.variants:
            body = r"\s*".join(re.escape(part) for part in variant.split())
            if variant[0].isascii() and variant[0].isalnum():
                body = r"(?<![A-Za-z0-9_-])" + body
            if variant[-1].isascii() and variant[-1].isalnum():
                body += r"(?![A-Za-z0-9_-])"
            out.append((variant, re.compile(body, re.I)))
        return tuple(out)


#: The table, by locale folder. Add a concept when two renderings of it meet in the book.
TERMS: dict[str, tuple[Term, ...]] = {
    "zh": (
        Term("episode", "回合", ("episodes", "episode")),
        Term("log-probability", "对数概率", ("log 概率", "log-概率")),
        Term("log-ratio", "对数比率", ("log 比率", "log-比率")),
        Term("warm start", "热启动", ("预热模型", "监督预热", "监督热身", "暖启动")),
    ),
}

_NOT_PROSE = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$|\]\([^)]*\)|<[^<>\n]*>")
_GLOSS = re.compile(r"（[^（）]*）|\([^()]*\)")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class TermHit:
    line: int
    term: Term
    variant: str
    text: str  # what matched


def _blank(match: re.Match) -> str:
    return " " * len(match.group(0))


def variants_in(prose: list[tuple[int, str]], folder: str) -> list[TermHit]:
    """Every forbidden variant in the prose lines ``(line, text)`` of a page of ``folder``."""
    hits = []
    for number, line in prose:
        text = _NOT_PROSE.sub(_blank, line)
        glosses = [m.span() for m in _GLOSS.finditer(text) if not _CJK.search(m.group(0))]
        for term in TERMS.get(folder, ()):
            taken: list[tuple[int, int]] = []
            for variant, pattern in term.patterns:
                for match in pattern.finditer(text):
                    start, end = match.span()
                    if any(a <= start and end <= b for a, b in glosses + taken):
                        continue
                    taken.append((start, end))
                    hits.append(TermHit(number, term, variant, match.group(0)))
    return sorted(hits, key=lambda h: h.line)
