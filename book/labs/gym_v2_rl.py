"""RL from a BugFix-v2 warm start: does it beat the sharpening control on unseen tasks?

Loads a warm start written by gym_v2_warm_start.py (--warm, a record stem: its checkpoint, and
its record's evaluation of the same tasks at the same episode seeds, including the temperature
sweep), then trains it with a group method on the `train` split and evaluates it
with book/labs/evaluate.py on held-out and stretch (tasks never trained on) and on train.

One update: --tasks-per-update train tasks drawn with a seeded generator, --group episodes each,
sampled at T=1 in lockstep (`agentrl.rollout_batch`, a pre-forked `agentrl.SandboxPool`);
groups whose rewards are all equal are dropped (their advantages are 0); ONE Adam step on
`agentrl.grpo_loss` over `agentrl.trajectory_logprobs` of the rest, with logp_old =
logp.detach() (exact for one optimiser step per batch, so the clip is inactive and the loss's
gradient is the policy gradient with the method's advantages, averaged over each episode's
policy tokens). Advantages:
  rloo     r - mean of the other G-1 rewards (`agentrl.rloo_advantages`)
  grpo     (r - group mean) / (group std + eps) (`agentrl.group_advantages`)
  positive r on successes of mixed groups only, 0 elsewhere (RAFT-style filtered imitation)
  random_kept  positive's control at equal kept episodes: as many episodes as succeeded in the mixed
           groups, drawn at random among them whatever their reward, each with advantage 1
           (Section 15.3's random selection; the draw has its own seeded stream per update)
  dpo      DPO (Section 15.5, beta 0.1) against the warm start on one (best, worst) pair per mixed
           group, drawn from the same stream: preference pairs from the policy's own batches
  gigpo    Chapter 12's GiGPO: RLOO's episode-level advantage plus a step-level one from
           anchor states (identical states across a group), weighted per turn
  progress Section 12.4's truth as the turn credit, a process reward measured as progress
           (Setlur et al., 2410.08146; Section 20.2): each turn weighted by V(h_{k+1}) - V(h_k)
           under the policy being trained, V the mean reward of --credit-samples continuations
           of every visited state (`agentrl.state_values`); every group is kept, since a turn's
           progress need not be 0 where the group's rewards are equal, and the log counts the
           continuations, which the comparison with RLOO must charge as sampled episodes
  reinforce r on every episode, no baseline, and no group dropped: Chapter 6's REINFORCE, whose
           groups of four successes are reinforced too (the loss averages over all 64 episodes)
  onpolicy_distill  Chapter 16's on-policy distillation from --teacher (a record stem with a
           checkpoint, e.g. the RL policy gym_v2_rl_hg_rloo_lr3e-4): no reward is used; every
           episode of the batch (no group dropped) is scored by the teacher and weighted per token
           by -(log q_student - log p_teacher) (`agentrl.onpolicy_distill_step`, one pg_step);
           the log keeps the batch's exact reverse KL per token and the episodes solved
  dagger   Chapter 16's DAgger: the scripted expert labels every turn of every episode of the batch
           (`agentrl.dagger_examples`: the student's context, the expert's action as the only
           target); the labels join an aggregate, and one Adam step of the next-token loss is
           taken on DAGGER_BATCH examples drawn from it (its own seeded stream per update)
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

The reward (--reward partial|visible|random, Chapter 11): RL's submits pay the fraction of
hidden tests passed, 1 when every visible test passes (a proxy of the hidden ones), or a coin
flip with probability 1/2 drawn from the seed, the task and the episode's actions
(`agentrl.RewardEnv`); the default, binary, is the gym's reward. Evaluation always plays the plain
environment, and the log's `solved` is the share of RL's episodes that passed every hidden test,
the gold reward beside the one paid. The random reward is the control of a reward claim: does
the real reward beat a reward that carries no information, paired on fresh instances?

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

The sanity check of Qi et al. (arXiv 2510.26788) (--train-on perfectible): RL trains on a
fixed set of tasks, those of the warm start's `train` evaluation that it solved 20-80% of the
time (PERFECTIBLE, from its recorded per-task rates), each played as evaluated (no fresh
padding); every round plays min(--tasks-per-update, all of them). A sound algorithm drives the
training accuracy on these tasks high, since every one of them is within reach. The warm start
and the trained policy are both evaluated on the same tasks at T=1 with SANITY_SAMPLES episodes
each, at episode seeds SANITY_SEED (not the seeds the tasks were selected on, so the start is not
biased by the selection), and compared paired by task; the held-out and stretch evaluation is
skipped. Record: `sanity` (tasks, start, end, end_minus_start). Section 18.5's runs, seeds 0-2
(about 2,100 episodes each):
    .venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_6000_pad6_copy4 \
        --train-on perfectible --dashboard --method rloo --lr 3e-4 --updates 40 --seed 0

The dashboard (--dashboard): each update also logs, from one pass without gradient over its
batch under the policy that sampled it (before the update) and the warm start, the quantities
of `dashboard_stats`: the entropy of the policy's next-token distributions, the KL to the warm
start (exact over the character vocabulary, and k3 on the sampled tokens), the policy tokens,
the spread of the rewards, the share of the rewards' variance the group baseline explains and,
with --method ppo, the explained variance of the value head. Nothing else changes: no random
number is drawn.

After every --eval-every updates it prints the held-out expert-path probability (one
teacher-forced pass per task, exact and noise-free); at the end, held-out and stretch at T=1
(the warm start's episodes per task and evaluation seeds), greedy and pass@k, and
`evaluate.versus_control`: trained T=1 minus the warm start at its best temperature, paired by
task; the trained policy is also sampled at EXTRA_T and compared with the warm start at EXTRA_T
and at its best temperature. Record: results/<run>.json (kind run) and the trained policy
beside it, results/<run>.pt. Its state is saved every --save-every updates, so --resume
continues a run that stopped.

Run from the repository root, one at a time (single-threaded, seeded), for example the RLOO
run of Chapter 9 from the weight-4 warm start:
    .venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_6000_pad6_copy4 \
        --train-on mixed --fresh-padding 8 --method rloo --lr 3e-4 --updates 300 --seed 0
and the LoRA runs of Chapter 14 (section 14.6), R in 1 4 16, LR as in their records:
    .venv/bin/python book/labs/gym_v2_rl.py --train-on heldout-groups --updates 100 \
        --lr LR --lora-rank R
"""

