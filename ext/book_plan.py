"""The book plan: every chapter, written or planned, with its number, titles and part, once.

:data:`PLAN` lists the book's pages in reading order (the order of the site's navigation, where
Appendix A stands before Part II because Part II uses it, and Appendix C, the case study of
Part II's experiments, right after it). Everything that lists chapters reads
it or is checked against it:

* the contents table of each locale's ``index.md`` (grouped by part) and its ``toctree`` (the
  written pages in plan order): :func:`index_problems` names each row or entry that disagrees,
  and :func:`contents_table` / :func:`toctree_entries` print what the index should hold;
* Chapter 0's chapter graph (a mermaid ``flowchart``): every numbered entry is a node, labelled
  by its number, and no node is outside the plan (:func:`graph_problems`);
* ``ext.planned``: a link to a planned page renders as plain text until its file exists;
* ``ext.structure``: which pages must have the chapter shape and what their word ceiling is.

``scripts/check_structure.py`` reports every disagreement at ``index.md:line``; the tests hold
``written`` equal to the files that exist. To add a chapter: write it, flip ``written``, then
copy the row and the toctree entry the check prints. Pure: does not import Sphinx.

    python -m ext.book_plan table zh     # the contents table zh/index.md should hold
    python -m ext.book_plan toctree      # the toctree entries, in order
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .locale_table import LOCALES, Locale
from .problems import FileProblem, Kind

#: The parts of the book, in order: titles per locale folder.
PARTS: tuple[dict[str, str], ...] = (
    {"en": "Front matter", "zh": "前言"},
    {"en": "I. Foundations", "zh": "第一部分 · 基础"},
    {"en": "II. Policy optimisation", "zh": "第二部分 · 策略优化"},
    {"en": "III. Agents at scale", "zh": "第三部分 · 规模化智能体"},
    {"en": "IV. Practice", "zh": "第四部分 · 实践"},
    {"en": "Appendices", "zh": "附录"},
)
FRONT, FOUNDATIONS, OPTIMISATION, SCALE, PRACTICE, APPENDICES = range(len(PARTS))


@dataclass(frozen=True)
class Entry:
    """One page of the plan. ``number`` is '0'-'20', 'A'-'C', or '' for back matter."""

    number: str
    stem: str  # the file is <stem>.md in every locale's folder
    part: int  # index into PARTS
    written: bool  # False: planned, no file yet
    titles: dict[str, str] | None = field(default=None, compare=False)  # None: the locale's
    # ``reference`` title (the library reference page, titled by ext.locale_table)

    @property
    def file(self) -> str:
        return f"{self.stem}.md"

    def title(self, locale: Locale) -> str:
        if self.titles is None:
            return locale.reference
        return self.titles[locale.folder]

    @property
    def is_chapter(self) -> bool:
        """A numbered chapter (1-20), Appendix A or Appendix C: the pages with the chapter shape."""
        return self.number.isdigit() and self.number != "0" or self.number in ("A", "C")


def _e(number: str, stem: str, part: int, written: bool, en: str, zh: str) -> Entry:
    return Entry(number, stem, part, written, {"en": en, "zh": zh})


PLAN: tuple[Entry, ...] = (
    _e("0", "00-notation", FRONT, True, "Notation and how to use this book", "符号说明与本书用法"),
    _e("1", "01-introduction", FOUNDATIONS, True, "Introduction", "引言"),
    _e("2", "02-rl-fundamentals", FOUNDATIONS, True, "RL fundamentals", "强化学习基础"),
    _e("3", "03-language-models-as-policies", FOUNDATIONS, True, "Language models as policies",
       "语言模型即策略"),
    _e("4", "04-environments-and-tools", FOUNDATIONS, True, "Environments and tools",
       "环境与工具"),
    _e("5", "05-trajectories-and-templates", FOUNDATIONS, True, "Trajectories and templates",
       "轨迹与模板"),
    _e("A", "A-math", APPENDICES, True, "Math tools", "数学工具"),
    _e("6", "06-policy-gradient", OPTIMISATION, True, "Policy gradient", "策略梯度"),
    _e("7", "07-advantages", OPTIMISATION, True, "Advantages", "优势估计"),
    _e("8", "08-ppo", OPTIMISATION, True, "PPO", "PPO"),
    _e("9", "09-grpo-family", OPTIMISATION, True, "The GRPO family", "GRPO 家族"),
    _e("10", "10-kl-and-entropy", OPTIMISATION, True, "KL and entropy", "KL 与熵"),
    _e("C", "C-case-study", APPENDICES, True, "Case study: what RL learned on BugFix-v2",
       "案例研究：RL 在 BugFix-v2 上学到了什么"),
    _e("11", "11-rewards", SCALE, True, "Rewards", "奖励"),
    _e("12", "12-multi-turn", SCALE, True, "Multi-turn", "多轮交互"),
    _e("13", "13-rollout-systems", SCALE, True, "Rollout systems", "Rollout 系统"),
    _e("14", "14-efficiency", SCALE, True, "Efficiency", "效率"),
    _e("15", "15-sft-and-rejection-sampling", SCALE, True, "SFT and rejection sampling",
       "SFT 与拒绝采样"),
    _e("16", "16-distillation", SCALE, True, "Distillation", "蒸馏"),
    _e("17", "17-evaluation", PRACTICE, True, "Evaluation", "评估"),
    _e("18", "18-debugging", PRACTICE, True, "Debugging", "调试"),
    _e("19", "19-capstone", PRACTICE, True, "Capstone", "综合实战"),
    _e("20", "20-frontier", PRACTICE, True, "Frontier", "前沿"),
    _e("B", "B-design-review", APPENDICES, True, "Design-review problems", "设计评审问题"),
    _e("", "sources", APPENDICES, True, "Sources", "来源"),
    Entry("", "reference", APPENDICES, True),
)


def by_stem(stem: str) -> Entry | None:
    """The plan's entry for a page (``07-advantages``), or None for a page outside the plan."""
    return next((e for e in PLAN if e.stem == stem), None)


