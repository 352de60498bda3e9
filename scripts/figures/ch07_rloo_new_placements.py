"""Chapter 7, Section 7.7: RLOO on placements the warm start never saw, three seeds.

Data: the committed results of ``book/labs/gym_v2_rl.py --train-on heldout-groups`` (one JSON per
seed, ``gym_v2_rl_hg_rloo_lr3e-4{,_s1,_s2}.json``) and of ``book/labs/gym_v2_rl_fresh.py`` on
those three policies (``gym_v2_rl_fresh_hg_rloo_lr3e-4.json``); the chapter reads the same files.

Left: the exact probability of the expert's episode (teacher-forced, T=1, averaged over tasks)
every 25 updates, per seed, on the warm start's evaluation tasks of RL's placements (unseen
variants of what RL trains on) and of the unseen placements. Right: solve rates at T=1 on fresh
instances (variants never generated before the evaluation), with one standard error over tasks:
the warm start, each trained seed, and the sharpening control (the warm start at its best
temperature) as a dashed line. The figure draws what the labs recorded; it trains nothing.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt

from _common import BLUE, GREEN, ORANGE, WIDTH_IN, rounded
from _new_placements import RESULTS, SPLITS, WORDS, fresh_panel, warm_and_control

NAME = "ch07-rloo-new-placements"
CHAPTER = "07-advantages.md"
FRESH = RESULTS / "gym_v2_rl_fresh_hg_rloo_lr3e-4.json"
COLOURS = (BLUE, ORANGE, GREEN)
# The words of the method figures (_new_placements.WORDS), with one line per seed, not per method.
TEXT = {locale: {**WORDS[locale], **own} for locale, own in {
    "en": {"ylabel": "probability of the expert's episode", "seed": "seed {seed}",
           "fresh": "solve rate at T=1, fresh instances"},
    "zh": {"ylabel": "专家回合的概率", "seed": "种子 {seed}", "fresh": "新实例上 T=1 的解决率"},
}.items()}


def compute() -> dict:
    fresh = json.loads(FRESH.read_text())
    seeds = []
    for tag in fresh["runs"]:
        run = json.loads((RESULTS / f"gym_v2_rl_{tag}.json").read_text())
        seeds.append({
            "seed": run["seed"],
            "rl_groups": [[u, round(p, 4)] for u, p in run["rl_groups_expert_path_curve"]],
            "heldout": [[u, round(p, 4)] for u, p in run["heldout_expert_path_curve"]],
            "fresh": {s: rounded([fresh["trained"][tag][s]["t1"]["rate"],
                                  fresh["trained"][tag][s]["t1"]["stderr"]]) for s in SPLITS},
        })
    warm, control = warm_and_control(fresh["control"])
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