import dataclasses
import math
import random
import time

import torch

import agentrl as arl
import evaluate as ev
import gym_v2
import gym_v2_warm_start
import harness
from harness import RecipeError, option

METHODS = ('rloo', 'grpo', 'positive', 'reinforce', 'ppo', 'random_kept', 'dpo', 'gigpo',
           'onpolicy_distill', 'dagger', 'progress')
DISTILLATION = ('onpolicy_distill', 'dagger')   # no reward is used: every episode is a lesson
DAGGER_BATCH = 64            # --method dagger: examples per step, drawn from the aggregate
DPO_BETA = 0.1               # --method dpo: DPO's beta (Section 15.5)
PPO_LAM = 1.0                # Chapter 8's ppo_update with GAE lambda 1: the critic as a baseline
REFILL_ROUNDS = 8            # --refill's cap on rounds per update (verl: max_num_gen_batches)
EXTRA_T = 0.5                # the held-out control's temperature: trained policies are also
                             # sampled at it, so a gain at one temperature is compared there too
FROM_THE_WARM_START = ('hint', 'pad_lines', 'eval_seed', 'samples_per_task')
PERFECTIBLE = (0.2, 0.8)     # --train-on perfectible: the warm start's solve rates kept (2510.26788)
SANITY_SAMPLES = 16          # its evaluation: episodes per task, at T=1,
SANITY_SEED = 7000           # at these episode seeds (not the warm start's, which chose the tasks)


