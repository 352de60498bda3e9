"""Chapter 17, Section 17.4: the power curve of a paired comparison on the gym.

The variance of a per-task gap (a trained policy's T=1 solve rate minus its sharpening control's,
three seeds averaged) is split into a part shared by the tasks of one function, a part of the
task and the episode noise (``arl.variance_components``, clustered by function), fitted on the
RLOO arm's fresh record on RL's placements, as the chapter's cell does. The figure draws the
minimum detectable effect (5% two-sided, power 0.8; ``arl.min_detectable_effect`` of
``arl.design_stderr``) against the number of functions for 1, 4, 16 and 64 tasks per function at
the record's episodes per task, and, dashed, the floor of the function term alone.
"""

from __future__ import annotations

import math
import statistics

import matplotlib.pyplot as plt

from _common import BLUE, GREEN, GREY, ORANGE, VERMILION, WIDTH_IN, rounded

import agentrl as arl

NAME = "ch17-power-curve"
CHAPTER = "17-evaluation.md"
STEM = "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300"
SPLIT = "rl_groups"
FUNCTIONS = (6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
TASKS = (1, 4, 16, 64)
COLOURS = (VERMILION, ORANGE, GREEN, BLUE)

TEXT = {
    "en": {
        "xlabel": "functions (clusters) in the evaluation",
        "ylabel": "minimum detectable effect",
        "tasks": "{} task(s) per function",
        "floor": "floor: the function term alone",
    },
    "zh": {
        "xlabel": "评估中的函数（簇）数",
        "ylabel": "最小可检测效应",
        "tasks": "每个函数 {} 个任务",
        "floor": "下限：仅函数这一项",
    },
}


def compute() -> dict:
    """The components fitted on the record, and the MDE curves over FUNCTIONS."""
    fresh = arl.load_record(STEM)
    k = fresh.recipe["samples_per_task"]
    functions = [t[0] for t in fresh.task_ids(SPLIT)]
    _, control = arl.sharpening_control(fresh.results["control"], SPLIT)
    seeds = [trained["t1"]["per_task"] for trained in fresh.trained(SPLIT)]
    mean_of_seeds = [statistics.fmean(col) for col in zip(*seeds)]
    noise = (arl.bernoulli_sample_var(control, k)
             + sum(arl.bernoulli_sample_var(s, k) for s in seeds) / len(seeds) ** 2)
    parts = arl.variance_components([b - a for a, b in zip(control, mean_of_seeds)], functions,
                                    k, noise)
    curves = {n: rounded([arl.min_detectable_effect(arl.design_stderr(parts, C, n, k))
                          for C in FUNCTIONS]) for n in TASKS}
    floor = rounded([arl.min_detectable_effect(math.sqrt(parts.cluster / C)) for C in FUNCTIONS])
    return {"curves": curves, "floor": floor, "episodes": k}


def draw(data: dict, text: dict):
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.4))
    for (n, curve), colour in zip(data["curves"].items(), COLOURS):
        ax.plot(FUNCTIONS, curve, marker="o", markersize=3, color=colour,
                label=text["tasks"].format(n))
    ax.plot(FUNCTIONS, data["floor"], color=GREY, linestyle="--", label=text["floor"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(FUNCTIONS[::2], [str(c) for c in FUNCTIONS[::2]])
    ax.set_yticks([0.03, 0.05, 0.1, 0.2, 0.3], ["0.03", "0.05", "0.1", "0.2", "0.3"])
    ax.minorticks_off()
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.legend(fontsize="small", frameon=False)
    fig.tight_layout()
    return fig
