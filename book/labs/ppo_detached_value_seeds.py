"""PPO with the value loss kept out of the policy's trunk: an ablation of `ppo_seeds.py`.

What it measures. With the recipe of `ppo_seeds.py` (Chapter 8), PPO lowered the solve rate on
every seed, to 0 on one of them, while its diagnostics stayed calm (clip fraction and
approximate KL small). Two things set that recipe apart from REINFORCE besides the clipped
surrogate: the value loss, whose gradient flows through the trunk the policy shares with the
value head, and four Adam steps per batch instead of one. This lab removes the first and keeps
everything else: the same seeds, budget, evaluation, epochs, minibatches, GAE and clipping. The
value head reads the trunk's hidden states through `detach()`, so the value loss trains the
head's 65 parameters only and the trunk is moved by the policy loss alone. A short probe on
seed 2 before this lab (40 updates each) kept the training reward near its starting level both
with this change and, separately, with one Adam step per batch; this lab measures the first on
all three seeds.

Record: results/ppo_detached_value_seeds.json (kind seeds), which Chapter 8 reads:
seeds_common's results plus, per run, the mean PPO diagnostics and the mean value at the first
and last 25 updates, as in ppo_seeds.json.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/ppo_detached_value_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. About 15 minutes on a 2-core
machine.
"""

import dataclasses

import torch

import agentrl as arl
import harness
import ppo_seeds


class DetachedValueHead(arl.ValueHead):
    """ValueHead whose value reads the trunk through detach(): the value loss trains .value only."""

    def forward(self, ids):
        p = self.policy
        pos = torch.arange(ids.shape[1])                                     # [T]
        rope = arl.rotary_angles(pos, p.head_dim)
        x = p.embed(ids)                                                     # [B, T, D]
        for block in p.blocks:
            x, _ = block(x, pos, rope)
        h = p.norm(x)                                                        # [B, T, D]
        return p.head(h), self.value(h.detach()).squeeze(-1)                 # [B, T, V], [B, T]


@dataclasses.dataclass(frozen=True)
class DetachedValueRecipe(ppo_seeds.PpoRecipe):
    LEGACY = {**ppo_seeds.PpoRecipe.LEGACY, 'method': 'PPO, value loss on the head only (ablation)',
              'model': 'ValueHead(warm start) whose value reads detached hidden states'}


def run(recipe, context):
    return ppo_seeds.run(recipe, context, learner=DetachedValueHead)


LAB = harness.Lab(__file__, 'seeds', DetachedValueRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
