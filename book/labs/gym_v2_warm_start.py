"""Warm start on BugFix v2: does imitation on a varied distribution solve unseen placements?

Trains a fresh TinyAgent (the Chapter 3 default, about 0.2M parameters) with the book's
warm-start recipe (`agentrl.train_next_token` on the expert's action tokens, as in
warm_start.py) on the `train` split of book/labs/gym_v2.py, RECOVERY_SHARE of the episodes
being recovery demonstrations, then evaluates it with book/labs/evaluate.py on four splits
(one task per (template, line, kind) group, at most N_EVAL tasks each): T=1 with SAMPLES
episodes per task, greedy, pass@k and the expert-path probability.

  --hint-share F   share of training episodes whose failing-test observation names the bug's
                   line (HintedBugFixEnv); the model is evaluated with it (`hint`) on
                   every split and without it (`plain`) on the UNSEEN ones, paired by task
  --sweep MODE     also sample the unseen splits at SWEEP temperatures under
                   observation MODE: the sharpening control (the warm start at its best
                   temperature)
  --steps N        optimiser steps (default STEPS)
  --recovery-share F   share of recovery demonstrations (default RECOVERY_SHARE)
  --tag NAME       results/gym_v2_NAME.json
  --d-model D      TinyAgent width (default the book's 64)
  --n-eval N       tasks per evaluation split, one per group (default N_EVAL; the first four
                   runs below used 32)
  --save           keep the checkpoint as results/gym_v2_NAME.pt (the RL lab starts from it)
  --pad-lines K    insert 0..K blank lines into every task's function (gym_v2.pad_blank_lines),
                   evaluation tasks too: one placement then sits on different line numbers, so
                   the line can be read from the hint but not recalled from the function
  --copy-weight W  weight W (an integer) on the loss of the right edit's line digits and `<old>`
                   text, the tokens the hint shows and the policy must copy (default 1: the
                   book's recipe, every action token alike)
  --part-weight PART=W   weight W on one part of the right edit (line, old or new, the fix's
                   `|new` text; gym_v2.edit_parts), over --copy-weight; repeatable
  --check-share F  share of demonstrations in which the expert runs `test` after its right edit
                   and submits after the check passes (gym_v2.checked_policy; default 0): a
                   warm start that sometimes checks its edit, so RL can find what a check is
                   worth when the edit was wrong
  --retry-share F  share of the demonstrations (of training tasks that have one) in which the
                   expert first makes a wrong edit that applies on the bug's line, checks it,
                   undoes it and makes the right edit (gym_v2.retry_policy; default 0): a warm
                   start that has seen the way back from an applied mistake, so a second
                   attempt after a failing check can be a fresh one
  --mask-retry-mistake  give the retry demonstrations' wrong edit weight 0 in the loss: the
                   policy sees it in its context and learns what follows it, not to make it
                   (without it, a warm start trained on retries makes the wrong edit too)
  --train-seed S   seed of the model's initialisation, the draw of the expert episodes and the
                   minibatch order (default TRAIN_SEED): a second seed of one recipe says
                   whether a warm start's result belongs to the recipe or to its draw
  --load TAG       evaluate the saved warm start results/gym_v2_TAG.pt instead of training one
                   (e.g. the unpadded warm start on padded tasks)

Run from the repository root, one at a time (single-threaded, seeded):
    nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 0.5 --sweep hint \
        --tag mixed
    nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 \
        --recovery-share 0 --sweep hint --tag hint_only
    nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 --tag hint_recovery
    nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 --steps 1600 \
        --sweep hint --tag hint_recovery_1600
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 \
        --steps 3000 --sweep hint --save --tag hint_recovery_3000
Padded tasks (session 10 of GYM_V2.md): a warm start trained on them, and the unpadded one
evaluated on them, at the same evaluation tasks and episode seeds:
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 \
        --steps 3000 --sweep hint --save --pad-lines 2 --tag hint_recovery_3000_pad2
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 \
        --sweep hint --pad-lines 2 --load hint_recovery_3000 --tag hint_recovery_3000_on_pad2
(the first four with --n-eval 32 and the sweep at 0.3, 0.5, 0.7 on heldout only, as committed
then; evaluation was then one episode at a time, now batched through rollout_batch, which
gives the same episodes).
The validated task list and its sandbox results are cached in $TMPDIR (validation takes
about 30 s through a pre-forked SandboxPool, 12 minutes with a fresh process per call), so
only the first run pays for it.
"""

import argparse
import json
import pathlib
import pickle
import platform
import random
import sys
import tempfile
import time

import torch

