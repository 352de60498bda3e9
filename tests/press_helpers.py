"""Shared helpers of the press tests (test_press_*.py): one implementation, used by every file.

The fixture book (tests/fixtures/book/{en,zh}) has two tiny chapters of pure-Python cells, so
a Sphinx build or a checker run takes a few seconds. Each test copies it into a temporary
directory, edits one thing, runs a press entry point (a subprocess; for script runs that start
no kernel, the script's ``main()`` in-process) and looks for the message at the exact
``file:line``. Expected line numbers are found in the fixture text by
plain string search (:func:`line_of`), not by the press's own parser.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ext.locale_table import by_folder

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "book"
SCRIPTS = ROOT / "scripts"
_VENV_BIN = ROOT / ".venv" / "bin"
BIN = _VENV_BIN if (_VENV_BIN / "sphinx-build").exists() else Path(sys.executable).parent
PYTHON = str(BIN / "python")
SPHINX_BUILD = str(BIN / "sphinx-build")

EN01 = "en/01-basics.md"
EN02 = "en/02-next.md"
ZH01 = "zh/01-basics.md"
ZH02 = "zh/02-next.md"

#: What the fixture's printing cells print, in order (chapter 01, then chapter 02).
PRINTED_01 = ["triple of 14: 42\nratio: 4.6667", "half of the total: 21",
              "elapsed: 12 ms over 3 runs"]
PRINTED_02 = ["from chapter 1: 6", "inside chapter 2: later"]

#: A line of chapter 01's first recorded block, and the same line with a wrong number.
RIGHT, WRONG = "triple of 14: 42", "triple of 14: 43"
#: The recorded output of chapter 01's volatile-output cell.
VOLATILE = "elapsed: 12 ms over 3 runs"
#: Recorded block of chapter 01's fourth cell (the second printing cell), as written.
HALF_BLOCK = "\nOutput:\n\n```text\nhalf of the total: 21\n```\n"
#: Chapter 01's silent cell and the line after it.
SILENT_CELL = "half = total // 2\n```\n"
#: A recorded block for a cell that prints nothing.
STALE_BLOCK = "\nOutput:\n\n```text\nnothing is printed here\n```\n"
#: A cell that uses a save of the next chapter (and, optionally, another line after it, which
#: never runs: the later save raises first).
LATER_CELL = ("\n```{{code-cell}} ipython3\nimport agentrl as arl\nprint(arl.later_fn())\n"
              "{extra}\n```\n")


# ---------------------------------------------------------------------------- fixture trees


def copy_book(dest: Path, source: Path = FIXTURE) -> Path:
    """Copy a book tree (``en/``, ``zh/``) to ``dest/book``; returns ``dest`` (the --root)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, dest / "book")
    return dest


def chapter(root: Path, rel: str) -> Path:
    """The chapter file ``rel`` (e.g. ``en/01-basics.md``) of the book under ``root``."""
    return root / "book" / rel


def edit(path: Path, old: str, new: str) -> None:
    """Replace the single occurrence of ``old`` in ``path`` (fails if absent or repeated)."""
    text = path.read_text(encoding="utf-8")
    count = text.count(old)
    assert count == 1, f"{old!r} occurs {count} times in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(path: Path, line: str, occurrence: int = 1) -> int:
    """1-based number of the ``occurrence``-th line of ``path`` equal to ``line`` (rstripped)."""
    seen = 0
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.rstrip() == line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{line!r} (occurrence {occurrence}) not found in {path}")


# ---------------------------------------------------------------------------- the broken books


def make_drift(root: Path) -> tuple[Path, int]:
    """Change a number in chapter 01's first recorded block; returns (file, fence line)."""
    path = chapter(root, EN01)
    edit(path, f"{RIGHT}\n", f"{WRONG}\n")
    return path, line_of(path, WRONG) - 1


def set_volatile_block(root: Path, text: str) -> Path:
    """Replace the recorded output of chapter 01's volatile cell."""
    path = chapter(root, EN01)
    edit(path, f"```text\n{VOLATILE}\n", f"```text\n{text}\n")
    return path


def add_to_save_cell(root: Path, statement: str) -> Path:
    """Append a statement to chapter 01's #@save cell (after ``SCALE = 3``)."""
    path = chapter(root, EN01)
    edit(path, "SCALE = 3\n", f"SCALE = 3\n{statement}\n")
    return path


def break_outputs(root: Path) -> None:
    """Chapter 01's silent cell 3 gets a recorded block; chapter 02's printing cell 3 loses
    its block; chapter 02 gains a fourth cell that ends in a bare expression."""
    edit(chapter(root, EN01), SILENT_CELL, SILENT_CELL + STALE_BLOCK)
    two = chapter(root, EN02)
    edit(two, "\nOutput:\n\n```text\ninside chapter 2: later\n```\n", "")
    with two.open("a", encoding="utf-8") as f:
        f.write("\n```{code-cell} ipython3\n1 + 1\n```\n")


