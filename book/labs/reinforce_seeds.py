"""REINFORCE from the warm start, several seeds: the evidence behind Chapter 6, Section 6.7.

What it measures. Chapter 6 runs REINFORCE on TinyAgent for a few steps, within its one-minute
budget, and one short run of one seed shows nothing reliable. This lab runs the same recipe
(`agentrl.collect_episodes` + `agentrl.reinforce_step`, the chapter's hyperparameters) for
longer, from the same warm start (`results/warm_start.pt`, made by `warm_start.py`), once per
seed, and measures the solve rate before and after on fixed evaluation sets:

  rl_t1         the RL task set (the first 64 tasks of the `train` split), three episodes
                per task at temperature 1
  rl_greedy     the same tasks, one greedy episode each
  heldout_t1    every task of the `heldout` split, one episode at temperature 1

RL trains on a fixed set of 64 training tasks rather than on all 225, so that each task is
drawn about 12 times in 100 steps of 8 episodes: with fewer draws per task, the update per task
is too small to measure in a few minutes. The evaluation episodes on the RL tasks are fresh
samples (a sampling seed never used in training), so `rl_*` measures how well RL optimised the
objective it was given, and `heldout_t1` whether any of it transfers to unseen bugs.

The evaluation episodes use one fixed sampling seed before and after training (common random
numbers), so a paired difference per task is also reported. Standard errors are over tasks.

Output (committed; Chapter 6 reads it from $AGENTRL_BOOK/labs/results):
  results/reinforce_seeds.json

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/reinforce_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. It takes about 10 minutes on a
2-core machine (about 2.5 minutes of training and 0.7 of evaluation per seed), longer when
the cores are shared.
"""

import json
import pathlib
import random
import time

import torch

import agentrl as arl

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
SEEDS = (0, 1, 2)
STEPS = 100           # REINFORCE steps per seed
BATCH_SIZE = 8        # episodes per step: 8 distinct RL tasks, one episode each
LR = 3e-4             # Adam
AGGREGATION = 'seq-mean-token-sum'
GRAD_CLIP = 1.0
N_RL_TASKS = 64       # RL trains on the first 64 tasks of the train split
EVAL_SEED = 7         # sampling seed of every evaluation episode (before and after)
# (name, task set, temperature, episodes per task)
EVALS = (('rl_t1', 'rl', 1.0, 3), ('rl_greedy', 'rl', 0.0, 1), ('heldout_t1', 'heldout', 1.0, 1))


def load_warm_start():
    state = torch.load(RESULTS / 'warm_start.pt', weights_only=True)
    model = arl.TinyAgent(**state['model_config'])
    model.load_state_dict(state['state_dict'])
    return model.eval()


def evaluate(model, env, splits, tok):
    out = {}
    for name, split, temperature, samples in EVALS:
        res = arl.solve_rate(model, env, splits[split], tok, samples=samples,
                             temperature=temperature, seed=EVAL_SEED)
        out[name] = {'rate': res.rate, 'stderr': res.stderr, 'tasks': len(splits[split]),
                     'samples': samples, 'episodes': len(splits[split]) * samples,
                     'per_task': res.per_task.tolist()}
    return out


def train_reinforce(model, env, rl_tasks, tok, seed, steps):
    """The chapter's recipe: Adam, one episode per task at temperature 1, reinforce_step."""
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    rng = random.Random(seed)
    history = []
    for step in range(steps):
        batch = rng.sample(rl_tasks, BATCH_SIZE)
        episodes = arl.collect_episodes(model, env, batch, tok, seed=rng.randrange(2 ** 31))
        history.append(arl.reinforce_step(model, opt, episodes, AGGREGATION, GRAD_CLIP))
    return history


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    start = time.time()
    tok = arl.CharTokenizer()
    tasks = arl.make_tasks(seed=0)
    splits = {s: [t for t in tasks if t.split == s] for s in ('train', 'heldout')}
    splits['rl'] = splits['train'][:N_RL_TASKS]
    env = arl.BugFixEnv(cache={})

    before = evaluate(load_warm_start(), env, splits, tok)
    print('before', {k: round(v['rate'], 3) for k, v in before.items()}, flush=True)
    runs = []
    for seed in SEEDS:
        t0 = time.time()
        model = load_warm_start()
        history = train_reinforce(model, env, splits['rl'], tok, seed, STEPS)
        train_seconds = time.time() - t0
        after = evaluate(model, env, splits, tok)
        rewards = [h['reward'] for h in history]
        quarter = max(1, STEPS // 4)
        run = {
            'seed': seed, 'steps': STEPS, 'train_seconds': round(train_seconds),
            'mean_reward_first': sum(rewards[:quarter]) / quarter,
            'mean_reward_last': sum(rewards[-quarter:]) / quarter,
            'zero_gradient_steps': sum(h['reward'] == 0.0 for h in history),
            'after': after,
            'paired_diff': {},
        }
        for name in after:
            d = torch.tensor(after[name]['per_task']) - torch.tensor(before[name]['per_task'])
            run['paired_diff'][name] = {'mean': d.mean().item(),
                                        'stderr': d.std().item() / len(d) ** 0.5}
        runs.append(run)
        print(f'seed {seed}: {train_seconds:.0f} s,',
              {k: round(v['rate'], 3) for k, v in after.items()}, flush=True)

    record = {
        'lab': 'book/labs/reinforce_seeds.py',
        'torch_version': torch.__version__,
        'threads': torch.get_num_threads(),
        'warm_start': 'results/warm_start.pt',
        'recipe': {'steps': STEPS, 'batch_size': BATCH_SIZE, 'lr': LR, 'optimizer': 'Adam',
                   'aggregation': AGGREGATION, 'grad_clip': GRAD_CLIP, 'temperature': 1.0,
                   'returns': 'episode reward (0 or 1), no baseline'},
        'rl_tasks': {'split': 'train', 'first': N_RL_TASKS,
                     'ids': [t.id for t in splits['rl']]},
        'eval': {'seed': EVAL_SEED, 'sets': [list(e) for e in EVALS]},
        'before': before,
        'runs': runs,
        'total_seconds': round(time.time() - start),
    }
    (RESULTS / 'reinforce_seeds.json').write_text(json.dumps(record, indent=1) + '\n')
    print('wrote', RESULTS / 'reinforce_seeds.json')


if __name__ == '__main__':
    main()
