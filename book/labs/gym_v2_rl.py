"""RL from a BugFix-v2 warm start: does it beat the sharpening control on unseen tasks?

Loads a warm start written by gym_v2_warm_start.py --save (results/gym_v2_WARM.pt, with its
JSON holding the evaluation of the same tasks at the same episode seeds, including the
temperature sweep), then trains it with a group method on the `train` split and evaluates it
with book/labs/evaluate.py on held-out and stretch (tasks never trained on) and on train.

One update: TASKS_PER_UPDATE train tasks drawn with a seeded generator, GROUP episodes each,
sampled at T=1 in lockstep (`agentrl.rollout_batch`, a pre-forked `agentrl.SandboxPool`);
groups whose rewards are all equal are dropped (their advantages are 0); ONE Adam step on
`agentrl.grpo_loss` over `agentrl.trajectory_logprobs` of the rest, with logp_old =
logp.detach() (exact for one optimiser step per batch, so the clip is inactive and the loss's
gradient is the policy gradient with the method's advantages, averaged over each episode's
policy tokens). Advantages:
  rloo     r - mean of the other G-1 rewards (`agentrl.rloo_advantages`)
  grpo     (r - group mean) / (group std + eps) (`agentrl.group_advantages`)
  shrunk   r - 0.25 * mean of the others (unbiased: the baseline does not depend on the
           episode's own action; DESIGN.md section 9)
  positive r on successes of mixed groups only, 0 elsewhere (RAFT-style filtered imitation)
  reinforce r on every episode, no baseline, and no group dropped: Chapter 6's REINFORCE, whose
           groups of four successes are reinforced too (the loss averages over all 64 episodes)
  ppo      Chapter 8's ppo_update on a ValueHead over the policy (value initialised to 0,
           trained with the policy): GAE with lambda 1 (the critic only as a baseline), all 64
           episodes, 2 epochs x 2 minibatches = 4 clipped optimiser steps per batch (PPO);
           --ppo-epochs 1 --ppo-minibatches 1 takes one step per batch, where the clip is inactive

Where RL trains (--train-on):
  train           the warm start's own training tasks. On them a policy that recalls each
                  template's trained (line, kind) placements is rewarded as much as one that
                  reads the line hint, so RL has no reason to prefer reading.
  heldout-groups  unseen variants (0..7) of half of the held-out groups
                  (`agentrl.rl_placements`, drawn once): placements the warm start never
                  saw, where only reading pays. The other half stays the held-out split;
                  the warm start's evaluation of the half RL trains on is reported as
                  `rl_groups` (unseen variants of RL's groups).
  mixed           each update half from heldout-groups' tasks, half from the warm start's
                  training tasks: does keeping the trained placements in the batch keep RL
                  from costing the unseen ones?
With --with-stretch, RL's tasks also hold variants 0-7 of the 45 placements of the stretch
templates (functions the warm start never saw, where nothing can be recalled, so only reading
the line hint pays): do more placements, in new functions, teach a localisation that carries
over to the unseen held-out placements? The stretch split then no longer measures unseen
functions (its evaluation variants 8-9 are new instances of trained placements); rl_groups and
the unseen held-out placements stay as they are.

A warm start trained on padded tasks (gym_v2_warm_start.py --pad-lines K, recorded in its JSON)
is trained and evaluated on tasks padded the same way: RL's tasks, the mixed batches' training
tasks and every evaluation split. Placements and splits are those of the unpadded tasks.
That padding is drawn once per task, so a policy that recalls each RL task's line number, or
writes the line its function's shape suggests whenever no blank line fell above the bug, is
still paid. With --fresh-padding K every group draws one of K seeded paddings of its task
(padding seed 0 is the one above), each made and validated when first drawn: a line number
can then be read, not recalled, on K times as many instances. --moved-only keeps only
paddings that put a blank line above the bug, so that the line the function's shape suggests
is never right on RL's tasks and only reading the line from the hint pays.

A shaped reward (--line-edit-bonus B): RL's rollouts are played in `gym_v2.LineEditBonusEnv`,
which adds B, once per episode, for the first edit that applies on the bug's line and changes
it. Most failures on unseen placements are edits whose `<old>` text is not on the line they
name; the bonus pays the copy of the hinted line and its text on episodes whose fix is wrong.
Evaluation always plays the plain environment (reward 1 = solved), and the log's `solved` is
the share of RL's episodes that solved. Does paying the copy more often teach one that carries
to unseen placements? With --bonus-at-bug only an edit whose `<old>` text overlaps the bug's
text is paid: a change elsewhere on the line, which the plain bonus also pays, earns nothing.

Dynamic sampling (--refill N, with --episode-budget E in place of --updates), as DAPO does
it (Chapter 9.5): an update plays further rounds of --tasks groups, drawn the same way, until
N groups have mixed rewards (at most REFILL_ROUNDS rounds), and takes its step on the first N.
Every step then has N informative groups, where a round of 16 held fewer than 3 in the
weight-4 runs; at the same budget of episodes there are fewer, fuller steps. Does that learn
more, or carry more to the unseen placements? The log records each update's rounds, episodes and the
mixed groups found.

KL to the warm start (--kl-coef BETA): BETA times Chapter 10's k2 estimate of
KL(policy || warm start), averaged over the batch's policy tokens, joins the loss (its gradient
is that of the KL); each update also logs the k1 and k3 estimates per policy token. Does a
leash to the warm start keep RL from costing the unseen placements, as mixed batches do?

LoRA (--lora-rank R): `agentrl.add_lora` wraps every block's qkv, proj, up and down in a
LoRALinear of rank R before the optimiser is built, and Adam updates only the adapters (A, B);
the embedding, tied to the output head, and the norms stay frozen. --lora-alpha defaults to
agentrl.LORA_ALPHA (32) at every rank: the update is scaled by alpha / R, which keeps the rate at
which Adam moves the function about the same across ranks, so one learning rate serves them all
("LoRA Without Regret", Thinking Machines Lab 2025). The adapters are merged into the weights
(`agentrl.merge_lora`) after training, so the checkpoint and the evaluation are a plain TinyAgent.

After every EVAL_EVERY updates it prints the held-out expert-path probability (one
teacher-forced pass per task, exact and noise-free); at the end, held-out and stretch at T=1
(SAMPLES episodes per task, the warm start's evaluation seeds), greedy and pass@k, and
`evaluate.versus_control`: trained T=1 minus the warm start at its best temperature, paired by
task; the trained policy is also sampled at EXTRA_T and compared with the warm start at EXTRA_T
and at its best temperature. Results: results/gym_v2_rl_TAG.json (--save: the policy, .pt).

Run from the repository root, one at a time (single-threaded, seeded):
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_rl.py --warm WARM \
        --method rloo --lr 1e-4 --updates 100 --seed 0 --tag rloo_s0
The LoRA runs of Chapter 14 (section 14.6), one at a time, R in 1 4 16, LR as in their tags:
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_rl.py --warm hint_recovery_3000 \
        --train-on heldout-groups --method rloo --updates 100 --lr LR --seed 0 \
        --lora-rank R --tag hg_lora_rR_lrLR
"""

