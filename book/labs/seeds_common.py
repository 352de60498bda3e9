"""What every multi-seed method lab shares: the task set, the budget, the evaluation, the record.

Chapters 6-10 each train TinyAgent from the same warm start (the record `warm_start` and its
checkpoint, made by `warm_start.py`) with one method: REINFORCE, RLOO, PPO, GRPO, a KL penalty.
A comparison between them means something only if everything but the method is the same, so
that is fixed here, once, in `SeedsRecipe`, the recipe every one of these labs extends:

  seeds        one run per seed; a run's seed drives task choice and sampling
  budget       `steps` updates of `episodes_per_step` sampled episodes: 800 episodes per seed,
               whatever the method does with them (one gradient step or several epochs)
  tasks        the first `rl_tasks` tasks of the `train` split (episodes sampled in lockstep by
               rollout_batch through collect_episodes, sandbox calls on a pre-forked SandboxPool)
  evaluation   EVALS with sampling seed `eval_seed`, before and after training (common random
               numbers, so a paired difference per task is reported as well)

  rl_t1         the RL task set, three episodes per task at temperature 1
  rl_greedy     the same tasks, one greedy episode each
  heldout_t1    every task of the `heldout` split, one episode at temperature 1

A lab describes its method with `Method`: `update(learner, optimiser, batch)`, one update on one
batch of freshly sampled episodes (`episodes_per_step` tasks of one episode each or, with
`group_size` G, `episodes_per_step // G` tasks of G episodes each, as `agentrl.collect_groups`
returns them), returning a stats dict with at least 'reward', the mean reward of the batch;
optionally `learner(model)`, the module to optimise around the warm start (a value head, say),
and `summarise(history)`, the lab's own per-run fields (say, the number of constant groups),
added to each run's record. `run_lab(recipe, context, method)` then does the rest: the task
stream (`task_batches`), the training loop (Adam, `steps` updates, progress printed every
PROGRESS_EVERY updates), the evaluation before and after, and the results: the task ids, the
evaluation before (once) and after (per seed), per-task paired differences, the per-update
reward curve of each run, and `zero_gradient_steps`, the updates in which no sampled episode
succeeded (with 0/1 rewards and no baseline, exactly the updates whose gradient is zero; a
method with a baseline also gets zero from groups that all succeed, which its lab counts
itself). A lab that compares arms (`run_lab(recipe, context, {arm: (method, fields)})`) gets
one run per seed and arm, recorded per arm. Standard errors are over tasks.

Labs run single-threaded and seeded: a rerun gives the same numbers.
"""

import dataclasses
import random
import time
from typing import Callable

import torch

import agentrl as arl
from harness import Recipe, RecipeError, option

# (name, task set, temperature, episodes per task)
EVALS = (('rl_t1', 'rl', 1.0, 3), ('rl_greedy', 'rl', 0.0, 1), ('heldout_t1', 'heldout', 1.0, 1))
PROGRESS_EVERY = 10      # updates between progress lines


