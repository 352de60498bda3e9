"""Evaluation that separates learning from sharpening, for any TinyAgent on any task list.

A gain in the temperature-1 solve rate can come from two places: the policy learned something
it could not do (learning), or it concentrated mass on what it could already do (sharpening),
which a lower sampling temperature gives for free. So every number here is per task, and a
comparison is paired by task:

  sample_rewards      rewards [n_tasks, samples] of episodes at one temperature; episode
                      (task i, sample j) always gets the same sampling seed, so two models or
                      two temperatures are compared on common random numbers
  summarise           solve rate with its standard error over tasks, and unbiased pass@k
  pass_at_k           1 - C(n-c, k) / C(n, k) in the stable product form
  paired              mean and standard error of per-task differences
  expert_path_logprob log-probability that sampling at temperature T reproduces the scripted
                      expert's episode exactly: one teacher-forced forward pass per task.
                      Observations are deterministic, so exp of it is an exact, noise-free
                      lower bound on the task's solve probability
  sharpening_control  the warm start swept over temperatures; its best temperature's per-task
                      rates are the control a trained policy's T=1 rates must beat
  edit_stats          where the first edit of each episode went (right line, applied or not)

Tests: tests/test_lab_evaluate.py.
"""

import math
import random

import torch

import agentrl as arl


def pass_at_k(n, c, k):
    """Unbiased pass@k from c successes in n samples: 1 - prod_{i=n-c+1}^{n} (1 - k / i)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f'need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}')
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_se(values):
    """Mean and standard error std / sqrt(n) (std with n - 1) of a list of numbers."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float('nan')
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def paired(a, b):
    """Mean and standard error of the per-task differences a[i] - b[i]."""
    if len(a) != len(b):
        raise ValueError(f'paired needs equal lengths, got {len(a)} and {len(b)}')
    return mean_se([x - y for x, y in zip(a, b)])


def summarise(rewards, ks=(1, 4, 8)):
    """rewards [n_tasks][samples] of 0/1 -> solve rate, its SE over tasks, pass@k, per task."""
    per_task = [sum(r) / len(r) for r in rewards]
    rate, se = mean_se(per_task)
    n = len(rewards[0])
    out = {'rate': rate, 'stderr': se, 'tasks': len(rewards), 'samples': n,
           'per_task': per_task}
    for k in ks:
        if k <= n:
            out[f'pass@{k}'] = sum(pass_at_k(n, int(sum(r)), k) for r in rewards) / len(rewards)
    return out


def episode_seed(seed, task_index, sample):
    """The sampling seed of episode (task_index, sample): independent of the model and T."""
    return random.Random(f'{seed}:{task_index}:{sample}').randrange(2 ** 31)


def sample_rewards(model, env, tasks, tokenizer, samples, temperature, seed=0, progress=None,
                   batched=True):
    """(rewards [n_tasks][samples], trajectories) at one temperature (0 = greedy, 1 sample).

    batched: the episodes run in lockstep through `agentrl.rollout_batch`, which samples
    exactly the episodes `agentrl.rollout` gives for the same seeds (tested), only faster."""
    samples = 1 if temperature == 0 else samples
    if batched:
        pairs = [(i, j) for i in range(len(tasks)) for j in range(samples)]
        trajs = arl.rollout_batch(model, env, [tasks[i] for i, _ in pairs], tokenizer,
                                  [episode_seed(seed, i, j) for i, j in pairs],
                                  temperature=temperature)
        rewards = [[trajs[i * samples + j].reward for j in range(samples)]
                   for i in range(len(tasks))]
        return rewards, [(tasks[i], t) for (i, _), t in zip(pairs, trajs)]
    rewards, trajectories = [], []
    for i, task in enumerate(tasks):
        row = []
        for j in range(samples):
            traj = arl.rollout(model, env, task, tokenizer, temperature=temperature,
                               seed=episode_seed(seed, i, j))
            row.append(traj.reward)
            trajectories.append((task, traj))
        rewards.append(row)
        if progress and (i + 1) % progress == 0:
            print(f'    T={temperature} {i + 1}/{len(tasks)} tasks', flush=True)
    return rewards, trajectories


def edit_stats(trajectories):
    """Shares of episodes whose first edit exists, names the bug's line, and applies."""
    n = len(trajectories)
    edited = on_line = applied = 0
    for task, traj in trajectories:
        for action, obs in traj.turns:
            call = arl.parse_call(action)
            if call.tool == 'edit':
                edited += 1
                on_line += call.line == task.line
                applied += not obs.startswith('error')
                break
    return {'first_edit': edited / n, 'first_edit_on_bug_line': on_line / n,
            'first_edit_applies': applied / n}


@torch.no_grad()
def expert_path_logprob(model, env, tasks, tokenizer, temperature=1.0, policy=arl.expert_policy,
                        batch_size=32):
    """Per task: log-probability of sampling the expert's episode exactly at `temperature`."""
    out = []
    for start in range(0, len(tasks), batch_size):
        trajs = [arl.teacher_rollout(env, t, tokenizer, policy)
                 for t in tasks[start:start + batch_size]]
        ids, action_mask, _, _ = arl.collate_trajectories(trajs)
        logits, _ = model(ids)
        logp, mask = arl.token_logprobs(logits, ids, action_mask, temperature)
        out += (logp * mask).sum(-1).tolist()
    return out


def evaluate(model, env, splits, tokenizer, samples=8, temperatures=(1.0,), seed=0,
             progress=None):
    """Every split at every temperature, greedy, and the expert-path probability at T=1."""
    result = {}
    for split, tasks in splits.items():
        res = {}
        for temperature in tuple(temperatures) + (0.0,):
            rewards, trajs = sample_rewards(model, env, tasks, tokenizer, samples, temperature,
                                            seed, progress)
            key = 'greedy' if temperature == 0 else f't{temperature:g}'
            res[key] = dict(summarise(rewards), **edit_stats(trajs))
            print(f'  {split:8s} {key:7s} {res[key]["rate"]:.3f} +- {res[key]["stderr"]:.3f}'
                  f'  first edit on the bug line {res[key]["first_edit_on_bug_line"]:.2f},'
                  f' applies {res[key]["first_edit_applies"]:.2f}', flush=True)
        logps = expert_path_logprob(model, env, tasks, tokenizer)
        probs = [math.exp(v) for v in logps]
        res['expert_path'] = {'mean_prob': sum(probs) / len(probs),
                              'mean_logprob': sum(logps) / len(logps), 'per_task': probs}
        print(f'  {split:8s} expert-path probability {res["expert_path"]["mean_prob"]:.3f}',
              flush=True)
        result[split] = res
    return result


def sharpening_control(result, split='heldout'):
    """The temperature at which the untrained model does best on `split` and its per-task rates."""
    temps = [k for k in result[split] if k.startswith('t')]
    best = max(temps, key=lambda k: (result[split][k]['rate'], k == 't1'))
    return best, result[split][best]['per_task']


def versus_control(trained, control, split='heldout'):
    """A trained model's T=1 rates minus the control's best-temperature rates, paired by task."""
    best, control_rates = sharpening_control(control, split)
    diff, se = paired(trained[split]['t1']['per_task'], control_rates)
    return {'control_temperature': best, 'difference': diff, 'stderr': se}
