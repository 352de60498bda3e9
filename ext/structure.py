"""The book's structure rules: prose words, callout length, chapter shape, making-of phrases.

One implementation, used by the build (``ext.structure_check``, a warning per problem at its
``file:line``, so ``sphinx-build -W`` fails) and by ``scripts/check_structure.py`` (a table and
the same problems). Every page of a locale's folder is checked:

* **Words**: an English page may hold at most :data:`WORD_CEILING` prose words
  (:data:`WORD_CEILINGS` raises it for Appendix B; :data:`EXEMPT` pages have none). Prose is
  what :func:`prose_lines` keeps: everything but the front matter, code cells, recorded outputs
  (their ``Output:`` label too), plain code blocks (a fence with no info string or a bare
  language name), mermaid and math blocks; the text of other directives (figure captions,
  admonitions) counts and their ``:option:`` lines do not. Words are split at whitespace.
* **Callouts**: a block quote opening with a callout label of any locale (``> **Evidence.**``,
  from ``ext/locale_table.py``) may run to :data:`CALLOUT_LINES` lines, each source line
  counted as the lines it fills at :data:`WRAP_COLUMNS` columns (a CJK character is two
  columns), so a translation set one paragraph to a line is measured as it reads.
* **Shape**: a chapter of the book plan (1-20 and Appendices A and C, ``ext/book_plan.py``) has 4-8
  numbered sections, then the closing sections in order (the locale's words for *Design
  problems in practice*, at least 2; *Summary*, opening with the saved API, naming every public
  save; *Exercises*, at least 4).
* **Making-of**: :data:`PHRASES` catches words about how the book was made (work sessions, the
  project's review, CI runs, our tracker's issues, the machine the labs shared) in the prose of
  every page, in both languages. A citation of another project's issue passes.
* **Terms**: in the prose of a translation, a rendering that the term table of ``ext/terms.py``
  forbids (``log 概率`` for 对数概率, a bare ``episode`` for 回合).

Problems that predate the rules are listed in ``ext/structure_debt.py`` and not reported; an
entry whose problem is gone is reported instead (kind ``debt``), so the list only shrinks.
Pure: does not import Sphinx.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from . import book_plan
from . import structure_debt as debt_table
from . import terms as term_table
from .chapters import read_chapter
from .library import save_block
from .locale_table import SOURCE, all_callout_labels, by_folder
from .problems import FileProblem, Kind

WORD_CEILING = 8000
WORD_CEILINGS = {"B-design-review": 12000}
EXEMPT = {"sources", "reference", "index"}  # no word ceiling
CALLOUT_LINES = 8
WRAP_COLUMNS = 100
MIN_SECTIONS, MAX_SECTIONS, MIN_DESIGN, MIN_EXERCISES = 4, 8, 2, 4

# ------------------------------------------------------------------------------------ prose

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_SKIPPED = re.compile(r"^\{(code-cell|mermaid|math)\}|^[A-Za-z0-9_+-]*$")
_OPTION = re.compile(r"^\s*:[\w-]+:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, text) of every prose line: the counting rule of the module docstring.

    A fence opens a block; a plain, code-cell, mermaid or math block is skipped to its closing
    fence (a bare fence of the same character, at least as long); inside any other directive,
    fences nest and ``:option:`` lines are dropped.
    """
    front = _FRONT_MATTER.match(text)
    offset = front.group(0).count("\n") if front else 0
    body = text[front.end():] if front else text
    kept: list[tuple[int, str]] = []
    stack: list[tuple[str, bool]] = []  # (fence, skipped)
    for number, line in enumerate(body.splitlines(), start=offset + 1):
        fence = _FENCE.match(line)
        if (fence and stack and line.strip() == fence.group(1)
                and fence.group(1)[0] == stack[-1][0][0]
                and len(fence.group(1)) >= len(stack[-1][0])):
            stack.pop()
            continue
        if fence and (not stack or not stack[-1][1]):
            stack.append((fence.group(1), bool(_SKIPPED.match(fence.group(2).strip()))))
            continue
        if stack and stack[-1][1]:
            continue
        if stack and _OPTION.match(line):
            continue
        if line.strip() == "Output:":
            continue
        kept.append((number, line))
    return kept


def prose_words(text: str) -> int:
    """Prose words of a page: whitespace-separated words of :func:`prose_lines`."""
    return len(" ".join(line for _, line in prose_lines(text)).split())


def cjk_characters(text: str) -> int:
    """CJK characters of the prose: a Chinese page's size."""
    return sum(len(re.findall(r"[\u4e00-\u9fff]", line)) for _, line in prose_lines(text))


def word_ceiling(stem: str) -> int | None:
    """The most prose words an English page may have; None for an exempt page."""
    return None if stem in EXEMPT else WORD_CEILINGS.get(stem, WORD_CEILING)


