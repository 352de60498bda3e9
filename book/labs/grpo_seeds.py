"""GRPO from the warm start, several seeds: the evidence behind Chapter 9, Section 9.7.

What it measures. Chapter 9 trains TinyAgent with `agentrl.grpo_step` for a few updates, within
its one-minute budget, and one short run of one seed shows nothing reliable. This lab runs the
same recipe for the budget every method lab shares (`seeds_common.py`: the same warm start,
seeds, 64 RL tasks, 100 updates of 8 sampled episodes = 800 episodes per seed, Adam 3e-4,
gradient clipping at 1, the same evaluation before and after):

  each update  2 RL tasks, G = 4 episodes of each at temperature 1 (`agentrl.collect_groups`),
               group advantages (r - mean) / (std + 1e-6) within each group of 4, and one
               `agentrl.grpo_step` with variant 'grpo' (clipped token ratios, mean over each
               episode's policy tokens, then over episodes), clip_eps 0.2, epochs 1 (so the
               ratio is 1 at the step and the clip never acts: the default of TRL's GRPO)

The evaluation sets (rl_t1, rl_greedy, heldout_t1) are those of seeds_common.EVALS, with the
same sampling seed as every other method lab, so the four labs' numbers are comparable task by
task. Besides seeds_common's record, each run stores the number of groups whose four rewards
were all equal (`constant_groups`, out of `groups`): they have zero advantage and contribute no
gradient, which is what DAPO's dynamic sampling filters out.

Record: results/grpo_seeds.json (kind seeds), which Chapter 9 reads.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/grpo_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. About 30 minutes on a 2-core
machine (5 to 10 minutes of training per seed, the rest evaluation).
"""

import dataclasses

import agentrl as arl
import harness
import seeds_common as sc
from harness import option


@dataclasses.dataclass(frozen=True)
class GrpoRecipe(sc.GroupRecipe):
    variant: str = option('grpo', "grpo_step's variant (clipping and aggregation)", short='')
    epochs: int = option(1, 'passes over each batch (1: the ratio is 1 and the clip never acts)',
                         short='epochs')
    clip_eps: float = option(0.2, 'clipping range of the token ratios', short='clip')
    max_tokens: int = option(0, "the constant normaliser of variant 'dr_grpo': the generation budget "
                             '(0: none, as the other variants need)', short='maxtok')

    LEGACY = {**sc.GroupRecipe.LEGACY, 'method': 'GRPO',
              'advantages': 'group_advantages(scale="std"): (r - mean) / (std + 1e-6) per group'}


def summarise(history):
    """Per run: groups, constant groups and the mean gradient norm."""
    return {'groups': sum(h['groups'] for h in history),
            'constant_groups': sum(h['constant_groups'] for h in history),
            'grad_norm_mean': sum(h['grad_norm'] for h in history) / len(history)}


def run(recipe, context):
    def update(model, opt, groups):
        return arl.grpo_step(model, opt, groups, variant=recipe.variant, epochs=recipe.epochs,
                             clip_eps=recipe.clip_eps, grad_clip=recipe.grad_clip,
                             max_tokens=recipe.max_tokens or None)
    return sc.run_lab(recipe, context, sc.Method(update, group_size=recipe.group_size,
                                                 summarise=summarise))


LAB = harness.Lab(__file__, 'seeds', GrpoRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
