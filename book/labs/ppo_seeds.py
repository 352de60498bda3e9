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

Record: results/ppo_seeds.json (kind seeds), which Chapter 8 reads.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/ppo_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. About 15 minutes on a 2-core
machine (each update samples 8 episodes and takes 4 optimiser steps).
"""

import dataclasses

import agentrl as arl
import harness
import seeds_common as sc
from harness import option

DIAGNOSTICS = ('clip_fraction', 'approx_kl', 'ratio_mean', 'value_loss', 'grad_norm')


@dataclasses.dataclass(frozen=True)
class PpoRecipe(sc.SeedsRecipe):
    epochs: int = option(2, 'passes over each batch', short='epochs')
    minibatches: int = option(2, 'optimiser steps per pass', short='mb')
    clip_eps: float = option(0.2, 'clipping range of the ratio', short='clip')
    vf_coef: float = option(0.5, 'weight of the value loss', short='vf')
    gamma: float = option(1.0, 'discount of GAE', short='gamma')
    lam: float = option(0.95, 'lambda of GAE', short='lam')

    LEGACY = {**sc.SeedsRecipe.LEGACY, 'method': 'PPO',
              'model': 'ValueHead(warm start), value head zero-initialised',
              'episodes_per_task': 1, 'aggregation': 'token-mean', 'value_clipping': False,
              'advantages': 'gae(gamma, lam) with the value head, not normalised'}


def summarise(history):
    """Per run: mean PPO diagnostics, the value mean at the first and last quarter, maxima."""
    quarter = max(1, len(history) // 4)
    return {'diagnostics_mean': {k: sum(h[k] for h in history) / len(history)
                                 for k in DIAGNOSTICS},
            'value_mean_first': sum(h['value_mean'] for h in history[:quarter]) / quarter,
            'value_mean_last': sum(h['value_mean'] for h in history[-quarter:]) / quarter,
            'approx_kl_max': max(h['approx_kl'] for h in history),
            'clip_fraction_max': max(h['clip_fraction'] for h in history)}


def run(recipe, context, learner=arl.ValueHead):
    """One ppo_update per batch, sampled by critic.policy; the warm start stays the policy (it
    samples and is evaluated), the value head wraps it."""
    def update(critic, opt, episodes):
        return arl.ppo_update(critic, opt, episodes, epochs=recipe.epochs,
                              minibatches=recipe.minibatches, clip_eps=recipe.clip_eps,
                              vf_coef=recipe.vf_coef, gamma=recipe.gamma, lam=recipe.lam,
                              grad_clip=recipe.grad_clip)
    return sc.run_lab(recipe, context, sc.Method(update, learner=learner, summarise=summarise))


LAB = harness.Lab(__file__, 'seeds', PpoRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
