"""Chapter 18, Section 18.5: the dashboard of the sanity check on the gym, from its three records.

The data are the committed logs of gym_v2_rl.py --train-on perfectible --dashboard, seeds 0-2
(RLOO from the weight-4 warm start on the train tasks it solved 20-80% of the time, every task in
every update): per update the share of the batch's episodes that solved (training accuracy), the
share of constant groups, the entropy of the policy's next-token distributions and its exact KL
to the warm start (both per policy token, before the update), the share of the rewards' variance
RLOO's leave-one-out baseline explains, and the gradient norm (updates without a mixed group
take no step and log none). One line per seed, the trailing mean over 10 updates. The averages
the chapter prints over the last ten updates are checked against its recorded output.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from _common import BLUE, ORANGE, ROOT, VERMILION, WIDTH_IN, recorded_output, rounded
from _common import check_numbers_against_chapter, trailing_mean

import agentrl as arl

NAME = "ch18-sanity-dashboard"
CHAPTER = "18-debugging.md"
RESULTS = ROOT / "book" / "labs" / "results"
STEM = "gym_v2_rl_hint_recovery_6000_pad6_copy4_perfectible_dash_lr3e-4_u40"
STEMS = [STEM + s for s in ("", "_s1", "_s2")]
WINDOW = 10
TABLE_MARK = "sanity = [arl.load_record("
KEYS = ("solved", "constant", "entropy", "kl_start", "baseline_ev", "grad_norm")
COLOURS = (BLUE, ORANGE, VERMILION)
TEXT = {
    "en": {
        "xlabel": "update (every task, 4 episodes each)",
        "titles": {"solved": "training accuracy", "constant": "share of constant groups",
                   "entropy": "entropy (nats per token)", "kl_start": "KL to the warm start",
                   "baseline_ev": "variance the baseline explains", "grad_norm": "gradient norm"},
        "seed": "seed {}",
    },
    "zh": {
        "xlabel": "更新步（每个任务各 4 个回合）",
        "titles": {"solved": "训练准确率", "constant": "恒定组的份额",
                   "entropy": "熵（每 token，奈特）", "kl_start": "到热启动的 KL",
                   "baseline_ev": "基线解释的方差份额", "grad_norm": "梯度范数"},
        "seed": "种子 {}",
    },
}


def series(run) -> dict:
    tasks = run.results["rl_tasks"]
    value = {key: [] for key in KEYS + ("kl_start_k3",)}
    for row in run.log:
        value["solved"].append(row["solved"])
        value["constant"].append(1 - row["groups"] / tasks)
        for key in ("entropy", "kl_start", "kl_start_k3", "baseline_ev", "grad_norm"):
            x = row.get(key)
            value[key].append(math.nan if x is None else float(x))
    return value


def last_mean(xs: list[float]) -> float:
    part = [x for x in xs[-WINDOW:] if not math.isnan(x)]
    return sum(part) / len(part)


def compute() -> dict:
    runs = [arl.load_record(stem, RESULTS) for stem in STEMS]
    per_seed = [series(run) for run in runs]
    recorded = recorded_output(CHAPTER, TABLE_MARK)
    check_numbers_against_chapter(
        "last ten updates: accuracy, constant groups, entropy, KL (exact, k3), baseline",
        [sum(last_mean(s[key]) for s in per_seed) / len(per_seed)
         for key in ("solved", "constant", "entropy", "kl_start", "kl_start_k3", "baseline_ev")],
        recorded, r"(?m)^  \S[^\n]*?\s([-\d.]+)$")
    return {"updates": [row["update"] for row in runs[0].log],
            "seeds": [run.seed for run in runs],
            "means": [{k: rounded(trailing_mean(v, WINDOW), 5) for k, v in s.items()}
                      for s in per_seed]}


def draw(data: dict, text: dict):
    fig, axes = plt.subplots(3, 2, figsize=(WIDTH_IN, 5.4), sharex=True,
                             gridspec_kw={"hspace": 0.42, "wspace": 0.28})
    x = data["updates"]
    for ax, key in zip(axes.flat, KEYS):
        for seed, means, colour in zip(data["seeds"], data["means"], COLOURS):
            ax.plot(x, means[key], color=colour, linewidth=1.4, label=text["seed"].format(seed))
        ax.set_title(text["titles"][key], fontsize=9)
        ax.tick_params(labelsize=7)
        if key in ("solved", "constant"):
            ax.set_ylim(0, 1)
    for ax in axes[-1]:
        ax.set_xlabel(text["xlabel"], fontsize=8)
    axes[0, 0].legend(loc="lower right", fontsize=7)
    return fig