@dataclasses.dataclass(frozen=True)
class SeedsRecipe(Recipe):
    """The budget and evaluation every method lab shares."""
    seeds: tuple = option((0, 1, 2), 'one run per seed; a seed drives task choice and sampling',
                          short='seeds')
    steps: int = option(100, 'updates per seed', short='u')
    episodes_per_step: int = option(8, 'sampled episodes per update (the budget per update)')
    lr: float = option(3e-4, 'Adam learning rate, every method', short='lr')
    grad_clip: float = option(1.0, 'gradient-norm clip')
    rl_tasks: int = option(64, 'RL trains on the first N tasks of the train split')
    eval_seed: int = option(7, 'sampling seed of every evaluation episode, before and after')
    eval_tasks: int = option(0, 'tasks per evaluation set, the first ones (0: every task)')
    warm_start: str = option('warm_start', 'record (and checkpoint) of the warm start', stem=True)

    LEGACY = {'optimizer': 'Adam', 'temperature': 1.0}

    def reduced(self):
        return dataclasses.replace(self, seeds=(0,), steps=3, rl_tasks=8, eval_tasks=4)

    def check(self, context):
        if not self.seeds:
            raise RecipeError('--seeds: give at least one seed')

    @classmethod
    def from_record(cls, recipe, results):
        values = super().from_record(recipe, results)
        rl = values.get('rl_tasks')
        if isinstance(rl, dict):                   # records that listed the task ids here
            if rl['split'] != 'train':
                raise RecipeError(f'RL tasks from the {rl["split"]} split')
            values['rl_tasks'] = rl['first']
        evaluation = values.pop('eval', None)
        if evaluation is not None:
            if [tuple(s) for s in evaluation['sets']] != list(EVALS):
                raise RecipeError(f'evaluation sets {evaluation["sets"]}, not {EVALS}')
            values['eval_seed'] = evaluation['seed']
        runs = results.get('runs') or next(iter(results.get('arms', {}).values()), {}).get('runs')
        if runs and 'seeds' not in values:
            values['seeds'] = tuple(run['seed'] for run in runs)
        return values


@dataclasses.dataclass(frozen=True)
class GroupRecipe(SeedsRecipe):
    """A seeds recipe whose batches are groups of episodes of one task."""
    group_size: int = option(4, 'G episodes per task in a batch')
    tasks_per_step: int = option(2, 'tasks per update (group_size x tasks = episodes per step)')

    def check(self, context):
        super().check(context)
        if self.group_size * self.tasks_per_step != self.episodes_per_step:
            raise RecipeError(f'{self.tasks_per_step} tasks x {self.group_size} episodes is not '
                              f'the budget of {self.episodes_per_step} episodes per update')


@dataclasses.dataclass(frozen=True)
class Method:
    """What a lab adds to the harness (see the module docstring)."""

    update: Callable                     # (learner, optimiser, batch) -> stats with 'reward'
    group_size: int = 1                  # episodes per task in a batch
    learner: Callable | None = None      # warm-started model -> the module to optimise
    summarise: Callable | None = None    # history -> the lab's own per-run fields
    # False where a batch with no success still has a gradient (a KL penalty in the reward).
    count_zero_gradient_steps: bool = True


def load_warm_start(recipe, context):
    """A fresh copy of the warm-started TinyAgent, in eval mode."""
    return arl.load_checkpoint(context.load(recipe.warm_start).checkpoint)


def evaluate(model, env, splits, tok, recipe):
    """Every evaluation set of EVALS -> {name: rate, stderr, counts, per-task rates}."""
    out = {}
    for name, split, temperature, samples in EVALS:
        tasks = splits[split][:recipe.eval_tasks or None]
        res = arl.solve_rate(model, env, tasks, tok, samples=samples, temperature=temperature,
                             seed=recipe.eval_seed)
        out[name] = {'rate': res.rate, 'stderr': res.stderr, 'tasks': len(tasks),
                     'samples': samples, 'episodes': len(tasks) * samples,
                     'per_task': res.per_task.tolist()}
    return out


def rates(evaluation):
    return {k: round(v['rate'], 3) for k, v in evaluation.items()}


def paired_differences(after, before):
    """Per evaluation set: mean and standard error of the per-task change."""
    out = {}
    for name in after:
        d = torch.tensor(after[name]['per_task']) - torch.tensor(before[name]['per_task'])
        out[name] = {'mean': d.mean().item(), 'stderr': d.std().item() / len(d) ** 0.5}
    return out


def gym(rl_tasks, pool):
    """(tokenizer, task splits incl. 'rl', environment on the pre-forked sandbox pool)."""
    tok = arl.CharTokenizer()
    tasks = arl.make_tasks(seed=0)
    splits = {s: [t for t in tasks if t.split == s] for s in ('train', 'heldout')}
    splits['rl'] = splits['train'][:rl_tasks]
    return tok, splits, arl.BugFixEnv(cache={}, sandbox=pool.run)


