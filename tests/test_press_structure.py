"""The structure rules in the build: ``sphinx-build -W`` fails on each, at its file and line.

One broken copy of the fixture book, built once: chapter 01 gains a callout longer than the
limit and a making-of phrase; a planned chapter of the book plan (11-rewards.md) is written
with more prose words than the ceiling and none of the chapter's sections. A second copy's zh 01
gains a variant that the term table forbids in its prose, and the same word in a code span.
"""

from __future__ import annotations

import pytest

from press_helpers import EN01, ZH01, chapter, copy_book, edit, line_of, sphinx_build

from ext.locale_table import SOURCE
from ext.structure import CALLOUT_LINES, WORD_CEILING

LABEL = f"**{SOURCE.callouts[0]}{SOURCE.full_stop}**"
LONG_CALLOUT = "\n".join([f"> {LABEL} A long one."] + [f"> line {i}" for i in range(CALLOUT_LINES)])
PHRASE = "The review recorded for the project measured it."


def _break(root):
    one = chapter(root, EN01)
    with one.open("a", encoding="utf-8") as f:
        f.write(f"\n{LONG_CALLOUT}\n\n{PHRASE}\n")
    rewards = root / "book" / "en" / "11-rewards.md"
    rewards.write_text("# 11. Rewards\n\n" + "word " * (WORD_CEILING + 1) + "\n",
                       encoding="utf-8")
    edit(root / "book" / "en" / "index.md", "02-next\n", "02-next\n11-rewards\n")
    return one, rewards


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    root = copy_book(tmp_path_factory.mktemp("structure"))
    one, rewards = _break(root)
    return one, rewards, sphinx_build(root, "en")


def test_the_build_fails(broken):
    assert broken[2].returncode == 1


def test_a_long_callout_is_a_warning_at_its_label(broken):
    one, _, build = broken
    build.find(one, line_of(one, f"> {LABEL} A long one."), "agentrl.callout",
               f"callout of {CALLOUT_LINES + 1} lines (at most {CALLOUT_LINES})")


def test_a_making_of_phrase_is_a_warning_at_its_line(broken):
    one, _, build = broken
    build.find(one, line_of(one, PHRASE), "agentrl.making-of", "recorded for the project")


def test_a_chapter_over_its_ceiling_and_without_its_sections(broken):
    _, rewards, build = broken
    build.find(rewards, 1, "agentrl.words", f"prose words (ceiling {WORD_CEILING:,})")
    build.find(rewards, 1, "agentrl.sections", "0 numbered sections")


TERM_LINE = "每个 episode 的奖励由 `episode_seed` 决定。"


@pytest.fixture(scope="module")
def off_term(tmp_path_factory):
    root = copy_book(tmp_path_factory.mktemp("terms"))
    one = chapter(root, ZH01)
    with one.open("a", encoding="utf-8") as f:
        f.write(f"\n{TERM_LINE}\n")
    return one, sphinx_build(root, "zh")


def test_a_forbidden_term_in_zh_prose_fails_the_build_at_its_line(off_term):
    one, build = off_term
    assert build.returncode == 1
    build.find(one, line_of(one, TERM_LINE), "agentrl.term", "'episode' for episode")
    assert len(build.of_type("agentrl.term")) == 1
