"""Chapter 8, Section 8.7: PPO against RLOO on placements the warm start never saw, three seeds
each: ``gym_v2_rl_hg_{rloo,ppo}_lr3e-4{,_s1,_s2}.json`` and their fresh-instance evaluations
``gym_v2_rl_fresh_hg_{rloo,ppo}_lr3e-4.json``, the files the chapter reads. What is drawn, and
how the seeds are averaged: ``_new_placements.py``.
"""

from __future__ import annotations

from functools import partial

import _new_placements as shared
from _common import BLUE, ORANGE

NAME = "ch08-ppo-new-placements"
CHAPTER = "08-ppo.md"
METHODS = (("rloo", "gym_v2_rl_fresh_hg_rloo_lr3e-4", BLUE),
           ("ppo", "gym_v2_rl_fresh_hg_ppo_lr3e-4", ORANGE))
TEXT = shared.text({"en": {"rloo": "RLOO", "ppo": "PPO"},
                    "zh": {"rloo": "RLOO", "ppo": "PPO"}})

compute = partial(shared.compute, METHODS)
draw = shared.draw
