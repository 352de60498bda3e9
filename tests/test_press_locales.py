"""scripts/sync_locales.py: parity check, syncing cells and outputs, prose staleness, stamping."""

from __future__ import annotations

import pytest

from press_helpers import (
    EN01,
    EN02,
    FIXTURE,
    SILENT_CELL,
    ZH01,
    ZH02,
    assert_reports,
    break_zh,
    chapter,
    copy_book,
    edit,
    line_of,
    problems,
    run_script,
)


def sync(root, *args, in_process=True):
    return run_script("sync_locales.py", "--root", root, *args, in_process=in_process)


@pytest.fixture
def book(tmp_path):
    return copy_book(tmp_path)


def test_fixture_translation_is_in_step(book):
    result = sync(book, "--check")
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_check_names_translation_line_and_english_file(book):
    break_zh(book)
    result = sync(book, "--check", in_process=False)
    assert result.returncode == 1
    zh01, en01 = chapter(book, ZH01), chapter(book, EN01)
    zh_cell_end = line_of(zh01, "print('half of the total:', half)") + 1
    en_label = line_of(en01, "half of the total: 21") - 3
    assert_reports(result, zh01, zh_cell_end,
                   f"recorded output of cell 4 differs from 01-basics.md (see {en01}:{en_label})")
    zh02, en02 = chapter(book, ZH02), chapter(book, EN02)
    assert_reports(result, zh02, line_of(zh02, "print('inside chapter two:', later_fn())") - 1,
                   f"cell 3 differs from 02-next.md (see {en02}:"
                   f"{line_of(en02, 'print(' + repr('inside chapter 2:') + ', later_fn())') - 1})")
    assert len(problems(result.stdout)) == 2


def test_sync_copies_cells_and_outputs(book):
    break_zh(book)
    # A block the English does not have, and a changed cell.
    edit(chapter(book, ZH01), SILENT_CELL + "\n第二个",
         SILENT_CELL + "\nOutput:\n\n```text\nstale\n```\n\n第二个")
    edit(chapter(book, ZH01), "print('ratio:', round(total / 9, 4))",
         "print('ratio:', round(total / 9, 2))")
    result = sync(book)
    assert result.returncode == 0, result.stdout
    assert f"{chapter(book, ZH01)}: code cells and outputs copied from 01-basics.md" in (
        result.stdout)
    for rel in (ZH01, ZH02):
        assert chapter(book, rel).read_text(encoding="utf-8") == (FIXTURE / rel).read_text(
            encoding="utf-8"), rel
    assert sync(book, "--check").returncode == 0


def test_sync_keeps_prose_that_follows_a_removed_block(book):
    """A translation's stale block directly followed by prose: syncing drops the block only."""
    path = chapter(book, ZH01)
    edit(path, SILENT_CELL + "\n第二个打印的单元。",
         SILENT_CELL + "\nOutput:\n\n```text\nstale\n```\n第二个打印的单元。")
    result = sync(book)
    assert result.returncode == 0, result.stdout
    text = path.read_text(encoding="utf-8")
    assert "第二个打印的单元。" in text
    assert text == (FIXTURE / ZH01).read_text(encoding="utf-8")


def test_sync_refuses_different_cell_counts(book):
    path = chapter(book, ZH02)
    with path.open("a", encoding="utf-8") as f:
        f.write("\n```{code-cell} ipython3\nx = 1\n```\n")
    before = path.read_text(encoding="utf-8")
    result = sync(book)
    assert result.returncode == 1
    assert_reports(result, path, 1, "4 code cells but")
    assert path.read_text(encoding="utf-8") == before


def test_stale_prose_is_listed_until_stamped(book):
    en01, zh01 = chapter(book, EN01), chapter(book, ZH01)
    edit(en01, "This chapter saves one constant and one function.",
         "This chapter saves a constant and a function.")
    result = sync(book, "--check")
    assert result.returncode == 0  # staleness is a warning, not a failure
    assert result.stdout.splitlines() == [
        f"{zh01}: stale: the English prose changed since it was translated "
        "(translate, then run --stamp 01)"]
    # Code edits in English do not make the prose stale (they are synced, not translated).
    stamp_before = zh01.read_text(encoding="utf-8").splitlines()[1]
    stamped = sync(book, "--stamp", "01")
    assert f"{zh01}: stamped as translating the current English prose" in stamped.stdout
    assert zh01.read_text(encoding="utf-8").splitlines()[1] != stamp_before
    assert zh01.read_text(encoding="utf-8").splitlines()[1].startswith("en_prose_sha: ")
    after = sync(book, "--check")
    assert (after.returncode, after.stdout) == (0, "")


def test_code_change_in_english_is_not_staleness(book):
    edit(chapter(book, EN01), "half = total // 2", "half = total // 2  # an integer")
    result = sync(book, "--check")
    assert result.returncode == 1
    assert "stale" not in result.stdout
    zh01 = chapter(book, ZH01)
    assert_reports(result, zh01, line_of(zh01, "half = total // 2") - 1,
                   "cell 3 differs from 01-basics.md")


def test_untranslated_chapter_fails_the_check(book):
    chapter(book, ZH02).unlink()
    result = sync(book, "--check")
    assert result.returncode == 1
    assert f"{chapter(book, ZH02)}: untranslated" in result.stdout


def test_stamp_made_only_of_digits_still_matches(book, monkeypatch):
    """A 12-hex-digit hash is all decimal digits about once in 280 stamps; YAML would read an
    unquoted one as an int, and the translation would stay stale forever after stamping."""
    import ext.locales

    monkeypatch.setattr(ext.locales, "prose_hash", lambda source: "655626067084")
    monkeypatch.setattr(run_script.__globals__["_script"]("sync_locales.py"), "prose_hash",
                        ext.locales.prose_hash)
    zh01 = chapter(book, ZH01)
    sync(book, "--stamp", "01", "02")  # every chapter now has this hash
    assert '\nen_prose_sha: "655626067084"\n' in zh01.read_text(encoding="utf-8")
    after = sync(book, "--check")
    assert (after.returncode, after.stdout) == (0, "")
    # An old unquoted stamp of digits is read as text too.
    edit(zh01, 'en_prose_sha: "655626067084"', "en_prose_sha: 655626067084")
    assert sync(book, "--check").stdout == ""
