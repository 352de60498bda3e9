"""REINFORCE from the warm start, several seeds: the evidence behind Chapter 6, Section 6.7.

What it measures. Chapter 6 runs REINFORCE on TinyAgent for a few steps, within its one-minute
budget, and one short run of one seed shows nothing reliable. This lab runs the same recipe
(`agentrl.collect_episodes` + `agentrl.reinforce_step`, the chapter's hyperparameters) for
longer, from the same warm start (`results/warm_start.pt`, made by `warm_start.py`), once per
seed, and measures the solve rate before and after on fixed evaluation sets. The seeds, the
budget (100 updates of 8 episodes), the task set and the evaluation are those of
`seeds_common.py`, shared with the labs of Chapters 7-9 so that the methods can be compared.

RL trains on a fixed set of 64 training tasks rather than on all 225, so that each task is
drawn about 12 times in 100 steps of 8 episodes: with fewer draws per task, the update per task
is too small to measure in a few minutes. The evaluation episodes on the RL tasks are fresh
samples (a sampling seed never used in training), so `rl_*` measures how well RL optimised the
objective it was given, and `heldout_t1` whether any of it transfers to unseen bugs.

The evaluation episodes use one fixed sampling seed before and after training (common random
numbers), so a paired difference per task is also reported. Standard errors are over tasks.

Record: results/reinforce_seeds.json (kind seeds), which Chapter 6 reads.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/reinforce_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. It takes about 10 minutes on a
2-core machine (about 2.5 minutes of training and 0.7 of evaluation per seed).
"""

import dataclasses

import agentrl as arl
import harness
import seeds_common as sc
from harness import option


@dataclasses.dataclass(frozen=True)
class ReinforceRecipe(sc.SeedsRecipe):
    aggregation: str = option('seq-mean-token-sum', "reinforce_step's aggregation of the loss",
                              short='', choices=arl.AGGREGATIONS)

    LEGACY = {**sc.SeedsRecipe.LEGACY, 'returns': 'episode reward (0 or 1), no baseline'}


def run(recipe, context):
    """The chapter's recipe: one reinforce_step on one episode per task at temperature 1."""
    def update(model, opt, episodes):
        return arl.reinforce_step(model, opt, episodes, recipe.aggregation, recipe.grad_clip)
    return sc.run_lab(recipe, context, sc.Method(update))


LAB = harness.Lab(__file__, 'seeds', ReinforceRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
