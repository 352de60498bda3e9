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
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_edit_parts.py \
        --warm hint_recovery_6000_pad6 --policies hint_recovery_6000_pad6 --tag pad6
(--policies takes warm-start tags, results/gym_v2_TAG.pt, and RL tags, rl:TAG for
gym_v2_rl_TAG.pt in results/ or $TMPDIR.) Results: results/gym_v2_edit_parts_TAG.json.
"""

import argparse
import math
import pathlib
import sys
import time

import torch

import agentrl as arl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gym_v2  # noqa: E402
from gym_v2 import PARTS, edit_parts  # noqa: E402
from gym_v2_rl_fresh import (  # noqa: E402
    add_policy_arguments, load_named_policy, placement_halves, warm_start_tasks)
from gym_v2_warm_start import write_record  # noqa: E402


@torch.no_grad()
def part_logprobs(model, env, task, tok, temperature=1.0):
    """{part: summed log-probability of its tokens} on the expert's episode of task, for the
    policy sampled at `temperature`."""
    traj = arl.teacher_rollout(env, task, tok, arl.expert_policy)
    logits, _ = model(traj.ids[None])
    logp, _ = arl.token_logprobs(logits, traj.ids[None], temperature=temperature)
    token_logp = logp[0].tolist()                                 # token_logp[i]: ids[i + 1]
    out = dict.fromkeys(PARTS, 0.0)
    for start, end in arl.action_spans(traj.action_mask):
        action = tok.decode(traj.ids[start:end].tolist())
        names = edit_parts(action, tok)
        assert len(names) == end - start, (task.id, action)
        for i, name in zip(range(start, end), names):
            out[name] += token_logp[i - 1]
    return out


def splits_of(warm, tasks):
    """{split: evaluation task ids}; held-out split as gym_v2_rl_fresh.py splits it, into RL's
    placements (`rl_groups`) and the unseen ones (`heldout`)."""
    by_id = {t.id: t for t in tasks}
    halves = placement_halves(tasks)
    held = warm['eval_task_ids']['heldout']
    return {**{half: [i for i in held if gym_v2.task_group(by_id[i]) in groups]
               for half, groups in halves.items()},
            'stretch': warm['eval_task_ids']['stretch'], 'train': warm['eval_task_ids']['train']}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_policy_arguments(parser)
    parser.add_argument('--temperatures', nargs='+', type=float, default=[1.0],
                        help='sampling temperatures to read the path at (lower ones: the '
                             'sharpening control of the exact measure)')
    parser.add_argument('--tag', required=True)
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    start = time.time()
    warm, tasks, cache, play = warm_start_tasks(args.warm)
    splits = splits_of(warm, tasks)
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache=cache)
    result = {}
    for name in args.policies:
        model = load_named_policy(name)
        result[name] = {}
        for temperature in args.temperatures:
            at = result[name][f't{temperature:g}'] = {}
            for split, ids in splits.items():
                per_task = [part_logprobs(model, env, play[i], tok, temperature) for i in ids]
                row = {p: sum(math.exp(t[p]) for t in per_task) / len(ids) for p in PARTS}
                row['expert_path'] = sum(math.exp(sum(t.values())) for t in per_task) / len(ids)
                row.update(tasks=len(ids), per_task=per_task)
                at[split] = row
                print(f'{name:32s} T={temperature:<4g}{split:9s} ({len(ids):2d} tasks) '
                      + ', '.join(f'P({p}) {row[p]:.3f}' for p in PARTS)
                      + f', expert path {row["expert_path"]:.3f}', flush=True)
    write_record(f'gym_v2_edit_parts_{args.tag}', {
        'lab': 'book/labs/gym_v2_edit_parts.py', 'tag': args.tag, 'warm': args.warm,
        'pad_lines': warm.get('pad_lines', 0), 'policies': args.policies, 'task_ids': splits,
        'result': result,
        'torch_version': torch.__version__, 'threads': torch.get_num_threads()}, start)


if __name__ == '__main__':
    main()