import argparse
import json
import math
import pathlib
import random
import sys
import tempfile
import time

import torch

import agentrl as arl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import evaluate as ev  # noqa: E402
import gym_v2  # noqa: E402
from gym_v2_warm_start import EVAL_SEED, SAMPLES, load_tasks, played, write_record  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'
TASKS_PER_UPDATE = 16
GROUP = 4
EVAL_EVERY = 25
MAX_TURNS = 8
METHODS = ('rloo', 'grpo', 'shrunk', 'positive', 'reinforce', 'ppo')
PPO = dict(epochs=2, minibatches=2, lam=1.0)   # Chapter 8's ppo_update: 4 clipped steps per batch
REFILL_ROUNDS = 8            # --refill's cap on rounds per update (verl: max_num_gen_batches)
EXTRA_T = 0.5                # the held-out control's temperature: trained policies are also
                             # sampled at it, so a gain at one temperature is compared there too


def restrict(result, keep):
    """A split's evaluation cut to the task positions in `keep` (rate and per-task rates)."""
    out = {}
    for key, res in result.items():
        if isinstance(res, dict) and 'per_task' in res:
            per_task = [res['per_task'][i] for i in keep]
            out[key] = {'rate': sum(per_task) / len(per_task), 'per_task': per_task}
    return out