import agentrl as arl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import evaluate as ev  # noqa: E402
import gym_v2  # noqa: E402
from warm_start import BATCH_SIZE, LR, MODEL_CONFIG  # noqa: E402  the book's recipe

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
STEPS = 1000              # optimiser steps, as the chapter-6 warm start (8 min on a shared machine)
RECOVERY_SHARE = 0.25     # default share of training episodes that show a failed edit, then the fix
TASK_SEED, TRAIN_SEED, EVAL_SEED = 0, 0, 2024
N_EVAL = 64               # tasks per evaluation split (one per group; heldout has 63 groups)
SAMPLES = 8               # episodes per task at each temperature
SWEEP = (0.1, 0.2, 0.3, 0.5, 0.7)   # extra temperatures of the sharpening control (unseen splits)
UNSEEN = ('heldout', 'stretch')   # splits also evaluated without the line hint
CHECKPOINTS = RESULTS     # --save writes results/gym_v2_TAG.pt (about 1-2 MB) for the RL lab


def machine():
    """The CPU a record was made on -> {'cpu': its model name, 'cpu_capability': ATen's kernels}.

    A lab replays its record bit for bit on the same kind of CPU. On another one (another
    vendor's matmul kernels, another instruction set) the last bits of a logit differ, a sampled
    token eventually flips, and the episodes drift apart after some tens of updates: the record
    then agrees in its statistics, not its digits. So every record names its machine."""
    try:
        cpuinfo = pathlib.Path('/proc/cpuinfo').read_text()
    except OSError:                                   # not Linux
        cpuinfo = ''
    names = [line.split(':', 1)[1].strip() for line in cpuinfo.splitlines()
             if line.startswith('model name')]
    return {'cpu': names[0] if names else platform.processor() or 'unknown',
            'cpu_capability': torch.backends.cpu.get_cpu_capability()}


def write_record(name, record, start):
    """Write results/NAME.json atomically (a temporary file, then a rename), with the machine it
    was made on, and say so."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f'{name}.json'
    tmp = out.with_suffix('.tmp')
    tmp.write_text(json.dumps({**record, 'machine': machine()}, indent=1) + '\n')
    tmp.replace(out)
    print('wrote', out, f'({time.time() - start:.0f} s in all)')


def load_tasks():
    """The validated v2 tasks and the sandbox cache that validated them (cached on disk)."""
    path = pathlib.Path(tempfile.gettempdir()) / f'gym_v2_tasks_seed{TASK_SEED}.pkl'
    if path.exists():
        return pickle.loads(path.read_bytes())
    cache = {}
    with arl.SandboxPool(workers=1) as pool:    # pre-forked: about 10x faster than a fresh
        env = arl.BugFixEnv(cache=cache, sandbox=pool.run)   # process per sandbox call
        tasks = gym_v2.make_v2_tasks(seed=TASK_SEED, env=env)
        for task in tasks:                       # the expert's `test` observation, run once
            env.run(task.code, task.visible)
    tmp = path.with_suffix('.tmp')
    tmp.write_bytes(pickle.dumps((tasks, cache)))
    tmp.replace(path)
    return tasks, cache


def played(tasks, cache, pad_lines):
    """{task id: the task an episode plays}: the task itself, or with pad_lines > 0 the task
    padded by gym_v2.pad_tasks and validated again (its sandbox results join `cache`). Splits,
    groups and placements are always read from the unpadded tasks: padding moves line numbers,
    not placements."""
    if not pad_lines:
        return {t.id: t for t in tasks}
    with arl.SandboxPool(workers=1) as pool:
        env = arl.BugFixEnv(cache=cache, sandbox=pool.run)
        padded = gym_v2.pad_tasks(tasks, pad_lines, env)
        for task in padded:
            env.run(task.code, task.visible)
    return {t.id: t for t in padded}


EDIT_PARTS = tuple(p for p in gym_v2.PARTS if p != 'calls')   # line, old, new: weightable
DEMONSTRATIONS = {   # option -> (its key in the record, its value in records that predate it)
    'check_share': ('check_share', 0.0),
    'retry_share': ('retry_share', 0.0),
    'mask_retry_mistake': ('retry_mistake_masked', False),
}


def part_weights(copy_weight=1, overrides=()):
    """{part: weight} for the right edit: copy_weight on its line and old text, 1 on its fix,
    then each (part, weight) of overrides."""
    weights = {'line': copy_weight, 'old': copy_weight, 'new': 1}
    weights.update(overrides)
    return weights


def weight_the_copy(ids, mask, tokenizer, weights):
    """The loss mask with weights[part] on each part (line digits, `<old>` text, `|new` fix) of
    the episode's last edit (the right one; a recovery episode's first edit is the mistake), 1
    elsewhere. Weights are integers (masks are padded as longs)."""
    out = list(mask)
    if all(w == 1 for w in weights.values()):
        return out
    for start, end in reversed(arl.action_spans(torch.tensor(mask, dtype=torch.float))):
        action = tokenizer.decode(ids[start:end])
        if action.startswith('<call> edit '):
            for i, name in zip(range(start, end), gym_v2.edit_parts(action, tokenizer)):
                out[i] = weights.get(name, 1)
            break
    return out


def expert_examples(tasks, tokenizer, envs, hint_share, recovery_share, seed, weights=None,
                    check_share=0.0, retry_share=0.0, wrong=None, mask_mistake=False):
    """(ids, loss mask) of one expert episode per task, cut after its last action; a seeded
    recovery_share of them are recovery episodes, a seeded hint_share played in envs['hint'],
    a seeded retry_share of the tasks with a wrong edit in `wrong` ({task id: patch},
    gym_v2.wrong_edits) retry after it (gym_v2.retry_policy), with mask_mistake its wrong edit
    left out of the loss (weight 0: in the context, never a target), a seeded check_share test
    the right edit before submitting (gym_v2.checked_policy); weights ({part: weight},
    part_weights) weight the last edit's parts (weight_the_copy)."""
    weights = weights or part_weights()
    wrong = wrong or {}
    rng = random.Random(seed)
    check_rng = random.Random(f'{seed}:check')   # its own streams: the other draws stay as they were
    retry_rng = random.Random(f'{seed}:retry')
    retry = gym_v2.retry_policy(wrong)
    examples = []
    for task in tasks:
        policy = gym_v2.recovery_policy if rng.random() < recovery_share else arl.expert_policy
        env = envs['hint' if rng.random() < hint_share else 'plain']
        retrying = retry_share and task.id in wrong and retry_rng.random() < retry_share
        if retrying:
            policy = retry
        if check_share and check_rng.random() < check_share:
            policy = gym_v2.checked_policy(policy)
        traj = arl.teacher_rollout(env, task, tokenizer, policy)
        assert traj.reward == 1.0, task.id
        mask = [int(v) for v in traj.action_mask.tolist()]
        end = max(i for i, v in enumerate(mask) if v) + 1
        ids = traj.ids[:end].tolist()
        weighted = weight_the_copy(ids, mask[:end], tokenizer, weights)
        if mask_mistake and retrying:
            weighted = leave_out(ids, weighted, tokenizer, f'<call> edit {wrong[task.id]} </call>')
        examples.append((ids, weighted))
    return examples


