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

Ablation. With `--no-baseline` the same script runs grouped batches (2 tasks x 4 episodes, the
same task batches and sampling seeds) with the raw rewards as weights, i.e. REINFORCE on
groups, and writes `results/grouped_reinforce_seeds.json`. Without a baseline an update has no
gradient exactly when all its episodes failed: that count is seeds_common's
`zero_gradient_steps` (for this ablation `silent_steps` also counts all-solved groups). Comparing the three labs separates the two changes
from `reinforce_seeds.py`: the grouping (this ablation vs reinforce_seeds) and the baseline
(rloo_seeds vs this ablation).

Output (committed; Chapter 7 reads them from $AGENTRL_BOOK/labs/results):
  results/rloo_seeds.json, results/grouped_reinforce_seeds.json

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/rloo_seeds.py
    .venv/bin/python book/labs/rloo_seeds.py --no-baseline
Seeded and single-threaded: a rerun gives the same numbers. Measured on the shared 2-core
machine: 24 minutes for RLOO and 18 for the ablation (training 4-7 minutes per seed, the rest
evaluation); less on an idle machine.
"""

import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import seeds_common as sc  # noqa: E402

import agentrl as arl  # noqa: E402

GROUP_SIZE = 4                                   # G episodes per task
TASKS_PER_STEP = sc.EPISODES_PER_STEP // GROUP_SIZE
AGGREGATION = 'seq-mean-token-sum'


def update(model, opt, groups, baseline=True):
    """Leave-one-out advantages (or, for the ablation, raw rewards) and one pg_step."""
    rewards = torch.tensor([[e.reward for e in g] for g in groups])          # [B, G]
    advantages = arl.rloo_advantages(rewards) if baseline else rewards       # [B, G]
    episodes = [e for g in groups for e in g]
    stats = arl.pg_step(model, opt, episodes, advantages.flatten(), AGGREGATION, sc.GRAD_CLIP)
    stats['groups'] = len(groups)
    stats['constant_groups'] = int((rewards == rewards[:, :1]).all(-1).sum())
    return stats


def summarise(history):
    """Per run: groups, constant groups, updates in which every group was constant, grad norm."""
    return {'groups': sum(h['groups'] for h in history),
            'constant_groups': sum(h['constant_groups'] for h in history),
            'silent_steps': sum(h['constant_groups'] == h['groups'] for h in history),
            'grad_norm_mean': sum(h['grad_norm'] for h in history) / len(history)}


def main():
    args = sc.arguments(__doc__, ('--no-baseline', 'the ablation: raw rewards as weights'))
    recipe = {'method': 'RLOO', 'group_size': GROUP_SIZE, 'tasks_per_step': TASKS_PER_STEP,
              'aggregation': AGGREGATION,
              'advantages': 'rloo_advantages: r_i - mean of the other G-1 rewards of the group'}
    if args.no_baseline:
        recipe.update(method='REINFORCE on groups (ablation)',
                      advantages='raw episode rewards (0 or 1), no baseline')
    method = sc.Method(lambda model, opt, groups: update(model, opt, groups, not args.no_baseline),
                       group_size=GROUP_SIZE, summarise=summarise)
    name = 'grouped_reinforce_seeds' if args.no_baseline else 'rloo_seeds'
    sc.run_lab(name, method, recipe, args)


if __name__ == '__main__':
    main()