@dataclasses.dataclass(frozen=True)
class RlRecipe(harness.Recipe):
    warm: str = option('gym_v2_hint_recovery_3000', 'the warm start (record stem)', short='',
                       stem=True)
    train_on: str = option('train', "where RL trains: the warm start's training tasks, unseen "
                           'variants of half the held-out groups, or half of each',
                           choices=('train', 'heldout-groups', 'mixed', 'perfectible'), short='')
    with_stretch: bool = option(False, "RL also trains on variants 0-7 of the stretch templates' "
                                'placements', short='stretch')
    fresh_padding: int = option(0, 'with a padded warm start: each group plays one of K seeded '
                                'paddings of its task (0: the one padding)', short='fresh')
    moved_only: bool = option(False, 'with --fresh-padding: only paddings that move the bug line',
                              short='moved')
    method: str = option('rloo', 'the advantages (or PPO)', choices=METHODS, short='')
    teacher: str = option('', 'with --method onpolicy_distill: the teacher policy (a record stem '
                          'with a checkpoint)', short='from-', stem=True)
    credit_samples: int = option(4, 'with --method progress: continuations per visited state '
                                 'for its Monte Carlo value', short='cont')
    line_edit_bonus: float = option(0.0, "RL's rollouts also pay B for the first edit that applies "
                                    'on the bug line (gym_v2.LineEditBonusEnv)', short='bonus')
    reward: str = option('binary', "what RL's submits pay (agentrl.RewardEnv): all hidden tests, "
                         'the fraction passed, all visible tests (a proxy), or a coin flip',
                         choices=arl.REWARDS, short='reward')
    bonus_at_bug: bool = option(False, "the bonus pays only an edit whose old text overlaps the "
                                "bug's", short='atbug')
    kl_coef: float = option(0.0, 'weight of a k2 KL penalty to the warm start (0: none)',
                            short='kl')
    dashboard: bool = option(False, 'log per update the entropy, the KL to the warm start and '
                             'the explained variance (dashboard_stats)', short='dash')
    ppo_epochs: int = option(2, 'with --method ppo: passes over each batch', short='ppo-e')
    ppo_minibatches: int = option(2, 'with --method ppo: optimiser steps per pass', short='ppo-mb')
    lora_rank: int = option(0, 'train rank-R LoRA adapters of the block linears only (0: all)',
                            short='lora-r')
    lora_alpha: float = option(float(arl.LORA_ALPHA), 'LoRA scale alpha / rank', short='alpha')
    lr: float = option(1e-4, 'Adam learning rate', short='lr')
    updates: int = option(100, 'updates (in place of them: --episode-budget)', short='u')
    refill: int = option(0, "DAPO's dynamic sampling: play further rounds until N groups have "
                         'mixed rewards, step on the first N (0: one round)', short='refill')
    episode_budget: int = option(0, 'stop after the update in which E episodes have been played',
                                 short='e')
    tasks_per_update: int = option(16, 'tasks drawn per round', short='tasks')
    group: int = option(4, 'episodes per task', short='g')
    seed: int = option(0, 'task draws and sampling seeds', short='s')
    max_turns: int = option(8, 'turns of an RL episode')
    eval_every: int = option(25, 'updates between expert-path evaluations')
    eval_tasks: int = option(0, "the first N of the warm start's evaluation tasks per split "
                             '(per half of held-out; 0: all)')
    task_limit: int = option(0, "RL draws from the first N tasks of each pool and N held-out "
                             'placements (0: all)')
    hint: bool = option(False, 'the line hint, as the warm start was trained', in_name=False)
    pad_lines: int = option(0, 'blank-line padding, as the warm start was trained',
                            in_name=False)
    eval_seed: int = option(0, "episode seeds of the evaluation (the warm start's)",
                            in_name=False)
    samples_per_task: int = option(0, "episodes per evaluation task (the warm start's)",
                                   in_name=False)

    def reduced(self):
        return dataclasses.replace(self, updates=min(self.updates, 3), tasks_per_update=2,
                                   group=2, eval_every=1, eval_tasks=1, task_limit=4,
                                   episode_budget=min(self.episode_budget, 12))

    def resolve(self, context):
        warm = context.load(self.warm)
        trained = gym_v2_warm_start.recipe_of_record(warm)
        derived = {'hint': trained.hint_share > 0, 'pad_lines': trained.pad_lines,
                   'eval_seed': trained.eval_seed, 'samples_per_task': trained.samples_per_task}
        return harness.derive(self, derived)

    def check(self, context):
        warm = context.load(self.warm)
        mode = 'hint' if self.hint else 'plain'
        if any('control_temperature' not in warm.metrics[mode].get(s, {})
               for s in ('heldout', 'stretch')):
            raise RecipeError(f'the warm start {self.warm} has no sharpening control on its '
                              'unseen splits: evaluate it with gym_v2_warm_start.py --sweep first')
        if self.moved_only and not self.fresh_padding:
            raise RecipeError('--moved-only chooses among the paddings of --fresh-padding K')
        if self.reward != 'binary' and self.line_edit_bonus:
            raise RecipeError('--reward changes what the submit pays and --line-edit-bonus adds '
                              'to the binary reward: give one of them')
        if self.bonus_at_bug and not self.line_edit_bonus:
            raise RecipeError('--bonus-at-bug says which edits --line-edit-bonus B pays; give B')
        if self.refill and not self.episode_budget:
            raise RecipeError('--refill makes an update cost a varying number of episodes: give '
                              '--episode-budget E, the episodes to spend, in place of --updates')
        if self.refill and self.method in ('reinforce', 'ppo'):
            raise RecipeError(f'--refill keeps groups with mixed rewards; {self.method} learns '
                              'from every group, so there is nothing to refill')
        if self.fresh_padding and not self.pad_lines:
            raise RecipeError(f'--fresh-padding needs a warm start trained on padded tasks; '
                              f'{self.warm} was not (pad_lines 0)')
        if self.train_on == 'perfectible' and (self.fresh_padding or self.with_stretch):
            raise RecipeError('--train-on perfectible trains on fixed tasks as the warm start '
                              'was evaluated on them: no --fresh-padding, no --with-stretch')
        if self.with_stretch and self.train_on == 'train':
            raise RecipeError('--with-stretch adds placements to --train-on heldout-groups or '
                              'mixed')
        defaults = RlRecipe()
        if self.method != 'ppo' and (self.ppo_epochs, self.ppo_minibatches) != (
                defaults.ppo_epochs, defaults.ppo_minibatches):
            raise RecipeError('--ppo-epochs and --ppo-minibatches apply to --method ppo')
        if self.lora_alpha != defaults.lora_alpha and not self.lora_rank:
            raise RecipeError('--lora-alpha scales the adapters of --lora-rank R; give R')
        if self.kl_coef and self.method == 'dpo':
            raise RecipeError('--method dpo holds the policy to the warm start through its beta; '
                              '--kl-coef does not apply')
        if self.kl_coef and self.method == 'gigpo':
            raise RecipeError('--kl-coef is not implemented for --method gigpo')
        if self.method == 'progress' and (self.kl_coef or self.refill):
            raise RecipeError('--method progress keeps every group and values its states: '
                              '--kl-coef and --refill do not apply')
        if self.credit_samples != 4 and self.method != 'progress':
            raise RecipeError('--credit-samples applies to --method progress')
        if self.credit_samples < 1:
            raise RecipeError('--credit-samples: at least one continuation per state')
        if self.kl_coef and self.method == 'ppo':
            raise RecipeError('--kl-coef joins the loss of the group methods, not PPO\'s')
        if bool(self.teacher) != (self.method == 'onpolicy_distill'):
            raise RecipeError('--teacher names the teacher of --method onpolicy_distill, and that '
                              'method needs one')
        if self.teacher:
            context.load(self.teacher).checkpoint     # raises unless the teacher has its weights
        if self.method in DISTILLATION and (self.kl_coef or self.refill or self.line_edit_bonus
                                            or self.reward != 'binary'):
            raise RecipeError(f'--method {self.method} uses no reward and learns from every '
                              'episode: --kl-coef, --refill, --line-edit-bonus and --reward do '
                              'not apply')

    @classmethod
    def from_record(cls, recipe, results):
        values = super().from_record(recipe, results)
        lora = values.pop('lora', None)
        if lora:
            values.update(lora_rank=lora['rank'], lora_alpha=float(lora['alpha']))
        ppo = values.pop('ppo', None)
        if ppo:
            if ppo['lam'] != PPO_LAM:
                raise RecipeError(f'PPO with lambda {ppo["lam"]}')
            values.update(ppo_epochs=ppo['epochs'], ppo_minibatches=ppo['minibatches'])
        values.setdefault('train_on', 'train')          # records from before --train-on
        values.setdefault('pad_lines', 0)
        values['with_stretch'] = bool(results.get('stretch_groups_trained'))
        return values


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


