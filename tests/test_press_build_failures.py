"""Sphinx builds (``-W``) of broken copies of the fixture book fail with a warning at file:line.

Each module-scoped fixture breaks one copy in one way and builds it once; the tests read the
warnings. Warning types are ``agentrl.<kind>`` so they can be filtered.
"""

from __future__ import annotations

import pytest

from press_helpers import (
    EN01,
    EN02,
    ZH01,
    ZH02,
    add_to_save_cell,
    break_outputs,
    break_zh,
    chapter,
    copy_book,
    line_of,
    make_failing,
    sphinx_build,
    use_later_save,
)


def _broken(tmp_path_factory, name, breaker, lang="en", *defines):
    root = copy_book(tmp_path_factory.mktemp(name))
    breaker(root)
    return root, sphinx_build(root, lang, *defines)


# ---------------------------------------------------------------------------- outputs and order


def _outputs_and_order(root):
    break_outputs(root)
    use_later_save(root, "import numpy")  # appended to chapter 01 as its sixth cell


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """One build, six independent problems: each must be reported at its own line."""
    return _broken(tmp_path_factory, "outputs", _outputs_and_order)


def test_stale_block_for_a_silent_cell(outputs):
    root, build = outputs
    assert build.returncode == 1
    path = chapter(root, EN01)
    build.find(path, line_of(path, "nothing is printed here") - 3, "agentrl.stale-output",
               "cell 3 prints nothing but has a recorded 'Output:' block")


def test_printing_cell_without_a_block(outputs):
    root, build = outputs
    path = chapter(root, EN02)
    build.find(path, line_of(path, "print('inside chapter 2:', later_fn())") - 1,
               "agentrl.missing-output", "cell 3 prints but has no 'Output:' block")


def test_displayed_value(outputs):
    root, build = outputs
    path = chapter(root, EN02)
    build.find(path, line_of(path, "1 + 1") - 1, "agentrl.display", "cell 4 displays a value")


def test_forbidden_import(outputs):
    root, build = outputs
    path = chapter(root, EN01)
    build.find(path, line_of(path, "import numpy"), "agentrl.order", "import of 'numpy'")


def test_use_of_a_later_save(outputs):
    root, build = outputs
    path = chapter(root, EN01)
    build.find(path, line_of(path, "print(arl.later_fn())"), "agentrl.order",
               "uses agentrl.later_fn, which is saved by 02-next.md")


def test_staged_library_stops_the_later_save_at_run_time(outputs):
    root, build = outputs
    path = chapter(root, EN01)
    build.find(path, line_of(path, "print(arl.later_fn())") - 2, "agentrl.error",
               "cell 6 raised AttributeError: agentrl.later_fn is saved by 02-next.md, "
               "a later chapter")


def test_nothing_else_is_reported(outputs):
    root, build = outputs
    one, two = chapter(root, EN01), chapter(root, EN02)
    located = sorted((w.path, w.line, w.type) for w in build.warnings if w.line)
    assert located == sorted([
        (str(one), line_of(one, "nothing is printed here") - 3, "agentrl.stale-output"),
        (str(one), line_of(one, "import numpy"), "agentrl.order"),
        (str(one), line_of(one, "print(arl.later_fn())"), "agentrl.order"),
        (str(one), line_of(one, "print(arl.later_fn())") - 2, "agentrl.error"),
        (str(two), line_of(two, "print('inside chapter 2:', later_fn())") - 1,
         "agentrl.missing-output"),
        (str(two), line_of(two, "1 + 1") - 1, "agentrl.display"),
    ])


# ---------------------------------------------------------------------------- locales


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    return _broken(tmp_path_factory, "parity", break_zh, "zh")


