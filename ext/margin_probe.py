"""Kernel-side half of the margin check: record the value behind every rounded print.

:mod:`ext.margins` runs this file's text as a chapter's first cell (so, like
:mod:`ext.kernel_guard`, it imports nothing from ``ext``). It rewrites the code of every later
cell, through IPython's AST transformers, and of the generated library ``agentrl``, through an
import hook, so that the value of each

* f-string field with a constant precision, ``f'{x:.4f}'``, ``f'{x:9.3g}'``, ``f'{x:.1%}'``,
* ``round(x, n)`` with a constant ``n >= 0``, and ``format(x, '.3f')``

passes through ``__agentrl_margin__(x, spec, key)`` on its way to being rounded. That function
returns ``x`` unchanged and notes floats (and 0-dimensional float tensors) under
``<where>@<running cell>``: where it is formatted, ``cell<i>:<line>:<column>`` or
``agentrl:<line>:<column>``, and which of the chapter's code cells (counted from 0) was running,
so a library print is charged to the cell that called it. The rewrite keeps every line number,
so tracebacks and outputs are those of the plain run. A last cell prints the
notes as one line of JSON (:data:`REPORT_CELL`).

The library is compiled from its source on import, never from ``__pycache__``, and nothing is
written back, so a plain run never picks up the rewritten code.
"""

MARGIN_HOOK = "__agentrl_margin__"
KEEP = 2000  # values kept per key: a loop that formats a float per step stays bounded
REPORT_CELL = f"import builtins, json\nprint(json.dumps(getattr(builtins, {MARGIN_HOOK!r}).notes))"


def _install_margin_probe() -> None:
    import ast
    import builtins
    import importlib.machinery
    import sys

    hook, keep = MARGIN_HOOK, KEEP  # the module's names are deleted once this has run
    notes: dict[str, list] = {}
    shell = get_ipython()  # noqa: F821 - IPython puts it in the notebook's namespace
    opening = shell.execution_count  # this cell's; the chapter's cell i runs as opening + 1 + i

    def running_cell():
        return shell.execution_count - opening - 1

    def note(value, spec, key):
        if isinstance(value, float):
            number = value
        elif type(value).__module__ == "torch" and getattr(value, "ndim", None) == 0 \
                and value.is_floating_point():
            number = value.item()
        else:
            return value
        kept = notes.setdefault(f"{key}@{running_cell()}", [spec, []])[1]
        if len(kept) < keep:
            kept.append(number)
        return value

    note.notes = notes
    setattr(builtins, hook, note)

    def constant_spec(node):
        """The text of a format spec made only of constants, else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
            return "".join(v.value for v in node.values)
        return None

    class Rewrite(ast.NodeTransformer):
        def __init__(self, where):
            self.where = where

        def wrap(self, value, spec):
            # the value's own position: before 3.12 every field of an f-string has the string's
            key = f"{self.where()}:{value.lineno}:{value.col_offset}"
            call = ast.Call(ast.Name(hook, ast.Load()),
                            [value, ast.Constant(spec), ast.Constant(key)], [])
            return ast.copy_location(call, value)

        def visit_FormattedValue(self, node):
            self.generic_visit(node)
            spec = constant_spec(node.format_spec) if node.format_spec else None
            if node.conversion == -1 and spec:
                node.value = self.wrap(node.value, spec)
            return node

        def visit_Call(self, node):
            self.generic_visit(node)
            name = node.func.id if isinstance(node.func, ast.Name) else None
            if name not in ("round", "format") or len(node.args) != 2 or node.keywords:
                return node
            second = node.args[1]
            if name == "round" and isinstance(second, ast.Constant) \
                    and type(second.value) is int and second.value >= 0:
                node.args[0] = self.wrap(node.args[0], f"round:{second.value}")
            elif name == "format" and constant_spec(second):
                node.args[0] = self.wrap(node.args[0], constant_spec(second))
            return node

    class CellRewrite(Rewrite):
        def visit(self, node):  # IPython calls visit() with each cell's module
            return ast.fix_missing_locations(super().visit(node))

    shell.ast_transformers.append(CellRewrite(lambda: f"cell{running_cell()}"))

    class LibraryLoader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname):
            path = self.get_filename(fullname)
            tree = ast.parse(self.get_data(path), path)
            tree = ast.fix_missing_locations(Rewrite(lambda: "agentrl").visit(tree))
            return compile(tree, path, "exec", dont_inherit=True)

    class LibraryFinder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] != "agentrl":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
                spec.loader = LibraryLoader(spec.loader.name, spec.loader.path)
            return spec

    sys.meta_path.insert(0, LibraryFinder)


if __name__ == "__main__":  # run as the notebook's first cell
    _install_margin_probe()
    del _install_margin_probe, MARGIN_HOOK, KEEP, REPORT_CELL