def files() -> list[str]:
    """Every page of the plan, written or planned, as a file name."""
    return [e.file for e in PLAN]


def toctree_entries() -> list[str]:
    """The index's toctree: the written pages, in reading order."""
    return [e.stem for e in PLAN if e.written]


def contents_rows(locale: Locale) -> list[str]:
    """The rows of the index's contents table: grouped by part, each part named once."""
    rows, previous = [], None
    for entry in sorted(PLAN, key=lambda e: e.part):  # stable: plan order within a part
        part = PARTS[entry.part][locale.folder] if entry.part != previous else ""
        previous = entry.part
        title = entry.title(locale)
        text = f"{entry.number}. {title}" if entry.number else title
        rows.append(f"| {part} | [{text}]({entry.file}) |".replace("|  |", "| |"))
    return rows


def contents_table(locale: Locale, header: str = "| Part | Chapter |") -> str:
    return "\n".join([header, "| --- | --- |", *contents_rows(locale)])


_TABLE_RULE = re.compile(r"^\|\s*-{3,}\s*\|\s*-{3,}\s*\|\s*$")
_TOCTREE = re.compile(r"^(`{3,}|~{3,})\s*\{toctree\}")
_NODE = re.compile(r"\b(?:C(\d+)|([A-Z]))\[([^\]]*)\]")


def _table(lines: list[str]) -> tuple[int, list[str]]:
    """(0-based index of the first row, rows) of the first two-column table after its rule."""
    for i, line in enumerate(lines):
        if _TABLE_RULE.match(line):
            rows = []
            for row in lines[i + 1:]:
                if not row.startswith("|"):
                    break
                rows.append(row.rstrip())
            return i + 1, rows
    return -1, []


def _toctree(lines: list[str]) -> tuple[int, list[tuple[int, str]]]:
    """(0-based index of the toctree fence, [(0-based line, entry)]) of the first toctree."""
    for i, line in enumerate(lines):
        fence = _TOCTREE.match(line)
        if fence:
            entries = []
            for j in range(i + 1, len(lines)):
                text = lines[j].strip()
                if text.startswith(fence.group(1)[0] * 3):
                    break
                if text and not text.startswith(":"):
                    entries.append((j, text.removesuffix(".md")))
            return i, entries
    return -1, []


