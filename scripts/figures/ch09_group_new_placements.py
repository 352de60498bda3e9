"""Chapter 9, Section 9.8: RLOO, GRPO and positive-only advantages on placements the warm start
never saw, three seeds each.

Data: the committed results of ``book/labs/gym_v2_rl.py --train-on heldout-groups`` with
``--method rloo``, ``grpo`` and ``positive`` (``gym_v2_rl_hg_{rloo,grpo,positive}_lr3e-4{,_s1,
_s2}.json``) and of ``book/labs/gym_v2_rl_fresh.py`` on each method's three policies
(``gym_v2_rl_fresh_hg_{rloo,grpo,positive}_lr3e-4.json``); the chapter reads the same files.

Left: the exact probability of the expert's episode (teacher-forced, T=1, mean over tasks) every
25 updates, per method the mean of its seeds (thin: each seed), on RL's placements (solid) and
on the unseen placements (dotted). Right: solve rates at T=1 on fresh instances, each method's
seeds averaged per task, with one standard error over tasks, next to the warm start at T=1 and
the sharpening control (dashed). The shared logic is ``_new_placements.py``; the figure draws
what the labs recorded and trains nothing.
"""

from __future__ import annotations

import _new_placements as shared
from _common import BLUE, GREEN, VERMILION

NAME = "ch09-group-new-placements"
CHAPTER = "09-grpo-family.md"
METHODS = (("rloo", "hg_rloo_lr3e-4", BLUE), ("grpo", "hg_grpo_lr3e-4", GREEN),
           ("positive", "hg_positive_lr3e-4", VERMILION))
TEXT = shared.text({"en": {"rloo": "RLOO", "grpo": "GRPO", "positive": "positive only"},
                    "zh": {"rloo": "RLOO", "grpo": "GRPO", "positive": "只用正样本"}})


def compute() -> dict:
    return shared.compute(METHODS)


def draw(data: dict, text: dict):
    return shared.draw(data, text)
