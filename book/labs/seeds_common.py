"""What every multi-seed method lab shares: the task set, the budget, the evaluation, the record.

Chapters 6-9 each train TinyAgent from the same warm start (`results/warm_start.pt`, made by
`warm_start.py`) with one method: REINFORCE, RLOO, PPO, GRPO. A comparison between them means
something only if everything but the method is the same, so that is fixed here, once:

  seeds        SEEDS, one run per seed; a run's seed drives task choice and sampling
  budget       STEPS updates of EPISODES_PER_STEP sampled episodes: 800 episodes per seed,
               whatever the method does with them (one gradient step or several epochs)
  tasks        the first N_RL_TASKS tasks of the `train` split
  evaluation   EVALS with sampling seed EVAL_SEED, before and after training (common random
               numbers, so a paired difference per task is reported as well)

  rl_t1         the RL task set, three episodes per task at temperature 1
  rl_greedy     the same tasks, one greedy episode each
  heldout_t1    every task of the `heldout` split, one episode at temperature 1

A method lab is a short script that defines `train(model, env, rl_tasks, tok, seed)`, which
trains `model` (a warm-started TinyAgent) in place and returns one stats dict per update with at
least 'reward', the mean reward of the update's sampled episodes, and calls
`run_lab(name, train, recipe, summarise)`; the optional `summarise(history)` returns the lab's
own per-run fields (say, the number of constant groups), which are added to each run's record.
That writes `results/<name>.json`: the recipe, the task ids,
the evaluation before (once) and after (per seed), per-task paired differences, the
per-update reward curve of each run, and `zero_gradient_steps`, the updates in which no sampled
episode succeeded (with 0/1 rewards and no baseline, exactly the updates whose gradient is zero;
a method with a baseline also gets zero from groups that all succeed, which its lab counts
itself). Standard errors are over tasks.

Labs run single-threaded and seeded: a rerun gives the same numbers.
"""

import json
import pathlib
import random
import time

import torch

import agentrl as arl

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
SEEDS = (0, 1, 2)
STEPS = 100              # updates per seed
EPISODES_PER_STEP = 8    # sampled episodes per update: the budget is STEPS x 8 = 800 per seed
LR = 3e-4                # Adam, every method
GRAD_CLIP = 1.0
N_RL_TASKS = 64          # RL trains on the first 64 tasks of the train split
EVAL_SEED = 7            # sampling seed of every evaluation episode (before and after)
# (name, task set, temperature, episodes per task)
EVALS = (('rl_t1', 'rl', 1.0, 3), ('rl_greedy', 'rl', 0.0, 1), ('heldout_t1', 'heldout', 1.0, 1))


def load_warm_start():
    """A fresh copy of the warm-started TinyAgent, in eval mode."""
    state = torch.load(RESULTS / 'warm_start.pt', weights_only=True)
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


def paired_differences(after, before):
    """Per evaluation set: mean and standard error of the per-task change."""
    out = {}
    for name in after:
        d = torch.tensor(after[name]['per_task']) - torch.tensor(before[name]['per_task'])
        out[name] = {'mean': d.mean().item(), 'stderr': d.std().item() / len(d) ** 0.5}
    return out


def gym():
    """Deterministic single-threaded torch, then (tokenizer, task splits incl. 'rl', environment)."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tok = arl.CharTokenizer()
    tasks = arl.make_tasks(seed=0)
    splits = {s: [t for t in tasks if t.split == s] for s in ('train', 'heldout')}
    splits['rl'] = splits['train'][:N_RL_TASKS]
    return tok, splits, arl.BugFixEnv(cache={})


def run_lab(name, train, recipe, summarise=None):
    """Evaluate the warm start, train one copy per seed with `train`, evaluate, write the JSON."""
    start = time.time()
    tok, splits, env = gym()

    before = evaluate(load_warm_start(), env, splits, tok)
    print('before', {k: round(v['rate'], 3) for k, v in before.items()}, flush=True)
    runs = []
    for seed in SEEDS:
        t0 = time.time()
        torch.manual_seed(seed)
        model = load_warm_start()
        history = train(model, env, splits['rl'], tok, seed)
        train_seconds = time.time() - t0
        policy = getattr(model, 'policy', model)      # a value-head wrapper keeps its policy
        after = evaluate(policy.eval(), env, splits, tok)
        rewards = [h['reward'] for h in history]
        quarter = max(1, len(rewards) // 4)
        runs.append({
            'seed': seed, 'steps': len(history), 'train_seconds': round(train_seconds),
            'mean_reward_first': sum(rewards[:quarter]) / quarter,
            'mean_reward_last': sum(rewards[-quarter:]) / quarter,
            'zero_gradient_steps': sum(r == 0.0 for r in rewards),
            'curve': rewards,
            'after': after,
            'paired_diff': paired_differences(after, before),
            **(summarise(history) if summarise else {}),
        })
        print(f'seed {seed}: {train_seconds:.0f} s,',
              {k: round(v['rate'], 3) for k, v in after.items()}, flush=True)

    record = {
        'lab': f'book/labs/{name}.py',
        'torch_version': torch.__version__,
        'threads': torch.get_num_threads(),
        'warm_start': 'results/warm_start.pt',
        'recipe': {'steps': STEPS, 'episodes_per_step': EPISODES_PER_STEP, 'lr': LR,
                   'optimizer': 'Adam', 'grad_clip': GRAD_CLIP, 'temperature': 1.0, **recipe},
        'rl_tasks': {'split': 'train', 'first': N_RL_TASKS,
                     'ids': [t.id for t in splits['rl']]},
        'eval': {'seed': EVAL_SEED, 'sets': [list(e) for e in EVALS]},
        'before': before,
        'runs': runs,
        'total_seconds': round(time.time() - start),
    }
    path = RESULTS / f'{name}.json'
    path.write_text(json.dumps(record, indent=1) + '\n')
    print('wrote', path)


def task_batches(rl_tasks, seed, tasks_per_step):
    """An endless reproducible stream of (task batch, sampling seed), one per update."""
    rng = random.Random(seed)
    while True:
        yield rng.sample(rl_tasks, tasks_per_step), rng.randrange(2 ** 31)
