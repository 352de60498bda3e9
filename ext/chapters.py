"""Read a chapter file: its front matter, code cells and recorded output blocks.

This is the one parser of the book's source format. The Sphinx extension, the checker and
the library builder all call :func:`read_chapter`, so a cell means the same thing to every
tool. Cells are found by myst-nb's own reader (the one that executes them during the build);
this module adds what myst-nb does not know: the recorded ``Output:`` block after a cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from myst_nb.core.read import read_myst_markdown_notebook

SAVE_MARK = "#@save"
VOLATILE_TAG = "volatile-output"
OUTPUT_LABEL = "Output:"
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)\s*$")
_CODE_CELL_FENCE = re.compile(r"^(`{3,}|~{3,})\s*\{code-cell\}")


class ChapterError(Exception):
    """A malformed chapter; ``str()`` gives ``path:line: message`` like a compiler."""

    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(message)
        self.path, self.line, self.message = Path(path), line, message

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@dataclass(frozen=True)
class OutputBlock:
    """A recorded output: the ``Output:`` label line and the fenced text after it."""

    label_line: int  # 1-based line of "Output:"
    fence_line: int  # 1-based line of the opening ```text
    end_line: int  # 1-based line of the closing fence
    text: str


@dataclass(frozen=True)
class CodeCell:
    index: int  # position among the chapter's code cells, from 0
    line: int  # 1-based line of the opening {code-cell} fence
    source: str
    tags: tuple[str, ...]
    end_line: int  # 1-based line of the closing fence
    output: OutputBlock | None
    first_code_line: int = 0  # 1-based file line of the first source line (after option lines)

    @property
    def is_save(self) -> bool:
        return self.source.lstrip().startswith(SAVE_MARK)

    @property
    def is_volatile(self) -> bool:
        return VOLATILE_TAG in self.tags



@dataclass
class Chapter:
    path: Path
    text: str
    metadata: dict
    cells: list[CodeCell] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def body_line(self) -> int:
        """0-based index of the first line after the front matter."""
        return _front_matter_end(self.text.splitlines())

    def prose_lines(self) -> list[tuple[int, str]]:
        """(1-based line, text) of every line but front matter, code cells and recorded outputs."""
        lines = self.text.splitlines()
        drop: set[int] = set()
        for cell in self.cells:
            drop.update(range(cell.line - 1, cell.end_line))
            if cell.output:
                drop.update(range(cell.output.label_line - 1, cell.output.end_line))
        body_start = self.body_line
        return [(i + 1, l) for i, l in enumerate(lines) if i >= body_start and i not in drop]

    def prose(self) -> str:
        """The text with code cells and recorded outputs removed: what a translator translates."""
        return "\n".join(text for _, text in self.prose_lines())


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after the YAML front matter (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return i + 1
    return 0


def _front_matter(lines: list[str], path: Path) -> dict:
    end = _front_matter_end(lines)
    if not end:
        return {}
    try:
        return yaml.safe_load("\n".join(lines[1 : end - 1])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ChapterError(path, (mark.line + 2) if mark else 1, f"bad front matter: {exc}")


def _closing_fence(lines: list[str], open_index: int, path: Path) -> int:
    """0-based index of the fence that closes the one opened at ``open_index``."""
    mark = re.match(r"^\s*(`{3,}|~{3,})", lines[open_index]).group(1)
    for i in range(open_index + 1, len(lines)):
        stripped = lines[i].strip()
        if stripped.startswith(mark[0] * len(mark)) and set(stripped) == {mark[0]}:
            return i
    raise ChapterError(path, open_index + 1, "code fence is never closed")


def _recorded_output(lines: list[str], after: int, path: Path) -> OutputBlock | None:
    """The ``Output:`` block that starts after line index ``after``, if the next text is one."""
    i = after + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines) or lines[i].strip() != OUTPUT_LABEL:
        return None
    label = i
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    fence = _FENCE.match(lines[i]) if i < len(lines) else None
    if not fence or fence.group(2) != "text":
        raise ChapterError(path, label + 1, "'Output:' must be followed by a ```text block")
    end = _closing_fence(lines, i, path)
    return OutputBlock(label + 1, i + 1, end + 1, "\n".join(lines[i + 1 : end]))


def _bad_option_line(lines: list[str]) -> int | None:
    """1-based line of the first ``:key: value`` cell option that is not valid YAML, if any."""
    for i, line in enumerate(lines):
        if not _CODE_CELL_FENCE.match(line):
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith(":"):
            try:
                yaml.safe_load(lines[j][1:].replace(":", ": ", 1))
            except yaml.YAMLError:
                return j + 1
            j += 1
    return None


def read_chapter(path: Path | str, text: str | None = None) -> Chapter:
    """Parse a chapter; raises :class:`ChapterError` naming the file and line when malformed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines()
    metadata = _front_matter(lines, path)  # first: myst-nb's reader would report YAML at line 1
    try:
        notebook = read_myst_markdown_notebook(text, add_source_map=True, path=str(path))
    except Exception as exc:  # myst-nb reports bad cell options without a line
        line = getattr(exc, "lineno", None) or _bad_option_line(lines) or 1
        raise ChapterError(path, line, f"cannot read cells: {exc}") from exc
    starts = notebook.metadata.get("source_map", [])
    cells: list[CodeCell] = []
    for cell, start in zip(notebook.cells, starts):
        if cell.cell_type != "code":
            continue
        end = _closing_fence(lines, start - 1, path)
        cells.append(
            CodeCell(
                index=len(cells),
                line=start,
                source=cell.source,
                tags=tuple(cell.metadata.get("tags", ())),
                end_line=end + 1,
                output=_recorded_output(lines, end, path),
                first_code_line=_first_code_line(lines, start, end, cell.source),
            )
        )
    _reject_stray_outputs(lines, cells, path)
    return Chapter(path=path, text=text, metadata=metadata, cells=cells)


