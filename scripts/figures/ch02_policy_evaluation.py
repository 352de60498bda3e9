"""Chapter 2, Section 2.4: how fast iterative policy evaluation converges on the repair MDP.

For the two policies of Section 2.3 (``uniform`` and ``careful``) on ``repair_mdp()`` (gamma 0.9),
the largest error of the k-th sweep, max_s |V_k(s) - V^pi(s)|, against k, on a log scale, with
the contraction bound gamma^k max_s |V^pi(s)| and the sweep at which ``arl.policy_evaluation``
stops (its largest change falls below tol = 1e-10). The MDP and the two policies come from the
chapter's own cells; evaluation uses ``agentrl``.
"""

from __future__ import annotations

import math

import agentrl as arl
import matplotlib.pyplot as plt
import torch

from _common import BLUE, GREY, ORANGE, WIDTH_IN, chapter_namespace, check_against_chapter, \
    recorded_output, rounded

NAME = "ch02-policy-evaluation"
CHAPTER = "02-rl-fundamentals.md"
TOL = 1e-10
TEXT = {
    "en": {
        "xlabel": "sweep $k$",
        "ylabel": r"largest error $\max_s |V_k(s) - V^\pi(s)|$",
        "policy": "{name} policy\nstops after {sweeps} sweeps",
        "bound": r"bound $\gamma^k \max_s |V^\pi(s)|$, $\gamma = 0.9$",
        "tol": "tol = $10^{-10}$",
    },
    "zh": {
        "xlabel": "迭代遍数 $k$",
        "ylabel": r"最大误差 $\max_s |V_k(s) - V^\pi(s)|$",
        "policy": "{name} 策略\n{sweeps} 遍后停止",
        "bound": r"上界 $\gamma^k \max_s |V^\pi(s)|$，$\gamma = 0.9$",
        "tol": "tol = $10^{-10}$",
    },
}


def compute() -> dict:
    ns = chapter_namespace(CHAPTER, ("repair_mdp", "uniform", "careful"))
    mdp = ns["repair_mdp"]()
    curves = {}
    summary = []
    for name in ("uniform", "careful"):
        pi = arl._policy_matrix(mdp, ns[name])                       # [S, A]
        P_pi = torch.einsum("sa,sat->st", pi, mdp.P)                  # [S, S]
        r_pi = (pi * mdp.R).sum(-1)                                   # [S]
        V_exact, _ = arl.policy_evaluation(mdp, ns[name], exact=True)
        _, sweeps = arl.policy_evaluation(mdp, ns[name], tol=TOL)
        V = torch.zeros_like(r_pi)
        errors = []
        for _ in range(sweeps):
            V = r_pi + mdp.gamma * P_pi @ V
            errors.append((V - V_exact).abs().max().item())
        scale = V_exact.abs().max().item()
        curves[name] = {"errors": rounded(errors), "sweeps": sweeps, "scale": rounded([scale])[0]}
        summary.append(f"{name} {sweeps}")
    # The sweep counts are the ones Section 2.4 prints for gamma 0.9.
    line = next(l for l in recorded_output(CHAPTER, "worst-case bound").splitlines()
                if l.startswith("gamma  0.9"))
    check_against_chapter("sweeps at gamma 0.9", line.split(":")[1].split(";")[0].strip(),
                          f"sweeps uniform {curves['uniform']['sweeps']:4}, "
                          f"careful {curves['careful']['sweeps']:4}")
    return {"gamma": mdp.gamma, "curves": curves}


def draw(data: dict, text: dict):
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.1))
    curves, gamma = data["curves"], data["gamma"]
    longest = max(c["sweeps"] for c in curves.values())
    styles = {"uniform": (ORANGE, "o"), "careful": (BLUE, "s")}
    for name, curve in curves.items():
        colour, marker = styles[name]
        ax.semilogy(range(1, curve["sweeps"] + 1), curve["errors"], color=colour, marker=marker,
                    markersize=2.5, linewidth=1.3)
    scale = max(c["scale"] for c in curves.values())
    k = range(1, longest + 1)
    bound = [scale * gamma ** i for i in k]
    ax.semilogy(k, bound, color=GREY, linestyle="--", linewidth=1.0)
    ax.axhline(TOL, color=GREY, linestyle=":", linewidth=1.0)
    # Direct labels, each in a corner its curve leaves empty.
    uniform, careful = curves["uniform"], curves["careful"]
    ax.text(longest, uniform["errors"][-1] * 1e4,
            text["policy"].format(name="uniform", sweeps=uniform["sweeps"]),
            color=ORANGE, ha="right", va="bottom")
    ax.text(1.5, TOL * 10, text["policy"].format(name="careful", sweeps=careful["sweeps"]),
            color=BLUE, ha="left", va="bottom")
    ax.text(longest, bound[-1] / 4, text["bound"], color=GREY, ha="right", va="top")
    ax.text(1.5, TOL * 1.6, text["tol"], color=GREY, ha="left", va="bottom", fontsize=8)
    ax.set_xlabel(text["xlabel"])
    ax.set_ylabel(text["ylabel"])
    ax.set_xlim(0, longest + 1)
    low = min(min(c["errors"]) for c in curves.values())
    ax.set_ylim(10 ** (math.floor(math.log10(low)) - 1), 3)
    return fig
