"""Chapter 10, Section 10.7: RLOO with and without a KL penalty (beta = 0.1) on placements the
warm start never saw, three seeds each: ``gym_v2_rl_hg_rloo{,_kl0.1}_lr3e-4{,_s1,_s2}.json`` and
their fresh-instance evaluations ``gym_v2_rl_fresh_hg_rloo{,_kl0.1}_lr3e-4.json``, the files the
chapter reads. What is drawn, and how the seeds are averaged: ``_new_placements.py``.
"""

from __future__ import annotations

from functools import partial

import _new_placements as shared
from _common import BLUE, ORANGE

NAME = "ch10-kl-new-placements"
CHAPTER = "10-kl-and-entropy.md"
METHODS = (("rloo", "gym_v2_rl_fresh_hg_rloo_lr3e-4", BLUE),
           ("kl", "gym_v2_rl_fresh_hg_rloo_kl0.1_lr3e-4", ORANGE))
TEXT = shared.text({"en": {"rloo": "RLOO", "kl": "RLOO + KL 0.1"},
                    "zh": {"rloo": "RLOO", "kl": "RLOO + KL 0.1"}})

compute = partial(shared.compute, METHODS)
draw = shared.draw
