"""Locale parity: a translation has the English chapter's cells and outputs, byte for byte.

Only prose is translated. Each translated chapter records in its front matter
(``en_prose_sha``) a hash of the English prose it translates, so a changed English paragraph
makes the translation *stale* without making it wrong. Used by the build (``ext.parity``)
and by ``scripts/sync_locales.py``, which shows a translator what changed: the commit of the
English file whose prose has the stamped hash is found in git history (the hash, not a commit
id, is the record, so it survives rebases and squash merges), and its prose is compared with
today's paragraph by paragraph, as gettext's fuzzy entries show the old source by the new.
"""

from __future__ import annotations

import difflib
import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .chapters import Chapter, ChapterError, read_chapter
from .locale_table import SOURCE, Locale

PROSE_KEY = "en_prose_sha"


@dataclass(frozen=True)
class Difference:
    line: int  # in the translation
    source_line: int  # in the English chapter
    message: str


def first_difference(source: Chapter, translation: Chapter) -> Difference | None:
    """The first cell or recorded output where the translation departs from the source."""
    for en, zh in zip(source.cells, translation.cells):
        where = f"cell {en.index + 1}"
        if en.source != zh.source:
            return Difference(zh.line, en.line, f"{where} differs from {source.path.name}")
        if en.tags != zh.tags:
            return Difference(zh.line, en.line, f"{where} has tags {list(zh.tags)}, "
                                                f"the source has {list(en.tags)}")
        en_out = en.output.text if en.output else None
        zh_out = zh.output.text if zh.output else None
        if en_out != zh_out:
            line = zh.output.label_line if zh.output else zh.end_line
            return Difference(line, en.output.label_line if en.output else en.end_line,
                              f"recorded output of {where} differs from {source.path.name}")
    if len(source.cells) != len(translation.cells):
        line = translation.cells[-1].end_line if translation.cells else 1
        return Difference(line, 1, f"{len(translation.cells)} code cells, but "
                                   f"{source.path.name} has {len(source.cells)}")
    return None


def untranslated_copy(source: Chapter, locale: Locale) -> str:
    """A new translation of ``source``: its cells and outputs, its prose still in English.

    The words the press looks for are the locale's (closing headings, the saved API's opening,
    callout labels: ``ext/locale_table.py``), so the copy builds and passes the structure check
    at once. It carries no ``en_prose_sha`` stamp: it is untranslated, and stale until stamped.
    """
    lines = source.text.splitlines()
    headings = {f"## {en}": f"## {zh}"
                for en, zh in zip(SOURCE.closing_headings, locale.closing_headings)}
    labels = {f"**{en}{SOURCE.full_stop}**": f"**{zh}{locale.full_stop}**"
              for en, zh in zip(SOURCE.callouts, locale.callouts)}
    in_summary = False
    for number, text in source.prose_lines():
        i = number - 1
        if text.rstrip() in headings:
            in_summary = text.rstrip() == f"## {SOURCE.summary}"
            lines[i] = headings[text.rstrip()]
            continue
        if text.startswith("## "):
            in_summary = False
        if text.lstrip().startswith(">"):
            for en, zh in labels.items():
                lines[i] = lines[i].replace(en, zh, 1)
        if in_summary and SOURCE.saved_api in text:
            lines[i] = text.replace(SOURCE.saved_api, locale.saved_api, 1)
            in_summary = False
    return "\n".join(lines) + "\n"


def prose_hash(source: Chapter) -> str:
    return hashlib.sha256(source.prose().encode("utf-8")).hexdigest()[:12]


def is_stale(source: Chapter, translation: Chapter) -> bool:
    return stamp_of(translation) != prose_hash(source)


def stamp_of(translation: Chapter) -> str | None:
    """The English prose hash a translation records, or None if it was never stamped."""
    # str(): an unquoted stamp made only of digits reads back from YAML as an int.
    value = translation.metadata.get(PROSE_KEY)
    return None if value is None else str(value)


@dataclass(frozen=True)
class Paragraph:
    line: int  # 1-based line of its first line in the chapter file
    text: str


def prose_paragraphs(chapter: Chapter) -> list[Paragraph]:
    """The prose split at blank lines and at the cells and outputs it surrounds."""
    paragraphs: list[Paragraph] = []
    lines: list[str] = []
    start = previous = 0
    for line, text in chapter.prose_lines():
        if lines and (not text.strip() or line != previous + 1):
            paragraphs.append(Paragraph(start, "\n".join(lines)))
            lines = []
        if text.strip():
            start = line if not lines else start
            lines.append(text)
        previous = line
    if lines:
        paragraphs.append(Paragraph(start, "\n".join(lines)))
    return paragraphs


@dataclass(frozen=True)
class ProseChange:
    """One paragraph changed (``old`` and ``new``), removed (no ``new``) or added (no ``old``).

    ``line`` is in the current chapter: the new paragraph's, or for a removed one the line of
    the paragraph that now follows where it stood.
    """

    line: int
    old: str | None
    new: str | None


def prose_changes(old: Chapter, new: Chapter) -> list[ProseChange]:
    """The paragraphs of ``new``'s prose that differ from ``old``'s, in the order of ``new``."""
    before, after = prose_paragraphs(old), prose_paragraphs(new)
    end = after[-1].line + 1 if after else 1
    matcher = difflib.SequenceMatcher(None, [p.text for p in before], [p.text for p in after],
                                      autojunk=False)
    changes = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed, added = before[i1:i2], after[j1:j2]
        following = after[j2].line if j2 < len(after) else end
        for k in range(max(len(removed), len(added))):
            gone = removed[k].text if k < len(removed) else None
            came = added[k] if k < len(added) else None
            changes.append(ProseChange(came.line if came else following, gone,
                                       came.text if came else None))
    return changes


class HistoryError(Exception):
    """Git could not list the history of a file (not a repository, no git)."""


@dataclass(frozen=True)
class Revision:
    commit: str
    date: str  # committer date, YYYY-MM-DD
    chapter: Chapter  # the file as it was in that commit


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                              text=True)
    except FileNotFoundError as error:
        raise HistoryError(f"git is not installed: {error}") from error


def stamped_revision(path: Path, stamp: str) -> Revision | None:
    """The newest commit of ``path`` whose prose hashes to ``stamp``, or None if none does."""
    path = Path(path).resolve()
    log = _git(path.parent, "log", "--format=%H %cs", "--", path.name)
    if log.returncode:
        raise HistoryError(log.stderr.strip() or f"git log failed on {path}")
    for entry in log.stdout.splitlines():
        commit, date = entry.split()
        shown = _git(path.parent, "show", f"{commit}:./{path.name}")
        if shown.returncode:
            continue
        try:
            chapter = read_chapter(path, shown.stdout)
        except ChapterError:
            continue  # a revision that did not parse cannot be the one translated
        if prose_hash(chapter) == stamp:
            return Revision(commit, date, chapter)
    return None
