"""Chapter 9, Section 9.8: RLOO and RLOO with dynamic sampling (``--refill 8``) from the weight-4
warm start, at 19,200 and at 57,600 episodes per seed, three seeds each:
``gym_v2_rl_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_{u300,refill8_e19200,u900,refill8_e57600}
{,_s1,_s2}.json`` and their fresh-instance evaluations ``gym_v2_rl_fresh_..._{ARM}.json``, the
files the chapter's cell reads.

The arms take different numbers of optimiser steps for the same episodes (dynamic sampling plays
several rounds of groups per step), so the curves are drawn against the episodes played, read
from each run's log, not against updates. A refill run stops after its episode budget at an
update that differs by seed, so a curve's points are paired across seeds by position (the k-th
evaluation of each seed; the last is each run's end): ``_new_placements.method`` with an x-axis.
The right panel, and the averaging of seeds task by task on fresh instances, are that module's
too.
"""

from __future__ import annotations

from functools import partial

import matplotlib.pyplot as plt

import agentrl as arl
import _new_placements as shared
from _common import BLUE, ORANGE, SKY, VERMILION, WIDTH_IN

NAME = "ch09-dynamic-sampling"
CHAPTER = "09-grpo-family.md"
# (key, fresh record, colour): blues for RLOO, oranges for dynamic sampling; darker at 57,600
# episodes.
METHODS = (
    ("rloo", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300", SKY),
    ("dynamic", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_refill8_e19200", ORANGE),
    ("rloo900", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u900", BLUE),
    ("dynamic3x", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_refill8_e57600",
     VERMILION),
)
TEXT = shared.text({"en": {"rloo": "RLOO, 300 updates", "dynamic": "dynamic sampling",
                           "rloo900": "RLOO, 900 updates", "dynamic3x": "dynamic, 3x episodes"},
                    "zh": {"rloo": "RLOO，300 次更新", "dynamic": "动态采样",
                           "rloo900": "RLOO，900 次更新", "dynamic3x": "动态采样，3 倍回合"}})
TEXT["en"]["xlabel"] = "episodes played (thousands)"
TEXT["zh"]["xlabel"] = "已采样的回合数（千）"


def episodes_at(run: arl.RunRecord, updates: list[int]) -> list[int]:
    """Episodes played by the end of each of ``updates``, from the run's log (one entry per
    update; records from before dynamic sampling played ``tasks_per_update * group`` each)."""
    log = run.log
    if [entry["update"] for entry in log] != list(range(1, len(log) + 1)):
        raise ValueError(f"{run.stem}: the log does not hold one entry per update")
    played, total = [0], 0
    for entry in log:
        total += entry.get("episodes", run.recipe["tasks_per_update"] * run.recipe["group"])
        played.append(total)
    return [played[u] for u in updates]


compute = partial(shared.compute, METHODS, x=lambda run, updates: [
    e / 1000 for e in episodes_at(run, updates)])     # thousands of episodes


def draw(data: dict, text: dict):
    """Left and middle: each arm's expert path against episodes on one half (thin lines: its
    seeds); right: the fresh solve rates beside the warm start and the control."""
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH_IN, 3.0),
                             gridspec_kw={"width_ratios": (1, 1, 1.3)})
    for ax, split in zip(axes, shared.SPLITS):
        for m in data["methods"]:
            for curve in m["curves"][split]:
                ax.plot(*zip(*curve), linewidth=0.6, alpha=0.35, color=m["colour"])
            ax.plot(*zip(*m["mean"][split]), linewidth=1.4, marker="o", markersize=2,
                    color=m["colour"], label=text["names"][m["key"]])
        ax.set_title(text[split], fontsize="medium")
        ax.set_xlabel(text["xlabel"], fontsize="small")
    axes[0].set_ylabel(text["ylabel"], linespacing=1.5)
    axes[0].legend(loc="lower right", fontsize="x-small")
    shared.fresh_panel(axes[2], data["warm"], data["control"],
                       [(m["fresh"], m["colour"]) for m in data["methods"]], text)
    axes[2].set_ylim(0, 0.85)       # room for the legend above four arms' error bars
    axes[2].tick_params(axis="x", labelsize="small")
    fig.tight_layout()
    return fig
