"""What every multi-seed method lab shares: the task set, the budget, the evaluation, the record.

Chapters 6-9 each train TinyAgent from the same warm start (`results/warm_start.pt`, made by
`warm_start.py`) with one method: REINFORCE, RLOO, PPO, GRPO. A comparison between them means
something only if everything but the method is the same, so that is fixed here, once:

  seeds        SEEDS, one run per seed; a run's seed drives task choice and sampling
  budget       STEPS updates of EPISODES_PER_STEP sampled episodes: 800 episodes per seed,
               whatever the method does with them (one gradient step or several epochs)
  tasks        the first N_RL_TASKS tasks of the `train` split (episodes sampled in lockstep by
               rollout_batch through collect_episodes, sandbox calls on a pre-forked SandboxPool)
  evaluation   EVALS with sampling seed EVAL_SEED, before and after training (common random
               numbers, so a paired difference per task is reported as well)

  rl_t1         the RL task set, three episodes per task at temperature 1
  rl_greedy     the same tasks, one greedy episode each
  heldout_t1    every task of the `heldout` split, one episode at temperature 1

This module is also the harness that runs a lab, so that a lab script is its method and its
recipe, nothing else. A lab describes its method with `Method`: `update(learner, optimiser,
batch)`, one update on one batch of freshly sampled episodes (`EPISODES_PER_STEP` tasks of one
episode each or, with `group_size` G, `EPISODES_PER_STEP // G` tasks of G episodes each, as
`agentrl.collect_groups` returns them), returning a stats dict with at least 'reward', the mean
reward of the batch; optionally `learner(model)`, the module to optimise around the warm start
(a value head, say), and `summarise(history)`, the lab's own per-run fields (say, the number of
constant groups), added to each run's record. `run_lab(name, method, recipe)` then does the
rest: the task stream (`task_batches`), the training loop (Adam, `STEPS` updates, progress
printed every `PROGRESS_EVERY` updates), the evaluation before and after, and the record
`results/<name>.json`: the recipe, the task ids, the evaluation before (once) and after (per
seed), per-task paired differences, the per-update reward curve of each run, and
`zero_gradient_steps`, the updates in which no sampled episode succeeded (with 0/1 rewards and
no baseline, exactly the updates whose gradient is zero; a method with a baseline also gets
zero from groups that all succeed, which its lab counts itself). A lab that compares arms
(`run_lab(name, {arm: (method, fields)}, recipe)`) gets one run per seed and arm, recorded per
arm, and the file is rewritten after every run with 'complete': false until the last one.
Standard errors are over tasks.

Every lab takes `--reduced`: one seed, 3 updates, 8 RL tasks (the evaluation sets unchanged),
written to `--results` (a scratch directory; never over the committed results). It checks that
a lab runs and that a change to the harness changes no number, in a minute instead of an hour.

Labs run single-threaded and seeded: a rerun gives the same numbers.
"""

import argparse
import json
import pathlib
import random
import time
from dataclasses import dataclass
from typing import Callable

import torch

import agentrl as arl

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
WARM_START = RESULTS / 'warm_start.pt'
SEEDS = (0, 1, 2)
STEPS = 100              # updates per seed
EPISODES_PER_STEP = 8    # sampled episodes per update: the budget is STEPS x 8 = 800 per seed
LR = 3e-4                # Adam, every method
GRAD_CLIP = 1.0
N_RL_TASKS = 64          # RL trains on the first 64 tasks of the train split
EVAL_SEED = 7            # sampling seed of every evaluation episode (before and after)
# (name, task set, temperature, episodes per task)
EVALS = (('rl_t1', 'rl', 1.0, 3), ('rl_greedy', 'rl', 0.0, 1), ('heldout_t1', 'heldout', 1.0, 1))
PROGRESS_EVERY = 10      # updates between progress lines


@dataclass(frozen=True)
class Budget:
    seeds: tuple
    steps: int
    rl_tasks: int


FULL = Budget(SEEDS, STEPS, N_RL_TASKS)
REDUCED = Budget((0,), 3, 8)


@dataclass(frozen=True)
class Method:
    """What a lab adds to the harness (see the module docstring)."""

    update: Callable                     # (learner, optimiser, batch) -> stats with 'reward'
    group_size: int = 1                  # episodes per task in a batch
    learner: Callable | None = None      # warm-started model -> the module to optimise
    summarise: Callable | None = None    # history -> the lab's own per-run fields
    # False where a batch with no success still has a gradient (a KL penalty in the reward).
    count_zero_gradient_steps: bool = True


def load_warm_start():
    """A fresh copy of the warm-started TinyAgent, in eval mode."""
    state = torch.load(WARM_START, weights_only=True)
    model = arl.TinyAgent(**state['model_config'])
    model.load_state_dict(state['state_dict'])
    return model.eval()


