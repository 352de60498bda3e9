"""Write book/labs/records.toml: every lab record, the command that makes it, and what reads it.

    python scripts/records_manifest.py           # regenerate the manifest
    python scripts/records_manifest.py --check   # exit 1 if the committed manifest is stale,
                                                 # a record has no reader, or a reader names a
                                                 # record that does not exist

Writing the manifest also rewrites book/labs/README.md (scripts/labs_index.py), the index of
experiments whose commands and readers come from it; --check checks both.

A reader is a section of an English chapter, a data figure or a test whose source names the
record by its stem as a string literal (or, in a chapter's prose, cites it as `stem`), or another
record whose recipe names it (a fresh
evaluation names its runs, a run its warm start, an analysis the policies it replays). Stems are
written as literals where a record is first reached, so this scan finds every reader.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import agentrl as arl
from ext.generated import write_or_check

import labs_index  # the labs' README, an index of experiments written from this manifest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "book" / "labs" / "results"
MANIFEST = ROOT / "book" / "labs" / "records.toml"
# Where readers live: chapters (English: the cells are the same in every locale), figures, tests.
READER_GLOBS = ("book/en/*.md", "scripts/figures/*.py", "tests/*.py")
# Recipe fields that name other records by stem.
LINKS = ("warm", "runs", "fresh", "policies", "loaded_from", "warm_start")
# A call that names a record: load_record('stem'), load_lab('stem').
CALL = re.compile(r"""\b(?:load_record|load_lab)\(\s*(['"])([^'"]+)\1""")
HEADING = re.compile(r"^## (\S+)")
HEADER = """\
# The labs' records: the command that makes each one, and what reads it.
# Written by scripts/records_manifest.py from the records and their readers; never by hand.
# A reader is a chapter section, a figure or a test that names the record, or a record whose
# recipe names it ("record <stem>"). checkpoint = true: the policy's weights are in the repository
# (a checkpoint the .gitignore keeps local is rebuilt by the command).
"""


@dataclass
class Entry:
    stem: str
    kind: str
    lab: str
    command: str
    checkpoint: bool
    read_by: list[str] = field(default_factory=list)


def load_records(folder: Path = RESULTS) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def links(record: dict) -> list[str]:
    """The stems that a record's recipe names."""
    found = []
    for key in LINKS:
        value = record["recipe"].get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    return found


def reader_files(root: Path = ROOT) -> list[Path]:
    return sorted(p for pattern in READER_GLOBS for p in root.glob(pattern)
                  if p.name not in ("lab_results.py", "test_records.py"))


def place(path: Path, line: int, lines: list[str], root: Path = ROOT) -> str:
    """'book/en/07-advantages.md 7.7' for a chapter (its numbered section), else the path."""
    rel = path.relative_to(root).as_posix()
    if path.suffix != ".md":
        return rel
    for text in reversed(lines[:line]):
        match = HEADING.match(text)
        if match:
            return f"{rel} {match.group(1)}"
    return rel


def direct_readers(stems: set[str], files: list[Path], root: Path = ROOT) -> dict[str, set[str]]:
    readers: dict[str, set[str]] = {stem: set() for stem in stems}
    # A string literal in code, or a `stem` cited in a chapter's prose (an Evidence callout).
    literal = re.compile(r"""(['"`])([A-Za-z0-9_.+\-]+)\1""")
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, text in enumerate(lines):
            for match in literal.finditer(text):
                if match.group(2) in readers:
                    readers[match.group(2)].add(place(path, number, lines, root))
    return readers


def unknown_names(stems: set[str], files: list[Path], root: Path = ROOT) -> list[str]:
    """'file:line: stem' for every load_record/load_lab call naming a record that is not there."""
    problems = []
    for path in files:
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in CALL.finditer(text):
                if match.group(2) not in stems:
                    rel = path.relative_to(root).as_posix()
                    problems.append(f"{rel}:{number}: no record {match.group(2)!r}")
    return problems


@functools.cache
def lab_harness():
    """book/labs/harness.py as a module (the labs import each other by bare name, so their folder
    goes on the path and a harness already imported is the one used)."""
    labs = str(ROOT / "book" / "labs")
    if labs not in sys.path:
        sys.path.insert(0, labs)
    return importlib.import_module("harness")


def command_of(stem: str, folder: Path) -> str:
    """The command that makes the record, as the labs' harness derives it from the recipe (a
    record written by a script outside book/labs, such as the rollout benchmark, is its script)."""
    record = arl.load_record(stem, folder)
    if not record.lab.startswith("book/labs/"):
        return f"{lab_harness().PYTHON} {record.lab}"
    return lab_harness().command(record)


def shipped_checkpoints(folder: Path) -> set[str]:
    """Stems of the checkpoints a clone of the repository has: those present and not ignored by
    git, so a checkpoint kept only on the machine that trained it does not change the manifest."""
    present = sorted(folder.glob("*.pt"))
    try:
        ignored = subprocess.run(
            ["git", "check-ignore", "--stdin"], cwd=folder, capture_output=True, text=True,
            input="\n".join(p.name for p in present), check=False).stdout.split()
    except FileNotFoundError:  # no git: a copy of the repository ships what it holds
        ignored = []
    return {p.stem for p in present} - {Path(name).stem for name in ignored}


def entries(root: Path = ROOT, folder: Path = RESULTS) -> list[Entry]:
    records = load_records(folder)
    readers = direct_readers(set(records), reader_files(root), root)
    for stem, record in records.items():
        for linked in links(record):
            if linked in readers:
                readers[linked].add(f"record {stem}")
    shipped = shipped_checkpoints(folder)
    out = []
    for stem, record in records.items():
        out.append(Entry(stem=stem, kind=record["kind"], lab=record["lab"],
                         command=command_of(stem, folder),
                         checkpoint=stem in shipped,
                         read_by=sorted(readers[stem])))
    return out


def toml_text(items: list[Entry]) -> str:
    parts = [HEADER]
    for entry in items:
        readers = "".join(f"\n  {json.dumps(r)}," for r in entry.read_by)
        parts.append(f"\n[{json.dumps(entry.stem)}]\n"
                     f"kind = {json.dumps(entry.kind)}\n"
                     f"lab = {json.dumps(entry.lab)}\n"
                     f"command = {json.dumps(entry.command)}\n"
                     f"checkpoint = {json.dumps(entry.checkpoint)}\n"
                     f"read_by = [{readers}{chr(10) if readers else ''}]\n")
    return "".join(parts)


def problems(items: list[Entry], root: Path = ROOT, folder: Path = RESULTS) -> list[str]:
    """Records nothing reads, checkpoints without a record, and calls naming absent records."""
    found = [f"{folder.relative_to(root).as_posix()}/{e.stem}.json: no reader"
             for e in items if not e.read_by]
    stems = {e.stem for e in items}
    found += [f"{folder.relative_to(root).as_posix()}/{stem}.pt: a checkpoint with no record"
              for stem in sorted(shipped_checkpoints(folder) - stems)]
    found += unknown_names(stems, reader_files(root), root)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if the manifest is stale or a record lacks a reader")
    args = parser.parse_args(argv)
    items = entries()
    text = toml_text(items)
    found = problems(items)
    for line in found:
        print(f"error: {line}", file=sys.stderr)
    if not write_or_check(MANIFEST, text, args.check, "python scripts/records_manifest.py"):
        return 1
    if not args.check:
        print(f"wrote {MANIFEST.relative_to(ROOT)} ({len(items)} records)")
    # The labs' README, an index of experiments written from this manifest, follows it.
    return 1 if labs_index.main(["--check"] if args.check else []) or found else 0


if __name__ == "__main__":
    sys.exit(main())
