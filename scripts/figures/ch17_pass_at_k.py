"""Chapter 17, Section 17.5: pass@k against k for a warm start, a sharpened and a learned policy.

The toy of the section, drawn in full: 200 tasks whose warm-start solve probabilities are
sigmoid(-2.5 + 2.5 z); "sharpened" doubles every logit (and adds 1), "learned" adds 1.5 to every
logit. Each task is sampled n = 256 times per policy (the section's seed and draws, in its
order), and the unbiased pass@k (``arl.pass_at_k``) averaged over tasks is drawn for k = 1 to 256.
"""

from __future__ import annotations

import statistics

import matplotlib.pyplot as plt
import torch

from _common import BLUE, GREY, ORANGE, WIDTH_IN, rounded

import agentrl as arl

NAME = "ch17-pass-at-k"
CHAPTER = "17-evaluation.md"
N = 256
KS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
COLOURS = {"warm": GREY, "sharpened": ORANGE, "learned": BLUE}

TEXT = {
    "en": {
        "xlabel": "$k$ (samples per task, of $n = 256$)",
        "ylabel": "pass@$k$, mean over 200 tasks",
        "names": {"warm": "warm start", "sharpened": "sharpened (logits doubled)",
                  "learned": "learned (logits + 1.5)"},
    },
    "zh": {
        "xlabel": "$k$（每个任务的样本数，共 $n = 256$）",
        "ylabel": "pass@$k$，200 个任务的平均",
        "names": {"warm": "热启动", "sharpened": "锐化（logit 加倍）",
                  "learned": "学习（logit 加 1.5）"},
    },
}


def compute() -> dict:
    gen = torch.Generator().manual_seed(171)
    logit = -2.5 + 2.5 * torch.randn(200, generator=gen, dtype=torch.float64)
    policies = {"warm": torch.sigmoid(logit), "sharpened": torch.sigmoid(2 * logit + 1.0),
                "learned": torch.sigmoid(logit + 1.5)}
    curves = {}
    for name, p in policies.items():
        c = torch.binomial(torch.full_like(p, N), p, generator=gen).long().tolist()
        curves[name] = rounded([statistics.fmean(arl.pass_at_k(N, ci, k) for ci in c)
                                for k in KS])
    return {"curves": curves}


def draw(data: dict, text: dict):
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.2))
    for name, curve in data["curves"].items():
        ax.plot(KS, curve, marker="o", markersize=3, color=COLOURS[name],
                label=text["names"][name])
    ax.set_xscale("log", base=2)
    ax.set_xticks(KS, [str(k) for k in KS])
    ax.minorticks_off()
    ax.set_ylim(0, 1)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.legend(fontsize="small", frameon=False, loc="lower right")
    fig.tight_layout()
    return fig
