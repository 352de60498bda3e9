"""Chapter 9, Section 9.7: the training reward of the four method labs, per update and seed.

The data are the committed results of the labs of Chapters 6 to 9 (``book/labs/results/
{reinforce,rloo,ppo,grpo}_seeds.json``): the same warm start, seeds 0, 1, 2 and 100 updates of 8
sampled episodes per seed for each method. Each run stores its per-update mean reward
(``curve``); drawn is its trailing mean over 10 updates (thin, one line per seed) and the mean of
the three seeds (thick), with the warm start's solve rate on the RL tasks as a dashed line. The
first- and last-quarter means are checked against the table the chapter prints.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from _common import BLUE, GREEN, GREY, ORANGE, ROOT, VERMILION, WIDTH_IN, recorded_output, rounded

import agentrl as arl

NAME = "ch09-method-curves"
CHAPTER = "09-grpo-family.md"
RESULTS = ROOT / "book" / "labs" / "results"
METHODS = (("REINFORCE", "reinforce_seeds", GREY), ("RLOO", "rloo_seeds", GREEN),
           ("PPO", "ppo_seeds", ORANGE), ("GRPO", "grpo_seeds", BLUE))
WINDOW = 10
TABLE_MARK = "METHODS = (('REINFORCE'"
TEXT = {
    "en": {
        "xlabel": "update (8 sampled episodes each)",
        "ylabel": "training reward\n(mean over 10 updates)",
        "seed": "one seed",
        "mean": "mean of 3 seeds",
        "warm": "warm start, RL tasks (T=1)",
        "names": {"REINFORCE": "REINFORCE", "RLOO": "RLOO", "PPO": "PPO", "GRPO": "GRPO"},
    },
    "zh": {
        "xlabel": "更新步（每步采样 8 个回合）",
        "ylabel": "训练奖励\n（10 步滑动平均）",
        "seed": "单个种子",
        "mean": "3 个种子的平均",
        "warm": "热启动策略在 RL 任务上（T=1）",
        "names": {"REINFORCE": "REINFORCE", "RLOO": "RLOO", "PPO": "PPO", "GRPO": "GRPO"},
    },
}


def trailing_mean(xs: list[float], window: int) -> list[float]:
    return [sum(xs[max(0, i - window + 1):i + 1]) / (i + 1 - max(0, i - window + 1))
            for i in range(len(xs))]


def compute() -> dict:
    recorded = recorded_output(CHAPTER, TABLE_MARK)
    data = {"methods": []}
    for name, stem, colour in METHODS:
        lab = arl.load_record(stem, RESULTS)
        runs = lab.results["runs"]
        first = sum(r["mean_reward_first"] for r in runs) / len(runs)
        last = sum(r["mean_reward_last"] for r in runs) / len(runs)
        row = next((line for line in recorded.splitlines() if line.startswith(name + " ")), None)
        if row is None or not row.rstrip().endswith(f"{first:.3f} -> {last:.3f}"):
            raise AssertionError(f"{name}: the chapter's table (cell with {TABLE_MARK!r}) does not "
                                 f"show the lab's training reward {first:.3f} -> {last:.3f}; "
                                 "refresh the chapter")
        curves = [rounded(trailing_mean(r["curve"], WINDOW)) for r in runs]
        mean = rounded([sum(c[i] for c in curves) / len(curves) for i in range(len(curves[0]))])
        data["methods"].append({"name": name, "colour": colour, "curves": curves, "mean": mean,
})
        data["warm"] = lab.results["before"]["rl_t1"]["rate"]
    return data


def draw(data: dict, text: dict):
    fig, axes = plt.subplots(2, 2, figsize=(WIDTH_IN, 4.4), sharex=True, sharey=True,
                             gridspec_kw={"hspace": 0.32, "wspace": 0.08})
    top = max(max(max(c) for c in m["curves"]) for m in data["methods"])
    steps = list(range(1, len(data["methods"][0]["mean"]) + 1))
    for ax, method in zip(axes.flat, data["methods"]):
        ax.set_title(text["names"][method["name"]])
        ax.set_ylim(0, min(1.0, top + 0.1))
        ax.set_xlim(0, len(steps) + 1)
        for i, curve in enumerate(method["curves"]):
            ax.plot(steps, curve, color=method["colour"], linewidth=0.8, alpha=0.45,
                    label=text["seed"] if i == 0 else None)
        ax.plot(steps, method["mean"], color=method["colour"], linewidth=2.0, label=text["mean"])
        ax.axhline(data["warm"], color=VERMILION, linewidth=1.0, linestyle="--", label=text["warm"])
    for ax in axes[1]:
        ax.set_xlabel(text["xlabel"])
    for ax in axes[:, 0]:
        ax.set_ylabel(text["ylabel"], linespacing=1.5)   # CJK lines overlap at the default
    axes[0, 0].legend(loc="upper left", fontsize=7)
    return fig
