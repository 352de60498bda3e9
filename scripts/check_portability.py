"""Run every chapter and figure under other numeric paths; fail where an output depends on one.

    python scripts/check_portability.py                        # every chapter and figure, every path
    python scripts/check_portability.py --chapters 03 08 --paths avx2
    python scripts/check_portability.py --no-figures --jobs 1

A recorded output must come out the same on any reader's x86-64 CPU, thread count and
instruction set. The build checks the outputs on this machine's native path; this script
executes each chapter again under each of ``ext.toolchain.NUMERIC_PATHS`` (ATen's portable
kernels with MKL's reproducible mode on two threads; AVX2 kernels on one thread) and compares
every cell with its recorded block exactly as the gate does. A cell that differs is reported as
``file:line: [path] message`` with the diff *recorded -> executed* under that path. Each figure
module is recomputed under each path too (``scripts/build_figures.py --check``), so a figure
whose SVG moves with the path is named.

Identical text today is not enough: a value that sits next to a rounding boundary prints the
same digits under these paths and others on the next CPU. So every chapter also runs with the
margin probe (:mod:`ext.margins`), which records the value behind each rounded print; a print
whose value lies closer to a boundary than ``--margin-factor`` times its spread across the paths
is reported as ``file:line: ... [agentrl.margin]`` and fails the check too.

Runs ``--jobs`` kernels at a time (default 2: chapters that train pin one thread, so two run
side by side on a 2-core machine at nearly full speed), the longest first: the figure modules
(each path's are one job of several minutes), then the chapters by the time the last build of
the English book took to execute them (``_build/en/timings.json``, when there is one), so that
no long job starts last while the other worker has nothing left. Results are printed in book
order all the same. Exit 0 when every chapter and figure printed the same under every path, 1
otherwise.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ext.chapters import read_chapter
from ext.execute import run_chapter
from ext.library import add_selection_arguments, load_selection
from ext.outputs import check_chapter
from ext import margins
from ext.problems import Kind, report_line
from ext.toolchain import NUMERIC_PATHS, NumericPath

ROOT = Path(__file__).resolve().parent.parent


def run_under(path: Path, staged: Path, numeric: NumericPath,
              timeout: int) -> tuple[list[str], float, dict]:
    """Problems (``file:line: [path] ...``) of one chapter executed under one numeric path, its
    time, and the margin probe's notes."""
    chapter = read_chapter(path)
    result = run_chapter(chapter, staged, timeout=timeout, threads=numeric.threads,
                         numeric=numeric.variables, probe=margins.probe_cells())
    problems = [report_line(f"{path}:{p.line}", p.kind, f"[{numeric.name}] {p.message}")
                for p in check_chapter(chapter, result.runs)]
    return problems, result.seconds, margins.read_notes(result.probe_stdout)


def margin_problems(path: Path, notes: dict[str, dict], blocks, factor: float) -> list[str]:
    """Problems of the prints of one chapter that sit too near a rounding boundary."""
    return [report_line(where, Kind.MARGIN, message)
            for where, message in margins.chapter_margins(read_chapter(path), notes, blocks, factor)]


def figures_under(numeric: NumericPath) -> list[str]:
    """Problems of ``build_figures.py --check`` run with the path's variables."""
    env = {**os.environ, **numeric.variables, "OMP_NUM_THREADS": str(numeric.threads),
           "MKL_NUM_THREADS": str(numeric.threads)}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_figures.py"), "--check"],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode == 0:
        return []
    lines = [line.strip() for line in done.stderr.splitlines()
             if line.strip().startswith(("book/", "scripts/"))]
    return [f"[{numeric.name}] {line}" for line in lines] or [
        f"[{numeric.name}] build_figures.py --check failed:\n{done.stderr[-2000:]}"]


def recorded_seconds(root: Path) -> dict[str, float]:
    """Chapter file name -> seconds its last English build took to execute it (the kernel's CPU
    time where measured, else wall time); empty when no build has written its timings."""
    try:
        table = json.loads((root / "_build" / "en" / "timings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {f"{docname}.md": row.get("cpu_seconds") or row.get("seconds") or 0.0
            for docname, row in table.items() if isinstance(row, dict)}


def longest_first(jobs: list[tuple[Path, NumericPath]],
                  seconds: dict[str, float]) -> list[tuple[Path, NumericPath]]:
    """The jobs ordered by their chapter's recorded time, longest first (a stable sort: without
    a record, book order, and one chapter's paths in the order given)."""
    return sorted(jobs, key=lambda job: -seconds.get(job[0].name, 0.0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_selection_arguments(parser, ROOT, chapters_default=["all"])
    names = [p.name for p in NUMERIC_PATHS]
    parser.add_argument("--paths", nargs="+", choices=names, default=names,
                        help="numeric paths to run under (default: all)")
    parser.add_argument("--no-figures", action="store_true", help="skip the figure modules")
    parser.add_argument("--jobs", type=int, default=2, help="kernels at a time (default 2)")
    parser.add_argument("--timeout", type=int, default=240, help="seconds per cell")
    parser.add_argument("--margin-factor", type=float, default=margins.FACTOR,
                        help="report a print whose value is nearer a rounding boundary than this "
                             f"many times its spread across the paths (default {margins.FACTOR:g})")
    args = parser.parse_args(argv)

    selection = load_selection(args.root, args.locale, args.chapters)
    if isinstance(selection, int):
        return selection
    staging, paths = selection
    chosen = [p for p in NUMERIC_PATHS if p.name in args.paths]
    stage_root = args.root / "_build" / "staged"
    # Staged here, before the workers start, so no two of them write the same stage.
    staged = {p: staging.stage(p.name, stage_root) for p in paths if read_chapter(p).cells}
    jobs = [(p, numeric) for numeric in chosen for p in staged]

    failed = False
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=context) as pool:
        # Longest first: the figures, then the chapters by their recorded time.
        figures = ([pool.submit(figures_under, numeric) for numeric in chosen]
                   if not args.no_figures else [])
        submitted = {(p, numeric.name): pool.submit(run_under, p, staged[p], numeric, args.timeout)
                     for p, numeric in longest_first(jobs, recorded_seconds(args.root))}
        futures = [(p, numeric, submitted[p, numeric.name]) for p, numeric in jobs]
        notes: dict[Path, dict[str, dict]] = {}
        for path, numeric, future in futures:
            problems, seconds, chapter_notes = future.result()
            notes.setdefault(path, {})[numeric.name] = chapter_notes
            for problem in problems:
                print(problem)
            status = "same outputs" if not problems else f"{len(problems)} cell(s) differ"
            print(f"{path.name} [{numeric.name}]: {status} ({seconds:.1f} s)", flush=True)
            failed |= bool(problems)
        if len(chosen) > 1:
            for path, by_path in notes.items():
                problems = margin_problems(path, by_path, staging.earlier(path.name),
                                           args.margin_factor)
                for problem in problems:
                    print(problem)
                status = f"{len(problems)} print(s) near a rounding boundary" if problems else "ok"
                print(f"{path.name}: margins {status}", flush=True)
                failed |= bool(problems)
        for numeric, future in zip(chosen, figures):
            problems = future.result()
            for problem in problems:
                print(problem)
            print(f"figures [{numeric.name}]: "
                  f"{'same SVGs' if not problems else f'{len(problems)} differ'}", flush=True)
            failed |= bool(problems)
    if failed:
        print("outputs depend on the numeric path: print what is stable (a bound or a check, "
              "not the last digits; another precision where a value sits on a rounding boundary)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
