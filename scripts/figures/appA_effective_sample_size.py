"""Appendix A, Section A.2: the effective sample size of importance weights, and its optimism.

Left: for the drift sweep of A.2 (target pi over 50 tokens, proposal mu_t = softmax(z + t u)),
the true efficiency 1/(1 + chi^2(pi || mu_t)) as a curve over t in [0, 2], and the mean ESS/n
that ``effective_sample_size`` reports from batches of 256 weights, at the six drifts the
appendix prints. Right: the same for a response of T independent tokens with a small per-token
drift, (1 + chi^2)^-T against the ESS/n of 1,000 responses. The points are the appendix's own
cells re-executed (their printed tables are checked against the recorded outputs); the curves
are computed from the same pi, z and u.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from _common import GREY, VERMILION, WIDTH_IN, check_against_chapter, recorded_output, \
    rounded, run_chapter_cells

NAME = "appA-effective-sample-size"
CHAPTER = "A-math.md"
SWEEP_MARK = "for t in [0.0, 0.25"
TOKENS_MARK = "for T in [1, 10, 100, 1000]"
TEXT = {
    "en": {
        "drift": "drift $t$ of the proposal $\\mu$ from $\\pi$\n(one token)",
        "tokens": "tokens per response $T$\n(drift $t = 0.15$ at every token)",
        "ylabel": "efficiency ESS$/n$",
        "true": "true: $1/(1+\\chi^2)$",
        "true_T": "true: $(1+\\chi^2)^{-T}$",
        "measured": "reported by the weights",
    },
    "zh": {
        "drift": "提议分布 $\\mu$ 相对 $\\pi$ 的漂移 $t$\n（单个 token）",
        "tokens": "每条回复的 token 数 $T$\n（每个 token 的漂移 $t = 0.15$）",
        "ylabel": "效率 ESS$/n$",
        "true": "真实值：$1/(1+\\chi^2)$",
        "true_T": "真实值：$(1+\\chi^2)^{-T}$",
        "measured": "权重报告的值",
    },
}


def _table(printed: str, marker: str, columns: tuple[int, int]) -> list[tuple[float, float]]:
    """(x, measured ESS/n) from the rows of a printed table: numbers at the given positions."""
    rows = []
    for line in printed.splitlines()[1:]:
        numbers = [float(tok) for tok in line.replace("|", " ").split()]
        rows.append((numbers[columns[0]], numbers[columns[1]]))
    return rows


def compute() -> dict:
    ns, printed = run_chapter_cells(CHAPTER, ("kl_token", "chi2_token"))
    outputs = {}
    for mark in (SWEEP_MARK, TOKENS_MARK):
        text = next(out for source, out in printed if mark in source)
        check_against_chapter(f"the table of the cell with {mark!r}", text,
                              recorded_output(CHAPTER, mark))
        outputs[mark] = text
    sweep = _table(outputs[SWEEP_MARK], SWEEP_MARK, (0, 6))
    tokens = _table(outputs[TOKENS_MARK].split("\n", 1)[1], TOKENS_MARK, (0, 2))
    pi, z, u = ns["pi"], ns["z"], ns["u"]
    grid = [i / 50 for i in range(101)]
    true = []
    for t in grid:
        mu = torch.softmax(z + t * u, -1)
        true.append(1 / (1 + ((pi ** 2 / mu).sum() - 1).item()))
    chi2_token = float(ns["chi2_token"])
    token_grid = [10 ** (i / 20) for i in range(61)]
    return {
        "grid": grid, "true": rounded(true),
        "sweep": [(t, e) for t, e in sweep],
        "token_grid": rounded(token_grid), "true_T": rounded([(1 + chi2_token) ** -T for T in token_grid]),
        "tokens": [(T, e) for T, e in tokens],
    }


def draw(data: dict, text: dict):
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 2.9), sharey=True,
                                      gridspec_kw={"wspace": 0.1})
    left.semilogy(data["grid"], data["true"], color=GREY, linewidth=1.4, label=text["true"])
    left.semilogy(*zip(*data["sweep"]), color=VERMILION, marker="o", markersize=4.5, linestyle="none",
                  label=text["measured"])
    left.set_xlabel(text["drift"])
    left.set_ylabel(text["ylabel"])
    left.set_xlim(-0.05, 2.05)
    right.loglog(data["token_grid"], data["true_T"], color=GREY, linewidth=1.4, label=text["true_T"])
    right.loglog(*zip(*data["tokens"]), color=VERMILION, marker="o", markersize=4.5,
                 linestyle="none", label=text["measured"])
    right.set_xlabel(text["tokens"])
    right.set_xlim(0.8, 1300)
    for ax in (left, right):
        ax.set_ylim(2e-3, 1.4)
        ax.legend(loc="lower left")
    ticks = [0.003, 0.01, 0.03, 0.1, 0.3, 1]
    left.set_yticks(ticks, [f"{t:g}" for t in ticks])
    left.minorticks_off()
    right.minorticks_off()
    return fig
