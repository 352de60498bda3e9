"""The press's own tables are true: the map of ``ext/`` modules and the list of problem kinds.

Both are read from the source (module docstrings, the ``Kind`` enum and every call that reports
a problem), so a module or a kind added later is checked without editing this file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from press_helpers import PYTHON, ROOT, run

import ext
from ext.problems import Kind

EXT = ROOT / "ext"
#: Every Python file of the press that reports problems: the extension and the scripts.
PRESS_FILES = sorted([*EXT.glob("*.py"), *(ROOT / "scripts").glob("*.py")])
MAP_ENTRY = re.compile(r"^\* ``ext\.(\w+)``: (.*(?:\n  .*)*)$", re.MULTILINE)
SPHINX_PACKAGES = ("sphinx", "docutils", "myst_nb.sphinx_")


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(EXT.glob("*.py")) if p.stem != "__init__"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _job(path: Path) -> str:
    docstring = ast.get_docstring(_tree(path))
    assert docstring, f"{path} has no docstring saying what it does"
    return docstring.splitlines()[0]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _defines_setup(path: Path) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == "setup" for n in _tree(path).body)


# ---------------------------------------------------------------------------- the map


def _map() -> dict[str, str]:
    """Module -> job as ext/__init__.py lists them (continuation lines joined)."""
    return {name: " ".join(job.split()) for name, job in MAP_ENTRY.findall(ext.__doc__)}


def test_map_lists_every_module_with_the_first_line_of_its_docstring():
    listed = _map()
    expected = {name: _job(path) for name, path in _modules().items()}
    missing = [f"* ``ext.{n}``: {job}" for n, job in expected.items() if n not in listed]
    assert not missing, "add to the map in ext/__init__.py:\n" + "\n".join(missing)
    assert not set(listed) - set(expected), "the map lists modules that do not exist"
    for name, job in expected.items():
        assert listed[name] == job, (
            f"ext.{name}: the map says {listed[name]!r}, its docstring {job!r}")


def test_map_lists_the_extensions_in_setup_order_then_the_pure_modules():
    entries = list(_map())
    extensions = [m.removeprefix("ext.") for m in ext.SUBMODULES]
    assert entries[: len(extensions)] == extensions
    for name, path in _modules().items():
        assert _defines_setup(path) == (name in extensions), (
            f"ext.{name}: a module with setup() is an extension and belongs in SUBMODULES")


@pytest.mark.parametrize("name", sorted(set(_modules()) - {m.removeprefix("ext.")
                                                           for m in ext.SUBMODULES}))
def test_pure_module_does_not_import_sphinx(name):
    sphinx = {i for i in _imports(_modules()[name]) if i.startswith(SPHINX_PACKAGES)}
    assert not sphinx, f"ext.{name} is listed as pure but imports {sorted(sphinx)}"


def test_problem_kinds_import_nothing_of_sphinx_at_all():
    result = run([PYTHON, "-c", "import sys; import ext.problems; "
                  "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                  "('sphinx', 'docutils', 'myst_nb')))"], cwd=ROOT)
    assert (result.returncode, result.stdout) == (0, "[]\n"), result.stderr


# ---------------------------------------------------------------------------- problem kinds


def _calls(name: str):
    """(file, call) for every call of a function or method named ``name`` in the press."""
    for path in PRESS_FILES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == name:
                    yield path, node


def _is_kind_member(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "Kind")


def _kind_argument(node: ast.expr) -> bool:
    """A member ``Kind.X`` (or a choice of two), or a problem's ``.kind`` passed on."""
    if isinstance(node, ast.IfExp):
        return _kind_argument(node.body) and _kind_argument(node.orelse)
    return _is_kind_member(node) or (isinstance(node, ast.Attribute) and node.attr == "kind")


def test_every_kind_is_reported_somewhere():
    used = set()
    for path in PRESS_FILES:
        if path.name != "problems.py":
            used.update(n.attr for n in ast.walk(_tree(path)) if _is_kind_member(n))
    assert {k.name for k in Kind} - used == set(), "kinds nothing reports"
    assert used - {k.name for k in Kind} == set(), "kinds reported but not in the enum"


@pytest.mark.parametrize("function, position", [("Problem", 1), ("FileProblem", 2), ("warn", 1),
                                                ("report_line", 1)])
def test_every_report_names_a_kind_of_the_enum(function, position):
    calls = list(_calls(function))
    assert calls, f"no call of {function}"
    for path, call in calls:
        if path.name == "problems.py":
            continue
        argument = call.args[position]
        assert _kind_argument(argument), (
            f"{path}:{call.lineno}: {function}() reports {ast.unparse(argument)}, not a Kind")


def test_no_bare_kind_strings():
    """No warning names its subtype by hand and no code compares a kind with strings."""
    for path in PRESS_FILES:
        if path.name == "problems.py":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call):
                keywords = {k.arg for k in node.keywords}
                assert "subtype" not in keywords, (
                    f"{path}:{node.lineno}: a warning with its own subtype; use ext.problems.warn")
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                kinds = [s for s in sides if isinstance(s, ast.Attribute) and s.attr == "kind"]
                strings = [s for s in ast.walk(node) if isinstance(s, ast.Constant)
                           and s.value in {k.subtype for k in Kind}]
                assert not (kinds and strings), (
                    f"{path}:{node.lineno}: compares a kind with a string; use Kind's flags")


def test_kinds_have_distinct_subtypes_sphinx_can_print():
    subtypes = [k.subtype for k in Kind]
    assert len(set(subtypes)) == len(subtypes)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", s) for s in subtypes)


def test_refreshable_kinds_are_never_fatal():
    assert not [k for k in Kind if k.fatal and k.refreshable]
