"""What the figures comparing methods on Section 7.7's new placements share (Chapters 8 to 10).

Each method is one recipe of ``book/labs/gym_v2_rl.py --train-on heldout-groups``, three seeds
(one run record per seed), evaluated on fresh instances by ``book/labs/gym_v2_rl_fresh.py`` (a
fresh record, whose ``runs`` name the seeds' run records). Records are read through
``agentrl.load_record``. Every fresh record evaluates the same untrained warm start on the same tasks with the same
episodes; :func:`compute` checks that they agree, as the chapters' cells do.

Per method, the seeds are averaged: the expert-path curves update by update, and the fresh
solve rates task by task (the mean over seeds of each task's rate, then the mean over tasks,
with the standard error over tasks of those per-task means: ``arl.seeds_per_task`` and
``arl.mean_se``, as the chapters compute them). The sharpening control is the warm start at its
best temperature (``arl.sharpening_control``).

:func:`draw` makes the two panels of Section 7.7's figure, one colour per method instead of per
seed: left, each method's mean expert-path probability (thin lines: its seeds), solid on RL's
placements, dotted on the unseen ones; right, the seeds-averaged solve rates at T=1 on fresh
instances next to the warm start at T=1 and the control (dashed). Nothing is trained here.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from _common import GREY, ROOT, WIDTH_IN, rounded

import agentrl as arl

RESULTS = ROOT / "book" / "labs" / "results"
SPLITS = ("rl_groups", "heldout")

# The words every figure of this kind shares; a figure module adds its methods' names.
WORDS = {
    "en": {
        "xlabel": "update (64 sampled episodes each)",
        "ylabel": "probability of the expert's episode\n(mean of 3 seeds)",
        "rl_groups": "RL's placements",
        "heldout": "unseen placements",
        "ticks": ("RL's\nplacements", "unseen\nplacements"),
        "fresh": "solve rate at T=1, fresh instances\n(3 seeds averaged per task)",
        "warm": "warm start",
        "control": "control (warm start at T={t})",
        "control_any": "control (warm start at its best T)",
    },
    "zh": {
        "xlabel": "更新步（每步采样 64 个回合）",
        "ylabel": "专家回合的概率\n（3 个种子的平均）",
        "rl_groups": "RL 训练过的位置",
        "heldout": "未见过的位置",
        "ticks": ("RL 训练过\n的位置", "未见过\n的位置"),
        "fresh": "新实例上 T=1 的解决率\n（每个任务先对 3 个种子取平均）",
        "warm": "热启动策略",
        "control": "对照（热启动策略，T={t}）",
        "control_any": "对照（热启动策略，最佳温度）",
    },
}


def text(names: dict[str, dict[str, str]]) -> dict:
    """A figure's TEXT: the shared words of each locale plus its methods' names there."""
    return {locale: {**words, "names": names[locale]} for locale, words in WORDS.items()}


def load(stem: str) -> arl.Record:
    """The lab record ``stem``, through the book's reader."""
    return arl.load_record(stem, RESULTS)


def warm_and_control(sweep: dict) -> tuple[dict, dict]:
    """From a fresh record's ``results['control']`` (the warm start, per split and key): per split, the warm
    start's T=1 [rate, stderr] and the control's [temperature, rate]."""
    warm, control = {}, {}
    for split in SPLITS:
        best, _ = arl.sharpening_control(sweep, split)
        warm[split] = rounded([sweep[split]["t1"]["rate"], sweep[split]["t1"]["stderr"]])
        control[split] = [best[1:], round(sweep[split][best]["rate"], 4)]
    return warm, control