def make_failing(root: Path) -> None:
    """Chapter 01's cell 3 raises (cells 4-5 never run); chapter 02's cell 3 sleeps 30 s."""
    edit(chapter(root, EN01), "half = total // 2\n",
         "half = total // 2\nraise ValueError('boom in the fixture')\n")
    edit(chapter(root, EN02), "print('inside chapter 2:', later_fn())",
         "import time\ntime.sleep(30)\nprint('inside chapter 2:', later_fn())")


def use_later_save(root: Path, extra: str = "") -> Path:
    """Append to chapter 01 a cell calling ``arl.later_fn`` (saved by chapter 02)."""
    path = chapter(root, EN01)
    with path.open("a", encoding="utf-8") as f:
        f.write(LATER_CELL.format(extra=extra))
    return path


def break_zh(root: Path) -> None:
    """zh 01 lacks the block of its fourth cell; zh 02's third cell differs from the English."""
    edit(chapter(root, ZH01), HALF_BLOCK, "")
    edit(chapter(root, ZH02), "print('inside chapter 2:', later_fn())",
         "print('inside chapter two:', later_fn())")


# ---------------------------------------------------------------------------- processes


def run(args: list, cwd: Path | None = None, timeout: float = 300,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def run_script(name: str, *args, in_process: bool = False) -> subprocess.CompletedProcess:
    """Run ``scripts/<name> ARGS``: a subprocess with the project's Python, or, for runs that
    start no kernel, the script's ``main(argv)`` in this process (same exit code and output,
    without a second of interpreter start-up per call)."""
    if not in_process:
        return run([PYTHON, SCRIPTS / name, *args])
    module = _script(name)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = module.main([str(a) for a in args])
        except SystemExit as exit_:  # argparse errors, select()'s unknown chapter
            code = exit_.code if isinstance(exit_.code, int) else 1
            if not isinstance(exit_.code, int):
                print(exit_.code, file=err)
    return subprocess.CompletedProcess([name, *map(str, args)], code, out.getvalue(),
                                       err.getvalue())


@functools.cache
def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"press_script_{Path(name).stem}",
                                                  SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(root: Path, *args, in_process: bool = False) -> subprocess.CompletedProcess:
    """``check_tutorial_snippets.py --root root ARGS`` (e.g. ``--chapters 01``)."""
    return run_script("check_tutorial_snippets.py", "--root", root, *args, in_process=in_process)


@dataclass(frozen=True)
class Warning_:
    path: str  # as Sphinx printed it (absolute here)
    line: int | None
    message: str  # without the trailing [type.subtype] tag
    type: str | None  # "agentrl.drift", "mystnb.exec", ...

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


_WARNING = re.compile(r"^(?P<path>/\S+?)(?::(?P<line>\d+))?: WARNING: (?P<message>.*)$")
_TAG = re.compile(r"\s*\[(?P<type>[\w-]+\.[\w-]+)\](?: \[[\w.-]+\])*\s*$")


def parse_warnings(stderr: str) -> list[Warning_]:
    """Sphinx warnings ``path[:line]: WARNING: message [type.subtype]``, multi-line ones joined.

    A warning runs until the line that ends with its ``[type.subtype]`` tag, the next warning,
    or a line of kernel noise (``[IPKernelApp] ...``).
    """
    found: list[Warning_] = []
    current: dict | None = None

    def close(tag: str | None = None) -> None:
        nonlocal current
        if current is not None:
            found.append(Warning_(current["path"], current["line"],
                                  "\n".join(current["lines"]).rstrip(), tag))
        current = None

    for raw in stderr.splitlines():
        match = _WARNING.match(raw)
        if match:
            close()
            line = match["line"]
            current = {"path": match["path"], "line": int(line) if line else None, "lines": []}
            raw = match["message"]
        elif current is None:
            continue
        elif raw.startswith("[IPKernelApp]"):
            close()
            continue
        tag = _TAG.search(raw)
        current["lines"].append(raw[: tag.start()] if tag else raw)
        if tag:
            close(tag["type"])
    close()
    return found


@dataclass
class Build:
    returncode: int
    stdout: str
    stderr: str
    srcdir: Path
    outdir: Path
    warnings: list[Warning_] = field(default_factory=list)

    def find(self, path: Path, line: int | None, type_: str, contains: str = "") -> Warning_:
        """The warning at ``path:line`` of type ``type_`` whose message contains ``contains``."""
        for warning in self.warnings:
            if (Path(warning.path) == Path(path) and warning.line == line
                    and warning.type == type_ and contains in warning.message):
                return warning
        listing = "\n".join(f"  {w.location}: [{w.type}] {(w.message + chr(10)).splitlines()[0]}"
                            for w in self.warnings)
        raise AssertionError(f"no {type_} warning at {path}:{line} containing {contains!r}; "
                             f"warnings were:\n{listing}\nstderr tail:\n{self.stderr[-3000:]}")

    def of_type(self, type_: str) -> list[Warning_]:
        return [w for w in self.warnings if w.type == type_]

    def executed(self, docname: str) -> bool:
        """True when the chapter was executed in this build (not served from an earlier build's
        cache): by myst-nb while reading it, or before reading by ``ext.execute_ahead``."""
        src = str(self.srcdir / f"{docname}.md")
        ran = f"{src}: Executing notebook" in self.stdout
        cached = f"{src}: Using cached notebook" in self.stdout
        assert ran != cached, f"{docname}: neither or both executed and cached:\n{self.stdout}"
        return ran or f"{src}: executed ahead in" in self.stdout

    def timings(self) -> dict:
        return json.loads((self.outdir.parent / "timings.json").read_text(encoding="utf-8"))

    def html(self, docname: str) -> str:
        return (self.outdir / f"{docname}.html").read_text(encoding="utf-8")

    def executed_notebook(self, docname: str) -> dict:
        path = self.outdir.parent / "jupyter_execute" / f"{docname}.ipynb"
        return json.loads(path.read_text(encoding="utf-8"))


def sphinx_build(root: Path, lang: str = "en", *defines: str, out: str | None = None) -> Build:
    """``sphinx-build -W`` of ``root/book/<lang>`` with the repository's conf.py.

    The execution cache and the staged libraries live under ``root`` (shared by the locales
    and by rebuilds of the same tree); ``defines`` are extra ``NAME=VALUE`` settings.
    """
    language = by_folder(lang).sphinx_language
    srcdir = root / "book" / lang
    outdir = root / "_build" / (out or lang) / "html"
    args = [SPHINX_BUILD, "-W", "-N", "-c", ROOT, "-D", f"language={language}",
            "-D", f"nb_execution_cache_path={root / 'cache'}",
            "-D", f"agentrl_stage_dir={root / 'staged'}"]
    for define in defines:
        args += ["-D", define]
    result = run([*args, srcdir, outdir], cwd=root)
    return Build(result.returncode, result.stdout, result.stderr, srcdir, outdir,
                 parse_warnings(result.stderr))


# ---------------------------------------------------------------------------- checker output


def problems(output: str) -> list[str]:
    """The ``file:line: message`` lines of a checker or script run."""
    return [l for l in output.splitlines() if re.match(r"^(error: )?/\S+:\d+: ", l)]


def assert_reports(result: subprocess.CompletedProcess, path: Path, line: int,
                   contains: str, stream: str = "stdout") -> str:
    """``result`` names ``path:line`` with a message containing ``contains``; returns the line."""
    text = getattr(result, stream)
    prefix = f"{path}:{line}: "
    for candidate in text.splitlines():
        bare = candidate.removeprefix("error: ")
        if bare.startswith(prefix) and contains in bare:
            return bare
    raise AssertionError(f"no line '{prefix}...{contains}...' in {stream}:\n{text}\n"
                         f"stderr tail:\n{result.stderr[-2000:]}")


# ---------------------------------------------------------------------------- HTML


def output_blocks(html: str) -> list[str]:
    """Text of every rendered cell output (``div.cell_output``) of a page, in order."""
    import html as html_lib

    blocks = re.findall(
        r'<div class="cell_output docutils container">\s*(.*?)</div>\s*</div>\s*</div>',
        html, flags=re.S)
    texts = []
    for block in blocks:
        pres = re.findall(r"<pre>(.*?)</pre>", block, flags=re.S)
        text = "".join(re.sub(r"<[^>]+>", "", p) for p in pres)
        texts.append(html_lib.unescape(text).strip("\n"))
    return texts


def callouts(html: str) -> list[tuple[str, str]]:
    """(kind, title) of every rendered callout admonition (``div.admonition.callout-<kind>``)."""
    import html as html_lib

    found = []
    for classes, title in re.findall(
            r'<div class="([^"]*)">\s*<p class="admonition-title">(.*?)</p>', html, flags=re.S):
        classes = classes.split()
        kinds = [c.removeprefix("callout-") for c in classes if c.startswith("callout-")]
        if "admonition" in classes and "callout" in classes and len(kinds) == 1:
            found.append((kinds[0], html_lib.unescape(title).strip()))
    return found
