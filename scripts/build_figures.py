"""Regenerate the book's data figures: one SVG per figure and locale, byte for byte reproducible.

    .venv/bin/python scripts/build_figures.py            # write book/{en,zh}/figures/*.svg
    .venv/bin/python scripts/build_figures.py --check    # exit 1 naming every stale SVG
    .venv/bin/python scripts/build_figures.py --only ch02-policy-evaluation

Each module ``scripts/figures/chNN_*.py`` (``appX_*.py`` for an appendix) computes its data once with ``agentrl`` (and, where a
chapter builds its own example, the chapter's cells; see ``scripts/figures/_common.py``), then
draws it once per locale with that locale's words. The SVGs are committed; ``--check``
recomputes every figure and compares it with the committed SVG (``_common.same_drawing``: the
same bytes but for coordinates within 0.1 point, 0.035 mm, which is all another CPU's
rounding moves), so a figure goes stale when the book code it draws changes. Writing keeps a
committed SVG that is the same drawing, so its bytes do not churn between machines. An SVG under ``book/*/figures/`` that no module produces is reported too.
Needs matplotlib (the ``book`` extra) and, for the Chinese labels, Debian ``fonts-noto-cjk``.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "scripts" / "figures"
sys.path.insert(0, str(FIGURES))

import _common  # noqa: E402


def figure_modules() -> list:
    return [importlib.import_module(path.stem) for path in sorted(FIGURES.glob("[!_]*.py"))]


def target(locale: str, name: str) -> Path:
    return ROOT / "book" / locale / "figures" / f"{name}.svg"


def render(stem: str) -> tuple[dict[Path, bytes], float]:
    """Every SVG of one figure module, {path: bytes}, and the seconds it took.

    Runs in a fresh process per module (see ``main``): a chapter's cells change process-wide
    state (``torch.set_default_dtype``, thread counts, seeds) that must not leak into the next
    figure, or a figure's bytes would depend on which figures were built before it."""
    start = time.perf_counter()
    module = importlib.import_module(stem)
    _common.seed_everything(0)
    data = module.compute()
    out = {}
    for locale in _common.LOCALES:
        _common.use_locale(locale)
        out[target(locale, module.NAME)] = _common.svg_bytes(module.draw(data, module.TEXT[locale]))
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed SVGs; write nothing")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these figures")
    args = parser.parse_args(argv)

    modules = figure_modules()
    names = {m.NAME for m in modules}
    if args.only:
        unknown = sorted(set(args.only) - names)
        if unknown:
            parser.error(f"unknown figure(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        modules = [m for m in modules if m.NAME in args.only]

    stale: list[str] = []
    failed: list[str] = []
    # One module at a time, each in a new process (spawned: nothing inherited).
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               max_tasks_per_child=1)
    for module in modules:
        try:
            svgs, seconds = pool.submit(render, module.__name__).result()
        except Exception as exc:  # a figure's own error: name it and go on with the others
            failed.append(f"scripts/figures/{module.__name__}.py: {type(exc).__name__}: {exc}")
            continue
        for path, svg in svgs.items():
            rel = path.relative_to(ROOT)
            current = path.read_bytes() if path.exists() else None
            current_drawing = current is not None and _common.same_drawing(current, svg)
            if args.check:
                if not current_drawing:
                    why = "missing" if current is None else "differs from what its module draws"
                    stale.append(f"{rel}: {why} (scripts/figures/{module.__name__}.py)")
            elif not current_drawing:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(svg)
                print(f"wrote {rel}")
        print(f"{module.NAME}: {len(svgs)} SVGs, {seconds:.1f} s", file=sys.stderr)

    pool.shutdown()
    if not args.only:
        for locale in _common.LOCALES:
            for path in sorted((ROOT / "book" / locale / "figures").glob("*.svg")):
                if path.stem not in names:
                    stale.append(f"{path.relative_to(ROOT)}: no module in scripts/figures/ draws it")
    if failed:
        print("figures that could not be computed:", file=sys.stderr)
        for line in failed:
            print(f"  {line}", file=sys.stderr)
    if stale:
        print("stale figures (run .venv/bin/python scripts/build_figures.py):", file=sys.stderr)
        for line in stale:
            print(f"  {line}", file=sys.stderr)
    if stale or failed:
        return 1
    if args.check:
        print(f"figures up to date ({len(modules)} figures, {len(_common.LOCALES)} locales)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