def split_heldout(result, held, placements):
    """An evaluation of the held-out tasks `held` (in order) -> {'rl_groups': its part on RL's
    placements, 'heldout': its part on the others}, each cut by `restrict`."""
    inside = [gym_v2.task_group(t) in placements for t in held]
    return {name: restrict(result, [i for i, x in enumerate(inside) if x == on_rl])
            for name, on_rl in (('rl_groups', True), ('heldout', False))}


def as_groups(episodes, size):
    """A round's episodes, played task by task, cut into its groups of `size`."""
    return [episodes[i:i + size] for i in range(0, len(episodes), size)]


def mixed_rewards(group):
    """Do the group's rewards differ? Only then are its advantages (other than REINFORCE's)
    not all 0."""
    return len({e.reward for e in group}) > 1


def advantages(rewards, method):
    """rewards [B, G] -> advantages [B, G] for one of METHODS."""
    rewards = rewards.float()
    G = rewards.shape[1]
    if method == 'rloo':
        return arl.rloo_advantages(rewards)
    if method == 'grpo':
        return arl.group_advantages(rewards)
    if method == 'shrunk':
        others = (rewards.sum(-1, keepdim=True) - rewards) / (G - 1)
        return rewards - 0.25 * others
    if method in ('positive', 'reinforce'):
        return rewards.clone()
    raise ValueError(f'unknown method {method!r}; choose one of {METHODS}')


def update(model, optimizer, groups, method, grad_clip=1.0, ref=None, kl_coef=0.0):
    """One optimiser step on the groups whose rewards differ -> stats (or None if none do).
    REINFORCE has no baseline, so it keeps every group: a group of four successes weighs in.

    With kl_coef > 0, kl_coef times Chapter 10's k2 penalty to `ref` (the warm start), its
    mean over the batch's policy tokens, joins the loss; k2's gradient is that of
    KL(policy || ref). The stats then also hold the batch's k1 and k3 estimates of that KL
    per policy token."""
    mixed = sum(map(mixed_rewards, groups))
    if method != 'reinforce':
        groups = [g for g in groups if mixed_rewards(g)]
    if not any(e.reward for g in groups for e in g):    # every advantage would be 0
        return None
    rewards = torch.tensor([[e.reward for e in g] for g in groups])           # [B, G]
    episodes = [e for g in groups for e in g]
    adv = advantages(rewards, method).flatten()
    if not kl_coef:
        loss, norm = arl.fast_grpo_step(model, optimizer, episodes, adv, grad_clip)
        return {'loss': loss, 'groups': mixed, 'grad_norm': norm}
    with torch.no_grad():
        logp_ref, _ = arl.trajectory_logprobs(ref, episodes)                  # [B, T-1]
    model.train()
    logp, mask = arl.trajectory_logprobs(model, episodes)                     # [B, T-1]
    pg, _ = arl.grpo_loss(logp, logp.detach(), adv, mask)
    loss = pg + kl_coef * arl.kl_penalty(logp, logp_ref, mask, 'k2')
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    model.eval()
    k1, _, k3 = arl.kl_estimators(logp.detach(), logp_ref)
    n = mask.sum().clamp_min(1)
    return {'loss': loss.item(), 'groups': mixed, 'grad_norm': norm.item(),
            'kl_k1': ((k1 * mask).sum() / n).item(), 'kl_k3': ((k3 * mask).sum() / n).item()}


