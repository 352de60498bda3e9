"""Kernel start-up file (run as ``PYTHONSTARTUP``): the import rule, enforced at run time.

The press checks a chapter's ``import`` statements before running it
(:func:`ext.library.check_imports`). No statement shows ``__import__("numpy")``,
``importlib.import_module(name)`` or ``exec("import numpy")``, so this file, run by IPython in
the notebook's namespace before the first cell, wraps the three ways in. It checks only imports
made by the chapter's own code, recognised by their frame's globals being the notebook's
namespace: torch, transformers and agentrl import whatever they need. A forbidden import raises
``ImportError`` in the cell that made it, which the gate reports at that cell's file and line.

The allowed top-level modules come from the kernel's environment (``ALLOWED_VARIABLE``, set by
:func:`ext.execute.kernel_variables` from :data:`ext.library.ALLOWED_THIRD_PARTY`) plus the
standard library. This file imports nothing from ``ext``: it runs inside the chapter's kernel.
"""

ALLOWED_VARIABLE = "AGENTRL_ALLOWED_IMPORTS"


def _install_import_guard(namespace: dict) -> None:
    import builtins
    import importlib
    import os
    import sys

    third_party = sorted(filter(None, os.environ.get(ALLOWED_VARIABLE, "").split(",")))
    allowed = set(sys.stdlib_module_names) | set(third_party)
    message = ("import of {!r}: a chapter may import only the standard library, "
               + ", ".join(third_party))

    def check(name, level: int = 0) -> None:
        caller = sys._getframe(2).f_globals  # the frame that asked for the import
        if caller is namespace and not level and isinstance(name, str) \
                and name.partition(".")[0] not in allowed:
            raise ImportError(message.format(name), name=name)

    def statement_import(original):  # signature of builtins.__import__
        def guarded(name, globals=None, locals=None, fromlist=(), level=0):
            check(name, level)
            return original(name, globals, locals, fromlist, level)
        return guarded

    def import_module(original):  # signature of importlib.import_module
        def guarded(name, package=None):
            check(name, level=int(str(name).startswith(".")))
            return original(name, package)
        return guarded

    builtins.__import__ = statement_import(builtins.__import__)
    importlib.__import__ = statement_import(importlib.__import__)
    importlib.import_module = import_module(importlib.import_module)


if __name__ == "__main__":  # IPython runs start-up files in the notebook's namespace
    _install_import_guard(globals())
    del _install_import_guard, ALLOWED_VARIABLE