def leave_out(ids, mask, tokenizer, action):
    """The loss mask with weight 0 on the first action span that decodes to `action`."""
    for start, end in arl.action_spans(torch.tensor(mask, dtype=torch.float)):
        if tokenizer.decode(ids[start:end]) == action:
            return mask[:start] + [0] * (end - start) + mask[end:]
    raise ValueError(f'no action {action!r} in the episode')


def report_progress(model, steps, every=200):
    """Print every `every` training forward passes (train_next_token itself prints nothing)."""
    start, calls = time.time(), [0]

    def hook(module, args, output):
        if module.training:
            calls[0] += 1
            if calls[0] % every == 0:
                print(f'  step {calls[0]}/{steps}, {time.time() - start:.0f} s', flush=True)

    return model.register_forward_hook(hook)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hint-share', type=float, default=0.5)
    parser.add_argument('--sweep', choices=('plain', 'hint'))
    parser.add_argument('--steps', type=int, default=STEPS)
    parser.add_argument('--recovery-share', type=float, default=RECOVERY_SHARE)
    parser.add_argument('--tag', required=True)
    parser.add_argument('--d-model', type=int, default=MODEL_CONFIG['d_model'])
    parser.add_argument('--lr', type=float, default=LR,
                        help=f"peak learning rate of the warm-up and cosine schedule (default {LR})")
    parser.add_argument('--n-eval', type=int, default=N_EVAL)
    parser.add_argument('--save', action='store_true', help='keep the checkpoint in results/')
    parser.add_argument('--pad-lines', type=int, default=0, metavar='K',
                        help='insert 0..K blank lines into every task (gym_v2.pad_blank_lines)')
    parser.add_argument('--copy-weight', type=int, default=1, metavar='W',
                        help="weight W on the right edit's line digits and old text in the loss")
    parser.add_argument('--part-weight', action='append', default=[], metavar='PART=W',
                        help=f"weight W on one part of the right edit ({', '.join(EDIT_PARTS)})")
    parser.add_argument('--check-share', type=float, default=0.0, metavar='F',
                        help='share of demonstrations that run `test` after the right edit, '
                             'before the submit (gym_v2.checked_policy)')
    parser.add_argument('--retry-share', type=float, default=0.0, metavar='F',
                        help='share of demonstrations that make a wrong edit that applies, '
                             'check it, undo it and make the right edit (gym_v2.retry_policy)')
    parser.add_argument('--mask-retry-mistake', action='store_true',
                        help="leave the retry demonstrations' wrong edit out of the loss")
    parser.add_argument('--train-seed', type=int, metavar='S',
                        help='initialisation, expert draw and minibatch order '
                             f'(default {TRAIN_SEED})')
    parser.add_argument('--load', metavar='TAG',
                        help='evaluate results/gym_v2_TAG.pt instead of training a warm start')
    args = parser.parse_args()
    overrides = [item.partition('=')[::2] for item in args.part_weight]
    if any(part not in EDIT_PARTS or not w.isdigit() for part, w in overrides):
        parser.error(f"--part-weight takes PART=W with PART one of {', '.join(EDIT_PARTS)} and W "
                     f"a positive integer, not {' '.join(args.part_weight)}")
    weights = part_weights(args.copy_weight, [(part, int(w)) for part, w in overrides])
    if min(weights.values()) < 1:
        parser.error('--copy-weight and --part-weight take positive integers')
    if args.load and weights != part_weights():
        parser.error('--load evaluates a trained warm start; its weights come from its record, '
                     'so --copy-weight and --part-weight do not apply')
    if not 0 <= args.check_share <= 1:
        parser.error(f'--check-share takes a share in [0, 1], not {args.check_share}')
    if not 0 <= args.retry_share <= 1:
        parser.error(f'--retry-share takes a share in [0, 1], not {args.retry_share}')
    if args.mask_retry_mistake and not args.retry_share and not args.load:
        parser.error('--mask-retry-mistake masks the wrong edit of retry demonstrations; '
                     'give --retry-share')
    for option, (_, unset) in DEMONSTRATIONS.items():
        if args.load and getattr(args, option) != unset:
            parser.error('--load evaluates a trained warm start; its demonstrations come from '
                         f"its record, so --{option.replace('_', '-')} does not apply")
    if args.load and args.train_seed is not None:
        parser.error('--load evaluates a trained warm start; its seed comes from its record, '
                     'so --train-seed does not apply')
    if args.load and args.lr != LR:
        parser.error('--load evaluates a trained warm start; its learning rate comes from its '
                     'record, so --lr does not apply')
    train_seed = TRAIN_SEED if args.train_seed is None else args.train_seed
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.manual_seed(train_seed)
    start = time.time()
    tok = arl.CharTokenizer()
    tasks, cache = load_tasks()
    play = played(tasks, cache, args.pad_lines)
    envs = {mode: gym_v2.HintedBugFixEnv(hint=mode == 'hint', cache=cache)
            for mode in ('plain', 'hint')}
    train = [play[t.id] for t in tasks if t.split == 'train']
    splits = {s: [play[t.id] for t in gym_v2.one_per_group(tasks, s, args.n_eval, seed=EVAL_SEED)]
              for s in ('heldout', 'stretch', 'rename', 'train')}
    print(f'{len(tasks)} tasks, {len(train)} train; evaluating on',
          {s: len(v) for s, v in splits.items()}, f'({time.time() - start:.0f} s)', flush=True)

    if args.load:
        loaded = json.loads((RESULTS / f'gym_v2_{args.load}.json').read_text())
        args.copy_weight = loaded.get('copy_weight', 1)
        weights = loaded.get('part_weights', part_weights(args.copy_weight))
        train_seed = loaded.get('train_seed', TRAIN_SEED)
        for option, (key, unset) in DEMONSTRATIONS.items():
            setattr(args, option, loaded.get(key, unset))
    wrong = {}
    if args.retry_share:
        with arl.SandboxPool(workers=1) as pool:    # the checks after the wrong edits join cache
            wrong = gym_v2.wrong_edits(train, arl.BugFixEnv(cache=cache, sandbox=pool.run),
                                       seed=train_seed)
        print(f'{len(wrong)} of {len(train)} training tasks have a wrong edit that applies and '
              f'fails a visible test ({time.time() - start:.0f} s)', flush=True)
    examples = expert_examples(train, tok, envs, args.hint_share, args.recovery_share,
                               train_seed, weights, args.check_share, args.retry_share, wrong,
                               args.mask_retry_mistake)
    print(f'{len(examples)} expert episodes, {sum(len(e[0]) for e in examples) / len(examples):.0f}'
          f' tokens on average ({time.time() - start:.0f} s)', flush=True)
    if args.load:
        model = arl.load_checkpoint(RESULTS / f'gym_v2_{args.load}.pt')
        config = loaded['model_config']
        loss_first, loss_last = loaded['loss_first50'], loaded['loss_last50']
        train_seconds = loaded['train_seconds']     # the model's, so a re-evaluation keeps it
        args.steps, args.recovery_share = loaded['steps'], loaded['recovery_share']
        args.lr = loaded['lr']
        print(f'loaded the warm start {args.load}', flush=True)
    else:
        config = dict(MODEL_CONFIG, d_model=args.d_model)
        model = arl.TinyAgent(**config)
        handle = report_progress(model, args.steps)
        t0 = time.time()
        losses = arl.train_next_token(model, examples, steps=args.steps, lr=args.lr,
                                      batch_size=BATCH_SIZE, seed=train_seed)
        train_seconds = time.time() - t0
        handle.remove()
        loss_first, loss_last = sum(losses[:50]) / 50, sum(losses[-50:]) / 50
        print(f'trained {args.steps} steps in {train_seconds:.0f} s; loss {loss_first:.3f}'
              f' -> {loss_last:.3f}', flush=True)
        where = CHECKPOINTS if args.save else pathlib.Path(tempfile.gettempdir())
        torch.save({'state_dict': model.state_dict(), 'model_config': config},
                   where / f'gym_v2_{args.tag}.pt')

    t0 = time.time()
    metrics = {}
    for mode, env in envs.items():                 # plain only where the comparison matters
        print(f'evaluating with {mode} observations', flush=True)
        chosen = splits if mode == 'hint' else {s: splits[s] for s in UNSEEN}
        metrics[mode] = ev.evaluate(model, env, chosen, tok, samples=SAMPLES, seed=EVAL_SEED)
    for s in UNSEEN:
        diff, se = ev.paired(metrics['hint'][s]['t1']['per_task'],
                             metrics['plain'][s]['t1']['per_task'])
        metrics.setdefault('hint_minus_plain_t1', {})[s] = {'difference': diff, 'stderr': se}
        print(f'  {s:8s} hint - plain at T=1: {diff:+.3f} +- {se:.3f} (paired)', flush=True)
    if args.sweep:
        print(f'sharpening control sweep with {args.sweep} observations', flush=True)
        chosen = metrics[args.sweep]
        sweep = ev.evaluate(model, envs[args.sweep], {s: splits[s] for s in UNSEEN}, tok,
                            samples=SAMPLES, temperatures=SWEEP, seed=EVAL_SEED)
        for s, res in sweep.items():
            chosen[s].update({k: v for k, v in res.items() if k.startswith('t')})
            best, _ = ev.sharpening_control(chosen, s)
            chosen[s]['control_temperature'] = best
            print(f'  {s} sharpening control: best temperature {best}', flush=True)
    record = {
        'lab': 'book/labs/gym_v2_warm_start.py', 'tag': args.tag, 'hint_share': args.hint_share,
        'pad_lines': args.pad_lines, 'loaded_from': args.load,
        'torch_version': torch.__version__, 'model_config': config,
        'parameters': sum(p.numel() for p in model.parameters()),
        'task_seed': TASK_SEED, 'train_seed': train_seed, 'eval_seed': EVAL_SEED,
        'steps': args.steps, 'batch_size': BATCH_SIZE, 'lr': args.lr,
        'recovery_share': args.recovery_share, 'copy_weight': args.copy_weight,
        'part_weights': weights, 'check_share': args.check_share,
        'retry_share': args.retry_share, 'retry_tasks': len(wrong),
        'retry_mistake_masked': args.mask_retry_mistake,
        'templates': len(gym_v2.TEMPLATES), 'stretch_templates': list(gym_v2.STRETCH_FUNCS),
        'train_variants': gym_v2.TRAIN_VARIANTS,
        'split_sizes': {s: sum(t.split == s for t in tasks) for s in splits},
        'eval_task_ids': {s: [t.id for t in v] for s, v in splits.items()},
        'samples_per_task': SAMPLES,
        'expert_tokens_mean': sum(len(ids) for ids, _ in examples) / len(examples),
        'loss_first50': loss_first, 'loss_last50': loss_last,
        'metrics': metrics,
        'train_seconds': round(train_seconds), 'eval_seconds': round(time.time() - t0),
        'threads': torch.get_num_threads(),
    }
    write_record(f'gym_v2_{args.tag}', record, start)


if __name__ == '__main__':
    main()
