"""A KL penalty to the warm start, with and without, several seeds: the evidence behind Chapter 10.

What it measures. Chapter 10, Section 10.6, runs `agentrl.regularised_pg_step` for eight updates
with and without a KL penalty to the warm start and prints the entropy and the KL per policy
token at every step; eight updates of one seed show how the curves start, not where they go.
This lab runs the same two recipes for the budget every method lab shares (`seeds_common.py`:
the same warm start, seeds, 64 RL tasks, 100 updates of 8 sampled episodes = 800 episodes per
seed, Adam 3e-4, gradient clipping at 1, the same evaluation before and after):

  each update  8 RL tasks, one episode each at temperature 1 (`agentrl.collect_episodes`, the
               task stream of `seeds_common.task_batches`), and one
               `agentrl.regularised_pg_step`: each episode weighted by its reward minus the mean
               reward of the other 7 episodes (leave-one-out baseline), 'seq-mean-token-sum'
  arm 'none'   no penalty (kl_coef 0)
  arm 'kl'     kl_coef 1.0 per policy token, in the reward (k1 of the sampled token, credited
               to every earlier token of the episode: reward-to-go)

Both arms use the same seeds, so they sample the same tasks with the same sampling seeds (common
random numbers) and share one evaluation of the warm start. Every update records the exact KL
per policy token between the sampling policy and the warm start (full-vocabulary sum,
`agentrl.token_kl`) and the mean entropy per policy token (`agentrl.entropy`) on the update's own
batch.

Record: results/kl_seeds.json (kind seeds), which Chapter 10 reads: the task ids, the
evaluation before (once) and after (per arm and seed) with per-task paired differences, and per
run the curves of reward, KL and entropy (one value per update).

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/kl_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. Six runs of 100 updates plus seven
evaluations: about 30 minutes on a 2-core machine.
"""

import dataclasses
import functools

import agentrl as arl
import harness
import seeds_common as sc
from harness import option


@dataclasses.dataclass(frozen=True)
class KlRecipe(sc.SeedsRecipe):
    kl_mode: str = option('reward', "regularised_pg_step's kl_mode (where the penalty enters)",
                          short='')
    arms: dict = option({'none': 0.0, 'kl': 1.0}, 'kl_coef of each arm (arm=coefficient)',
                        short='arms-')

    LEGACY = {**sc.SeedsRecipe.LEGACY,
              'method': 'regularised_pg_step: leave-one-out batch baseline, seq-mean-token-sum'}


def update(model, opt, episodes, reference, kl_coef, recipe):
    return arl.regularised_pg_step(model, reference, opt, episodes, kl_coef=kl_coef,
                                   kl_mode=recipe.kl_mode, grad_clip=recipe.grad_clip)


def summarise(history):
    """Per run: the curves of KL, entropy and k3 per policy token, and the mean gradient norm."""
    return {'curve_kl': [h['kl'] for h in history],
            'curve_entropy': [h['entropy'] for h in history],
            'curve_k3': [h['k3'] for h in history],
            'grad_norm_mean': sum(h['grad_norm'] for h in history) / len(history)}


def run(recipe, context):
    reference = sc.load_warm_start(recipe, context).requires_grad_(False)
    arms = {name: (sc.Method(functools.partial(update, reference=reference, kl_coef=coef,
                                               recipe=recipe),
                             summarise=summarise, count_zero_gradient_steps=False),
                   {'kl_coef': coef}) for name, coef in recipe.arms.items()}
    return sc.run_lab(recipe, context, arms)


LAB = harness.Lab(__file__, 'seeds', KlRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
