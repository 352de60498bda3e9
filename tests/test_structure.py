"""The structure rules (ext/structure.py) and their CLI, scripts/check_structure.py.

The real book passes (net of the debt list, ext/structure_debt.py); each rule names a broken
page at its line; the word count is the shared tool's; the debt list only shrinks.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ext import structure, structure_debt, terms
from ext.locale_table import LOCALES, SOURCE, folders
from ext.structure import (
    CALLOUT_LINES, WORD_CEILING, callouts, making_of, missing_files, prose_words, shape,
)
from ext.structure_debt import Debt

ROOT = Path(__file__).resolve().parents[1]
#: The counting rule's reference implementation, kept outside the repository (beside it).
PROSE_WORDS_TOOL = ROOT.parent / "shared" / "tools" / "prose_words.py"
NO_DEBT = Debt((), (), ())

SPEC = importlib.util.spec_from_file_location("check_structure", ROOT / "scripts" / "check_structure.py")
check_structure = importlib.util.module_from_spec(SPEC)
sys.modules["check_structure"] = check_structure  # dataclasses look the module up
SPEC.loader.exec_module(check_structure)

ZH = LOCALES[1]
EVIDENCE = f"**{SOURCE.callouts[0]}{SOURCE.full_stop}**"
ZH_EVIDENCE = f"**{ZH.callouts[0]}{ZH.full_stop}**"


@pytest.mark.parametrize("locale", folders())
def test_real_book_has_the_shape(locale, capsys):
    assert check_structure.main(["--locale", locale]) == 0, capsys.readouterr().out


def _copy_book(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("labs"))
    return tmp_path / "book" / "en" / "02-rl-fundamentals.md"


def test_too_few_exercises_is_named_with_its_line(tmp_path, capsys):
    chapter = _copy_book(tmp_path)
    text = chapter.read_text(encoding="utf-8")
    head, exercises = text.split("## Exercises", 1)
    kept = "\n".join(l for l in exercises.splitlines() if not re.match(r"^[4-9]\. ", l))
    chapter.write_text(head + "## Exercises" + kept, encoding="utf-8")
    line = head.count("\n") + 1
    assert check_structure.main(["--root", str(tmp_path)]) == 1
    assert f"{chapter}:{line}: 3 exercises (want >= 4) [agentrl.sections]" in capsys.readouterr().out


def test_missing_closing_section_is_reported(tmp_path, capsys):
    chapter = _copy_book(tmp_path)
    text = chapter.read_text(encoding="utf-8")
    chapter.write_text(text.replace("## Summary", "## Recap"), encoding="utf-8")
    assert check_structure.main(["--root", str(tmp_path)]) == 1
    assert f"{chapter}:1: no '## Summary' section" in capsys.readouterr().out


def test_a_save_missing_from_the_summarys_saved_api_is_named(tmp_path, capsys):
    chapter = _copy_book(tmp_path)
    text = chapter.read_text(encoding="utf-8")
    head, summary = text.split("## Summary", 1)
    api, rest = summary.strip().split("\n\n", 1)
    dropped = re.findall(r"`([^`]+)`", api)[0]
    api = re.sub(rf"`{dropped}`,?\s*", "", api, count=1)
    chapter.write_text(head + "## Summary\n\n" + api + "\n\n" + rest, encoding="utf-8")
    line = head.count("\n") + 1
    assert check_structure.main(["--root", str(tmp_path)]) == 1
    assert (f"{chapter}:{line}: the Summary's saved API leaves out `{dropped}`"
            in capsys.readouterr().out)


def test_the_shape_is_a_rule_of_the_plans_chapters_only(tmp_path):
    page = tmp_path / "01-basics.md"  # a fixture's page: not a chapter of the book plan
    page.write_text("# 1. Basics\n\nNo sections at all.\n", encoding="utf-8")
    assert shape(page, "en", NO_DEBT).problems == []
    chapter = tmp_path / "01-introduction.md"
    chapter.write_text("# 1. Basics\n\nNo sections at all.\n", encoding="utf-8")
    assert {p.kind.subtype for p in shape(chapter, "en", NO_DEBT).problems} == {"sections"}


# ---------------------------------------------------------------------------- words


def _english_chapters() -> list[Path]:
    return sorted(p for p in (ROOT / "book" / SOURCE.folder).glob("*.md")
                  if re.match(r"^(\d\d|[A-Z])-", p.name))


@pytest.mark.skipif(not PROSE_WORDS_TOOL.exists(),
                    reason=f"{PROSE_WORDS_TOOL} (the shared counting tool, outside the "
                           "repository) is absent on this machine")
def test_word_count_is_the_shared_tools_on_every_english_chapter():
    keys = [p.name.split("-")[0] for p in _english_chapters()]
    result = subprocess.run([sys.executable, str(PROSE_WORDS_TOOL), "1000000", *keys],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    theirs = dict(item.split(":") for item in result.stdout.split("prose words ")[1].split())
    ours = {p.name.split("-")[0]: str(prose_words(p.read_text(encoding="utf-8")))
            for p in _english_chapters()}
    assert ours == theirs


def test_prose_words_skips_code_outputs_mermaid_math_options_and_front_matter():
    text = "\n".join([
        "---", "title: not counted here", "---", "",
        "# One two", "",
        "```{code-cell} ipython3", "print('not counted')", "```", "",
        "Output:", "", "```text", "not counted", "```", "",
        "```", "plain block not counted", "```",
        "```python", "not counted", "```",
        "```{mermaid}", "flowchart TD", "```",
        "```{math}", "x = y", "```",
        "```{figure} a.png", ":alt: not counted", "", "three four five", "```",
        ":::{note}", "six", ":::",
    ])
    # "# One two" (the '#' is a word) / three four five / ":::{note} six :::" (a colon fence
    # is prose to the rule)
    assert prose_words(text) == 3 + 3 + 3


def test_a_chapter_over_its_ceiling_is_reported_and_a_listed_one_is_not(tmp_path):
    chapter = tmp_path / "en" / "02-rl-fundamentals.md"
    chapter.parent.mkdir()
    text = (ROOT / "book" / "en" / chapter.name).read_text(encoding="utf-8")
    padded = text + "\n" + "word " * WORD_CEILING + "\n"
    chapter.write_text(padded, encoding="utf-8")
    problems = shape(chapter, "en", NO_DEBT).problems
    assert [(p.line, p.kind.subtype) for p in problems] == [(1, "words")]
    assert f"(ceiling {WORD_CEILING:,})" in problems[0].message
    listed = Debt(((f"en/{chapter.name}", 0),), (), ())
    assert shape(chapter, "en", listed).problems == []


def test_appendix_b_has_a_higher_ceiling_and_sources_none(tmp_path):
    assert structure.word_ceiling("B-design-review") == 12000
    assert structure.word_ceiling("07-advantages") == WORD_CEILING
    for stem in ("sources", "reference", "index"):
        assert structure.word_ceiling(stem) is None


# ---------------------------------------------------------------------------- callouts


def test_a_callout_over_eight_lines_is_named_at_its_label(tmp_path):
    quote = "\n".join([f"> {EVIDENCE} Measured by the lab."] + ["> more"] * CALLOUT_LINES)
    text = f"# 1. X\n\nProse.\n\n{quote}\n\n> {EVIDENCE} Short.\n> two lines.\n"
    page = tmp_path / "en" / "01-x.md"
    page.parent.mkdir()
    page.write_text(text, encoding="utf-8")
    problems = shape(page, "en", NO_DEBT).problems
    assert [(p.line, p.kind.subtype) for p in problems] == [(5, "callout")]
    assert f"callout of {CALLOUT_LINES + 1} lines (at most {CALLOUT_LINES})" in problems[0].message
    listed = Debt((), (("en/01-x.md", "Measured by the"),), ())
    assert shape(page, "en", listed).problems == []


def test_callout_length_counts_lazy_lines_and_wraps_long_ones():
    lazy = f"> {EVIDENCE} one\ntwo\nthree\n\nafter"  # lazy continuation lines belong to it
    assert [(c.line, c.end_line, c.lines) for c in callouts(lazy)] == [(1, 3, 3)]
    zh_line = f"> {ZH_EVIDENCE} " + "字" * 450  # 900+ columns: ten lines at 100 columns
    assert callouts(zh_line)[0].lines == 10
    in_code = f"```{{code-cell}} ipython3\n> {EVIDENCE} not a callout\n```\n"
    assert callouts(in_code) == []
    other_quote = "> **Note.** a quote, not a callout\n" * 12
    assert callouts(other_quote) == []


# ---------------------------------------------------------------------------- making-of


@pytest.mark.parametrize("sentence", [
    "The review recorded for the project measured 4.07 turns.",
    "the review of the labs recorded for the\nproject found it",
    "as we saw in session 12 of the work",
    "Session 21 measured it again.",
    "It failed on a CI run.",
    "This is tracked in issue 24.",
    "Issue #24 says so.",
    "- issue 24: the plan",
    "see our issue 24",
    "In exploratory runs made while designing this book (their code was not kept)",
    "the design's spike found sampling 65% of a step",
    "Its text was not among our stored sources, so",
    "measured on a shared two-core machine",
    "measured on a two-core machine while a lab ran on the other core",
    "a sixth of the chapter's minute",
    "项目记录的复查发现",
    "在设计本书期间做的探索性实验中",
    "在一台共享的双核机器上",
    "花掉本章那一分钟预算的六分之一",
    "我们存档的资料中没有它的正文",
    "设计阶段的探索实验发现采样占一步的 65%",
])
def test_making_of_phrases_are_caught(sentence):
    assert making_of(f"# X\n\n{sentence}\n"), sentence


@pytest.mark.parametrize("sentence", [
    "SWE-smith's issue 24 shows the bug.",
    "Chinese search fails in Sphinx 9.0 (sphinx-doc/sphinx#14229).",
    "In the prime-rl issue #1334 (November 2025) a maintainer traces it.",
    "- **verl, issue #6719 \"Continuous Token Support\"** (opened 2026)",
    "A vllm-project/vime issue (#64) reports the same.",
    "On a two-core machine a chapter runs in about a minute.",
    "The project's PPO session cookies expire.",
])
def test_citations_and_plain_words_pass(sentence):
    assert making_of(f"# X\n\n{sentence}\n") == [], sentence


def test_a_phrase_in_code_or_an_output_is_not_prose():
    text = ("# X\n\n```{code-cell} ipython3\nprint('session 12')\n```\n\nOutput:\n\n"
            "```text\nsession 12\n```\n")
    assert making_of(text) == []


def test_a_phrase_is_named_at_its_line_and_listed_ones_pass(tmp_path):
    page = tmp_path / "zh" / "07-x.md"
    page.parent.mkdir()
    page.write_text("# 7. X\n\n第一段。\n\n项目记录的复查发现了它。\n", encoding="utf-8")
    problems = shape(page, "zh", NO_DEBT).problems
    assert [(p.line, p.kind.subtype) for p in problems] == [(5, "making-of")]
    assert "[recorded for the project]" in problems[0].message
    assert shape(page, "zh", Debt((), (), (("zh/07-x.md", "recorded for the project"),))
                 ).problems == []


# ---------------------------------------------------------------------------- the term table

TERM_PAGE = """# 7. X

