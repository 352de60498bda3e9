"""Rebuilds of one tree, in order: the drift gate must not go green just because nothing changed,
and a changed save must re-execute the chapters after it.

1. a recorded number changed                    -> fails at the block's fence (executes)
2. the same tree rebuilt, nothing changed       -> still fails (chapters re-read, from cache)
3. the block fixed                              -> passes, without executing anything
4. a save in chapter 1 edited (docstring only)  -> passes; chapter 2 re-executes against a
                                                   newly staged library whose hash is in its
                                                   kernelspec display name
"""

from __future__ import annotations

import re

import pytest

from press_helpers import (
    PRINTED_01,
    RIGHT,
    WRONG,
    copy_book,
    edit,
    make_drift,
    output_blocks,
    sphinx_build,
)

DOCSTRING = '"""Multiply by SCALE."""'
_HASHED = re.compile(r"^Python 3 \(agentrl ([0-9a-f]{12}), toolchain [0-9a-f]{12}\)$")


@pytest.fixture(scope="module")
def sequence(tmp_path_factory):
    root = copy_book(tmp_path_factory.mktemp("incremental"))
    path, fence = make_drift(root)
    builds = [sphinx_build(root), sphinx_build(root)]
    edit(path, f"{WRONG}\n", f"{RIGHT}\n")
    builds.append(sphinx_build(root))
    hashes = [_stage_hash(builds[-1])]
    edit(path, DOCSTRING, '"""Multiply by SCALE (edited)."""')
    builds.append(sphinx_build(root))
    hashes.append(_stage_hash(builds[-1]))
    return root, path, fence, builds, hashes


def _stage_hash(build) -> str:
    name = build.executed_notebook("02-next")["metadata"]["kernelspec"]["display_name"]
    match = _HASHED.match(name)
    assert match, name
    return match.group(1)


def test_drift_fails_the_build_at_the_fence_with_a_diff(sequence):
    _, path, fence, builds, _ = sequence
    first = builds[0]
    assert first.returncode == 1
    warning = first.find(path, fence, "agentrl.drift",
                         "output of cell 2 differs from the recorded block:")
    assert "--- recorded\n+++ executed\n" in warning.message
    assert f"-{WRONG}\n+{RIGHT}" in warning.message
    assert len(first.warnings) == 1
    assert first.executed("01-basics") and first.executed("02-next")


def test_page_shows_the_executed_output_once(sequence):
    *_, builds, _ = sequence
    html = builds[0].html("01-basics")
    assert output_blocks(html) == PRINTED_01
    assert WRONG not in html


def test_unchanged_rebuild_still_fails(sequence):
    _, path, fence, builds, _ = sequence
    second = builds[1]
    assert second.returncode == 1
    second.find(path, fence, "agentrl.drift", "output of cell 2 differs")
    assert not second.executed("01-basics") and not second.executed("02-next")


def test_fixed_block_passes_from_the_cache(sequence):
    *_, builds, _ = sequence
    third = builds[2]
    assert third.returncode == 0, third.stderr[-3000:]
    assert third.warnings == []
    assert not third.executed("01-basics") and not third.executed("02-next")
    assert output_blocks(third.html("01-basics")) == PRINTED_01


def test_changed_save_reexecutes_the_next_chapter(sequence):
    root, *_, builds, hashes = sequence
    fourth = builds[3]
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert fourth.executed("02-next")  # its own text did not change
    assert hashes[0] != hashes[1]
    staged = root / "staged" / hashes[1] / "agentrl" / "__init__.py"
    assert "Multiply by SCALE (edited)." in staged.read_text(encoding="utf-8")
    old = root / "staged" / hashes[0] / "agentrl" / "__init__.py"
    assert "Multiply by SCALE." in old.read_text(encoding="utf-8")