def method(stem: str, x=None) -> tuple[dict, dict]:
    """One method: its seeds' curves, their mean, its seeds-averaged fresh rates at T=1; and
    the warm start's evaluation in its fresh file.

    ``x(run, updates)`` puts a run's curve on another axis than its updates (Chapter 9.8: the
    episodes played). The seeds are then paired by position, the k-th evaluation of each, and
    the mean point is the mean of their x and of their probabilities; without it every seed
    must be evaluated at the same updates. ``stem`` is the fresh record's."""
    fresh = load(stem)
    runs = fresh.linked("runs")
    out = {"seeds": [run.seed for run in runs], "curves": {}, "mean": {}, "fresh": {}}
    for split in SPLITS:
        curves = []
        for run in runs:
            updates, probs = zip(*run.curve(split))
            xs = updates if x is None else x(run, list(updates))
            curves.append([[u, round(p, 4)] for u, p in zip(xs, probs)])
        if x is None and any([u for u, _ in c] != [u for u, _ in curves[0]] for c in curves):
            raise ValueError(f"{stem}: the seeds' {split} curves are not on the same updates")
        if len({len(c) for c in curves}) != 1:
            raise ValueError(f"{stem}: the seeds' {split} curves have different lengths")
        out["curves"][split] = curves
        out["mean"][split] = [[points[0][0] if x is None else
                               round(sum(u for u, _ in points) / len(points), 4),
                               round(sum(p for _, p in points) / len(points), 4)]
                              for points in zip(*curves)]
        out["fresh"][split] = rounded(arl.mean_se(arl.seeds_per_task(fresh, split, "t1")))
    return out, fresh.results["control"]


def compute(methods: tuple, x=None) -> dict:
    """``methods``: (key, fresh stem, colour) per method, the reference (RLOO) first; ``x``: as
    in :func:`method`."""
    data, warm_start = {"methods": []}, None
    for key, stem, colour in methods:
        one, control = method(stem, x)
        if warm_start is None:
            warm_start = control
        elif not arl.same_evaluation(control, warm_start):
            raise ValueError(f"{stem}: the warm start's evaluation differs from {methods[0][1]}'s")
        data["methods"].append({"key": key, "colour": colour, **one})
    data["warm"], data["control"] = warm_and_control(warm_start)
    return data


def draw(data: dict, text: dict, top: float = 0.4):
    """The two panels; ``top``: the left panel's upper limit (room for the methods' legend)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 3.0),
                                      gridspec_kw={"width_ratios": (1.5, 1)})
    for m in data["methods"]:
        for split, style in zip(SPLITS, ("-", ":")):
            for curve in m["curves"][split]:
                x, y = zip(*curve)
                left.plot(x, y, linestyle=style, linewidth=0.6, alpha=0.35, color=m["colour"])
            x, y = zip(*m["mean"][split])
            left.plot(x, y, linestyle=style, linewidth=1.8, marker="o", markersize=3.5,
                      color=m["colour"], label=text["names"][m["key"]] if split == SPLITS[0] else None)
    left.set_xlabel(text["xlabel"])
    left.set_ylabel(text["ylabel"], linespacing=1.5)
    left.set_ylim(0, top)
    # Methods top left, above the first updates; the line styles right of centre, in the gap
    # between the solid and the dotted curves.
    left.add_artist(left.legend(loc="upper left", fontsize="small"))
    styles = [left.plot([], [], "k-")[0], left.plot([], [], "k:")[0]]
    left.legend(styles, [text["rl_groups"], text["heldout"]], loc="center right",
                fontsize="small")
    fresh_panel(right, data["warm"], data["control"],
                [(m["fresh"], m["colour"]) for m in data["methods"]], text)
    fig.tight_layout()
    return fig


def fresh_panel(right, warm: dict, control: dict, points: list, text: dict) -> None:
    """The right panel: per half, the warm start at T=1 (grey square), each of ``points``
    ((rate, stderr) per split, colour) as a diamond, and the control as a dashed line."""
    n = len(points)
    for i, split in enumerate(SPLITS):
        rate, err = warm[split]
        right.errorbar([i - 0.3], [rate], yerr=[err], color=GREY, marker="s", markersize=4,
                       capsize=2, linestyle="none", label=text["warm"] if i == 0 else None)
        for j, (fresh, colour) in enumerate(points):
            rate, err = fresh[split]
            right.errorbar([i - 0.05 + 0.3 * j / max(n - 1, 1)], [rate], yerr=[err],
                           color=colour, marker="D", markersize=4, capsize=2,
                           linestyle="none")
        t, level = control[split]
        same_t = len({control[s][0] for s in SPLITS}) == 1
        label = text["control"].format(t=t) if same_t else text["control_any"]
        right.hlines(level, i - 0.45, i + 0.45, colors=GREY, linestyles="--",
                     label=label if i == 0 else None)
    right.set_xticks(range(len(SPLITS)), text["ticks"])
    right.set_xlim(-0.6, len(SPLITS) - 0.4)
    right.set_ylim(0, 0.7)
    right.set_title(text["fresh"], fontsize="medium")
    right.legend(loc="upper right", fontsize="x-small")
