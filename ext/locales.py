"""Locale parity: a translation has the English chapter's cells and outputs, byte for byte.

Only prose is translated. Each translated chapter records in its front matter
(``en_prose_sha``) a hash of the English prose it translates, so a changed English paragraph
makes the translation *stale* without making it wrong. Used by the build (``ext.parity``)
and by ``scripts/sync_locales.py``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .chapters import Chapter

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


def prose_hash(source: Chapter) -> str:
    return hashlib.sha256(source.prose().encode("utf-8")).hexdigest()[:12]


def is_stale(source: Chapter, translation: Chapter) -> bool:
    # str(): an unquoted stamp made only of digits reads back from YAML as an int.
    return str(translation.metadata.get(PROSE_KEY)) != prose_hash(source)