def random_selection(rewards, rng):
    """rewards [B, G] -> 0/1 [B, G]: as many ones as rewards sum to, at positions drawn by rng
    (a random.Random) whatever their reward: filtered imitation's control at equal kept episodes."""
    flat = torch.zeros(rewards.numel())
    flat[rng.sample(range(rewards.numel()), int(rewards.sum().item()))] = 1.0
    return flat.view_as(rewards)


def advantages(rewards, method, rng=None):
    """rewards [B, G] -> advantages [B, G] for one of METHODS ('random_kept' draws with rng)."""
    rewards = rewards.float()
    if method == 'random_kept':
        return random_selection(rewards, rng if rng is not None else random.Random(0))
    if method == 'rloo':
        return arl.rloo_advantages(rewards)
    if method == 'grpo':
        return arl.group_advantages(rewards)
    if method in ('positive', 'reinforce'):
        return rewards.clone()
    raise ValueError(f'unknown method {method!r}; choose one of {METHODS}')


def turn_weights(episodes, credit):
    """Per-turn credit (one list per episode, one value per turn) on the token_logprobs grid of
    collate_trajectories(episodes) -> [B, T-1]: each turn's value on the positions that predict
    its call's tokens, 0 elsewhere."""
    T = max(len(e.ids) for e in episodes)
    weights = torch.zeros(len(episodes), T - 1)
    for b, (e, turns) in enumerate(zip(episodes, credit)):
        for (start, end), a in zip(arl.action_spans(e.action_mask), turns):
            weights[b, start - 1:end - 1] = a
    return weights


def progress_update(model, optimizer, groups, tasks, env, tok, samples, seed, max_turns,
                    grad_clip=1.0):
    """One optimiser step with Section 12.4's truth as the turn credit -> stats. groups[i] was
    played on tasks[i]; every visited state of a group is valued by `samples` continuations
    under model (seeds from `seed`), and each turn's tokens are weighted by its progress
    V(h_{k+1}) - V(h_k) (`agentrl.true_turn_advantages`). Every group is kept."""
    credit, continuations = [], 0
    for g, (group, task) in enumerate(zip(groups, tasks)):
        states = arl.visited_states(task, group)
        values = arl.state_values(model, env, tok, states, samples, seed=seed + 1000 * g,
                                  max_turns=max_turns)
        continuations += samples * len(states)
        credit.extend(arl.true_turn_advantages(e, values) for e in group)
    stats = {'groups': sum(map(mixed_rewards, groups)), 'continuations': continuations}
    if not any(a for turns in credit for a in turns):       # no turn made or lost progress
        return stats
    episodes = [e for group in groups for e in group]
    step = arl.pg_step(model, optimizer, episodes, turn_weights(episodes, credit),
                       'seq-mean-token-mean', grad_clip)
    stats.update(loss=step['loss'], grad_norm=step['grad_norm'])
    return stats


def update(model, optimizer, groups, method, grad_clip=1.0, ref=None, kl_coef=0.0, rng=None):
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
    if method == 'dpo':
        return dpo_update(model, optimizer, groups, ref, rng or random.Random(0), grad_clip, mixed)
    rewards = torch.tensor([[e.reward for e in g] for g in groups])           # [B, G]
    episodes = [e for g in groups for e in g]
    if method == 'gigpo':        # Chapter 12: RLOO's episode level plus anchor-state steps
        credit = [c for g in groups for c in arl.gigpo_turn_credit(g)]
        stats = arl.pg_step(model, optimizer, episodes, turn_weights(episodes, credit),
                            'seq-mean-token-mean', grad_clip)
        return {'loss': stats['loss'], 'groups': mixed, 'grad_norm': stats['grad_norm']}
    adv = advantages(rewards, method, rng).flatten()
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


