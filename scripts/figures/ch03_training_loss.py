"""Chapter 3, Section 3.7: the loss of TinyAgent's next-token training on the call corpus.

The run is the chapter's own: its corpus of (observation, call) demonstrations and the
``train_next_token(model, examples, steps=200, ...)`` call of Section 3.7, re-executed from the
chapter's cells. Drawn: the loss of every step, its mean over each 25-step window (the numbers
the chapter prints, checked against its recorded output), the loss of a uniform guess over the
vocabulary, ln V, and the floor set by the random edit arguments.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from _common import BLUE, GREY, SKY, VERMILION, WIDTH_IN, chapter_namespace, \
    check_numbers_against_chapter, recorded_output, rounded

NAME = "ch03-training-loss"
CHAPTER = "03-language-models-as-policies.md"
WINDOW = 25
TEXT = {
    "en": {
        "xlabel": "training step",
        "ylabel": "loss (nats per target token)",
        "step": "loss of each step (batch of 16)",
        "window": "mean over 25 steps",
        "uniform": "uniform guess, ln {V} = {value:.2f}",
        "floor": "floor from the random edit arguments, {value:.4f}",
    },
    "zh": {
        "xlabel": "训练步数",
        "ylabel": "损失（每个目标 token 的 nats）",
        "step": "每一步的损失（批大小 16）",
        "window": "每 25 步的平均值",
        "uniform": "均匀猜测，ln {V} = {value:.2f}",
        "floor": "随机编辑参数决定的下限，{value:.4f}",
    },
}


def compute() -> dict:
    # Every cell up to the training, not a slice: a slice rebuilds the same model and corpus,
    # yet its losses differ from the chapter's in the third decimal (the run's last bits depend
    # on what ran before it in the kernel), and the figure must show the chapter's run.
    ns = chapter_namespace(CHAPTER, ("losses", "floor"), every_cell=True)
    losses = ns["losses"]
    windows = [sum(losses[s:s + WINDOW]) / WINDOW for s in range(0, len(losses), WINDOW)]
    check_numbers_against_chapter("windowed training loss", windows,
                                  recorded_output(CHAPTER, "losses = train_next_token("),
                                  r"mean loss ([-\d.]+)")
    vocab = ns["tok"].vocab_size
    return {"losses": rounded(losses), "windows": rounded(windows), "floor": ns["floor"],
            "vocab": vocab}


def draw(data: dict, text: dict):
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.0))
    losses, steps = data["losses"], len(data["losses"])
    ax.semilogy(range(steps), losses, color=SKY, linewidth=0.8, label=text["step"])
    centres = [s + (WINDOW - 1) / 2 for s in range(0, steps, WINDOW)]
    ax.semilogy(centres, data["windows"], color=BLUE, linewidth=1.6, marker="o", markersize=3.5,
                label=text["window"])
    uniform = math.log(data["vocab"])
    ax.axhline(uniform, color=GREY, linestyle="--", linewidth=1.0)
    ax.text(steps, uniform * 1.06, text["uniform"].format(V=data["vocab"], value=uniform),
            color=GREY, ha="right", va="bottom", fontsize=8)
    ax.axhline(data["floor"], color=VERMILION, linestyle=":", linewidth=1.2)
    ax.text(steps - 2, data["floor"] * 0.9, text["floor"].format(value=data["floor"]),
            color=VERMILION, ha="right", va="top", fontsize=8,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0, "alpha": 0.85})
    ax.set_xlim(0, steps)
    ax.set_ylim(min(losses) * 0.8, uniform * 1.5)
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 4) if min(losses) * 0.8 <= t <= uniform * 1.5]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.86))
    return fig
