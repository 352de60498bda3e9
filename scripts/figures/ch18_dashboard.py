"""Chapter 18, Section 18.1: the dashboard of a real run, drawn from its record's log.

The data are the committed log of the PPO run of Chapter 8 on the gym (``book/labs/results/
gym_v2_rl_hg_ppo_lr3e-4.json``, seed 0, 100 updates of 16 tasks x 4 episodes): per update the mean
reward, the share of constant groups (1 - mixed groups / tasks per update), PPO's clip fraction
and approximate KL, the gradient norm before clipping and the policy tokens. Thin lines are the
values per update, thick lines their trailing mean over 10 updates. The averages the chapter
prints (constant groups, largest clip fraction and KL) are checked against its recorded output.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from _common import BLUE, GREEN, GREY, ORANGE, ROOT, VERMILION, WIDTH_IN, recorded_output, rounded
from _common import trailing_mean
from _common import check_numbers_against_chapter

import agentrl as arl

NAME = "ch18-dashboard"
CHAPTER = "18-debugging.md"
RESULTS = ROOT / "book" / "labs" / "results"
STEM = "gym_v2_rl_hg_ppo_lr3e-4"
WINDOW = 10
TABLE_MARK = "ppo = arl.load_record("
PANELS = (("reward", BLUE), ("constant", GREY), ("clip_fraction", ORANGE), ("approx_kl", VERMILION),
          ("grad_norm", GREEN), ("tokens", GREY))
TEXT = {
    "en": {
        "xlabel": "update (16 tasks x 4 episodes)",
        "titles": {"reward": "reward", "constant": "share of constant groups",
                   "clip_fraction": "clip fraction", "approx_kl": "approx. KL (old, new)",
                   "grad_norm": "gradient norm", "tokens": "policy tokens"},
        "mean": "mean over 10 updates",
    },
    "zh": {
        "xlabel": "更新步（16 个任务 x 4 个回合）",
        "titles": {"reward": "奖励", "constant": "恒定组的份额",
                   "clip_fraction": "裁剪比例", "approx_kl": "近似 KL（旧，新）",
                   "grad_norm": "梯度范数", "tokens": "策略 token 数"},
        "mean": "10 步滑动平均",
    },
}


def compute() -> dict:
    run = arl.load_record(STEM, RESULTS)
    per_update = run.recipe["tasks_per_update"]
    series = {key: [float(row[key]) for row in run.log]
              for key in ("reward", "clip_fraction", "approx_kl", "grad_norm", "tokens")}
    series["constant"] = [1 - row["groups"] / per_update for row in run.log]
    recorded = recorded_output(CHAPTER, TABLE_MARK)
    check_numbers_against_chapter(
        "constant groups, clip fraction, approx KL",
        [sum(series["constant"]) / len(series["constant"]), max(series["clip_fraction"]),
         max(series["approx_kl"])],
        recorded, r"(?:groups|at most) (\d+\.\d+)")
    return {"updates": [row["update"] for row in run.log],
            "series": {k: rounded(v, 5) for k, v in series.items()},
            "means": {k: rounded(trailing_mean(v, WINDOW), 5) for k, v in series.items()}}


def draw(data: dict, text: dict):
    fig, axes = plt.subplots(3, 2, figsize=(WIDTH_IN, 5.4), sharex=True,
                             gridspec_kw={"hspace": 0.42, "wspace": 0.28})
    x = data["updates"]
    for ax, (key, colour) in zip(axes.flat, PANELS):
        ax.plot(x, data["series"][key], color=colour, linewidth=0.7, alpha=0.45)
        ax.plot(x, data["means"][key], color=colour, linewidth=1.8, label=text["mean"])
        ax.set_title(text["titles"][key], fontsize=9)
        ax.tick_params(labelsize=7)
        if key in ("reward", "constant"):
            ax.set_ylim(0, 1)
    for ax in axes[-1]:
        ax.set_xlabel(text["xlabel"], fontsize=8)
    axes[0, 0].legend(loc="lower right", fontsize=7)
    return fig
