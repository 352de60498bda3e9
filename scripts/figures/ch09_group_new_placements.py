"""Chapter 9, Section 9.8: RLOO, GRPO and positive-only advantages on placements the warm start
never saw, three seeds each: ``gym_v2_rl_hg_{rloo,grpo,positive}_lr3e-4{,_s1,_s2}.json`` and
their fresh-instance evaluations ``gym_v2_rl_fresh_hg_{rloo,grpo,positive}_lr3e-4.json``, the
files the chapter reads. What is drawn, and how the seeds are averaged: ``_new_placements.py``.
"""

from __future__ import annotations

from functools import partial

import _new_placements as shared
from _common import BLUE, GREEN, VERMILION

NAME = "ch09-group-new-placements"
CHAPTER = "09-grpo-family.md"
METHODS = (("rloo", "gym_v2_rl_fresh_hg_rloo_lr3e-4", BLUE),
           ("grpo", "gym_v2_rl_fresh_hg_grpo_lr3e-4", GREEN),
           ("positive", "gym_v2_rl_fresh_hg_positive_lr3e-4", VERMILION))
TEXT = shared.text({"en": {"rloo": "RLOO", "grpo": "GRPO", "positive": "positive only"},
                    "zh": {"rloo": "RLOO", "grpo": "GRPO", "positive": "只用正样本"}})

compute = partial(shared.compute, METHODS)
draw = shared.draw
