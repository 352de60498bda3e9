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

import torch

import agentrl as arl
from seeds_common import EPISODES_PER_STEP, GRAD_CLIP, LR, STEPS, run_lab, task_batches

AGGREGATION = 'seq-mean-token-sum'


def train(model, env, rl_tasks, tok, seed):
    """The chapter's recipe: Adam, one episode per task at temperature 1, reinforce_step."""
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    batches = task_batches(rl_tasks, seed, EPISODES_PER_STEP)
    history = []
    for _ in range(STEPS):
        tasks, sampling_seed = next(batches)
        episodes = arl.collect_episodes(model, env, tasks, tok, seed=sampling_seed)
        history.append(arl.reinforce_step(model, opt, episodes, AGGREGATION, GRAD_CLIP))
    return history


if __name__ == '__main__':
    run_lab('reinforce_seeds', train, {'aggregation': AGGREGATION,
                                       'returns': 'episode reward (0 or 1), no baseline'})