class PaddingPool:
    """The paddings RL's tasks are played with: `draw(task, k)` is `task` itself (padded with
    seed 0) for k = 0, else its unpadded original padded with seed k, made and validated
    (gym_v2.pad_tasks) on first use and kept in `made`. With moved_only, every draw, k = 0
    included, is a padding that puts a blank line above the bug (the first of seeds k, 'k+1',
    'k+2', ... that does), so the line the function's shape suggests is never the right one."""

    TRIES = 64

    def __init__(self, unpadded, most, env, moved_only=False):
        self.unpadded, self.most, self.env, self.moved_only = unpadded, most, env, moved_only
        self.made = {}

    def draw(self, task, k):
        if not (k or self.moved_only):
            return task
        if (task.id, k) not in self.made:
            self.made[task.id, k] = self._pad(self.unpadded[task.id], k)
        return self.made[task.id, k]

    def _pad(self, task, k):
        for attempt in range(self.TRIES):
            seed = f'{k}+{attempt}' if attempt else k
            moved = gym_v2.pad_blank_lines(task, self.most, seed).line != task.line
            if moved or not self.moved_only:
                return gym_v2.pad_tasks([task], self.most, self.env, seed=seed)[0]
        raise ValueError(f'task {task.id}: no padding of {self.TRIES} moved line {task.line}')


