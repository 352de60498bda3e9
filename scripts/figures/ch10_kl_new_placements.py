"""Chapter 10, Section 10.7: RLOO with and without a KL penalty (beta = 0.1) on placements the
warm start never saw, three seeds each.

Data: the committed results of ``book/labs/gym_v2_rl.py --train-on heldout-groups --method rloo``
without and with ``--kl-coef 0.1`` (``gym_v2_rl_hg_rloo{,_kl0.1}_lr3e-4{,_s1,_s2}.json``) and of
``book/labs/gym_v2_rl_fresh.py`` on each arm's three policies
(``gym_v2_rl_fresh_hg_rloo{,_kl0.1}_lr3e-4.json``); the chapter reads the same files.

Left: the exact probability of the expert's episode (teacher-forced, T=1, mean over tasks) every
25 updates, per arm the mean of its seeds (thin: each seed), on RL's placements (solid) and on
the unseen placements (dotted). Right: solve rates at T=1 on fresh instances, each arm's seeds
averaged per task, with one standard error over tasks, next to the warm start at T=1 and the
sharpening control (dashed). The shared logic is ``_new_placements.py``; the figure draws what
the labs recorded and trains nothing.
"""

from __future__ import annotations

import _new_placements as shared
from _common import BLUE, ORANGE

NAME = "ch10-kl-new-placements"
CHAPTER = "10-kl-and-entropy.md"
METHODS = (("rloo", "hg_rloo_lr3e-4", BLUE), ("kl", "hg_rloo_kl0.1_lr3e-4", ORANGE))
TEXT = shared.text({"en": {"rloo": "RLOO", "kl": "RLOO + KL 0.1"},
                    "zh": {"rloo": "RLOO", "kl": "RLOO + KL 0.1"}})


def compute() -> dict:
    return shared.compute(METHODS)


def draw(data: dict, text: dict):
    return shared.draw(data, text)