def dpo_update(model, optimizer, groups, ref, rng, grad_clip, mixed):
    """One Adam step of agentrl.dpo_loss on one pair per group (its rewards differ): an episode
    of the group's best reward and one of its worst, each drawn by rng, against `ref`."""
    pairs = []
    for g in groups:
        best, worst = max(e.reward for e in g), min(e.reward for e in g)
        pairs.append((rng.choice([e for e in g if e.reward == best]),
                      rng.choice([e for e in g if e.reward == worst])))
    wins, losses = [w for w, _ in pairs], [l for _, l in pairs]
    with torch.no_grad():
        ref_w, ref_l = arl.episode_logps(ref, wins), arl.episode_logps(ref, losses)
    model.train()
    loss, margins = arl.dpo_loss(arl.episode_logps(model, wins), arl.episode_logps(model, losses),
                                 ref_w, ref_l, DPO_BETA)
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    model.eval()
    return {'loss': loss.item(), 'groups': mixed, 'grad_norm': norm.item(), 'pairs': len(pairs),
            'margin': margins.mean().item()}


def dagger_update(model, optimizer, data, rng, grad_clip=1.0):
    """One Adam step of the next-token loss on DAGGER_BATCH (ids, mask) examples drawn by rng
    (with replacement) from the aggregate `data` of agentrl.dagger_examples."""
    picks = [data[rng.randrange(len(data))] for _ in range(DAGGER_BATCH)]
    ids, real = arl.pad_batch([x for x, _ in picks], arl.PAD_ID)                 # [N, T]
    target, _ = arl.pad_batch([m for _, m in picks], 0)                         # [N, T]
    model.train()
    loss = arl.next_token_loss(model, ids, target.float() * real)
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    model.eval()
    return {'loss': loss.item(), 'grad_norm': norm.item(), 'examples': len(data)}


