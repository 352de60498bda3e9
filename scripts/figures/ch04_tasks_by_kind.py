"""Chapter 4, Section 4.6: how many tasks of each bug kind fall in each split.

``arl.make_tasks(seed=0)``: for every kind in ``arl.BUG_KINDS``, a horizontal bar of its task
count, divided into the ``train``, ``heldout`` and ``novel`` splits, with the total at the end.
The counts are checked against the per-split lines that Section 4.6 prints.
"""

from __future__ import annotations

import collections

import agentrl as arl
import matplotlib.pyplot as plt

from _common import BLUE, ORANGE, VERMILION, WIDTH_IN, check_against_chapter, recorded_output

NAME = "ch04-tasks-by-kind"
CHAPTER = "04-environments-and-tools.md"
SPLITS = ("train", "heldout", "novel")
TEXT = {
    "en": {"xlabel": "tasks", "legend": "split", "total": "{n} tasks"},
    "zh": {"xlabel": "任务数", "legend": "划分", "total": "共 {n} 个任务"},
}


def compute() -> dict:
    tasks = arl.make_tasks(seed=0)
    counts = collections.Counter((t.split, t.kind) for t in tasks)
    table = {kind: [counts[split, kind] for split in SPLITS] for kind in arl.BUG_KINDS}
    recorded = recorded_output(CHAPTER, "by_kind = collections.Counter")
    drawn = "\n".join(f"  {s:8} " + " ".join(f"{k}={counts[s, k]}" for k in arl.BUG_KINDS)
                      for s in SPLITS)
    check_against_chapter("tasks per split and kind",
                          drawn, "\n".join(recorded.splitlines()[-len(SPLITS):]))
    return {"kinds": list(arl.BUG_KINDS), "table": table, "total": len(tasks)}


def draw(data: dict, text: dict):
    kinds = data["kinds"]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.9))
    rows = range(len(kinds))[::-1]  # first kind on top
    left = [0] * len(kinds)
    for j, (split, colour) in enumerate(zip(SPLITS, (BLUE, ORANGE, VERMILION))):
        widths = [data["table"][kind][j] for kind in kinds]
        ax.barh(list(rows), widths, left=left, height=0.62, color=colour, label=split,
                edgecolor="white", linewidth=0.6)
        for row, l, w in zip(rows, left, widths):
            if w >= 3:
                ax.text(l + w / 2, row, str(w), ha="center", va="center", color="white", fontsize=7)
        left = [l + w for l, w in zip(left, widths)]
    for row, total in zip(rows, left):
        ax.text(total + 1, row, str(total), ha="left", va="center", fontsize=8)
    ax.set_yticks(list(rows), kinds, fontfamily="DejaVu Sans Mono")
    ax.set_xlabel(text["xlabel"])
    ax.set_xlim(0, max(left) * 1.08)
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="y", length=0)
    ax.legend(title=text["legend"], loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3,
              prop={"family": "DejaVu Sans Mono", "size": 8}, borderaxespad=0.2,
              alignment="left")
    ax.text(1.0, 1.02, text["total"].format(n=data["total"]), transform=ax.transAxes, ha="right",
            va="bottom", fontsize=8, color="#555555")
    return fig