def _first_code_line(lines: list[str], fence: int, closing: int, source: str) -> int:
    """1-based line of the cell's first source line: after the fence and any option lines.

    Found by the text, not counted back from the closing fence, because myst-nb strips the
    blank lines that end a cell's source."""
    first = next((l for l in source.splitlines() if l.strip()), None)
    for index in range(fence, closing):  # 0-based: the line after the fence .. before closing
        if first is not None and lines[index] == first:
            return index + 1
    return fence + 1


def _reject_stray_outputs(lines: list[str], cells: list[CodeCell], path: Path) -> None:
    """An ``Output:`` label that does not follow a code cell is a misplaced block."""
    claimed = {c.output.label_line for c in cells if c.output}
    inside = set()
    for c in cells:
        inside.update(range(c.line, c.end_line + 1))
        if c.output:
            inside.update(range(c.output.fence_line, c.output.end_line + 1))
    for number, line in enumerate(lines, start=1):
        if line.strip() == OUTPUT_LABEL and number not in claimed and number not in inside:
            raise ChapterError(path, number, "'Output:' block does not follow a code cell")


def chapter_key(path: Path) -> str:
    """The short name used on command lines: '02' for 02-rl-fundamentals.md, 'sources'."""
    return Path(path).stem.split("-")[0]


class UnknownChapterError(ValueError):
    """A chapter key on a command line that names no chapter of the book."""


def select_chapters(paths: list[Path], wanted: list[str]) -> list[Path]:
    """The chapters named by ``wanted`` (keys '02', 'A', or stems), in that order; ``['all']``
    is every one. A key that names none raises :class:`UnknownChapterError` listing the keys."""
    if wanted == ["all"]:
        return list(paths)
    chosen = []
    for key in wanted:
        matches = [p for p in paths if chapter_key(p) == key or p.stem == key]
        if not matches:
            raise UnknownChapterError(f"no chapter {key!r} in the book (known: "
                                      f"{', '.join(chapter_key(p) for p in paths)})")
        chosen.extend(matches)
    return chosen


def book_order(book_dir: Path | str) -> list[Path]:
    """Chapter files in the order of the toctree in ``index.md`` (the book's order)."""
    book_dir = Path(book_dir)
    index = book_dir / "index.md"
    lines = index.read_text(encoding="utf-8").splitlines()
    order: list[Path] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence and fence.group(2) == "{toctree}":
            end = _closing_fence(lines, i, index)
            for number in range(i + 1, end):
                entry = lines[number].strip()
                if not entry or entry.startswith(":"):
                    continue
                target = book_dir / (entry if entry.endswith(".md") else entry + ".md")
                if not target.exists():
                    raise ChapterError(index, number + 1, f"toctree entry {entry!r} has no file")
                order.append(target)
            i = end
        i += 1
    return order


def set_kernel_display_name(text: str, display_name: str) -> str:
    """Rewrite the kernelspec display name in place (one line, so line numbers hold)."""
    pattern = re.compile(r"^(\s+display_name:).*$", re.MULTILINE)
    lines = text.splitlines(keepends=True)
    end = _front_matter_end([l.rstrip("\n") for l in lines])
    head, body = "".join(lines[:end]), "".join(lines[end:])
    head, count = pattern.subn(lambda m: f"{m.group(1)} {display_name}", head, count=1)
    return head + body if count else text