# ---------------------------------------------------------------------------------- callouts

_LABELS = all_callout_labels()
_CALLOUT = re.compile(r"^ {0,3}>\s*\*\*(?P<label>[^*]+)\*\*")
_BLOCK_START = re.compile(r"^\s*(#|`{3}|~{3}|:::|\$\$|[-*+]\s|\d+[.)]\s|<)")


def display_lines(line: str) -> int:
    """How many lines a source line fills at WRAP_COLUMNS columns (a wide character is 2)."""
    width = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
    return max(1, math.ceil(width / WRAP_COLUMNS))


@dataclass(frozen=True)
class Callout:
    line: int  # 1-based line of the label
    end_line: int  # 1-based last line
    label: str  # "Evidence."
    lines: int  # its length, in display lines
    text: str  # its text after the label, '>' marks removed and whitespace collapsed

    def opening(self, length: int = 60) -> str:
        return f"{self.label} {self.text[:length]}"


def callouts(text: str) -> list[Callout]:
    """Every callout of a page's prose: a block quote opening with a callout label.

    The quote runs over the lines that start with ``>``, and over lazy continuation lines (a
    line that continues a quoted paragraph without its ``>``).
    """
    lines = text.splitlines()
    prose = {number for number, _ in prose_lines(text)}
    found = []
    i = 0
    while i < len(lines):
        match = _CALLOUT.match(lines[i])
        if not (match and (i + 1) in prose and match["label"] in _LABELS):
            i += 1
            continue
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if line.lstrip().startswith(">"):
                j += 1
            elif (line.strip() and lines[j - 1].lstrip(" >").strip()
                  and not _BLOCK_START.match(line)):
                j += 1  # lazy continuation of the quoted paragraph
            else:
                break
        body = " ".join(re.sub(r"^\s*>\s?", "", l).strip() for l in lines[i:j])
        body = body.strip().removeprefix(f"**{match['label']}**")
        found.append(Callout(i + 1, j, match["label"], sum(display_lines(l) for l in lines[i:j]),
                             " ".join(body.split())))
        i = j
    return found


# --------------------------------------------------------------------------------- making-of


@dataclass(frozen=True)
class Phrase:
    """Words about how the book was made: a name (the debt list's key) and its patterns."""

    name: str
    patterns: tuple[str, ...]  # regular expressions, English and Chinese
    keep: object = None  # optional test on a match: True keeps it (not a problem)

    def matches(self, text: str) -> list[re.Match]:
        hits = []
        for pattern in self.patterns:
            for match in re.finditer(pattern, text):
                if self.keep is None or not self.keep(text, match):
                    hits.append(match)
        return sorted(hits, key=lambda m: m.start())


#: Words before "issue N" that make it our tracker's issue, not a citation of another project's.
_OURS = {"", "in", "see", "our", "the", "this", "that", "per", "of", "by", "from", "and", "or",
         "as", "at", "on", "for", "under", "with", "to", "after", "before", "an", "a", "its",
         "their", "which", "tracked", "filed", "opened", "closed", "fixed", "was", "is", "were",
         "are", "same", "open", "project's", "book's", "repository's", "repo's", "tracker's"}


def _cites_another_project(text: str, match: re.Match) -> bool:
    """True when the word before 'issue N' names a project ("SWE-smith's issue 24",
    "prime-rl issue #1334", "verl, issue #6719"): a citation, not our tracker."""
    before = text[: match.start()]
    if re.search(r"\n[ \t]*\n[ \t]*$", before) or not before.strip():
        return False  # a paragraph starts with it
    before = before.rstrip()
    if before[-1] in ".!?:;(":
        return False  # a sentence or a parenthesis starts with it
    word = before.split()[-1].rstrip(",").lower().replace("’", "'")
    return word not in _OURS and bool(re.search(r"\w", word))  # a list marker starts it


PHRASES: tuple[Phrase, ...] = (
    Phrase("recorded for the project", (r"recorded\s+for\s+the\s+project", r"项目记录的")),
    Phrase("work session", (r"\b[Ss]ession\s+\d+", r"第\s*\d+\s*次(?:工作)?会话", r"会话\s*\d+")),
    Phrase("CI run", (r"\bCI\s+runs?\b", r"CI\s*(?:运行|跑)")),
    Phrase("our tracker's issue", (r"\b[Ii]ssues?\s+#?\d+",), keep=_cites_another_project),
    Phrase("our tracker's issue (zh)", (r"(?:本项目|我们|项目)的?\s*(?:issue|议题)\s*#?\d+",
                                        r"议题\s*#?\d+")),
    Phrase("exploratory runs", (r"\bexploratory\s+runs\b", r"探索性实验", r"设计本书期间")),
    Phrase("the design's spike", (r"\bdesign's\s+spike\b", r"\bthrowaway\s+spike\b",
                                  r"设计阶段的探索实验")),
    Phrase("our stored sources", (r"\bour\s+stored\s+sources\b", r"我们存档的")),
    Phrase("a shared two-core machine", (r"\bshared\s+two-core\s+machine\b",
                                         r"共[享用]的双核机器")),
    Phrase("the other core", (r"\bran\s+on\s+the\s+other\s+core\b", r"另一个核心上正在运行")),
    Phrase("the chapter's minute", (r"\bchapter's\s+minute\b", r"本章(?:那|的)一分钟")),
)


