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

Output (committed; Chapter 6 reads it from $AGENTRL_BOOK/labs/results):
  results/reinforce_seeds.json

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/reinforce_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. It takes about 10 minutes on a
2-core machine (about 2.5 minutes of training and 0.7 of evaluation per seed), longer when
the cores are shared.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import seeds_common as sc  # noqa: E402

import agentrl as arl  # noqa: E402

AGGREGATION = 'seq-mean-token-sum'


def update(model, opt, episodes):
    """The chapter's recipe: one reinforce_step on one episode per task at temperature 1."""
    return arl.reinforce_step(model, opt, episodes, AGGREGATION, sc.GRAD_CLIP)


if __name__ == '__main__':
    sc.run_lab('reinforce_seeds', sc.Method(update),
               {'aggregation': AGGREGATION, 'returns': 'episode reward (0 or 1), no baseline'},
               sc.arguments(__doc__))
