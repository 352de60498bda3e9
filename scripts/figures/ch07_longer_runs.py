"""Appendix C, Section C.4: RLOO and mixed batches run for 300 updates, three seeds each:
``gym_v2_rl_hg_{rloo,mixed_rloo}_lr3e-4_u300{,_s1,_s2}.json`` and their fresh-instance
evaluations ``gym_v2_rl_fresh_hg_{rloo,mixed_rloo}_lr3e-4_u300.json``, the files the appendix
reads. What is drawn, and how the seeds are averaged: ``_new_placements.py``.
"""

from __future__ import annotations

from functools import partial

import _new_placements as shared
from _common import BLUE, GREEN

NAME = "ch07-longer-runs"
CHAPTER = "C-case-study.md"
METHODS = (("rloo", "gym_v2_rl_fresh_hg_rloo_lr3e-4_u300", BLUE),
           ("mixed", "gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u300", GREEN))
TEXT = shared.text({"en": {"rloo": "RLOO", "mixed": "RLOO, mixed batches"},
                    "zh": {"rloo": "RLOO", "mixed": "RLOO，混合批次"}})

compute = partial(shared.compute, METHODS)
draw = partial(shared.draw, top=0.45)    # the 300-update curves reach the legend at 0.4