@dataclass(frozen=True)
class PhraseHit:
    line: int
    phrase: Phrase
    text: str  # what matched, whitespace collapsed


def making_of(text: str) -> list[PhraseHit]:
    """Every making-of phrase in a page's prose, with its line (a phrase may span lines)."""
    prose = prose_lines(text)
    joined, starts = [], []
    position = 0
    for number, line in prose:
        starts.append((position, number))
        joined.append(line)
        position += len(line) + 1
    whole = "\n".join(joined)
    hits = []
    for phrase in PHRASES:
        for match in phrase.matches(whole):
            line = max((n for p, n in starts if p <= match.start()), default=1)
            hits.append(PhraseHit(line, phrase, " ".join(match.group(0).split())))
    return sorted(hits, key=lambda h: h.line)


# -------------------------------------------------------------------------------------- shape


def _section(text: str, heading: str) -> tuple[int, str]:
    """(1-based line, body) of a level-2 section, or (0, '') when absent."""
    match = re.search(rf"^## {re.escape(heading)}\s*$", text, flags=re.M)
    if not match:
        return 0, ""
    line = text.count("\n", 0, match.start()) + 1
    rest = text[match.end():]
    end = re.search(r"^## ", rest, flags=re.M)
    return line, rest[: end.start()] if end else rest


@dataclass
class Shape:
    words: int  # prose words (English) or CJK characters (a CJK locale)
    ceiling: int | None  # the word ceiling, None if exempt or not English
    sections: int
    cells: int
    saves: int
    design_problems: int
    exercises: int
    long_callouts: int
    problems: list[FileProblem] = field(default_factory=list)


def _shape_problems(path: Path, chapter, locale) -> tuple[int, int, int, list[FileProblem]]:
    """(sections, design problems, exercises, problems) of the chapter shape rule."""
    text = chapter.text
    sections = len(re.findall(r"^## (\d+|[A-Z])\.\d+ ", text, flags=re.M))
    design_heading, _, _ = locale.closing_headings
    found = [_section(text, heading) for heading in locale.closing_headings]
    (design_line, design), (summary_line, summary), (exercise_line, exercises) = found
    design_count = len(re.findall(r"^(###|\*\*|\d+\. \*\*)", design, flags=re.M))
    exercise_count = len(re.findall(r"^\d+\. ", exercises, flags=re.M))
    entry = book_plan.by_stem(path.stem)
    if entry is None or not entry.is_chapter:
        return sections, design_count, exercise_count, []
    problems = []

    def problem(line: int, message: str) -> None:
        problems.append(FileProblem(path, line, Kind.SECTIONS, message))

    if not MIN_SECTIONS <= sections <= MAX_SECTIONS:
        problem(1, f"{sections} numbered sections (want {MIN_SECTIONS}-{MAX_SECTIONS})")
    lines = [design_line, summary_line, exercise_line]
    for heading, line in zip(locale.closing_headings, lines):
        if not line:
            problem(1, f"no '## {heading}' section")
    if all(lines) and lines != sorted(lines):
        problem(design_line, "closing sections out of order")
    if design_line and design_count < MIN_DESIGN:
        problem(design_line, f"{design_count} design problems (want >= {MIN_DESIGN})")
    if exercise_line and exercise_count < MIN_EXERCISES:
        problem(exercise_line, f"{exercise_count} exercises (want >= {MIN_EXERCISES})")
    first_item = summary.strip().split("\n\n", 1)[0]
    if summary_line and locale.saved_api.lower() not in first_item.lower():
        problem(summary_line, "the Summary must open with the saved API")
    elif summary_line:
        listed = set(re.findall(r"`([^`]+)`", first_item))
        saved = [n for c in chapter.cells if c.is_save
                 for n in save_block(c, chapter).names if not n.startswith("_")]
        left_out = [n for n in saved if n not in listed]
        if left_out:
            problem(summary_line, "the Summary's saved API leaves out "
                    + ", ".join(f"`{n}`" for n in left_out))
    return sections, design_count, exercise_count, problems