def mean_expert_prob(model, env, tasks, tok):
    return sum(math.exp(v) for v in ev.expert_path_logprob(model, env, tasks, tok)) / len(tasks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--warm', required=True, help='tag of results/gym_v2_TAG.{pt,json}')
    parser.add_argument('--method', choices=METHODS, default='rloo')
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--updates', type=int, default=100)
    parser.add_argument('--tasks', type=int, default=TASKS_PER_UPDATE)
    parser.add_argument('--group', type=int, default=GROUP)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--train-on', choices=('train', 'heldout-groups', 'mixed'), default='train',
                        help='train: the warm start\'s own training tasks; heldout-groups: '
                             'unseen variants of half the held-out groups (agentrl.rl_placements)')
    parser.add_argument('--with-stretch', action='store_true',
                        help='RL also trains on variants 0-7 of the stretch templates\' placements')
    parser.add_argument('--lora-rank', type=int, default=0,
                        help='train rank-R LoRA adapters of the block linears only (0: all)')
    parser.add_argument('--lora-alpha', type=float, default=None,
                        help='LoRA scale alpha / rank (default agentrl.LORA_ALPHA at every rank)')
    parser.add_argument('--kl-coef', type=float, default=0.0,
                        help='weight of a k2 KL penalty to the warm start in the loss (0: none)')
    parser.add_argument('--ppo-epochs', type=int, default=PPO['epochs'],
                        help='with --method ppo: passes over each batch')
    parser.add_argument('--ppo-minibatches', type=int, default=PPO['minibatches'],
                        help='with --method ppo: optimiser steps per pass')
    parser.add_argument('--fresh-padding', type=int, default=0, metavar='K',
                        help='with a padded warm start: each group plays one of K seeded '
                             'paddings of its task, drawn per group (0: the one padding)')
    parser.add_argument('--moved-only', action='store_true',
                        help='with --fresh-padding: only paddings that move the bug line, so '
                             'that the line the function\'s shape suggests never pays')
    parser.add_argument('--line-edit-bonus', type=float, default=0.0, metavar='B',
                        help="RL's rollouts also pay B for the first edit that applies on the "
                             'bug line (gym_v2.LineEditBonusEnv); evaluation is unshaped')
    parser.add_argument('--bonus-at-bug', action='store_true',
                        help='--line-edit-bonus pays only an edit whose old text overlaps '
                             "the bug's")
    parser.add_argument('--refill', type=int, default=0, metavar='N',
                        help="DAPO's dynamic sampling: play further rounds of --tasks groups "
                             f'(at most {REFILL_ROUNDS}) until N groups have mixed rewards, and '
                             'step on the first N of them (0: one round, its mixed groups)')
    parser.add_argument('--episode-budget', type=int, default=0, metavar='E',
                        help='stop after the update in which E episodes have been played, in '
                             'place of --updates (needed by --refill, whose updates vary in cost)')
    parser.add_argument('--save', action='store_true', help='keep results/gym_v2_rl_TAG.pt')
    parser.add_argument('--tag', required=True)
    args = parser.parse_args()
    warm = json.loads((RESULTS / f'gym_v2_{args.warm}.json').read_text())
    pad = warm.get('pad_lines', 0)       # RL plays the tasks the way its warm start learned them
    hint = warm['hint_share'] > 0
    swept = [s for s in ('heldout', 'stretch') if 'control_temperature' in
             warm['metrics']['hint' if hint else 'plain'].get(s, {})]
    if len(swept) < 2:               # found now, not after the training it would waste
        raise SystemExit(f'the warm start {args.warm} has no sharpening control on its unseen '
                         'splits: evaluate it with gym_v2_warm_start.py --sweep first')
    if args.moved_only and not args.fresh_padding:
        raise SystemExit('--moved-only chooses among the paddings of --fresh-padding K')
    if args.bonus_at_bug and not args.line_edit_bonus:
        raise SystemExit('--bonus-at-bug says which edits --line-edit-bonus B pays; give B')
    if args.refill and not args.episode_budget:
        raise SystemExit('--refill makes an update cost a varying number of episodes: give '
                         '--episode-budget E, the episodes to spend, in place of --updates')
    if args.refill and args.method in ('reinforce', 'ppo'):
        raise SystemExit(f'--refill keeps groups with mixed rewards; {args.method} learns from '
                         'every group, so there is nothing to refill')
    if args.fresh_padding and not pad:
        raise SystemExit(f'--fresh-padding needs a warm start trained on padded tasks; '
                         f'{args.warm} was not (pad_lines 0)')
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    start = time.time()
    tok = arl.CharTokenizer()
    tasks, cache = load_tasks()
    warm_path = RESULTS / f'gym_v2_{args.warm}.pt'
    model = arl.load_checkpoint(warm_path)
    config = torch.load(warm_path, weights_only=True)['model_config']   # for the trained checkpoint
    by_id = {t.id: t for t in tasks}
    play = played(tasks, cache, pad)
    splits = {s: [by_id[i] for i in ids] for s, ids in warm['eval_task_ids'].items()}
    train = [play[t.id] for t in tasks if t.split == 'train']
    placements = arl.rl_placements(tasks) if args.train_on != 'train' else set()
    if args.with_stretch and not placements:
        raise SystemExit('--with-stretch adds placements to --train-on heldout-groups or mixed')
    stretch_groups = ({gym_v2.task_group(t) for t in tasks if t.split == 'stretch'}
                      if args.with_stretch else set())
    rng = random.Random(f'rl:{args.seed}')
    where = RESULTS if args.save else pathlib.Path(tempfile.gettempdir())
    checkpoint = where / f'gym_v2_rl_{args.tag}.pt'
    if args.lora_rank:
        trainable = arl.add_lora(model, args.lora_rank, args.lora_alpha)
        lora = {'rank': args.lora_rank,
                'alpha': arl.LORA_ALPHA if args.lora_alpha is None else args.lora_alpha,
                'trainable_params': sum(p.numel() for p in trainable),
                'total_params': sum(p.numel() for p in model.parameters())}
        print(f'LoRA rank {lora["rank"]}, alpha {lora["alpha"]:g}: {lora["trainable_params"]}'
              f' trainable of {lora["total_params"]} parameters', flush=True)
    else:
        trainable, lora = list(model.parameters()), None
    ppo = dict(PPO, epochs=args.ppo_epochs, minibatches=args.ppo_minibatches)
    critic = arl.ValueHead(model) if args.method == 'ppo' else None   # shares the policy's trunk
    if critic is not None:
        trainable = list(critic.parameters())
    opt = torch.optim.Adam(trainable, lr=args.lr)
    ref = arl.load_checkpoint(warm_path) if args.kl_coef else None
    curve, rl_curve, log = [], [], []
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=hint, cache=cache, sandbox=pool.run)
        rl_env = (gym_v2.LineEditBonusEnv(args.line_edit_bonus, at_bug=args.bonus_at_bug,
                                          hint=hint, cache=cache, sandbox=pool.run)
                  if args.line_edit_bonus else env)
        unpadded = {t.id: t for t in tasks if t.split == 'train'}
        if placements:
            trained_tasks = train
            rl_tasks = gym_v2.group_tasks(placements | stretch_groups,
                                          range(gym_v2.TRAIN_VARIANTS), 'rl',
                                          first_id=len(tasks), env=env)
            unpadded.update((t.id, t) for t in rl_tasks)
            train = gym_v2.pad_tasks(rl_tasks, pad, env)
            print(f'RL on {len(train)} tasks of {len(placements)} held-out groups'
                  + (f' and {len(stretch_groups)} stretch groups' if stretch_groups else ''),
                  flush=True)
        unseen = [play[t.id] for t in splits['heldout'] if gym_v2.task_group(t) not in placements]
        seen_by_rl = [play[t.id] for t in splits['heldout'] if gym_v2.task_group(t) in placements]
        curve.append((0, mean_expert_prob(model, env, unseen, tok)))
        if seen_by_rl:
            rl_curve.append((0, mean_expert_prob(model, env, seen_by_rl, tok)))
        print(f'update 0: heldout expert-path {curve[-1][1]:.4f}', flush=True)
        paddings = PaddingPool(unpadded, pad, env, moved_only=args.moved_only)

        def play_round():
            """One round: args.tasks tasks drawn from rng, args.group episodes each at T=1."""
            if args.train_on == 'mixed':
                half = args.tasks // 2
                picked = rng.sample(train, half) + rng.sample(trained_tasks, args.tasks - half)
            else:
                picked = rng.sample(train, args.tasks)
            if args.fresh_padding:
                picked = [paddings.draw(t, rng.randrange(args.fresh_padding)) for t in picked]
            batch = [t for t in picked for _ in range(args.group)]
            seeds = [rng.randrange(2 ** 31) for _ in batch]
            return arl.rollout_batch(model, rl_env, batch, tok, seeds, temperature=1.0,
                                     max_turns=MAX_TURNS)

        t_rl, played_episodes, u = time.time(), 0, 0
        while (played_episodes < args.episode_budget if args.episode_budget
               else u < args.updates):
            u += 1
            eps, rounds = play_round(), 1
            while (args.refill and rounds < REFILL_ROUNDS   # DAPO's dynamic sampling
                   and sum(map(mixed_rewards, as_groups(eps, args.group))) < args.refill):
                eps, rounds = eps + play_round(), rounds + 1
            groups = as_groups(eps, args.group)
            if args.refill:             # the first N mixed groups, in the order played
                kept = [g for g in groups if mixed_rewards(g)]
                found, groups = len(kept), kept[:args.refill]
            played_episodes += len(eps)
            if critic is not None:      # PPO learns from every episode; its critic is the baseline
                stats = arl.ppo_update(critic, opt, eps, **ppo)
                stats['groups'] = sum(map(mixed_rewards, groups))
            else:
                stats = update(model, opt, groups, args.method, ref=ref,
                               kl_coef=args.kl_coef) or {'groups': 0}
            stats.update(update=u, reward=sum(e.reward for e in eps) / len(eps),
                         solved=sum(map(gym_v2.solved, eps)) / len(eps))
            if args.refill:
                stats.update(rounds=rounds, episodes=len(eps), mixed_found=found)
            log.append(stats)
            last = (played_episodes >= args.episode_budget if args.episode_budget
                    else u == args.updates)
            if u % EVAL_EVERY == 0 or last:
                curve.append((u, mean_expert_prob(model, env, unseen, tok)))
                if seen_by_rl:
                    rl_curve.append((u, mean_expert_prob(model, env, seen_by_rl, tok)))
                recent = log[-EVAL_EVERY:]
                print(f'update {u}: train reward {sum(s["reward"] for s in recent) / len(recent):.3f}'
                      f', heldout expert-path {curve[-1][1]:.4f} ({time.time() - t_rl:.0f} s)',
                      flush=True)
        rl_seconds = time.time() - t_rl
        if lora:
            arl.merge_lora(model)   # a plain TinyAgent again: same checkpoint and evaluation
        torch.save({'state_dict': model.state_dict(), 'model_config': config},
                   checkpoint)      # before evaluation, so a failure there loses no training
        t0 = time.time()
        metrics = ev.evaluate(model, env, {s: [play[t.id] for t in splits[s]]
                                           for s in ('heldout', 'stretch')}, tok,
                              samples=SAMPLES, temperatures=(1.0, EXTRA_T), seed=EVAL_SEED)
        metrics.update(ev.evaluate(model, env, {'train': [play[t.id] for t in splits['train']]},
                                   tok, samples=SAMPLES, seed=EVAL_SEED))
    mode = 'hint' if hint else 'plain'
    control = dict(warm['metrics'][mode])
    if placements:  # the held-out evaluation splits into RL's own groups and the unseen rest
        metrics.update(split_heldout(metrics['heldout'], splits['heldout'], placements))
        control.update(split_heldout(control['heldout'], splits['heldout'], placements))
    versus = {}
    for s in ('heldout', 'stretch') + (('rl_groups',) if placements else ()):
        versus[s] = ev.versus_control(metrics, control, s)
        diff, se = ev.paired(metrics[s]['t1']['per_task'], control[s]['t1']['per_task'])
        same_t = f't{EXTRA_T:g}'
        diff_t, se_t = ev.paired(metrics[s][same_t]['per_task'], control[s][same_t]['per_task'])
        control_rates = control[s][versus[s]['control_temperature']]['per_task']
        versus[s].update(minus_warm_t1=diff, minus_warm_t1_stderr=se,
                         tasks=len(control[s]['t1']['per_task']),
                         at_extra_t_minus_control=ev.paired(metrics[s][same_t]['per_task'],
                                                            control_rates),
                         at_extra_t_minus_warm_same_t=(diff_t, se_t))
        print(f'  {s} ({versus[s]["tasks"]} tasks): trained T=1 minus control (warm start at'
              f' {versus[s]["control_temperature"]}) {versus[s]["difference"]:+.3f} +-'
              f' {versus[s]["stderr"]:.3f}; minus warm T=1 {diff:+.3f} +- {se:.3f};'
              f' trained T={EXTRA_T:g} minus control'
              f' {versus[s]["at_extra_t_minus_control"][0]:+.3f} +-'
              f' {versus[s]["at_extra_t_minus_control"][1]:.3f} (paired)', flush=True)
    record = {
        'lab': 'book/labs/gym_v2_rl.py', 'tag': args.tag, 'warm': args.warm, 'hint': hint,
        'pad_lines': pad, 'fresh_padding': args.fresh_padding,
        'moved_only': args.moved_only,
        'paddings_made': len(paddings.made),
        'method': args.method, 'train_on': args.train_on, 'kl_coef': args.kl_coef,
        'line_edit_bonus': args.line_edit_bonus, 'bonus_at_bug': args.bonus_at_bug,
        'ppo': ppo if critic is not None else None,
        'rl_groups': sorted(placements), 'stretch_groups_trained': sorted(stretch_groups),
        'rl_tasks': len(train), 'lr': args.lr,
        'updates': u, 'refill': args.refill, 'episode_budget': args.episode_budget,
        'tasks_per_update': args.tasks, 'group': args.group, 'seed': args.seed,
        'episodes': played_episodes, 'max_turns': MAX_TURNS,
        'eval_seed': EVAL_SEED, 'samples_per_task': SAMPLES,
        'torch_version': torch.__version__, 'threads': torch.get_num_threads(),
        'heldout_expert_path_curve': curve, 'rl_groups_expert_path_curve': rl_curve,
        'log': log, 'metrics': metrics, 'versus_control': versus, 'lora': lora,
        'rl_seconds': round(rl_seconds), 'eval_seconds': round(time.time() - t0),
    }
    write_record(f'gym_v2_rl_{args.tag}', record, start)


if __name__ == '__main__':
    main()
