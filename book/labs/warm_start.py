"""Warm start for Chapter 6: supervised training of TinyAgent on the scripted expert.

What it measures. A randomly initialised TinyAgent never writes a valid tool call, so every
reward on the BugFix gym is 0 and every policy gradient is exactly 0 (Chapter 6, Section 6.6).
This lab trains a fresh TinyAgent (the Chapter 3 default configuration, about 0.2M parameters)
by next-token prediction (`agentrl.train_next_token`) on the expert's episodes
(`agentrl.teacher_rollout` with `agentrl.expert_policy`) of every task of the gym's `train`
split, with the loss on the expert's action tokens only. It then measures the solve rate at
temperature 1 and with greedy decoding on the `train` split (every task, one episode each,
sampling seeds never used in training) and on the `heldout` split (every task, one episode
each), with standard errors over tasks (`agentrl.solve_rate`).

The training length is chosen so that the policy solves roughly 10-50% of training tasks at
temperature 1, the kind of start from which policy-gradient RL has rewards to learn from.

Outputs (committed; chapters read them from $AGENTRL_BOOK/labs/results):
  results/warm_start.pt    {'state_dict': ..., 'model_config': {...}}
  results/warm_start.json  configuration, seeds, steps, losses, metrics, torch version

Run from the repository root:
    .venv/bin/python book/labs/warm_start.py
It is seeded and single-threaded, so a rerun gives the same weights and numbers. It takes
about 6-10 minutes on a 2-core machine (training about 5-8, evaluation about 1-2), longer
when the cores are shared.
"""

import json
import pathlib
import time

import torch

import agentrl as arl

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
MODEL_CONFIG = {'vocab_size': 101, 'd_model': 64, 'n_layers': 4, 'n_heads': 4, 'mlp_mult': 4,
                'tie_embeddings': True, 'seed': 0}
STEPS = 1000          # optimiser steps
BATCH_SIZE = 8        # expert episodes per step
LR = 5e-3             # peak learning rate (linear warm-up, cosine decay to 0)
TRAIN_SEED = 0        # minibatch order
EVAL_SEED = 2024      # sampling seeds of the evaluation episodes


def expert_examples(tasks, tokenizer, env):
    """(ids, loss mask) for the expert's episode of each task, cut after the last action:
    the final observation is never a target, so it would only cost compute."""
    examples = []
    for task in tasks:
        traj = arl.teacher_rollout(env, task, tokenizer, arl.expert_policy)
        assert traj.reward == 1.0, task.id
        mask = [int(v) for v in traj.action_mask.tolist()]
        end = max(i for i, v in enumerate(mask) if v) + 1
        examples.append((traj.ids[:end].tolist(), mask[:end]))
    return examples


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.time()
    tok = arl.CharTokenizer()
    tasks = arl.make_tasks(seed=0)
    train = [t for t in tasks if t.split == 'train']
    heldout = [t for t in tasks if t.split == 'heldout']
    env = arl.BugFixEnv(cache={})

    examples = expert_examples(train, tok, env)
    model = arl.TinyAgent(**MODEL_CONFIG)
    t0 = time.time()
    losses = arl.train_next_token(model, examples, steps=STEPS, lr=LR, batch_size=BATCH_SIZE,
                                  seed=TRAIN_SEED)
    train_seconds = time.time() - t0
    print(f'trained {STEPS} steps in {train_seconds:.0f} s; loss {sum(losses[:50]) / 50:.4f}'
          f' (first 50) -> {sum(losses[-50:]) / 50:.4f} (last 50)', flush=True)

    metrics = {}
    for split, split_tasks in (('train', train), ('heldout', heldout)):
        for name, temperature in (('t1', 1.0), ('greedy', 0.0)):
            res = arl.solve_rate(model, env, split_tasks, tok, samples=1,
                                 temperature=temperature, seed=EVAL_SEED)
            metrics[f'{split}_{name}'] = {'rate': res.rate, 'stderr': res.stderr,
                                          'tasks': len(split_tasks), 'samples': 1,
                                          'episodes': len(split_tasks),
                                          'temperature': temperature}
            print(f'{split:8s} {name:7s} {res.rate:.3f} +- {res.stderr:.3f}', flush=True)

    RESULTS.mkdir(parents=True, exist_ok=True)
    torch.save({'state_dict': model.state_dict(), 'model_config': MODEL_CONFIG},
               RESULTS / 'warm_start.pt')
    record = {
        'lab': 'book/labs/warm_start.py',
        'torch_version': torch.__version__,
        'model_config': MODEL_CONFIG,
        'parameters': sum(p.numel() for p in model.parameters()),
        'task_seed': 0,
        'seed': TRAIN_SEED,
        'eval_seed': EVAL_SEED,
        'steps': STEPS,
        'batch_size': BATCH_SIZE,
        'lr': LR,
        'train_tasks': len(train),
        'expert_tokens_mean': sum(len(ids) for ids, _ in examples) / len(examples),
        'loss_first50': sum(losses[:50]) / 50,
        'loss_last50': sum(losses[-50:]) / 50,
        'metrics': metrics,
        'train_seconds': round(train_seconds),
        'total_seconds': round(time.time() - start),
        'threads': torch.get_num_threads(),
    }
    (RESULTS / 'warm_start.json').write_text(json.dumps(record, indent=2) + '\n')
    print('wrote', RESULTS / 'warm_start.pt', 'and warm_start.json')


if __name__ == '__main__':
    main()