def task_batches(rl_tasks, seed, tasks_per_step):
    """An endless reproducible stream of (task batch, sampling seed), one per update."""
    rng = random.Random(seed)
    while True:
        yield rng.sample(rl_tasks, tasks_per_step), rng.randrange(2 ** 31)


def train(method, model, env, rl_tasks, tok, seed, recipe, label):
    """The training loop of every lab: `steps` updates of `method` on fresh batches, in place."""
    learner = method.learner(model) if method.learner else model
    opt = torch.optim.Adam(learner.parameters(), lr=recipe.lr)
    batches = task_batches(rl_tasks, seed, recipe.episodes_per_step // method.group_size)
    history, start = [], time.time()
    for step in range(1, recipe.steps + 1):
        tasks, sampling_seed = next(batches)
        if method.group_size == 1:
            batch = arl.collect_episodes(model, env, tasks, tok, seed=sampling_seed)
        else:
            batch = arl.collect_groups(model, env, tasks, tok, method.group_size,
                                       seed=sampling_seed)
        history.append(method.update(learner, opt, batch))
        if step % PROGRESS_EVERY == 0:
            recent = [h['reward'] for h in history[-PROGRESS_EVERY:]]
            print(f'  {label}: update {step}/{recipe.steps}, reward '
                  f'{sum(recent) / len(recent):.3f} over the last {len(recent)}, '
                  f'{time.time() - start:.0f} s', flush=True)
    return history


def run_record(method, history, seed, train_seconds, after, before):
    """One run's entry in the record: its curve, its evaluation after and the lab's fields."""
    rewards = [h['reward'] for h in history]
    quarter = max(1, len(rewards) // 4)
    record = {'seed': seed, 'steps': len(history), 'train_seconds': round(train_seconds),
              'mean_reward_first': sum(rewards[:quarter]) / quarter,
              'mean_reward_last': sum(rewards[-quarter:]) / quarter}
    if method.count_zero_gradient_steps:
        record['zero_gradient_steps'] = sum(r == 0.0 for r in rewards)
    record.update(curve=rewards, after=after, paired_diff=paired_differences(after, before))
    record.update(method.summarise(history) if method.summarise else {})
    return record


def run_lab(recipe, context, methods):
    """Evaluate the warm start, train one copy per seed (and arm), evaluate -> the results.

    `methods` is one Method, or {arm name: (Method, fields recorded for that arm)}.
    """
    with arl.SandboxPool() as pool:
        return run_arms(recipe, context, methods, *gym(recipe.rl_tasks, pool))


def run_arms(recipe, context, methods, tok, splits, env):
    arms = methods if isinstance(methods, dict) else {None: (methods, {})}
    before = evaluate(load_warm_start(recipe, context), env, splits, tok, recipe)
    print('before', rates(before), flush=True)
    results = {'rl_tasks': {'split': 'train', 'first': recipe.rl_tasks,
                            'ids': [t.id for t in splits['rl']]},
               'eval': {'seed': recipe.eval_seed, 'sets': [list(e) for e in EVALS]},
               'before': before}
    if isinstance(methods, dict):
        results['arms'] = {arm: {**fields, 'runs': []} for arm, (_, fields) in arms.items()}
    else:
        results['runs'] = []
    for seed in recipe.seeds:
        for arm, (method, _) in arms.items():
            label = f'seed {seed}' + (f' arm {arm}' if arm else '')
            t0 = time.time()
            torch.manual_seed(seed)
            model = load_warm_start(recipe, context)
            history = train(method, model, env, splits['rl'], tok, seed, recipe, label)
            train_seconds = time.time() - t0
            after = evaluate(model.eval(), env, splits, tok, recipe)
            run = run_record(method, history, seed, train_seconds, after, before)
            print(f'{label}: {train_seconds:.0f} s,', rates(after), flush=True)
            (results['runs'] if arm is None else results['arms'][arm]['runs']).append(run)
    results['total_seconds'] = round(time.time() - context.start)
    return results
