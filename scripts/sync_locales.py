"""Keep translations in step with the English chapters: cells and outputs copied, prose flagged.

    python scripts/sync_locales.py                 # copy code cells and outputs from en to zh;
                                                   # a missing zh chapter is created, untranslated
    python scripts/sync_locales.py --check         # exit 1 on any cell/output difference
    python scripts/sync_locales.py --stamp 03 04   # mark zh 03, 04 as translating current en prose

A missing translation is created from the English chapter: its cells and outputs, its prose
left in English (the closing headings and callout labels in the locale's words, so it builds)
and unstamped, so ``--check`` lists it as stale until it is translated and stamped.
Translators edit only prose. Each translation records in its front matter (``en_prose_sha``)
the hash of the English prose it translates; ``--check`` lists translations whose English
prose has changed since (stale, a warning: exit status is unaffected) and untranslated chapters.
For a stale translation it shows what changed in the English, paragraph by paragraph with
their current line numbers: the stamped revision is found in the git history of the English
file. Syncing needs the same number of cells in both files; otherwise it names the file to fix.
An unknown chapter for ``--stamp`` is an error (exit 2) that lists the known ones.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ext.chapters import (
    Chapter, ChapterError, UnknownChapterError, book_order, chapter_key, read_chapter,
    select_chapters,
)
from ext.locale_table import by_folder
from ext.locales import (
    PROSE_KEY, HistoryError, first_difference, is_stale, prose_changes, prose_hash, stamp_of,
    stamped_revision, untranslated_copy,
)
from ext.outputs import set_output_block
from ext.problems import Kind, report_line

ROOT = Path(__file__).resolve().parent.parent


def synced_text(source: Chapter, translation: Chapter) -> str:
    """The translation with every code cell and recorded output replaced by the source's."""
    if len(source.cells) != len(translation.cells):
        raise ChapterError(translation.path, 1,
                           f"{len(translation.cells)} code cells but {source.path} has "
                           f"{len(source.cells)}: add or remove cells in the translation first")
    en_lines = source.text.splitlines()
    lines = translation.text.splitlines()
    for en, zh in sorted(zip(source.cells, translation.cells), key=lambda p: -p[1].line):
        en_output = en_lines[en.output.label_line - 1 : en.output.end_line] if en.output else []
        set_output_block(lines, zh, en_output)
        lines[zh.line - 1 : zh.end_line] = en_lines[en.line - 1 : en.end_line]
    return "\n".join(lines) + "\n"


def stamp(source: Chapter, translation: Chapter) -> str:
    """Record the current English prose hash in the translation's front matter."""
    value = f'{PROSE_KEY}: "{prose_hash(source)}"'  # quoted: a hash may be all digits
    text = translation.text
    if re.search(rf"^{PROSE_KEY}:.*$", text, flags=re.MULTILINE):
        return re.sub(rf"^{PROSE_KEY}:.*$", value, text, count=1, flags=re.MULTILINE)
    if not text.startswith("---\n"):
        return f"---\n{value}\n---\n\n{text}"
    return "---\n" + value + "\n" + text[4:]


def show_prose_changes(source: Chapter, translation: Chapter) -> None:
    """Print what changed in the English prose since the revision the translation stamps."""
    stamp = stamp_of(translation)
    if stamp is None:
        print(f"  {translation.path} was never stamped: translate all of {source.path.name}")
        return
    try:
        revision = stamped_revision(source.path, stamp)
    except HistoryError as error:
        print(f"  cannot show what changed: no git history of {source.path} ({error})")
        return
    if revision is None:
        print(f"  cannot show what changed: no commit of {source.path} has the stamped prose "
              f"({PROSE_KEY} {stamp}); the history does not contain the translated revision")
        return
    print(f"  what changed in {source.path.name} since {revision.commit[:10]} "
          f"({revision.date}):")
    for change in prose_changes(revision.chapter, source):
        what = ("changed" if change.old and change.new else
                "added" if change.new else "removed (it stood before this line)")
        print(f"  {source.path}:{change.line}: {what}")
        for sign, text in (("-", change.old), ("+", change.new)):
            for line in (text or "").splitlines():
                print(f"    {sign} {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--stamp", nargs="+", metavar="CH", default=[])
    parser.add_argument("--locale", default="zh")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    book = args.root / "book"
    failed = False
    try:
        order = book_order(book / "en")
    except ChapterError as error:
        print(report_line(error.location, Kind.FORMAT, error.message))
        return 1
    try:
        to_stamp = set(select_chapters(order, args.stamp)) if args.stamp else set()
    except UnknownChapterError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for en_path in order:
        target = book / args.locale / en_path.name
        if not target.exists() and args.check:
            print(report_line(str(target), Kind.UNTRANSLATED, "untranslated"))
            failed = True
            continue
        try:
            if not target.exists():
                target.write_text(untranslated_copy(read_chapter(en_path), by_folder(args.locale)),
                                  encoding="utf-8")
                print(f"{target}: created from {en_path.name}: cells and outputs copied, prose "
                      f"still English (translate it, then run --stamp {chapter_key(en_path)})")
            source, translation = read_chapter(en_path), read_chapter(target)
            if en_path in to_stamp:
                target.write_text(stamp(source, translation), encoding="utf-8")
                print(f"{target}: stamped as translating the current English prose")
                translation = read_chapter(target)
            difference = first_difference(source, translation)
            if difference and args.check:
                print(report_line(f"{target}:{difference.line}", Kind.PARITY,
                                  f"{difference.message} (see {en_path}:{difference.source_line})"))
                failed = True
            elif difference:
                target.write_text(synced_text(source, translation), encoding="utf-8")
                print(f"{target}: code cells and outputs copied from {en_path.name}")
            if is_stale(source, translation):
                print(report_line(str(target), Kind.STALE_TRANSLATION,
                                  "stale: the English prose changed since it was translated "
                                  f"(translate, then run --stamp {chapter_key(en_path)})"))
                show_prose_changes(source, translation)
        except ChapterError as error:
            print(report_line(error.location, Kind.FORMAT, error.message))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
