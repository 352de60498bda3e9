"""Execute the chapters a build will read, two at a time, into the execution cache.

myst-nb executes a chapter while Sphinx reads it, one after the other, and Sphinx's parallel
reading is not open to this press (its extensions keep the staging plan and the gate's state in
the environment). Yet the chapters that train pin one thread, so a 2-core machine can run two of
them side by side at nearly full speed. So at ``env-before-read-docs`` this module builds each
chapter's notebook exactly as myst-nb will (myst-nb's reader, the kernelspec that
:mod:`ext.stage` writes, hence the same jupyter-cache key), executes those the cache lacks in
``agentrl_execution_jobs`` worker processes, each kernel with its chapter's staged library and
the press's variables (:func:`ext.execute.kernel_variables`, set by :mod:`ext.stage`), and stores
each result as myst-nb does. Reading then finds every chapter in the cache, and the gate
compares its outputs as before. A chapter whose execution fails is not stored: myst-nb executes
it again while reading and reports the failure at its cell, as without this module. With one
job, or fewer than two chapters to execute, the build runs as myst-nb alone would.

Each execution here also measures the kernel's CPU time (user and system seconds of the kernel
process and of the children it waited for) and stores it with the cached notebook as
``cpu_seconds``, beside myst-nb's wall-clock ``execution_seconds``. Every build in cache mode
reads it back for each chapter into ``env.agentrl_cpu_seconds``, and :mod:`ext.timings` holds a
chapter's budget against it: CPU time does not grow when a neighbouring kernel or another job
shares the cores, wall time does.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from tempfile import TemporaryDirectory

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution
from myst_nb.core.read import create_nb_reader
from sphinx.application import Sphinx
from sphinx.util import logging

from .execute import socket_files_in
from .stage import staged_source

logger = logging.getLogger(__name__)


def children_cpu_seconds() -> float:
    """User and system seconds of this process's children that have been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def execute(notebook: str, staged: str, timeout: int, allow_errors: bool,
            ) -> tuple[str, float, float, str | None]:
    """Execute one notebook (nbformat JSON) as myst-nb's cache mode does, in a temporary
    directory, with ``staged`` as the kernel's ``PYTHONPATH``: (executed notebook, wall seconds,
    CPU seconds of the kernel, traceback or None). Runs in a worker process, so the variable is
    this chapter's alone; the kernel is this process's child, reaped when it shuts down, so the
    growth of the children's CPU time across the call is the kernel's."""
    os.environ["PYTHONPATH"] = staged
    nb = nbformat.reads(notebook, as_version=nbformat.NO_CONVERT)
    before = children_cpu_seconds()
    with TemporaryDirectory() as cwd:
        # Unix sockets, not TCP ports: two kernels starting at once cannot collide.
        result = single_nb_execution(nb, cwd=os.path.abspath(cwd), timeout=timeout,
                                     allow_errors=allow_errors, meta_override=True,
                                     config=socket_files_in(Path(cwd)))
    cpu = children_cpu_seconds() - before
    return nbformat.writes(result.nb), result.time, cpu, result.exc_string


def execute_ahead(app: Sphinx, env, docnames: list[str]) -> None:
    jobs = app.config.agentrl_execution_jobs
    nb_config = env.mystnb_config
    chapters = getattr(env, "agentrl_chapters", set())
    env.agentrl_cpu_seconds = {}  # docname -> the kernel's CPU seconds, where the cache has them
    if nb_config.execution_mode != "cache":
        return
    cache = get_cache(nb_config.execution_cache_path or ".jupyter_cache")
    pending = []  # (docname, path, reader format, notebook, staged library)
    for docname in docnames:
        if docname not in chapters:
            continue
        path = Path(env.doc2path(docname))
        staged, text = staged_source(app, docname, path.read_text(encoding="utf-8"))
        reader = create_nb_reader(str(path), env.myst_config, nb_config, text)
        if reader is None:
            continue
        notebook = reader.read(text)
        try:
            record = cache.match_cache_notebook(notebook)
        except KeyError:
            pending.append((docname, path, reader.read_fmt, notebook, staged))
        else:
            if record.data.get("cpu_seconds") is not None:
                env.agentrl_cpu_seconds[docname] = record.data["cpu_seconds"]
    if jobs < 2 or len(pending) < 2:
        return
    logger.info(f"[agentrl] executing {len(pending)} chapters, {jobs} at a time")
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=context) as pool:
        futures = [pool.submit(execute, nbformat.writes(notebook), str(staged),
                               nb_config.execution_timeout, nb_config.execution_allow_errors)
                   for _, _, _, notebook, staged in pending]
        for (docname, path, read_fmt, _, _), future in zip(pending, futures):
            try:
                executed, seconds, cpu, failure = future.result()
            except Exception as error:  # the kernel died, say: reading meets it at its cell
                failure = f"{type(error).__name__}: {error}"
            if failure is not None:
                reason = failure.strip().splitlines()[-1] if failure.strip() else "no message"
                logger.info(f"{path}: failed ahead ({reason}); executed again while read "
                            "[agentrl]")
                continue
            record = cache.add_nb_to_project(str(path), read_data=read_fmt)
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(executed, as_version=nbformat.NO_CONVERT),
                              record.uri, data={"execution_seconds": seconds,
                                                "cpu_seconds": round(cpu, 2)}),
                check_validity=False, overwrite=True)
            env.agentrl_cpu_seconds[docname] = round(cpu, 2)
            logger.info(f"{path}: executed ahead in {seconds:.2f} s ({cpu:.2f} s of CPU) "
                        "[agentrl]")


def setup(app: Sphinx) -> dict:
    # One by default (a chapter that fails ahead executes again while read, which a build of
    # broken chapters would pay twice); `make html` passes two where the machine has two cores.
    # The budget is CPU time where this module measured it, so two at a time do not eat into it.
    app.add_config_value("agentrl_execution_jobs", 1, "", types=[int],
                         description="chapters executed at a time before Sphinx reads them "
                                     "(1: myst-nb executes each while reading it; 2 on a machine "
                                     "with cores to spare for the chapters that pin one thread)")
    app.connect("env-before-read-docs", execute_ahead)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
