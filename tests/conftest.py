"""What ``make quick`` leaves out: the test files that need the full build or run whole books.

A file listed in :data:`SLOW` has every test marked ``slow`` (``-m "not slow"`` deselects them),
and so has a test listed as ``file::test`` (all its parameters); a test may also carry
``@pytest.mark.slow`` itself. ``make test`` (what CI runs)
runs everything. Each entry says why the file is slow, so the list is easy to keep honest:
measure with ``pytest --durations=15`` (pyproject.toml prints the slowest tests on every run).

The fixtures at the end (``tok``, ``tasks``, ``cache``) are the ones several test files share.
"""

from __future__ import annotations

import pytest

SLOW = {
    # need `make html` / `make pdf` output, a browser or the book's notebooks
    "test_pdf.py": "reads the PDFs that `make pdf` prints",
    "test_site_e2e.py": "drives Chromium over the built site",
    "test_reference_page.py": "reads the built site's reference page",
    "test_chapter_notebooks.py": "executes the built site's notebooks",
    "test_publish.py::test_the_published_tree_is_complete_and_every_link_resolves":
        "reads the tree `make publish` assembles",
    "test_publish.py::test_the_published_tree_has_the_language_its_pdf_and_its_notebooks":
        "reads the tree `make publish` assembles",
    # run sphinx-build or kernels over books
    "test_press_build.py": "Sphinx builds of the fixture book",
    "test_press_build_failures.py": "Sphinx builds of broken fixture books",
    "test_press_incremental.py": "repeated Sphinx builds",
    "test_press_portability.py": "runs chapters under other numeric paths",
    "test_press_streams.py": "a Sphinx build",
    "test_press_structure.py": "a Sphinx build of a broken fixture book",
    "test_press_checker.py::test_real_book_chapter_0_drift": "executes the real chapter 0",
    # run labs, benchmarks or worker processes end to end (reduced, still tens of seconds)
    "test_labs.py::test_every_lab_runs_reduced_and_writes_its_record": "runs every lab, reduced",
    "test_labs.py::test_the_capstone_runs_every_stage_and_its_control_arm_reuses_them":
        "two reduced capstone runs",
    "test_capstone.py": "runs the capstone's RL stage under torchrun and the benchmark",
    "test_lab_arms.py::test_a_resumed_rl_run_ends_where_an_uninterrupted_one_does":
        "two reduced RL runs",
    "test_lab_evaluate.py::test_dynamic_sampling_steps_on_exactly_n_mixed_groups":
        "a reduced RL run",
    "test_rollout_systems.py::test_same_functions_run_under_torchrun": "starts torchrun workers",
    "test_rollouts.py::test_benchmark_runs_at_a_small_size": "runs scripts/bench_rollouts.py",
    # recompute figures from the chapters' cells
    "test_figures.py::test_committed_figures_are_current": "recomputes every figure (minutes)",
    "test_figures.py::test_a_figure_that_cannot_be_computed_is_named_and_fails":
        "runs the figure builder",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        test = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if item.path.name in SLOW or test in SLOW:
            item.add_marker(pytest.mark.slow)


# Fixtures shared by the gym, trajectory, multi-turn and TinyAgent tests. Module scope, as each
# file had them: every test file gets its own instance, so no file sees another's cache.
@pytest.fixture(scope="module")
def tok():
    """The book's character tokenizer."""
    import agentrl as arl
    return arl.CharTokenizer()


@pytest.fixture(scope="module")
def tasks():
    """The gym's tasks of seed 0."""
    import agentrl as arl
    return arl.make_tasks(seed=0)


@pytest.fixture(scope="module")
def cache():
    """An empty test-result cache for BugFixEnv, one per test file."""
    return {}


@pytest.fixture
def torchrun(tmp_path):
    """run(script_text, timeout, **env) -> the finished process: the script launched by torchrun
    as three local processes (rank 0 and two workers) on a free port, from tmp_path, with the
    repository on PYTHONPATH and one thread each; skips where torchrun is not installed."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    launcher = Path(sys.executable).with_name("torchrun")
    if not launcher.exists():
        pytest.skip("torchrun not installed next to the interpreter")
    root = Path(__file__).resolve().parent.parent

    def run(script_text, timeout, **env):
        script = tmp_path / "torchrun_script.py"
        script.write_text(script_text)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", PYTHONPATH=str(root), OMP_NUM_THREADS="1",
                   **env)
        return subprocess.run([str(launcher), "--nnodes", "1", "--nproc-per-node", "3",
                               "--master-addr", "127.0.0.1", "--master-port", str(port),
                               str(script)],
                              env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=tmp_path)
    return run