def shape(path: Path | str, folder: str, debt: debt_table.Debt | None = None,
          text: str | None = None) -> Shape:
    """Measure one page of ``book/<folder>`` and find its problems, net of the debt list."""
    path = Path(path)
    locale = by_folder(folder)
    chapter = read_chapter(path, text)
    text = chapter.text
    debt = debt_table.DEBT if debt is None else debt
    key = f"{folder}/{path.name}"
    found: list[tuple[FileProblem, tuple | None]] = []  # (problem, its debt entry if it may have one)

    english = locale == SOURCE
    ceiling = word_ceiling(path.stem) if english else None
    words = prose_words(text) if not locale.cjk else cjk_characters(text)
    if ceiling is not None and words > ceiling:
        found.append((FileProblem(path, 1, Kind.WORDS, f"{words:,} prose words (ceiling "
                                                   f"{ceiling:,}): cut it"), key))
    long_callouts = 0
    for callout in callouts(text):
        if callout.lines > CALLOUT_LINES:
            long_callouts += 1
            found.append((FileProblem(path, callout.line, Kind.CALLOUT,
                                  f"callout of {callout.lines} lines (at most {CALLOUT_LINES}): "
                                  f"'{callout.opening()}'"), ("callout", callout)))
    for hit in making_of(text):
        found.append((FileProblem(path, hit.line, Kind.MAKING_OF,
                              f"'{hit.text}' speaks of how the book was made "
                              f"[{hit.phrase.name}]: say what the reader can check"),
                      ("phrase", hit.phrase.name)))
    for hit in term_table.variants_in(prose_lines(text), folder):
        found.append((FileProblem(path, hit.line, Kind.TERM,
                              f"'{hit.text}' for {hit.term.english}: the book's term is "
                              f"{hit.term.chinese} (ext/terms.py)"), ("term", hit.variant)))
    sections, design, exercises, shape_problems = _shape_problems(path, chapter, locale)
    found += [(p, None) for p in shape_problems]

    problems = _net_of_debt(path, key, found, debt)
    return Shape(words, ceiling, sections, len(chapter.cells),
                 sum(c.is_save for c in chapter.cells), design, exercises, long_callouts,
                 problems)


def _net_of_debt(path: Path, key: str, found: list[tuple[FileProblem, object]],
                 debt: debt_table.Debt) -> list[FileProblem]:
    """The problems the debt list does not excuse, and a ``debt`` problem per stale entry."""
    problems = []
    used_words, used_callouts, used_phrases, used_terms = False, set(), set(), set()
    for problem, tag in found:
        if problem.kind is Kind.WORDS and key in debt.over_words_files:
            used_words = True
            continue
        if isinstance(tag, tuple) and tag[0] == "callout":
            entry = next((e for e in debt.long_callouts
                          if e[0] == key and tag[1].text.startswith(e[1])), None)
            if entry:
                used_callouts.add(entry)
                continue
        if isinstance(tag, tuple) and tag[0] == "phrase" and (key, tag[1]) in debt.making_of:
            used_phrases.add((key, tag[1]))
            continue
        if isinstance(tag, tuple) and tag[0] == "term" and (key, tag[1]) in debt.term_variants:
            used_terms.add((key, tag[1]))
            continue
        problems.append(problem)
    for entry in debt.over_words:
        if entry[0] == key and not used_words:
            problems.append(debt.problem("over_words", entry, f"{key} is no longer over its "
                                         "word ceiling: remove it from OVER_WORDS"))
    for entry in debt.long_callouts:
        if entry[0] == key and entry not in used_callouts:
            problems.append(debt.problem("long_callouts", entry, f"{key} has no callout longer "
                                         f"than {CALLOUT_LINES} lines opening '{entry[1]}': "
                                         "remove it from LONG_CALLOUTS"))
    for entry in debt.making_of:
        if entry[0] == key and entry not in used_phrases:
            problems.append(debt.problem("making_of", entry, f"{key} no longer says "
                                         f"'{entry[1]}': remove it from MAKING_OF"))
    for entry in debt.term_variants:
        if entry[0] == key and entry not in used_terms:
            problems.append(debt.problem("term_variants", entry, f"{key} no longer says "
                                         f"'{entry[1]}': remove it from TERM_VARIANTS"))
    return sorted(problems, key=lambda p: (str(p.path), p.line))


def missing_files(book: Path, folder: str, debt: debt_table.Debt | None = None
                  ) -> list[FileProblem]:
    """Debt entries of ``book/<folder>`` that name a file it does not have (renamed, deleted)."""
    debt = debt_table.DEBT if debt is None else debt
    problems = []
    for name, entries in debt.entries():
        for entry in entries:
            if entry[0].startswith(f"{folder}/") and not (Path(book) / entry[0]).exists():
                problems.append(debt.problem(name, entry, f"{entry[0]} is not in the book: "
                                             f"remove its entry from {name.upper()}"))
    return problems
