"""Evaluation that separates learning from sharpening, for any TinyAgent on any task list.

A gain in the temperature-1 solve rate can come from two places: the policy learned something
it could not do (learning), or it concentrated mass on what it could already do (sharpening),
which a lower sampling temperature gives for free. So every number here is per task, and a
comparison is paired by task.

The mechanisms are saved book code, derived in Chapter 6, Section 6.8, and imported here from
agentrl under the names the labs use:

  sample_rewards      rewards [n_tasks, samples] of episodes at one temperature; episode
                      (task i, sample j) always gets the sampling seed episode_seed(seed, i, j),
                      so two models or two temperatures are compared on common random numbers
  summarise           solve rate with its standard error over tasks, and unbiased pass@k
  pass_at_k           1 - C(n-c, k) / C(n, k) in the stable product form
  mean_se, paired     mean and standard error of a list, of per-task differences
  expert_path_logprob log-probability that sampling at temperature T reproduces the scripted
                      expert's episode exactly: one teacher-forced forward pass per task.
                      Observations are deterministic, so exp of it is an exact, noise-free
                      lower bound on the task's solve probability
  sharpening_control  the warm start swept over temperatures; its best temperature's per-task
                      rates are the control a trained policy's T=1 rates must beat
  versus_control      a trained model's T=1 rates minus the control's, paired by task

Lab-specific, defined here:

  edit_stats          where the first edit of each episode went (right line, applied or not)
  evaluate            every split at every temperature, greedy, and the expert-path probability,
                      printed as it goes
  seeds_averaged      the per-task rates of several training seeds' evaluations, averaged
                      (to be paired by task against one control)

Tests: tests/test_policy_gradient.py (the saved functions), tests/test_lab_evaluate.py.
"""

import math

import agentrl as arl
from agentrl import (episode_seed, expert_path_logprob, mean_se, paired, pass_at_k,  # noqa: F401
                     sample_rewards, sharpening_control, summarise, versus_control)


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


def evaluate(model, env, splits, tokenizer, samples=8, temperatures=(1.0,), seed=0, **kwargs):
    """Every split at every temperature, greedy, and the expert-path probability at T=1; kwargs
    (max_turns, ...) go to the episodes' rollout_batch."""
    result = {}
    for split, tasks in splits.items():
        res = {}
        for temperature in tuple(temperatures) + (0.0,):
            rewards, trajs = sample_rewards(model, env, tasks, tokenizer, samples, temperature,
                                            seed, **kwargs)
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


def seeds_averaged(results, split, key):
    """Per-task rates of `split` at `key` ('t1', 'greedy', ...) averaged over several
    evaluate() results of the same tasks (one per training seed)."""
    rates = [r[split][key]['per_task'] for r in results]
    return [sum(x) / len(rates) for x in zip(*rates)]
