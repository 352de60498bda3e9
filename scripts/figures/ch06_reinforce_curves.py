"""Chapter 6, Section 6.7: the training reward of REINFORCE from the warm start, three seeds.

Data: the record ``reinforce_seeds``, written by ``book/labs/reinforce_seeds.py``
(the chapter reads the same record). Drawn per seed: the mean reward of each update's 8 sampled
episodes as faint dots (it can only take the values k/8) and, from the 20th update on, its
mean over the last 20 updates; the temperature-1 solve rate on the RL tasks measured before training (one value, all
seeds share the warm start) and after training (one per seed), with error bars of one standard
error, at the left and right ends. The figure draws what the lab recorded; it trains nothing.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from _common import BLUE, GREEN, GREY, ORANGE, ROOT, WIDTH_IN, rounded

import agentrl as arl

NAME = "ch06-reinforce-curves"
CHAPTER = "06-policy-gradient.md"
RESULTS = ROOT / "book" / "labs" / "results"
LAB = "reinforce_seeds"
WINDOW = 20
COLOURS = (BLUE, ORANGE, GREEN)
TEXT = {
    "en": {
        "xlabel": "update (8 episodes each)",
        "ylabel": "fraction of episodes solved",
        "seed": "seed {seed}: mean of the last {window} updates",
        "before": "evaluation before ({rate:.3f})",
        "after": "evaluation after, per seed",
    },
    "zh": {
        "xlabel": "更新步（每步 8 个回合）",
        "ylabel": "回合的解决比例",
        "seed": "种子 {seed}：最近 {window} 步的平均",
        "before": "训练前评估（{rate:.3f}）",
        "after": "训练后评估（每个种子）",
    },
}


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each full window of ``window`` consecutive values (len(values) - window + 1)."""
    return [sum(values[i - window:i]) / window for i in range(window, len(values) + 1)]


def compute() -> dict:
    lab = arl.load_record(LAB, RESULTS)
    runs = []
    for run in lab.results["runs"]:
        runs.append({
            "seed": run["seed"],
            "curve": rounded(run["curve"]),
            "smooth": rounded(moving_average(run["curve"], WINDOW)),
            "after": rounded([run["after"]["rl_t1"]["rate"], run["after"]["rl_t1"]["stderr"]]),
        })
    before = lab.results["before"]["rl_t1"]
    return {"runs": runs, "before": rounded([before["rate"], before["stderr"]]),
            "steps": lab.recipe["steps"]}


def draw(data: dict, text: dict):
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.0))
    steps = data["steps"]
    for run, colour in zip(data["runs"], COLOURS):
        x = list(range(1, len(run["curve"]) + 1))
        ax.plot(x, run["curve"], linestyle="none", marker=".", markersize=2.5, color=colour,
                alpha=0.35)
        ax.plot(x[WINDOW - 1:], run["smooth"], color=colour, linewidth=1.5,
                label=text["seed"].format(seed=run["seed"], window=WINDOW))
    rate, err = data["before"]
    ax.errorbar([-2], [rate], yerr=[err], color=GREY, marker="s", markersize=4, capsize=2,
                linestyle="none", label=text["before"].format(rate=rate))
    for i, (run, colour) in enumerate(zip(data["runs"], COLOURS)):
        after, after_err = run["after"]
        ax.errorbar([steps + 3 + 2 * i], [after], yerr=[after_err], color=colour, marker="D",
                    markersize=4, capsize=2, linestyle="none",
                    label=text["after"] if i == 0 else None)
    ax.set_xlim(-5, steps + 10)
    ax.set_ylim(-0.02, 0.82)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.legend(loc="upper left", ncol=2)
    return fig