每个 episode 都有一个 log 概率，由预热模型算出。

回合（episode）的英文在括号里给出；`episode_seed` 和 $\\log p$ 不是正文。

```{code-cell} ipython3
print('episode log 概率')
```

Output:

```text
episode log 概率
```

一批 episodes（每个 episode 一个种子）。
"""


def test_a_forbidden_term_in_zh_prose_is_named_with_its_line(tmp_path):
    page = tmp_path / "zh" / "07-x.md"
    page.parent.mkdir()
    page.write_text(TERM_PAGE, encoding="utf-8")
    problems = [p for p in shape(page, "zh", NO_DEBT).problems if p.kind.subtype == "term"]
    assert [(p.line, p.message.split("'")[1]) for p in problems] == [
        (3, "episode"), (3, "log 概率"), (3, "预热模型"), (17, "episodes"), (17, "episode")]
    assert "the book's term is 回合" in problems[0].message
    assert "the book's term is 热启动" in problems[2].message
    listed = Debt((), (), (), term_variants=(
        ("zh/07-x.md", "episode"), ("zh/07-x.md", "episodes"), ("zh/07-x.md", "log 概率"),
        ("zh/07-x.md", "预热模型")))
    assert shape(page, "zh", listed).problems == []


def test_the_term_table_is_a_zh_rule_and_its_terms_are_not_their_own_variants(tmp_path):
    page = tmp_path / "en" / "07-x.md"
    page.parent.mkdir()
    page.write_text("# 7. X\n\nEach episode has a log-probability.\n", encoding="utf-8")
    assert shape(page, "en", NO_DEBT).problems == []
    table = terms.TERMS["zh"]
    assert len({t.english for t in table}) == len({t.chinese for t in table}) == len(table)
    for term in table:
        prose = [(1, f"{term.chinese}（{term.english}）很常见，{term.chinese}也是。")]
        assert terms.variants_in(prose, "zh") == [], term
        for variant in term.variants:
            found = terms.variants_in([(1, f"这里用了{variant}。")], "zh")
            assert [h.variant for h in found] == [variant], variant


# ---------------------------------------------------------------------------- the debt list


def _stale(tmp_path: Path, entry_list: str, entry: tuple) -> list:
    """Problems of a clean page against a debt list (written to a file) with one stale entry."""
    page = tmp_path / "en" / "02-x.md"
    page.parent.mkdir(exist_ok=True)
    page.write_text("# 2. X\n\nShort and clean.\n", encoding="utf-8")
    source = tmp_path / "debt.py"
    source.write_text(f"{entry_list.upper()} = (\n    {entry!r},\n)\n", encoding="utf-8")
    lists = {"over_words": (), "long_callouts": (), "making_of": (), "term_variants": ()}
    lists[entry_list] = (entry,)
    return shape(page, "en", Debt(**lists, source=source)).problems


@pytest.mark.parametrize("entry_list, entry, says", [
    ("over_words", ("en/02-x.md", 9000), "no longer over its word ceiling"),
    ("long_callouts", ("en/02-x.md", "Measured by"), "no callout longer than"),
    ("making_of", ("en/02-x.md", "recorded for the project"), "no longer says"),
    ("term_variants", ("en/02-x.md", "log 概率"), "no longer says"),
])
def test_a_listed_problem_that_is_gone_fails_at_its_entry(tmp_path, entry_list, entry, says):
    problems = _stale(tmp_path, entry_list, entry)
    assert [(p.path, p.line, p.kind.subtype) for p in problems] == [
        (tmp_path / "debt.py", 2, "debt")]
    assert says in problems[0].message and entry_list.upper() in problems[0].message


def test_a_listed_file_that_is_gone_is_reported(tmp_path):
    (tmp_path / "en").mkdir()
    debt = Debt((("en/99-gone.md", 9000),), (), ())
    problems = missing_files(tmp_path, "en", debt)
    assert [p.kind.subtype for p in problems] == ["debt"]
    assert "en/99-gone.md is not in the book" in problems[0].message
    assert missing_files(tmp_path, "zh", debt) == []


def test_the_debt_list_only_shrinks():
    """Today's lengths are ceilings: fix a new problem, never list it. Lower these numbers as
    entries are removed (a chapter cut, a callout shortened, a phrase rewritten)."""
    assert len(structure_debt.OVER_WORDS) <= 0
    assert len(structure_debt.LONG_CALLOUTS) <= 0
    assert len(structure_debt.MAKING_OF) <= 0
    assert len(structure_debt.TERM_VARIANTS) <= 0
    for entries in (structure_debt.OVER_WORDS, structure_debt.LONG_CALLOUTS,
                    structure_debt.MAKING_OF, structure_debt.TERM_VARIANTS):
        assert len(set(entries)) == len(entries), "an entry is listed twice"
    names = {phrase.name for phrase in structure.PHRASES}
    assert {name for _, name in structure_debt.MAKING_OF} <= names
    variants = {v for t in terms.TERMS["zh"] for v in t.variants}
    assert {variant for _, variant in structure_debt.TERM_VARIANTS} <= variants


def test_every_debt_entry_names_a_page_of_the_book():
    problems = [p for folder in folders() for p in missing_files(ROOT / "book", folder)]
    assert not problems, "\n".join(p.report() for p in problems)
