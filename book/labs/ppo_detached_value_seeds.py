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

Output (committed; Chapter 8 reads it from $AGENTRL_BOOK/labs/results):
  results/ppo_detached_value_seeds.json   seeds_common's record plus, per run, the mean PPO
                                          diagnostics and the mean value at the first and last
                                          25 updates, as in ppo_seeds.json

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/ppo_detached_value_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. About 15 minutes on an idle 2-core
machine, longer when the cores are shared.
"""

import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import seeds_common as sc  # noqa: E402
from ppo_seeds import RECIPE, summarise, update  # noqa: E402

import agentrl as arl  # noqa: E402


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


if __name__ == '__main__':
    sc.run_lab('ppo_detached_value_seeds',
               sc.Method(update, learner=DetachedValueHead, summarise=summarise),
               {'method': 'PPO, value loss on the head only (ablation)',
                'model': 'ValueHead(warm start) whose value reads detached hidden states',
                **RECIPE}, sc.arguments(__doc__))