def evaluate(model, env, splits, tok):
    """Every evaluation set of EVALS -> {name: rate, stderr, counts, per-task rates}."""
    out = {}
    for name, split, temperature, samples in EVALS:
        res = arl.solve_rate(model, env, splits[split], tok, samples=samples,
                             temperature=temperature, seed=EVAL_SEED)
        out[name] = {'rate': res.rate, 'stderr': res.stderr, 'tasks': len(splits[split]),
                     'samples': samples, 'episodes': len(splits[split]) * samples,
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


def gym(rl_tasks=N_RL_TASKS):
    """Deterministic single-threaded torch, then (tokenizer, task splits incl. 'rl', environment)."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tok = arl.CharTokenizer()
    tasks = arl.make_tasks(seed=0)
    splits = {s: [t for t in tasks if t.split == s] for s in ('train', 'heldout')}
    splits['rl'] = splits['train'][:rl_tasks]
    return tok, splits, arl.BugFixEnv(cache={}, sandbox=arl.SandboxPool().run)


def task_batches(rl_tasks, seed, tasks_per_step):
    """An endless reproducible stream of (task batch, sampling seed), one per update."""
    rng = random.Random(seed)
    while True:
        yield rng.sample(rl_tasks, tasks_per_step), rng.randrange(2 ** 31)


def train(method, model, env, rl_tasks, tok, seed, steps, label):
    """The training loop of every lab: `steps` updates of `method` on fresh batches, in place."""
    learner = method.learner(model) if method.learner else model
    opt = torch.optim.Adam(learner.parameters(), lr=LR)
    batches = task_batches(rl_tasks, seed, EPISODES_PER_STEP // method.group_size)
    history, start = [], time.time()
    for step in range(1, steps + 1):
        tasks, sampling_seed = next(batches)
        if method.group_size == 1:
            batch = arl.collect_episodes(model, env, tasks, tok, seed=sampling_seed)
        else:
            batch = arl.collect_groups(model, env, tasks, tok, method.group_size,
                                       seed=sampling_seed)
        history.append(method.update(learner, opt, batch))
        if step % PROGRESS_EVERY == 0:
            recent = [h['reward'] for h in history[-PROGRESS_EVERY:]]
            print(f'  {label}: update {step}/{steps}, reward {sum(recent) / len(recent):.3f} '
                  f'over the last {len(recent)}, {time.time() - start:.0f} s', flush=True)
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


def arguments(doc, *flags, argv=None):
    """The command line of a lab: --reduced, --results, and the lab's own `(flag, help)`s."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument('--reduced', action='store_true',
                        help=f'a quick check: seeds {REDUCED.seeds}, {REDUCED.steps} updates, '
                             f'{REDUCED.rl_tasks} RL tasks; needs --results')
    parser.add_argument('--results', type=pathlib.Path, default=RESULTS,
                        help='directory to write the record to (default: the committed results)')
    for flag, text in flags:
        parser.add_argument(flag, action='store_true', help=text)
    args = parser.parse_args(argv)
    if args.reduced and args.results.resolve() == RESULTS:
        parser.error('--reduced would overwrite the committed results: give --results DIR')
    return args


def run_lab(name, methods, recipe, args=None):
    """Evaluate the warm start, train one copy per seed (and arm), evaluate, write the record.

    `methods` is one Method, or {arm name: (Method, fields recorded for that arm)}.
    """
    args = args or arguments(__doc__)
    budget = REDUCED if args.reduced else FULL
    start = time.time()
    tok, splits, env = gym(budget.rl_tasks)
    arms = methods if isinstance(methods, dict) else {None: (methods, {})}

    before = evaluate(load_warm_start(), env, splits, tok)
    print('before', rates(before), flush=True)
    record = {
        'lab': f'book/labs/{name}.py',
        'torch_version': torch.__version__,
        'threads': torch.get_num_threads(),
        'warm_start': 'results/warm_start.pt',
        'recipe': {'steps': budget.steps, 'episodes_per_step': EPISODES_PER_STEP, 'lr': LR,
                   'optimizer': 'Adam', 'grad_clip': GRAD_CLIP, 'temperature': 1.0, **recipe},
        'rl_tasks': {'split': 'train', 'first': budget.rl_tasks,
                     'ids': [t.id for t in splits['rl']]},
        'eval': {'seed': EVAL_SEED, 'sets': [list(e) for e in EVALS]},
        'before': before,
    }
    if isinstance(methods, dict):
        record['arms'] = {arm: {**fields, 'runs': []} for arm, (_, fields) in arms.items()}
        record['complete'] = False
    else:
        record['runs'] = []
    args.results.mkdir(parents=True, exist_ok=True)
    path = args.results / f'{name}.json'
    for seed in budget.seeds:
        for arm, (method, _) in arms.items():
            label = f'seed {seed}' + (f' arm {arm}' if arm else '')
            t0 = time.time()
            torch.manual_seed(seed)
            model = load_warm_start()
            history = train(method, model, env, splits['rl'], tok, seed, budget.steps, label)
            train_seconds = time.time() - t0
            after = evaluate(model.eval(), env, splits, tok)
            run = run_record(method, history, seed, train_seconds, after, before)
            print(f'{label}: {train_seconds:.0f} s,', rates(after), flush=True)
            if arm is None:
                record['runs'].append(run)
                continue
            record['arms'][arm]['runs'].append(run)
            record['total_seconds'] = round(time.time() - start)
            path.write_text(json.dumps(record, indent=1) + '\n')
    if isinstance(methods, dict):
        record['complete'] = True
    record['total_seconds'] = round(time.time() - start)
    path.write_text(json.dumps(record, indent=1) + '\n')
    print('wrote', path)
