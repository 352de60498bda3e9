"""Chapter 7, Section 7.7: RLOO on placements the warm start never saw, three seeds.

Data: the records of ``book/labs/gym_v2_rl.py --train-on heldout-groups`` (one run record per
seed) and of ``book/labs/gym_v2_rl_fresh.py`` on those three policies (the fresh record
``gym_v2_rl_fresh_hg_rloo_lr3e-4``, whose ``runs`` name them); the chapter reads the same ones.

Left: the exact probability of the expert's episode (teacher-forced, T=1, averaged over tasks)
every 25 updates, per seed, on the warm start's evaluation tasks of RL's placements (unseen
variants of what RL trains on) and of the unseen placements. Right: solve rates at T=1 on fresh
instances (variants never generated before the evaluation), with one standard error over tasks:
the warm start, each trained seed, and the sharpening control (the warm start at its best
temperature) as a dashed line. The figure draws what the labs recorded; it trains nothing.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from _common import BLUE, GREEN, ORANGE, WIDTH_IN, rounded
from _new_placements import SPLITS, WORDS, fresh_panel, load, warm_and_control

NAME = "ch07-rloo-new-placements"
CHAPTER = "07-advantages.md"
FRESH = "gym_v2_rl_fresh_hg_rloo_lr3e-4"
COLOURS = (BLUE, ORANGE, GREEN)
# The words of the method figures (_new_placements.WORDS), with one line per seed, not per method.
TEXT = {locale: {**WORDS[locale], **own} for locale, own in {
    "en": {"ylabel": "probability of the expert's episode", "seed": "seed {seed}",
           "fresh": "solve rate at T=1, fresh instances"},
    "zh": {"ylabel": "专家回合的概率", "seed": "种子 {seed}", "fresh": "新实例上 T=1 的解决率"},
}.items()}


def compute() -> dict:
    fresh = load(FRESH)
    seeds = []
    for i, run in enumerate(fresh.linked("runs")):
        seeds.append({
            "seed": run.seed,
            "rl_groups": [[u, round(p, 4)] for u, p in run.curve("rl_groups")],
            "heldout": [[u, round(p, 4)] for u, p in run.curve("heldout")],
            "fresh": {s: rounded([fresh.trained(s)[i]["t1"]["rate"],
                                  fresh.trained(s)[i]["t1"]["stderr"]]) for s in SPLITS},
        })
    warm, control = warm_and_control(fresh.results["control"])
    return {"seeds": seeds, "warm": warm, "control": control}


def draw(data: dict, text: dict):
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 3.0),
                                      gridspec_kw={"width_ratios": (1.5, 1)})
    for run, colour in zip(data["seeds"], COLOURS):
        for split, style in zip(SPLITS, ("-", ":")):
            x, y = zip(*run[split])
            left.plot(x, y, linestyle=style, marker="o", markersize=3, color=colour,
                      label=text["seed"].format(seed=run["seed"]) if split == SPLITS[0] else None)
    left.plot([], [], "k-", label=text["rl_groups"])
    left.plot([], [], "k:", label=text["heldout"])
    left.set_xlabel(text["xlabel"])
    left.set_ylabel(text["ylabel"])
    left.set_ylim(0, 0.4)
    left.legend(loc="upper left", ncol=2, fontsize="small")
    fresh_panel(right, data["warm"], data["control"],
                [(run["fresh"], colour) for run, colour in zip(data["seeds"], COLOURS)], text)
    fig.tight_layout()
    return fig
