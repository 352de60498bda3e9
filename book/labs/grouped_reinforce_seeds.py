"""REINFORCE on RLOO's grouped batches, several seeds: the ablation behind Chapter 7, Section 7.3.

What it measures. `rloo_seeds.py` differs from `reinforce_seeds.py` in two ways: its 8 episodes
per update are 2 tasks x 4 episodes instead of 8 tasks x 1, and each is weighted by its
leave-one-out advantage instead of its reward. This lab keeps the first change and not the
second: the same grouped batches as rloo_seeds (the same task batches and sampling seeds), the
raw rewards as weights, one `agentrl.pg_step` with 'seq-mean-token-sum'. Comparing the three
labs separates the two changes: the grouping (this lab vs reinforce_seeds) and the baseline
(rloo_seeds vs this lab). Without a baseline an update has no gradient exactly when all its
episodes failed: that count is seeds_common's `zero_gradient_steps` (`silent_steps` here also
counts the updates whose groups all solved, which do have a gradient).

Record: results/grouped_reinforce_seeds.json (kind seeds), which Chapters 7 and 9 read.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/grouped_reinforce_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. About 18 minutes on a 2-core
machine.
"""

import dataclasses

import harness
import rloo_seeds
import seeds_common as sc


@dataclasses.dataclass(frozen=True)
class GroupedReinforceRecipe(rloo_seeds.RlooRecipe):
    LEGACY = {**sc.GroupRecipe.LEGACY, 'method': 'REINFORCE on groups (ablation)',
              'advantages': 'raw episode rewards (0 or 1), no baseline'}


def run(recipe, context):
    return rloo_seeds.run(recipe, context, baseline=False)


LAB = harness.Lab(__file__, 'seeds', GroupedReinforceRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
