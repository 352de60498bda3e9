"""PPO from the warm start, several seeds: the evidence behind Chapter 8, Section 8.6.

What it measures. Chapter 8 trains TinyAgent with `agentrl.ppo_update` for a few updates, within
its one-minute budget, and one short run of one seed shows nothing reliable. This lab runs the
same recipe for the budget every method lab shares (`seeds_common.py`: the same warm start,
seeds, 64 RL tasks, 100 updates of 8 sampled episodes = 800 episodes per seed, Adam 3e-4 on all
parameters, gradient clipping at 1, the same evaluation before and after):

  model        `agentrl.ValueHead` around the warm-started TinyAgent: one trunk, the policy's
               logits and a linear value head initialised to zero (every value starts at 0)
  each update  8 RL tasks, one episode of each at temperature 1 (`agentrl.collect_episodes`,
               sampled by model.policy), then one `agentrl.ppo_update` with the chapter's
               defaults: logp_old, values and GAE (gamma 1, lambda 0.95; the reward on each
               episode's last policy token) computed once, then 2 epochs x 2 minibatches of
               4 episodes (4 Adam steps per batch), clipped surrogate with eps 0.2 and
               token-mean aggregation, plus 0.5 x the value loss (no value clipping), no
               advantage normalisation

The evaluation sets (rl_t1, rl_greedy, heldout_t1) are those of seeds_common.EVALS, with the
same sampling seed as every other method lab, so the labs' numbers are comparable task by task;
the evaluation uses model.policy. Besides seeds_common's record, each run stores the mean over
its updates of the PPO diagnostics (clip fraction, approximate KL, mean ratio, value loss,
gradient norm) and the mean value of the policy tokens at the first and last 25 updates, which
shows how fast the value head learns.

Output (committed; Chapter 8 reads it from $AGENTRL_BOOK/labs/results):
  results/ppo_seeds.json

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/ppo_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. It takes about 15 minutes on an
idle 2-core machine (each update samples 8 episodes and takes 4 optimiser steps), longer when
the cores are shared.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import seeds_common as sc  # noqa: E402

import agentrl as arl  # noqa: E402

EPOCHS = 2
MINIBATCHES = 2
CLIP_EPS = 0.2
VF_COEF = 0.5
GAMMA = 1.0
LAM = 0.95
DIAGNOSTICS = ('clip_fraction', 'approx_kl', 'ratio_mean', 'value_loss', 'grad_norm')
RECIPE = {'episodes_per_task': 1, 'epochs': EPOCHS, 'minibatches': MINIBATCHES,
          'clip_eps': CLIP_EPS, 'vf_coef': VF_COEF, 'gamma': GAMMA, 'lam': LAM,
          'aggregation': 'token-mean', 'value_clipping': False,
          'advantages': 'gae(gamma, lam) with the value head, not normalised'}


def update(critic, opt, episodes):
    """One ppo_update with the chapter's defaults on episodes sampled by critic.policy."""
    return arl.ppo_update(critic, opt, episodes, epochs=EPOCHS, minibatches=MINIBATCHES,
                          clip_eps=CLIP_EPS, vf_coef=VF_COEF, gamma=GAMMA, lam=LAM,
                          grad_clip=sc.GRAD_CLIP)


def summarise(history):
    """Per run: mean PPO diagnostics, the value mean at the first and last quarter, maxima."""
    quarter = max(1, len(history) // 4)
    return {'diagnostics_mean': {k: sum(h[k] for h in history) / len(history)
                                 for k in DIAGNOSTICS},
            'value_mean_first': sum(h['value_mean'] for h in history[:quarter]) / quarter,
            'value_mean_last': sum(h['value_mean'] for h in history[-quarter:]) / quarter,
            'approx_kl_max': max(h['approx_kl'] for h in history),
            'clip_fraction_max': max(h['clip_fraction'] for h in history)}


if __name__ == '__main__':
    # The warm start stays the policy (it samples and is evaluated); the value head wraps it.
    sc.run_lab('ppo_seeds', sc.Method(update, learner=arl.ValueHead, summarise=summarise),
               {'method': 'PPO', 'model': 'ValueHead(warm start), value head zero-initialised',
                **RECIPE}, sc.arguments(__doc__))
