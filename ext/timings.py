"""Per-chapter execution times: a table written with every build, and a budget warning.

Times come from myst-nb's execution record (for a cached chapter, the time of the run that
filled the cache): ``seconds`` is wall-clock time, and ``cpu_seconds`` the kernel's CPU time
where :mod:`ext.execute_ahead` executed the chapter (else null). The table goes to
``<outdir>/../timings.json``; a chapter over ``agentrl_chapter_budget`` seconds is a warning, so
``-W`` fails the build. The budget is held against the CPU time when there is one, else the wall
time: two kernels side by side, or any other job on the machine, stretch a chapter's wall time
but not the work it does, and the budget is there to bound the work.
"""

from __future__ import annotations

import json
from pathlib import Path

from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx
from sphinx.util import logging

from .problems import Kind, warn

logger = logging.getLogger(__name__)


def chapter_times(app: Sphinx, env) -> dict[str, dict]:
    table = {}
    cpu = getattr(env, "agentrl_cpu_seconds", {})
    for docname in sorted(getattr(env, "agentrl_chapters", set())):
        data = NbMetadataCollector.get_exec_data(env, docname)
        if data:
            runtime = data.get("runtime")
            table[docname] = {
                "seconds": None if runtime is None else round(runtime, 2),
                "cpu_seconds": cpu.get(docname),
                "succeeded": data.get("succeeded"),
                "method": data.get("method"),
            }
    return table


def budgeted_seconds(row: dict) -> tuple[float | None, str]:
    """The time a chapter's budget is held against, and what it is: its CPU time where the
    table has one, else its wall time."""
    if row.get("cpu_seconds") is not None:
        return row["cpu_seconds"], "s of CPU time"
    return row["seconds"], "s"


def report_times(app: Sphinx, env) -> None:
    table = chapter_times(app, env)
    budget = app.config.agentrl_chapter_budget
    for docname, row in table.items():
        seconds, unit = budgeted_seconds(row)
        if seconds is not None and seconds > budget:
            warn(logger, Kind.BUDGET, f"chapter took {seconds:.1f} {unit}, over its {budget} s "
                 "budget", (docname, 1))
    path = Path(app.outdir).parent / "timings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(table, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if table:
        total = sum(r["seconds"] or 0 for r in table.values())
        logger.info(f"[agentrl] {len(table)} chapters, {total:.1f} s of execution; see {path}")


def setup(app: Sphinx) -> dict:
    app.add_config_value("agentrl_chapter_budget", 120, "env", types=[int, float])
    app.connect("env-check-consistency", report_times)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
