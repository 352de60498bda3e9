"""RLOO from the warm start, several seeds: the evidence behind Chapter 7, Section 7.3.

What it measures. Chapter 7 trains TinyAgent with leave-one-out advantages for a few updates,
within its one-minute budget, and one short run of one seed shows nothing reliable. This lab
runs the same recipe for the budget every method lab shares (`seeds_common.py`: the same warm
start, seeds, 64 RL tasks, 100 updates of 8 sampled episodes = 800 episodes per seed, Adam 3e-4,
gradient clipping at 1, the same evaluation before and after):

  each update  2 RL tasks, G = 4 episodes of each at temperature 1 (`agentrl.collect_groups`),
               advantages r_i - mean of the other 3 rewards of the group
               (`agentrl.rloo_advantages`), and one `agentrl.pg_step` with the unbiased
               'seq-mean-token-sum' aggregation (the same loss as REINFORCE in
               `reinforce_seeds.py`, with advantages in place of rewards)

The only differences from `reinforce_seeds.py` are the baseline and the way the 8 episodes
are chosen (2 tasks x 4 episodes instead of 8 tasks x 1 episode): the evaluation sets
(rl_t1, rl_greedy, heldout_t1), their sampling seed and the seeds of the runs are the same, so
the two labs can be compared task by task. Besides seeds_common's record, each run stores the
number of groups whose four rewards were all equal (`constant_groups`, out of `groups`), the
number of updates in which both groups were (`silent_steps`: zero advantage everywhere, so no
gradient) and the mean gradient norm before clipping.

Its ablation, `grouped_reinforce_seeds.py`, runs the same grouped batches with the raw rewards
as weights: the three labs separate the two changes from `reinforce_seeds.py`, the grouping
(the ablation vs reinforce_seeds) and the baseline (rloo_seeds vs the ablation).

Record: results/rloo_seeds.json (kind seeds), which Chapter 7 reads.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/rloo_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. About 24 minutes on a 2-core
machine (training 4-7 minutes per seed, the rest evaluation).
"""

import dataclasses

import torch

import agentrl as arl
import harness
import seeds_common as sc
from harness import option

ADVANTAGES = 'rloo_advantages: r_i - mean of the other G-1 rewards of the group'


@dataclasses.dataclass(frozen=True)
class RlooRecipe(sc.GroupRecipe):
    aggregation: str = option('seq-mean-token-sum', "pg_step's aggregation of the loss",
                              short='', choices=arl.AGGREGATIONS)

    LEGACY = {**sc.GroupRecipe.LEGACY, 'method': 'RLOO', 'advantages': ADVANTAGES}


def update(model, opt, groups, recipe, baseline=True):
    """Leave-one-out advantages (or, without a baseline, raw rewards) and one pg_step."""
    rewards = torch.tensor([[e.reward for e in g] for g in groups])          # [B, G]
    advantages = arl.rloo_advantages(rewards) if baseline else rewards       # [B, G]
    episodes = [e for g in groups for e in g]
    stats = arl.pg_step(model, opt, episodes, advantages.flatten(), recipe.aggregation,
                        recipe.grad_clip)
    stats['groups'] = len(groups)
    stats['constant_groups'] = int((rewards == rewards[:, :1]).all(-1).sum())
    return stats


def summarise(history):
    """Per run: groups, constant groups, updates in which every group was constant, grad norm."""
    return {'groups': sum(h['groups'] for h in history),
            'constant_groups': sum(h['constant_groups'] for h in history),
            'silent_steps': sum(h['constant_groups'] == h['groups'] for h in history),
            'grad_norm_mean': sum(h['grad_norm'] for h in history) / len(history)}


def run(recipe, context, baseline=True):
    method = sc.Method(lambda model, opt, groups: update(model, opt, groups, recipe, baseline),
                       group_size=recipe.group_size, summarise=summarise)
    return sc.run_lab(recipe, context, method)


LAB = harness.Lab(__file__, 'seeds', RlooRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