class PaddingPool:
    """The paddings RL's tasks are played with: `draw(task, k)` is `task` itself (padded with
    seed 0) for k = 0, else its unpadded original padded with seed k, made and validated
    (agentrl.pad_tasks) on first use and kept in `made`. With moved_only, every draw, k = 0
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
            moved = arl.pad_blank_lines(task, self.most, seed).line != task.line
            if moved or not self.moved_only:
                return arl.pad_tasks([task], self.most, self.env, seed=seed)[0]
        raise ValueError(f'task {task.id}: no padding of {self.TRIES} moved line {task.line}')


def explained_variance(target, prediction):
    """1 - Var(target - prediction) / Var(target) over two 1-d tensors (None if Var(target) is 0):
    1 when the prediction is exact, 0 when it does no better than the mean, below 0 when worse."""
    var = target.var(unbiased=False)
    if var.item() == 0:
        return None
    return 1.0 - ((target - prediction).var(unbiased=False) / var).item()


def dashboard_stats(policy, ref, episodes, group, critic=None, max_tokens=4096):
    """The dashboard of one batch, under the policy that sampled it (call it before the update)
    and `ref` (the warm start), without gradient and without drawing a random number -> dict:
      entropy         mean over policy tokens of the entropy (nats) of the policy's next-token
                      distribution (agentrl.entropy)
      kl_start        mean over policy tokens of the exact KL(policy || warm start) between the
                      next-token distributions, summed over the vocabulary (agentrl.token_kl)
      kl_start_k3     the same KL from the sampled tokens only: mean k3 (Chapter 10)
      policy_tokens   the batch's policy tokens
      reward_std      standard deviation of the episodes' rewards
      baseline_ev     explained_variance of the rewards by each episode's leave-one-out group mean
                      (RLOO's baseline; `episodes` in groups of `group`, as played)
      value_ev        with `critic` (PPO's ValueHead): explained_variance of the returns by the
                      value head over policy tokens, both as ppo_update computes them
    The forward passes run in agentrl.length_buckets of the episodes, as trajectory_logprobs does."""
    sums = {'entropy': 0.0, 'kl_start': 0.0, 'kl_start_k3': 0.0}
    n, returns, values = 0, [], []
    with torch.no_grad():
        for bucket in arl.length_buckets([len(e.ids) for e in episodes], max_tokens):
            batch = [episodes[b] for b in bucket]
            ids, action_mask, _, _ = arl.collate_trajectories(batch)               # [b, t]
            if critic is not None:
                logits, v = critic(ids)                                            # [b, t, V], [b, t]
            else:
                logits = policy(ids)[0]
            ref_logits = ref(ids)[0]
            logp, mask = arl.token_logprobs(logits, ids, action_mask)             # [b, t-1]
            logq, _ = arl.token_logprobs(ref_logits, ids, action_mask)
            keep = mask > 0
            sums['entropy'] += arl.entropy(logits, mask).sum().item()
            sums['kl_start'] += arl.token_kl(logits, ref_logits, mask).sum().item()
            sums['kl_start_k3'] += arl.kl_estimators(logp, logq)[2][keep].sum().item()
            n += int(keep.sum())
            if critic is not None:
                rewards = torch.zeros_like(logp)
                for j, e in enumerate(batch):
                    rewards[j, mask[j].nonzero()[-1, 0]] = e.reward
                _, ret = arl.gae(rewards, v[:, :-1], mask, 1.0, PPO_LAM)
                returns.append(ret[keep])
                values.append(v[:, :-1][keep])
    out = {k: v / max(n, 1) for k, v in sums.items()}
    r = torch.tensor([float(e.reward) for e in episodes])
    loo = torch.cat([(g.sum() - g) / (len(g) - 1) for g in r.split(group)])
    out.update(policy_tokens=n, reward_std=r.std(unbiased=False).item(),
               baseline_ev=explained_variance(r, loo))
    if critic is not None:
        out['value_ev'] = explained_variance(torch.cat(returns), torch.cat(values))
    return out


def mean_expert_prob(model, env, tasks, tok):
    return sum(math.exp(v) for v in ev.expert_path_logprob(model, env, tasks, tok)) / len(tasks)


def evaluation_positions(held, placements, n):
    """Positions of the evaluation tasks kept with eval_tasks n: the first n of each half of the
    held-out tasks (RL's placements and the others), so both halves are measured."""
    halves = [[i for i, t in enumerate(held) if (gym_v2.task_group(t) in placements) == inside]
              for inside in (True, False)]
    return sorted(i for half in halves for i in half[:n])


def run(recipe, context):
    torch.manual_seed(recipe.seed)
    tok = arl.CharTokenizer()
    warm = context.load(recipe.warm)
    trained = gym_v2_warm_start.recipe_of_record(warm)
    tasks, cache = gym_v2.load_tasks(trained.task_seed, trained.train_variants,
                                     validate=not context.reduced)
    model = arl.load_checkpoint(warm.checkpoint)
    config = torch.load(warm.checkpoint, weights_only=True)['model_config']
    by_id = {t.id: t for t in tasks}
    placements = (arl.rl_placements(tasks) if recipe.train_on not in ('train', 'perfectible')
                  else set())
    if recipe.task_limit and placements:
        placements = set(sorted(placements)[:recipe.task_limit])
    splits = {s: [by_id[i] for i in ids] for s, ids in warm.results['eval_task_ids'].items()}
    mode = 'hint' if recipe.hint else 'plain'
    control = dict(warm.metrics[mode])
    perfectible = []                 # --train-on perfectible: the train tasks solved 20-80%
    if recipe.train_on == 'perfectible':
        low, high = PERFECTIBLE
        perfectible = [t.id for t, p in zip(splits['train'], control['train']['t1']['per_task'])
                       if low <= p <= high][:recipe.task_limit or None]
    sanity_samples = 2 if context.reduced else SANITY_SAMPLES
    if recipe.eval_tasks:            # the first tasks of each split; the control cut to them
        keep = {s: (evaluation_positions(v, placements, recipe.eval_tasks) if s == 'heldout'
                    else list(range(min(recipe.eval_tasks, len(v))))) for s, v in splits.items()}
        splits = {s: [v[i] for i in keep[s]] for s, v in splits.items()}
        control.update({s: restrict(control[s], keep[s]) for s in control if s in keep})
    train_pool = ([] if recipe.train_on == 'perfectible'     # RL plays its own tasks only
                  else [t for t in tasks if t.split == 'train'][:recipe.task_limit or None])
    ids = {t.id for t in train_pool} | {t.id for v in splits.values() for t in v}
    play = gym_v2.played(tasks, cache, recipe.pad_lines, ids | set(perfectible))
    train = [play[t.id] for t in train_pool]
    if perfectible:
        train = [play[i] for i in perfectible]
        print(f'RL on the {len(train)} train tasks the warm start solved '
              f'{PERFECTIBLE[0]:.0%}-{PERFECTIBLE[1]:.0%} of the time', flush=True)
    stretch_groups = ({gym_v2.task_group(t) for t in tasks if t.split == 'stretch'}
                      if recipe.with_stretch else set())
    if recipe.task_limit and stretch_groups:
        stretch_groups = set(sorted(stretch_groups)[:recipe.task_limit])
    rng = random.Random(f'rl:{recipe.seed}')
    if recipe.lora_rank:
        trainable = arl.add_lora(model, recipe.lora_rank, recipe.lora_alpha)
        lora = {'rank': recipe.lora_rank, 'alpha': recipe.lora_alpha,
                'trainable_params': sum(p.numel() for p in trainable),
                'total_params': sum(p.numel() for p in model.parameters())}
        print(f'LoRA rank {lora["rank"]}, alpha {lora["alpha"]:g}: {lora["trainable_params"]}'
              f' trainable of {lora["total_params"]} parameters', flush=True)
    else:
        trainable, lora = list(model.parameters()), None
    critic = arl.ValueHead(model) if recipe.method == 'ppo' else None   # shares the trunk
    if critic is not None:
        trainable = list(critic.parameters())
    learner = critic if critic is not None else model
    opt = torch.optim.Adam(trainable, lr=recipe.lr)
    ref = arl.load_checkpoint(warm.checkpoint) if recipe.kl_coef or recipe.method == 'dpo' else None
    teacher = (arl.load_checkpoint(context.load(recipe.teacher).checkpoint)
               if recipe.method == 'onpolicy_distill' else None)
    dagger_data, round_tasks = [], []    # --method dagger: the aggregate; the tasks just played
    if ref is None and recipe.dashboard:   # building a model draws from torch's generator: put
        drawn = torch.get_rng_state()      # it back, so that the dashboard changes no draw
        ref = arl.load_checkpoint(warm.checkpoint)
        torch.set_rng_state(drawn)
    curve, rl_curve, log = [], [], []
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=recipe.hint, cache=cache, sandbox=pool.run)
        rl_env = (gym_v2.LineEditBonusEnv(recipe.line_edit_bonus, at_bug=recipe.bonus_at_bug,
                                          hint=recipe.hint, cache=cache, sandbox=pool.run)
                  if recipe.line_edit_bonus else
                  arl.RewardEnv(recipe.reward, reward_seed=recipe.seed, hint=recipe.hint,
                                cache=cache, sandbox=pool.run)
                  if recipe.reward != 'binary' else env)
        unpadded = {t.id: t for t in train_pool}
        trained_tasks = train
        if placements:
            rl_tasks = gym_v2.group_tasks(placements | stretch_groups,
                                          range(gym_v2.TRAIN_VARIANTS), 'rl',
                                          first_id=len(tasks), env=env)
            unpadded.update((t.id, t) for t in rl_tasks)
            train = arl.pad_tasks(rl_tasks, recipe.pad_lines, env)
            print(f'RL on {len(train)} tasks of {len(placements)} held-out groups'
                  + (f' and {len(stretch_groups)} stretch groups' if stretch_groups else ''),
                  flush=True)
        unseen = [play[t.id] for t in splits['heldout'] if gym_v2.task_group(t) not in placements]
        seen_by_rl = [play[t.id] for t in splits['heldout'] if gym_v2.task_group(t) in placements]
        paddings = PaddingPool(unpadded, recipe.pad_lines, env, moved_only=recipe.moved_only)
        played_episodes, u, rl_seconds = 0, 0, 0.0
        state = context.saved_state(recipe)
        if state:
            learner.load_state_dict(state['learner'])
            opt.load_state_dict(state['optimizer'])
            harness.set_rng_state(state['rng'], rng)
            curve, rl_curve, log = state['curve'], state['rl_curve'], state['log']
            played_episodes, u, rl_seconds = state['episodes'], state['update'], state['seconds']
            paddings.made = state['paddings']
            dagger_data = state.get('dagger', [])
            sanity_start = state.get('sanity_start')
        else:
            curve.append((0, mean_expert_prob(model, env, unseen, tok)))
            if seen_by_rl:
                rl_curve.append((0, mean_expert_prob(model, env, seen_by_rl, tok)))
            print(f'update 0: heldout expert-path {curve[-1][1]:.4f}', flush=True)
        if perfectible and not state:   # the warm start on RL's own tasks, at fresh seeds
            sanity_start = arl.summarise(arl.sample_rewards(
                model, env, train, tok, sanity_samples, 1.0, SANITY_SEED)[0])
            print(f'warm start on its {len(train)} perfectible tasks: '
                  f'{sanity_start["rate"]:.3f} +- {sanity_start["stderr"]:.3f}', flush=True)

        def play_round():
            """One round: tasks_per_update tasks drawn from rng, group episodes each at T=1."""
            if recipe.train_on == 'mixed':
                half = recipe.tasks_per_update // 2
                picked = (rng.sample(train, half)
                          + rng.sample(trained_tasks, recipe.tasks_per_update - half))
            elif perfectible:           # a fixed set: every task when it is no larger
                picked = rng.sample(train, min(recipe.tasks_per_update, len(train)))
            else:
                picked = rng.sample(train, recipe.tasks_per_update)
            if recipe.fresh_padding:
                picked = [paddings.draw(t, rng.randrange(recipe.fresh_padding)) for t in picked]
            batch = [t for t in picked for _ in range(recipe.group)]
            round_tasks.extend(batch)
            seeds = [rng.randrange(2 ** 31) for _ in batch]
            return arl.rollout_batch(model, rl_env, batch, tok, seeds, temperature=1.0,
                                     max_turns=recipe.max_turns)

        t_rl = time.time() - rl_seconds
        while (played_episodes < recipe.episode_budget if recipe.episode_budget
               else u < recipe.updates):
            u += 1
            round_tasks.clear()
            eps, rounds = play_round(), 1
            while (recipe.refill and rounds < REFILL_ROUNDS   # DAPO's dynamic sampling
                   and sum(map(mixed_rewards, as_groups(eps, recipe.group))) < recipe.refill):
                eps, rounds = eps + play_round(), rounds + 1
            groups = as_groups(eps, recipe.group)
            if recipe.refill:             # the first N mixed groups, in the order played
                kept = [g for g in groups if mixed_rewards(g)]
                found, groups = len(kept), kept[:recipe.refill]
            played_episodes += len(eps)
            dash = (dashboard_stats(model, ref, eps, recipe.group, critic)
                    if recipe.dashboard else {})
            if recipe.method == 'onpolicy_distill':     # the teacher scores every episode
                full = arl.onpolicy_distill_step(model, teacher, opt, eps)
                stats = {k: full[k] for k in ('loss', 'grad_norm', 'reverse_kl', 'k1')}
                stats['groups'] = sum(map(mixed_rewards, groups))
            elif recipe.method == 'dagger':             # the expert labels every turn played
                dagger_data.extend(x for task, e in zip(round_tasks, eps)
                                   for x in arl.dagger_examples(e, task, tok))
                stats = dagger_update(model, opt, dagger_data,
                                      random.Random(f'rl:{recipe.seed}:dagger:{u}'))
                stats['groups'] = sum(map(mixed_rewards, groups))
            elif recipe.method == 'progress':          # Section 12.4's truth as turn credit
                stats = progress_update(
                    model, opt, groups, round_tasks[::recipe.group], rl_env, tok,
                    recipe.credit_samples,
                    random.Random(f'rl:{recipe.seed}:progress:{u}').randrange(2 ** 31),
                    recipe.max_turns)
            elif critic is not None:    # PPO learns from every episode; its critic is the baseline
                stats = arl.ppo_update(critic, opt, eps, epochs=recipe.ppo_epochs,
                                       minibatches=recipe.ppo_minibatches, lam=PPO_LAM)
                stats['groups'] = sum(map(mixed_rewards, groups))
            else:
                stats = update(model, opt, groups, recipe.method, ref=ref,
                               kl_coef=recipe.kl_coef,
                               rng=random.Random(f'rl:{recipe.seed}:select:{u}')) or {'groups': 0}
            stats.update(update=u, reward=sum(e.reward for e in eps) / len(eps),
                         solved=sum(map(gym_v2.solved, eps)) / len(eps))
            if recipe.refill:
                stats.update(rounds=rounds, episodes=len(eps), mixed_found=found)
            stats.update(dash)
            log.append(stats)
            last = (played_episodes >= recipe.episode_budget if recipe.episode_budget
                    else u == recipe.updates)
            if u % recipe.eval_every == 0 or last:
                curve.append((u, mean_expert_prob(model, env, unseen, tok)))
                if seen_by_rl:
                    rl_curve.append((u, mean_expert_prob(model, env, seen_by_rl, tok)))
                recent = log[-recipe.eval_every:]
                print(f'update {u}: train reward '
                      f'{sum(s["reward"] for s in recent) / len(recent):.3f}, heldout '
                      f'expert-path {curve[-1][1]:.4f} ({time.time() - t_rl:.0f} s)', flush=True)
            context.progress(u, lambda: {
                'learner': learner.state_dict(), 'optimizer': opt.state_dict(),
                'rng': harness.rng_state(rng), 'curve': curve, 'rl_curve': rl_curve,
                'log': log, 'episodes': played_episodes, 'seconds': time.time() - t_rl,
                'paddings': paddings.made, 'dagger': dagger_data,
                **({'sanity_start': sanity_start} if perfectible else {})}, recipe)
        rl_seconds = time.time() - t_rl
        if lora:
            arl.merge_lora(model)   # a plain TinyAgent again: same checkpoint and evaluation
        context.save_checkpoint(model, config)   # before evaluation: a failure there loses no training
        t0 = time.time()
        if perfectible:                 # the same tasks at the same seeds as the start
            end = arl.summarise(arl.sample_rewards(
                model, env, train, tok, sanity_samples, 1.0, SANITY_SEED)[0])
            diff = ev.paired(end['per_task'], sanity_start['per_task'])
            print(f'trained on its {len(train)} perfectible tasks: {end["rate"]:.3f} +-'
                  f' {end["stderr"]:.3f}; minus the warm start {diff[0]:+.3f} +- {diff[1]:.3f}'
                  ' (paired)', flush=True)
            return {
                'updates': u, 'episodes': played_episodes, 'rl_tasks': len(train), 'lora': lora,
                'sanity': {'band': list(PERFECTIBLE), 'task_ids': perfectible,
                           'samples': sanity_samples, 'seed': SANITY_SEED,
                           'start': sanity_start, 'end': end, 'end_minus_start': list(diff)},
                'heldout_expert_path_curve': curve, 'log': log,
                'rl_seconds': round(rl_seconds), 'eval_seconds': round(time.time() - t0)}
        evaluated = {s: [play[t.id] for t in splits[s]] for s in ('heldout', 'stretch')}
        metrics = ev.evaluate(model, env, evaluated, tok, samples=recipe.samples_per_task,
                              temperatures=(1.0, EXTRA_T), seed=recipe.eval_seed)
        metrics.update(ev.evaluate(model, env, {'train': [play[t.id] for t in splits['train']]},
                                   tok, samples=recipe.samples_per_task, seed=recipe.eval_seed))
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
    return {
        'updates': u, 'episodes': played_episodes, 'paddings_made': len(paddings.made),
        'rl_groups': sorted(placements), 'stretch_groups_trained': sorted(stretch_groups),
        'rl_tasks': len(train), 'lora': lora,
        'heldout_expert_path_curve': curve, 'rl_groups_expert_path_curve': rl_curve,
        'log': log, 'metrics': metrics, 'versus_control': versus,
        'rl_seconds': round(rl_seconds), 'eval_seconds': round(time.time() - t0),
    }


LAB = harness.Lab(__file__, 'run', RlRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
