"""Per-chapter execution times: a table written with every build, and a budget warning.

Times come from myst-nb's execution record (for a cached chapter, the time of the run that
filled the cache). The table goes to ``<outdir>/../timings.json``; a chapter over
``agentrl_chapter_budget`` seconds is a warning, so ``-W`` fails the build.
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
    for docname in sorted(getattr(env, "agentrl_chapters", set())):
        data = NbMetadataCollector.get_exec_data(env, docname)
        if data:
            runtime = data.get("runtime")
            table[docname] = {
                "seconds": None if runtime is None else round(runtime, 2),
                "succeeded": data.get("succeeded"),
                "method": data.get("method"),
            }
    return table


def report_times(app: Sphinx, env) -> None:
    table = chapter_times(app, env)
    budget = app.config.agentrl_chapter_budget
    for docname, row in table.items():
        if row["seconds"] is not None and row["seconds"] > budget:
            warn(logger, Kind.BUDGET, f"chapter took {row['seconds']:.1f} s, over its {budget} s "
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