def _first_difference(path: Path, start: int, found: list[str], wanted: list[str],
                      what: str) -> list[FileProblem]:
    for k in range(max(len(found), len(wanted))):
        have = found[k] if k < len(found) else None
        want = wanted[k] if k < len(wanted) else None
        if have != want:
            shown = f"{have!r}" if have is not None else "nothing"
            return [FileProblem(path, start + k + 1, Kind.PLAN,
                            f"{what} has {shown} where the book plan (ext/book_plan.py) has "
                            f"{want!r}" if want is not None else
                            f"{what} has {shown} beyond the book plan (ext/book_plan.py)")]
    return []


def index_problems(book_dir: Path, locale: Locale) -> list[FileProblem]:
    """Where ``<book_dir>/index.md``'s contents table or toctree departs from the plan.

    One problem per part (the first differing row, the first differing toctree entry), each at
    its line, saying what the plan wants there.
    """
    path = Path(book_dir) / "index.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    start, rows = _table(lines)
    if start < 0:
        problems.append(FileProblem(path, 1, Kind.PLAN, "no contents table (| Part | Chapter |)"))
    else:
        problems += _first_difference(path, start, rows, contents_rows(locale),
                                      "the contents table")
    fence, entries = _toctree(lines)
    if fence < 0:
        problems.append(FileProblem(path, 1, Kind.PLAN, "no toctree"))
    else:
        first = entries[0][0] if entries else fence + 1
        problems += _first_difference(path, first, [e for _, e in entries], toctree_entries(),
                                      "the toctree")
    return problems


def graph_numbers(text: str) -> tuple[int, dict[str, str]]:
    """(1-based line of the first ``flowchart``, {number: label}) of a chapter's graph."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("flowchart"):
            nodes = {}
            for body in lines[i + 1:]:
                if body.strip().startswith("```"):
                    break
                for digits, letter, label in _NODE.findall(body.split("%%")[0]):
                    nodes[digits or letter] = label
            return i + 1, nodes
    return 0, {}


def graph_problems(path: Path) -> list[FileProblem]:
    """Where the chapter graph in ``path`` (Chapter 0) leaves out or adds a plan entry."""
    line, nodes = graph_numbers(Path(path).read_text(encoding="utf-8"))
    if not line:
        return [FileProblem(path, 1, Kind.PLAN, "no chapter graph (a mermaid flowchart)")]
    problems = []
    numbered = [e.number for e in PLAN if e.number]
    missing = [n for n in numbered if n not in nodes]
    extra = [n for n in nodes if n not in numbered]
    if missing:
        problems.append(FileProblem(path, line, Kind.PLAN, "the chapter graph has no node for "
                                + ", ".join(missing) + " of the book plan"))
    if extra:
        problems.append(FileProblem(path, line, Kind.PLAN, "the chapter graph has nodes "
                                + ", ".join(extra) + " that the book plan does not"))
    wrong = [f"{n} ({label!r})" for n, label in nodes.items()
             if n in numbered and not label.startswith(f"{n} ")]
    if wrong:
        problems.append(FileProblem(path, line, Kind.PLAN, "graph nodes not labelled by their "
                                "number: " + ", ".join(wrong)))
    return problems


def plan_problems(book_dir: Path, locale: Locale) -> list[FileProblem]:
    """Every disagreement of a locale's book with the plan: index, graph, written flags."""
    book_dir = Path(book_dir)
    problems = index_problems(book_dir, locale)
    front = book_dir / PLAN[0].file
    if front.exists():
        problems += graph_problems(front)
    for entry in PLAN:
        exists = (book_dir / entry.file).exists()
        if entry.written and not exists:
            problems.append(FileProblem(book_dir / "index.md", 1, Kind.PLAN,
                                    f"{entry.file} is written in the book plan but has no file"))
        elif exists and not entry.written:
            problems.append(FileProblem(book_dir / entry.file, 1, Kind.PLAN,
                                    f"{entry.file} exists but the book plan marks it planned: "
                                    "set written=True in ext/book_plan.py"))
    return problems


def main(argv: list[str]) -> int:
    folders = {locale.folder: locale for locale in LOCALES}
    if len(argv) == 2 and argv[0] == "table" and argv[1] in folders:
        print("\n".join(contents_rows(folders[argv[1]])))
    elif argv == ["toctree"]:
        print("\n".join(toctree_entries()))
    else:
        print("usage:\n" + "\n".join(__doc__.strip().splitlines()[-2:]), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
