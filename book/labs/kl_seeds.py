"""A KL penalty to the warm start, with and without, several seeds: the evidence behind Chapter 10.

What it measures. Chapter 10, Section 10.6, runs `agentrl.regularised_pg_step` for eight updates
with and without a KL penalty to the warm start and prints the entropy and the KL per policy
token at every step; eight updates of one seed show how the curves start, not where they go.
This lab runs the same two recipes for the budget every method lab shares (`seeds_common.py`:
the same warm start, seeds, 64 RL tasks, 100 updates of 8 sampled episodes = 800 episodes per
seed, Adam 3e-4, gradient clipping at 1, the same evaluation before and after):

  each update  8 RL tasks, one episode each at temperature 1 (`agentrl.collect_episodes`, the
               task stream of `seeds_common.task_batches`), and one
               `agentrl.regularised_pg_step`: each episode weighted by its reward minus the mean
               reward of the other 7 episodes (leave-one-out baseline), 'seq-mean-token-sum'
  arm 'none'   no penalty (kl_coef 0)
  arm 'kl'     kl_coef 1.0 per policy token, in the reward (k1 of the sampled token, credited
               to every earlier token of the episode: reward-to-go)

Both arms use the same seeds, so they sample the same tasks with the same sampling seeds (common
random numbers) and share one evaluation of the warm start. Every update records the exact KL
per policy token between the sampling policy and the warm start (full-vocabulary sum,
`agentrl.token_kl`) and the mean entropy per policy token (`agentrl.entropy`) on the update's own
batch.

Output (committed; Chapter 10 reads it from $AGENTRL_BOOK/labs/results):
  results/kl_seeds.json   recipe, task ids, the evaluation before (once) and after (per arm and
                          seed) with per-task paired differences, and per run the curves of
                          reward, KL and entropy (one value per update). The file is rewritten
                          after every run, with 'complete': false until the last one.

Run from the repository root, after warm_start.py:
    .venv/bin/python book/labs/kl_seeds.py
Seeded and single-threaded: a rerun gives the same numbers. Six runs of 100 updates plus seven
evaluations: about 30 minutes on an idle 2-core machine, longer when the cores are shared.
"""

import json
import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import seeds_common as sc  # noqa: E402

import agentrl as arl  # noqa: E402

NAME = 'kl_seeds'
ARMS = (('none', 0.0), ('kl', 1.0))
KL_MODE = 'reward'


def train(model, reference, env, rl_tasks, tok, seed, kl_coef):
    opt = torch.optim.Adam(model.parameters(), lr=sc.LR)
    batches = sc.task_batches(rl_tasks, seed, sc.EPISODES_PER_STEP)
    history = []
    for _ in range(sc.STEPS):
        tasks, sample_seed = next(batches)
        episodes = arl.collect_episodes(model, env, tasks, tok, seed=sample_seed)
        history.append(arl.regularised_pg_step(model, reference, opt, episodes, kl_coef=kl_coef,
                                               kl_mode=KL_MODE, grad_clip=sc.GRAD_CLIP))
    return history


def main():
    start = time.time()
    tok, splits, env = sc.gym()
    reference = sc.load_warm_start()
    for p in reference.parameters():
        p.requires_grad_(False)

    before = sc.evaluate(reference, env, splits, tok)
    print('before', {k: round(v['rate'], 3) for k, v in before.items()}, flush=True)
    record = {
        'lab': f'book/labs/{NAME}.py',
        'torch_version': torch.__version__,
        'threads': torch.get_num_threads(),
        'warm_start': 'results/warm_start.pt',
        'recipe': {'steps': sc.STEPS, 'episodes_per_step': sc.EPISODES_PER_STEP, 'lr': sc.LR,
                   'optimizer': 'Adam', 'grad_clip': sc.GRAD_CLIP, 'temperature': 1.0,
                   'method': 'regularised_pg_step: leave-one-out batch baseline, '
                             'seq-mean-token-sum', 'kl_mode': KL_MODE,
                   'arms': {name: coef for name, coef in ARMS}},
        'rl_tasks': {'split': 'train', 'first': sc.N_RL_TASKS,
                     'ids': [t.id for t in splits['rl']]},
        'eval': {'seed': sc.EVAL_SEED, 'sets': [list(e) for e in sc.EVALS]},
        'before': before,
        'arms': {name: {'kl_coef': coef, 'runs': []} for name, coef in ARMS},
        'complete': False,
    }
    path = sc.RESULTS / f'{NAME}.json'
    for seed in sc.SEEDS:
        for name, coef in ARMS:
            t0 = time.time()
            torch.manual_seed(seed)
            model = sc.load_warm_start()
            history = train(model, reference, env, splits['rl'], tok, seed, coef)
            train_seconds = time.time() - t0
            after = sc.evaluate(model.eval(), env, splits, tok)
            rewards = [h['reward'] for h in history]
            quarter = max(1, len(rewards) // 4)
            record['arms'][name]['runs'].append({
                'seed': seed, 'steps': len(history), 'train_seconds': round(train_seconds),
                'mean_reward_first': sum(rewards[:quarter]) / quarter,
                'mean_reward_last': sum(rewards[-quarter:]) / quarter,
                'curve': rewards,
                'curve_kl': [h['kl'] for h in history],
                'curve_entropy': [h['entropy'] for h in history],
                'curve_k3': [h['k3'] for h in history],
                'grad_norm_mean': sum(h['grad_norm'] for h in history) / len(history),
                'after': after,
                'paired_diff': sc.paired_differences(after, before),
            })
            record['total_seconds'] = round(time.time() - start)
            path.write_text(json.dumps(record, indent=1) + '\n')
            print(f'seed {seed} arm {name}: {train_seconds:.0f} s, final KL {history[-1]["kl"]:.4f},',
                  {k: round(v['rate'], 3) for k, v in after.items()}, flush=True)
    record['complete'] = True
    record['total_seconds'] = round(time.time() - start)
    path.write_text(json.dumps(record, indent=1) + '\n')
    print('wrote', path)


if __name__ == '__main__':
    main()
