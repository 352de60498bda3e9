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

Record: results/warm_start.json (kind warm_start: the recipe, the losses, the metrics) and
its checkpoint results/warm_start.pt ({'state_dict': ..., 'model_config': {...}}), which the
chapters read through agentrl.load_record('warm_start').

Run from the repository root:
    .venv/bin/python book/labs/warm_start.py
It is seeded and single-threaded, so a rerun gives the same weights and numbers. It takes
about 6-10 minutes on a 2-core machine (training about 5-8, evaluation about 1-2). The
training saves its state every --save-every steps, so --resume continues a run that stopped.

`imitate` is the training loop of this lab and of gym_v2_warm_start.py: the steps of
`agentrl.train_next_token`, draw for draw, with the state saved as it goes.
"""

import dataclasses
import math
import time

import torch

import agentrl as arl
import harness
from harness import option

MODEL_CONFIG = {'vocab_size': 101, 'd_model': 64, 'n_layers': 4, 'n_heads': 4, 'mlp_mult': 4,
                'tie_embeddings': True, 'seed': 0}
PROGRESS_EVERY = 200     # training steps between progress lines


@dataclasses.dataclass(frozen=True)
class WarmStartRecipe(harness.Recipe):
    steps: int = option(1000, 'optimiser steps', short='steps')
    batch_size: int = option(8, 'expert episodes per step', short='b')
    lr: float = option(5e-3, 'peak learning rate (linear warm-up, cosine decay to 0)', short='lr')
    seed: int = option(0, 'minibatch order (and torch\'s generator)', short='s')
    task_seed: int = option(0, 'seed of the task set (agentrl.make_tasks)')
    eval_seed: int = option(2024, 'sampling seeds of the evaluation episodes')
    eval_tasks: int = option(0, 'tasks per evaluation split, the first ones (0: every task)')
    model_config: dict = option(MODEL_CONFIG, 'TinyAgent configuration', short='')

    def reduced(self):
        return dataclasses.replace(self, steps=4, eval_tasks=4)


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


def imitate(model, examples, steps, lr, batch_size, seed, context, recipe, warmup=20,
            grad_clip=1.0):
    """agentrl.train_next_token(model, examples, steps, lr, batch_size, seed), step for step
    (the same minibatch draws, schedule and AdamW updates, so the same weights and losses),
    with its state saved through context.progress and restored with --resume -> the losses."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    losses, first = [], 0
    state = context.saved_state(recipe)
    if state:
        model.load_state_dict(state['model'])
        opt.load_state_dict(state['optimizer'])
        gen.set_state(state['generator'])
        harness.set_rng_state(state['rng'])
        losses, first = state['losses'], state['update']
    start = time.time()
    model.train()
    for step in range(first, steps):
        picks = torch.randint(len(examples), (batch_size,), generator=gen).tolist()
        pairs = [examples[i] for i in picks]
        ids, real = arl.pad_batch([p[0] for p in pairs], arl.PAD_ID)          # [B, T]
        target, _ = arl.pad_batch([p[1] for p in pairs], 0)                   # [B, T]
        scale = min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for group in opt.param_groups:
            group['lr'] = lr * scale
        loss = arl.next_token_loss(model, ids, target.float() * real)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
        losses.append(loss.item())
        if (step + 1) % PROGRESS_EVERY == 0:
            print(f'  step {step + 1}/{steps}, {time.time() - start:.0f} s', flush=True)
        context.progress(step + 1, lambda: {
            'model': model.state_dict(), 'optimizer': opt.state_dict(),
            'generator': gen.get_state(), 'rng': harness.rng_state(), 'losses': losses}, recipe)
    model.eval()
    return losses


def mean_first(values, n=50):
    return sum(values[:n]) / len(values[:n])


def mean_last(values, n=50):
    return sum(values[-n:]) / len(values[-n:])


@harness.with_sandbox_pool
def run(recipe, context, pool):
    torch.manual_seed(recipe.seed)
    tok = arl.CharTokenizer()
    tasks = arl.make_tasks(seed=recipe.task_seed)
    train = [t for t in tasks if t.split == 'train']
    heldout = [t for t in tasks if t.split == 'heldout']
    env = arl.BugFixEnv(cache={}, sandbox=pool.run)

    examples = expert_examples(train, tok, env)
    model = arl.TinyAgent(**recipe.model_config)
    t0 = time.time()
    losses = imitate(model, examples, recipe.steps, recipe.lr, recipe.batch_size, recipe.seed,
                     context, recipe)
    train_seconds = time.time() - t0
    print(f'trained {recipe.steps} steps in {train_seconds:.0f} s; loss {mean_first(losses):.4f}'
          f' (first 50) -> {mean_last(losses):.4f} (last 50)', flush=True)

    metrics = {}
    for split, split_tasks in (('train', train), ('heldout', heldout)):
        split_tasks = split_tasks[:recipe.eval_tasks or None]
        for name, temperature in (('t1', 1.0), ('greedy', 0.0)):
            res = arl.solve_rate(model, env, split_tasks, tok, samples=1,
                                 temperature=temperature, seed=recipe.eval_seed)
            metrics[f'{split}_{name}'] = {'rate': res.rate, 'stderr': res.stderr,
                                          'tasks': len(split_tasks), 'samples': 1,
                                          'episodes': len(split_tasks),
                                          'temperature': temperature}
            print(f'{split:8s} {name:7s} {res.rate:.3f} +- {res.stderr:.3f}', flush=True)
    context.save_checkpoint(model, recipe.model_config)
    return {'parameters': sum(p.numel() for p in model.parameters()), 'train_tasks': len(train),
            'expert_tokens_mean': sum(len(ids) for ids, _ in examples) / len(examples),
            'loss_first50': mean_first(losses), 'loss_last50': mean_last(losses),
            'metrics': metrics, 'train_seconds': round(train_seconds),
            'total_seconds': round(time.time() - context.start)}


LAB = harness.Lab(__file__, 'warm_start', WarmStartRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
