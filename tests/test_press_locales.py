"""scripts/sync_locales.py: parity check, syncing cells and outputs, prose staleness, stamping."""

from __future__ import annotations

import subprocess

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
        "(translate, then run --stamp 01) [agentrl.stale-translation]",
        f"  cannot show what changed: no git history of {en01.resolve()} "
        f"({git_log_error(en01)})"]
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


def test_sync_creates_a_missing_translation_untranslated_and_listed_as_such(book):
    """The new file has the English cells and outputs, English prose with the locale's closing
    headings and callout labels (so it builds), no stamp: the check lists it until stamped."""
    from ext.chapters import read_chapter
    from ext.locale_table import SOURCE, by_folder
    from ext.locales import first_difference, stamp_of

    zh02, en02 = chapter(book, ZH02), chapter(book, EN02)
    zh = by_folder(ZH02.split("/")[0])
    zh02.unlink()
    with en02.open("a", encoding="utf-8") as f:  # the closing sections and a callout
        f.write(f"\n> **{SOURCE.callouts[1]}{SOURCE.full_stop}** Mind the gap.\n\n"
                f"## {SOURCE.design_problems}\n\n## {SOURCE.summary}\n\n"
                f"{SOURCE.saved_api}: `later_fn`.\n\n## {SOURCE.exercises}\n\n1. Run it.\n")
    result = sync(book)
    assert result.returncode == 0, result.stdout
    assert f"{zh02}: created from 02-next.md" in result.stdout
    assert f"{zh02} was never stamped: translate all of 02-next.md" in result.stdout
    source, created = read_chapter(en02), read_chapter(zh02)
    assert first_difference(source, created) is None  # cells and outputs, byte for byte
    assert stamp_of(created) is None
    assert "This chapter uses the save of chapter 1" in created.text  # prose left in English
    for heading in zh.closing_headings:
        assert f"\n## {heading}\n" in created.text
    assert f"> **{zh.callouts[1]}{zh.full_stop}** Mind the gap." in created.text
    assert f"\n{zh.saved_api}: `later_fn`." in created.text
    assert created.text.count("\n") == source.text.count("\n")  # every line in its place

    again = sync(book, "--check")
    assert again.returncode == 0, again.stdout  # in step: staleness is a warning
    assert f"{zh02}: stale" in again.stdout and "never stamped" in again.stdout


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


def test_stamp_of_an_unknown_chapter_is_an_error_listing_the_known_ones(book):
    before = chapter(book, ZH01).read_text(encoding="utf-8")
    result = sync(book, "--stamp", "1")
    assert result.returncode == 2
    assert "no chapter '1' in the book (known: 01, 02)" in result.stderr
    assert result.stdout == ""  # nothing synced, nothing stamped
    assert chapter(book, ZH01).read_text(encoding="utf-8") == before


# ---------------------------------------------------------------------------- what changed


def git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def git_log_error(path) -> str:
    """What ``git log`` says about a file outside any repository (the tests' temporary dirs)."""
    return subprocess.run(["git", "-C", str(path.resolve().parent), "log", "--", path.name],
                          capture_output=True, text=True).stderr.strip()


def commit_all(root, message):
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)


@pytest.fixture
def repo(book):
    """The fixture book as a git repository: the translated revision, then two later commits
    that change the English prose (one paragraph changed, one added, one removed)."""
    git(book, "init", "-q")
    commit_all(book, "translated revision")
    en01 = chapter(book, EN01)
    edit(en01, "This chapter saves one constant and one function.",
         "This chapter saves a constant and a function.")
    commit_all(book, "reword the opening")
    edit(en01, "A cell that prints two lines.\n", "A cell that prints two lines.\n\n"
         "A sentence the translation has never seen.\n")
    edit(en01, "\nA second printing cell.\n", "\n")
    commit_all(book, "add one paragraph, remove another")
    return book


def test_stale_translation_shows_each_changed_paragraph_with_its_line(repo):
    assert "A second printing cell." in (FIXTURE / EN01).read_text(encoding="utf-8")
    en01, zh01 = chapter(repo, EN01), chapter(repo, ZH01)
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    result = sync(repo, "--check")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{zh01}: stale: ")
    assert lines[1].startswith(f"  what changed in 01-basics.md since {first[:10]} (")
    assert lines[2:] == [
        f"  {en01}:{line_of(en01, 'This chapter saves a constant and a function.')}: changed",
        "    - This chapter saves one constant and one function.",
        "    + This chapter saves a constant and a function.",
        f"  {en01}:{line_of(en01, 'A sentence the translation has never seen.')}: added",
        "    + A sentence the translation has never seen.",
        f"  {en01}:{line_of(en01, 'A cell whose numbers are masked when compared.')}: removed "
        "(it stood before this line)",
        "    - A second printing cell.",
    ]


def test_uncommitted_english_edit_is_compared_with_the_stamped_commit(repo):
    en01 = chapter(repo, EN01)
    edit(en01, "A sentence the translation has never seen.", "A sentence, now edited.")
    result = sync(repo, "--check")
    assert f"  {en01}:{line_of(en01, 'A sentence, now edited.')}: added" in result.stdout
    assert "never seen" not in result.stdout


def test_stamp_not_in_history_says_so(repo):
    zh01 = chapter(repo, ZH01)
    stamp = zh01.read_text(encoding="utf-8").splitlines()[1]
    edit(zh01, stamp, 'en_prose_sha: "0123456789ab"')
    result = sync(repo, "--check")
    assert (f"  cannot show what changed: no commit of {chapter(repo, EN01).resolve()} has the "
            "stamped prose (en_prose_sha 0123456789ab); the history does not contain the "
            "translated revision") in result.stdout.splitlines()


def test_never_stamped_translation_says_translate_it_all(repo):
    zh01 = chapter(repo, ZH01)
    edit(zh01, zh01.read_text(encoding="utf-8").splitlines()[1] + "\n", "")
    result = sync(repo, "--check")
    assert f"  {zh01} was never stamped: translate all of 01-basics.md" in result.stdout


def test_restamped_translation_is_quiet(repo):
    sync(repo, "--stamp", "01")
    assert sync(repo, "--check").stdout == ""
