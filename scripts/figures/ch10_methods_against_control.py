"""Appendix C, Section C.3: every method of Chapters 6 to 10 against its sharpening control, on
the placements RL practised and on the unseen ones, from the two warm starts of Section 7.7:
the recipe's (RL on its 31 placements alone, 100 updates) and the one that copies the line
(weight 4; mixed batches, a fresh padding per group, 300 updates).

One row per arm of three seeds: the T=1 solve rate on fresh instances minus the control (the
arm's warm start at its best temperature), paired by task with the seeds averaged
(``arl.seeds_per_task``, ``arl.sharpening_control``, ``arl.paired``, as the chapters' cells
compute it), with two standard errors over tasks. Every arm of one warm start is checked to play
the same tasks and episodes. Nothing is trained here.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from _common import BLUE, GREY, ORANGE, WIDTH_IN, rounded
from _new_placements import SPLITS, load, warm_and_control

import agentrl as arl

NAME = "ch10-methods-against-control"
CHAPTER = "C-case-study.md"
# (warm start, method, fresh record), drawn top to bottom.
ARMS = (
    ("recipe", "reinforce", "gym_v2_rl_fresh_hg_reinforce_lr3e-4"),
    ("recipe", "rloo", "gym_v2_rl_fresh_hg_rloo_lr3e-4"),
    ("recipe", "grpo", "gym_v2_rl_fresh_hg_grpo_lr3e-4"),
    ("recipe", "positive", "gym_v2_rl_fresh_hg_positive_lr3e-4"),
    ("recipe", "ppo", "gym_v2_rl_fresh_hg_ppo_lr3e-4"),
    ("recipe", "kl", "gym_v2_rl_fresh_hg_rloo_kl0.1_lr3e-4"),
    ("copy4", "rloo", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300"),
    ("copy4", "grpo", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_grpo_lr3e-4_u300"),
    ("copy4", "positive", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_positive_lr3e-4_u300"),
    ("copy4", "ppo1", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_ppo1x1_lr3e-4_u300"),
    ("copy4", "kl", "gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_kl0.1_lr3e-4_u300"),
)
COLOURS = {"recipe": BLUE, "copy4": ORANGE}

TEXT = {
    "en": {
        "names": {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO",
                  "positive": "positive only", "ppo": "PPO, 4 steps/batch",
                  "ppo1": "PPO, 1 step/batch", "kl": "RLOO + KL 0.1"},
        "warm": {"recipe": "recipe warm start, RL on its placements, 100 updates",
                 "copy4": "copying warm start, mixed batches, 300 updates"},
        "controls": " (controls {:.2f} and {:.2f})",
        "panels": {"rl_groups": "RL's placements (80 fresh tasks)",
                   "heldout": "unseen placements (78 fresh tasks)"},
        "xlabel": "T=1 minus the control, paired (± 2 SE)",
    },
    "zh": {
        "names": {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO",
                  "positive": "只用正样本", "ppo": "PPO，每批 4 步",
                  "ppo1": "PPO，每批 1 步", "kl": "RLOO + KL 0.1"},
        "warm": {"recipe": "配方热启动，RL 只练它的位置，100 次更新",
                 "copy4": "会复制的热启动，混合批次，300 次更新"},
        "controls": "（对照 {:.2f} 和 {:.2f}）",
        "panels": {"rl_groups": "RL 训练过的位置（80 个新任务）",
                   "heldout": "未见过的位置（78 个新任务）"},
        "xlabel": "T=1 减对照，按任务配对（± 2 个标准误）",
    },
}


def compute() -> dict:
    """Per arm: its warm start, method, and [difference, standard error] per split; per warm
    start: its control's solve rate per split."""
    arms, controls = [], {}
    for warm, key, stem in ARMS:
        fresh = load(stem)
        if len(fresh.runs) != 3:
            raise ValueError(f"{stem}: {len(fresh.runs)} seeds; every arm drawn has three")
        first = controls.setdefault(warm, (stem, fresh.results["control"]))
        if not arl.same_evaluation(fresh.results["control"], first[1]):
            raise ValueError(f"{stem}: its warm start's evaluation differs from {first[0]}'s")
        row = {"warm": warm, "key": key}
        for split in SPLITS:
            _, control = arl.sharpening_control(fresh.results["control"], split)
            row[split] = rounded(arl.paired(arl.seeds_per_task(fresh, split, "t1"), control))
        arms.append(row)
    levels = {warm: [warm_and_control(sweep)[1][split][1] for split in SPLITS]
              for warm, (_, sweep) in controls.items()}
    return {"arms": arms, "controls": levels}


def draw(data: dict, text: dict):
    """Two panels side by side, one per split; the arms as rows, grouped by warm start."""
    arms = data["arms"]
    y, position = [], 0.0
    for i, arm in enumerate(arms):
        if i and arm["warm"] != arms[i - 1]["warm"]:
            position += 0.8                          # a gap between the two warm starts
        y.append(-position)
        position += 1
    fig, panels = plt.subplots(1, 2, figsize=(WIDTH_IN, 3.4), sharey=True)
    for panel, split in zip(panels, SPLITS):
        panel.axvline(0, color=GREY, linestyle="--", linewidth=1)
        for row, arm in zip(y, arms):
            d, se = arm[split]
            panel.errorbar([d], [row], xerr=[2 * se], color=COLOURS[arm["warm"]], marker="D",
                           markersize=4, capsize=2, linestyle="none")
        panel.set_title(text["panels"][split], fontsize="medium")
        panel.set_xlim(-0.3, 0.3)
        panel.set_xlabel(text["xlabel"])
    panels[0].set_yticks(y, [text["names"][arm["key"]] for arm in arms])
    panels[0].set_ylim(min(y) - 0.8, 0.8)
    handles = [panels[0].plot([], [], "D", color=COLOURS[w])[0] for w in COLOURS]
    labels = [text["warm"][w] + text["controls"].format(*data["controls"][w]) for w in COLOURS]
    fig.legend(handles, labels, loc="lower center", ncol=1,
               fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
