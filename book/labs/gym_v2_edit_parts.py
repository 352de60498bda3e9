"""Where on the expert's path does a policy lose its probability: the line, the old text, the new?

The exact expert-path probability (Section 6.8) is a product over the expert episode's action
tokens. This lab splits that product by what each token writes, for one teacher-forced pass per
task, with the line hint on (read, test, the edit, submit):

  calls  `read`, `test` and `submit`, and the edit's `<call> edit sub ` and ` </call>`
  line   the digits of the edit's line number, which the hint and the listing show
  old    the edit's `<old>` text, which the hinted line shows
  new    `|` and the `<new>` text: the fix itself, shown nowhere in the episode

Per task and part, P(part) is exp of the sum of the part's token log-probabilities given
everything before it (the expert's own tokens); their product is the task's expert-path
probability. Tasks are the evaluation tasks of a warm start's record (one per group), padded as
that warm start was trained; its held-out tasks are split into RL's placements (`rl_groups`) and
the unseen ones (`heldout`), the halves gym_v2_rl_fresh.py reports. A policy that has learnt to
copy the line and the old text, and fails at the fix, loses its mass in `new`; one that recalls
placements, in `line`. With --temperatures the same is read for the policy sampled at each
temperature: the exact measure's sharpening control.

Run from the repository root (single-threaded, seconds per policy):
    .venv/bin/python book/labs/gym_v2_edit_parts.py --warm gym_v2_hint_recovery_6000_pad6 \
        --policies gym_v2_hint_recovery_6000_pad6
(--policies takes the stems of records with a checkpoint: warm starts and RL runs.)
Record: results/<run>.json (kind analysis).
"""

import dataclasses
import math

import torch

import agentrl as arl
import gym_v2
import harness
from gym_v2_copying import PolicyRecipe, policies, policy_setting
from gym_v2_rl_fresh import placement_halves
from harness import option


@dataclasses.dataclass(frozen=True)
class EditPartsRecipe(PolicyRecipe):
    temperatures: tuple = option((1.0,), 'sampling temperatures to read the path at (lower ones: '
                                 'the sharpening control of the exact measure)', short='T-')

    @classmethod
    def from_record(cls, recipe, results):
        values = super().from_record(recipe, results)
        first = next(iter(results['result'].values()))
        values['temperatures'] = tuple(float(key[1:]) for key in first)
        return values


@torch.no_grad()
def part_logprobs(model, env, task, tok, temperature=1.0):
    """{part: summed log-probability of its tokens} on the expert's episode of task, for the
    policy sampled at `temperature`."""
    traj = arl.teacher_rollout(env, task, tok, arl.expert_policy)
    logits, _ = model(traj.ids[None])
    logp, _ = arl.token_logprobs(logits, traj.ids[None], temperature=temperature)
    token_logp = logp[0].tolist()                                 # token_logp[i]: ids[i + 1]
    out = dict.fromkeys(arl.EDIT_PART_NAMES, 0.0)
    for start, end in arl.action_spans(traj.action_mask):
        action = tok.decode(traj.ids[start:end].tolist())
        names = arl.edit_parts(action, tok)
        assert len(names) == end - start, (task.id, action)
        for i, name in zip(range(start, end), names):
            out[name] += token_logp[i - 1]
    return out


def splits_of(warm, tasks, n=0):
    """{split: evaluation task ids}; held-out split as gym_v2_rl_fresh.py splits it, into RL's
    placements (`rl_groups`) and the unseen ones (`heldout`); with n, the first n of each."""
    by_id = {t.id: t for t in tasks}
    halves = placement_halves(tasks)
    ids = warm.results['eval_task_ids']
    out = {**{half: [i for i in ids['heldout'] if gym_v2.task_group(by_id[i]) in groups]
              for half, groups in halves.items()},
           'stretch': ids['stretch'], 'train': ids['train']}
    return {s: v[:n or None] for s, v in out.items()}


def run(recipe, context):
    warm, tasks, cache, play = policy_setting(recipe, context)
    splits = splits_of(warm, tasks, recipe.eval_tasks)
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache=cache)
    result = {}
    for name, model in policies(recipe, context):
        result[name] = {}
        for temperature in recipe.temperatures:
            at = result[name][f't{temperature:g}'] = {}
            for split, ids in splits.items():
                per_task = [part_logprobs(model, env, play[i], tok, temperature) for i in ids]
                row = {p: sum(math.exp(t[p]) for t in per_task) / len(ids) for p in arl.EDIT_PART_NAMES}
                row['expert_path'] = sum(math.exp(sum(t.values())) for t in per_task) / len(ids)
                row.update(tasks=len(ids), per_task=per_task)
                at[split] = row
                print(f'{name:32s} T={temperature:<4g}{split:9s} ({len(ids):2d} tasks) '
                      + ', '.join(f'P({p}) {row[p]:.3f}' for p in arl.EDIT_PART_NAMES)
                      + f', expert path {row["expert_path"]:.3f}', flush=True)
    return {'task_ids': splits, 'result': result}


LAB = harness.Lab(__file__, 'analysis', EditPartsRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
