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
"""

from __future__ import annotations

import multiprocessing
import os
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


def execute(notebook: str, staged: str, timeout: int, allow_errors: bool,
            ) -> tuple[str, float, str | None]:
    """Execute one notebook (nbformat JSON) as myst-nb's cache mode does, in a temporary
    directory, with ``staged`` as the kernel's ``PYTHONPATH``: (executed notebook, seconds,
    traceback or None). Runs in a worker process, so the variable is this chapter's alone."""
    os.environ["PYTHONPATH"] = staged
    nb = nbformat.reads(notebook, as_version=nbformat.NO_CONVERT)
    with TemporaryDirectory() as cwd:
        # Unix sockets, not TCP ports: two kernels starting at once cannot collide.
        result = single_nb_execution(nb, cwd=os.path.abspath(cwd), timeout=timeout,
                                     allow_errors=allow_errors, meta_override=True,
                                     config=socket_files_in(Path(cwd)))
    return nbformat.writes(result.nb), result.time, result.exc_string


def execute_ahead(app: Sphinx, env, docnames: list[str]) -> None:
    jobs = app.config.agentrl_execution_jobs
    nb_config = env.mystnb_config
    chapters = getattr(env, "agentrl_chapters", set())
    if jobs < 2 or nb_config.execution_mode != "cache":
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
            cache.match_cache_notebook(notebook)
        except KeyError:
            pending.append((docname, path, reader.read_fmt, notebook, staged))
    if len(pending) < 2:
        return
    logger.info(f"[agentrl] executing {len(pending)} chapters, {jobs} at a time")
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=context) as pool:
        futures = [pool.submit(execute, nbformat.writes(notebook), str(staged),
                               nb_config.execution_timeout, nb_config.execution_allow_errors)
                   for _, _, _, notebook, staged in pending]
        for (docname, path, read_fmt, _, _), future in zip(pending, futures):
            try:
                executed, seconds, failure = future.result()
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
                              record.uri, data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            logger.info(f"{path}: executed ahead in {seconds:.2f} s [agentrl]")


def setup(app: Sphinx) -> dict:
    # One by default: a chapter's budget is its wall time, and two at a time on two cores put
    # the longest chapters within about 10% of it; raise it where the cores allow.
    app.add_config_value("agentrl_execution_jobs", 1, "", types=[int],
                         description="chapters executed at a time before Sphinx reads them "
                                     "(1: myst-nb executes each while reading it; 2 on a machine "
                                     "with cores to spare for the chapters that pin one thread)")
    app.connect("env-before-read-docs", execute_ahead)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