def test_zh_missing_block_names_zh_line_and_english_file(parity):
    root, build = parity
    assert build.returncode == 1
    zh, en = chapter(root, ZH01), chapter(root, EN01)
    en_label = line_of(en, "half of the total: 21") - 3
    warning = build.find(zh, line_of(zh, "print('half of the total:', half)") + 1,
                         "agentrl.parity", "recorded output of cell 4 differs from 01-basics.md")
    assert f"(see {en}:{en_label})" in warning.message


def test_zh_cell_differing_from_en_names_zh_line_and_english_file(parity):
    root, build = parity
    zh, en = chapter(root, ZH02), chapter(root, EN02)
    warning = build.find(zh, line_of(zh, "print('inside chapter two:', later_fn())") - 1,
                         "agentrl.parity", "cell 3 differs from 02-next.md")
    en_cell = line_of(en, "print('inside chapter 2:', later_fn())") - 1
    assert f"(see {en}:{en_cell})" in warning.message


# ---------------------------------------------------------------------------- library


@pytest.fixture(scope="module")
def bad_save(tmp_path_factory):
    return _broken(tmp_path_factory, "save",
                   lambda root: add_to_save_cell(root, "print(1)"))


def test_statement_in_save_cell(bad_save):
    root, build = bad_save
    assert build.returncode == 1
    path = chapter(root, EN01)
    build.find(path, line_of(path, "print(1)"), "agentrl.library",
               "a #@save cell may hold only imports, definitions and UPPER_CASE constants; "
               "found 'print(1)'")


# ---------------------------------------------------------------------------- execution failures


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    return _broken(tmp_path_factory, "failing", make_failing, "en", "nb_execution_timeout=3")


def test_raising_cell_fails_the_build_naming_chapter_and_cell(failing):
    root, build = failing
    assert build.returncode == 1
    path = chapter(root, EN01)
    cell = line_of(path, "half = total // 2") - 1
    build.find(path, cell, "agentrl.error", "cell 3 raised ValueError: boom in the fixture")
    build.find(path, cell, "agentrl.not-run", "the 2 cells after cell 3 did not run")
    # Cells that never ran are not blamed for their missing output.
    assert [w.type for w in build.warnings if w.path == str(path) and w.line] == [
        "agentrl.error", "agentrl.not-run"]


def test_timeout_fails_the_build_naming_chapter_and_cell(failing):
    root, build = failing
    path = chapter(root, EN02)
    build.find(path, line_of(path, "import time") - 1, "agentrl.timeout", "cell 3")


def test_timeout_warning_says_it_was_the_timeout(failing):
    root, build = failing
    path = chapter(root, EN02)
    warning = build.find(path, line_of(path, "import time") - 1, "agentrl.timeout", "cell 3")
    assert "timeout" in warning.message or "timed out" in warning.message, warning.message


# ---------------------------------------------------------------------------- myst-nb settings


def test_build_refuses_myst_nb_settings_the_gate_depends_on(tmp_path):
    root = copy_book(tmp_path)
    build = sphinx_build(root, "en", "nb_execution_mode=off", "nb_merge_streams=1",
                         "nb_output_stderr=remove")
    assert build.returncode != 0
    assert "myst-nb settings the drift gate depends on are changed" in build.stderr
    for setting in ("nb_execution_mode = 'off': the press needs 'cache', because",
                    "nb_merge_streams = True: the press needs False, because",
                    "nb_output_stderr = 'remove': the press needs 'show', because"):
        assert setting in build.stderr, build.stderr
    assert "nb_execution_raise_on_error" not in build.stderr  # only the changed ones
    assert "Executing notebook" not in build.stdout


def test_chapter_may_not_override_a_setting_the_gate_depends_on(tmp_path):
    root = copy_book(tmp_path)
    path = chapter(root, EN01)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("---\n", "---\nmystnb:\n  execution_mode: \"off\"\n", 1),
                    encoding="utf-8")
    build = sphinx_build(root, "en")
    assert build.returncode == 1
    build.find(path, 1, "agentrl.format", "the front matter overrides mystnb execution_mode")
