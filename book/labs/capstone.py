"""The capstone: the whole pipeline from `agentrl`, and what each stage bought.

One recipe, one seed per run: a fresh TinyAgent goes through four stages, each of them the book's
saved code, and every stage's policy is evaluated the same way on fresh instances no run was tuned
on. The ledger is each stage's paired gain over the stage before, beside the sharpening control.

  sft      imitation of the scripted expert on the `train` split (Chapter 6, Section 6.6, with
           Chapter 15's recovery demonstrations): one demonstration per training task, a seeded
           --recovery-share of them `agentrl.recovery_example` (a non-applying edit, its error,
           the right edit), every one played with the line hint and padded with 0..--pad-lines
           blank lines (`agentrl.pad_tasks`), the right edit's line and old text weighted
           --copy-weight (`agentrl.weighted_action_mask`); `agentrl.train_next_token` for
           --sft-steps steps (AdamW, warm-up and cosine decay)
  rs       rejection sampling (Chapter 15, `agentrl.expert_iteration`): --rs-rounds rounds, each
           sampling --rs-samples episodes of --rs-tasks tasks drawn from RL's pool and training on
           the successes for --rs-steps steps
  rl       RLOO with the book's recipe (Chapters 7-10, 13): every update draws --tasks-per-update
           tasks, half from the `train` split and half from unseen variants of half of the
           held-out placements (`agentrl.rl_placements`: the practised placements), each padded
           with one of --fresh-padding seeded paddings; --group episodes per task at T = 1,
           groups of equal rewards dropped, `agentrl.rloo_advantages`, one Adam step of
           `agentrl.fast_grpo_step`. --reward random pays a coin flip (`agentrl.RewardEnv`): the
           random-reward control, one arm. Rollouts are sampled per group as
           `agentrl.collect_episodes` samples them, so Chapter 13's `RolloutPool` (--rollout-
           workers, or under torchrun) gives the same episodes as this process
  distill  optional (--distill-updates N): Chapter 16's on-policy distillation of the RL policy
           into the rs policy on RL's task draws (`agentrl.onpolicy_distill_step`), no reward used

Evaluation (Chapter 17, Appendix A), the same for every stage: fresh variants (--fresh-variants,
never generated for training, tuning or any earlier evaluation) of three sets of placements,
padded as training was, played with the hint, --samples-per-task episodes per task at the same
episode seeds for every policy (`agentrl.sample_rewards`), so every difference is paired by task:
  practised  the placements RL practises (`agentrl.rl_placements`)
  unseen     the other half of the held-out placements: neither imitation nor RL saw them
  functions  the stretch functions (`agentrl.STRETCH_FUNCS`): functions no stage trained on
The sft policy is also sampled at --control-temperatures; its best on each split is the
sharpening control (the policy before any training on its own samples, at its best
temperature). The last stage's policy is saved beside the record (results/<run>.pt), each earlier
one as results/<run>_<stage>.pt. Every stage's checkpoint and evaluation are also kept in
<state>/capstone-stages/, keyed by the recipe of the stages up to it: a run that stopped starts
again after its last finished stage, and the random-reward arm (--reward random) reuses the sft
and rs stages of its seed, trained and evaluated once, and runs only its RL stage and its
evaluation.

The ledger over three seeds (`python book/labs/capstone.py ledger STEM STEM_s1 STEM_s2`) pairs each
stage with the one before and the last stage with the control, task by task, the seeds averaged
per task, with a standard error clustered by placement (`agentrl.seed_stderr`) and a 95%
interval; with --random STEM ... (the same seeds, --reward random) also the real reward's RL
stage against the coin flip's.

Budget: one seed's pipeline, on one core of this machine with nothing else running, from the
recorded timings of the labs whose stages these are:
  sft         6,000 steps of batch 8 took 1,415 s (gym_v2_warm_start), so 3,000 steps ~ 710 s;
              the 2,579 demonstrations, each padded task validated in the sandbox, ~ 60 s
  rs          2 rounds x (128 tasks x 4 episodes at ~0.06 s each ~ 31 s, and 100 steps ~ 24 s)
              ~ 110 s
  rl          300 updates of 64 episodes took ~1,700 s (gym_v2_rl, mixed batches, fresh padding
              8), so 150 updates ~ 850 s
  evaluation  78 practised, 76 unseen and 132 stretch tasks (2 fresh variants of 31, 32 and 45
              placements) x 8 episodes = 2,288 episodes, at ~0.06 s each (the standard fresh
              evaluation: ~20,000 episodes in ~1,200 s) ~ 140 s per policy and temperature; sft
              at 3 temperatures, rs and rl at T = 1: 5 passes ~ 690 s, and ~ 20 s to make and
              validate the fresh tasks
  in all      710 + 60 + 110 + 850 + 690 + 20 ~ 2,440 s ~ 41 minutes; the random-reward arm of a
              seed whose binary run is done: 850 + 140 + 20 ~ 1,010 s ~ 17 minutes

A reduced run (--reduced --results DIR: a smaller model, 20 imitation steps, one rejection round
of 4 tasks, 2 RL updates of 4 tasks x 2 episodes, 2 placements per split) is the smoke test of the
whole pipeline, about a minute on an idle machine (tests/test_labs.py runs it).

Run from the repository root, one at a time (single-threaded, seeded):
    .venv/bin/python book/labs/capstone.py                   # seed 0; then --seed 1, --seed 2
    .venv/bin/python book/labs/capstone.py --reward random   # the control arm, seeds 0-2
    .venv/bin/python book/labs/capstone.py ledger capstone capstone_s1 capstone_s2 \
        --random capstone_rewardrandom capstone_s1_rewardrandom capstone_s2_rewardrandom
Record: results/<run>.json (kind run), the policies beside it.
"""

import dataclasses
import hashlib
import json
import random
import sys
import time

import torch

import agentrl as arl
import gym_v2
import harness
from harness import RecipeError, option

MODEL_CONFIG = {'vocab_size': 101, 'd_model': 64, 'n_layers': 4, 'n_heads': 4, 'mlp_mult': 4,
                'tie_embeddings': True}
STAGES = ('sft', 'rs', 'rl', 'distill')
SPLITS = ('practised', 'unseen', 'functions')
# The recipe fields each stage depends on (with the seed and the model): a stage is reused from
# <state>/capstone-stages/ when they are unchanged.
STAGE_FIELDS = {
    'sft': ('model_config', 'pad_lines', 'hint', 'recovery_share', 'mask_recovery', 'copy_weight',
            'sft_steps', 'sft_batch', 'sft_lr', 'train_tasks'),
    'rs': ('fresh_padding', 'rs_rounds', 'rs_tasks', 'rs_samples', 'rs_steps', 'rs_lr',
           'max_turns'),
    'rl': ('reward', 'rl_updates', 'tasks_per_update', 'group', 'rl_lr'),
    'distill': ('distill_updates',),
}


@dataclasses.dataclass(frozen=True)
class CapstoneRecipe(harness.Recipe):
    seed: int = option(0, 'initialisation, demonstrations, minibatches, task draws and episodes '
                       'of every stage', short='s')
    model_config: dict = option(MODEL_CONFIG, 'TinyAgent configuration (its seed is --seed)',
                                short='')
    pad_lines: int = option(6, 'insert 0..K blank lines into every task (agentrl.pad_tasks)',
                            short='pad')
    hint: bool = option(True, 'the failing test names the bug line (agentrl.HintedBugFixEnv)')
    recovery_share: float = option(0.25, 'share of recovery demonstrations in the sft stage',
                                   short='rec')
    mask_recovery: bool = option(False, "leave the recovery demonstrations' non-applying edit "
                                 'out of the loss (Section 15.4)', short='recmasked')
    copy_weight: int = option(4, "weight on the right edit's line digits and old text",
                              short='copy')
    sft_steps: int = option(3000, 'optimiser steps of the sft stage', short='sft')
    sft_batch: int = option(8, 'demonstrations per sft step', short='sftb')
    sft_lr: float = option(5e-3, 'peak learning rate of the sft stage', short='sftlr')
    train_tasks: int = option(0, 'the first N training tasks (0: all)', short='train')
    fresh_padding: int = option(8, 'each rs and rl task plays one of K seeded paddings',
                                short='fresh')
    rs_rounds: int = option(2, 'rejection-sampling rounds (0: no rs stage)', short='rs')
    rs_tasks: int = option(128, 'tasks sampled per rejection-sampling round', short='rst')
    rs_samples: int = option(4, 'episodes per task and round', short='rss')
    rs_steps: int = option(100, 'training steps on the successes of each round', short='rssteps')
    rs_lr: float = option(1e-3, 'peak learning rate of each round', short='rslr')
    reward: str = option('binary', "what RL's submits pay: every hidden test, or a coin flip "
                         '(the random-reward control)', choices=('binary', 'random'),
                         short='reward')
    rl_updates: int = option(150, 'RLOO updates', short='u')
    tasks_per_update: int = option(16, 'tasks per RL update, half train and half practised',
                                   short='tasks')
    group: int = option(4, 'episodes per task (RLOO group)', short='g')
    rl_lr: float = option(3e-4, 'Adam learning rate of the RL stage', short='lr')
    distill_updates: int = option(0, 'on-policy distillation of the RL policy into the rs '
                                  'policy (0: no distill stage)', short='distill')
    rollout_workers: int = option(0, 'sample RL rollouts in N local RolloutPool workers '
                                  '(0: in this process; the same episodes)', in_name=False)
    max_turns: int = option(8, 'turns of an episode')
    fresh_variants: tuple = option((20, 21), 'evaluation variants: never generated by any other '
                                   'lab (training 0-7, evaluation 8-9, standard fresh 10-17, '
                                   'large k 18, impossible splits 19)',
                                   short='variants-')
    eval_tasks: int = option(0, 'the first N placements of each evaluation split (0: all)',
                             short='evaln')
    samples_per_task: int = option(8, 'evaluation episodes per task and temperature',
                                   short='samples')
    control_temperatures: tuple = option((0.1, 0.5, 1.0), "the sft policy's sweep; the "
                                         'best per split is the sharpening control',
                                         short='controlT-')
    eval_seed: int = option(6151, 'episode seeds of the evaluation, the same for every policy',
                            short='evalseed')

    def reduced(self):
        return dataclasses.replace(
            self, model_config=dict(self.model_config, d_model=32, n_layers=2, n_heads=2),
            sft_steps=20, train_tasks=24, rs_rounds=1, rs_tasks=4, rs_samples=2,
            rs_steps=4, rl_updates=2, tasks_per_update=4, group=2, eval_tasks=2,
            samples_per_task=2, control_temperatures=(0.5, 1.0), max_turns=4)

    def check(self, context):
        if 1.0 not in self.control_temperatures:
            raise RecipeError('--control-temperatures: keep 1, the temperature every stage is '
                              'compared at')
        if min(self.fresh_variants, default=0) < 20:
            raise RecipeError('--fresh-variants: variants from 20 on (0-19 were generated for '
                              'training or for another evaluation)')
        if self.tasks_per_update < 2 or self.tasks_per_update % 2:
            raise RecipeError('--tasks-per-update: an even number, half train and half practised')
        if self.group < 2:
            raise RecipeError('--group: RLOO needs two episodes per task')
        if not 0 <= self.recovery_share <= 1:
            raise RecipeError('--recovery-share takes a share in [0, 1]')
        if self.distill_updates and not self.rl_updates:
            raise RecipeError('--distill-updates distils the RL policy: give --rl-updates')


# ---- the setting -----------------------------------------------------------------------------

def rl_env(recipe, cache, sandbox):
    """The environment RL's episodes are played in: the gym's reward, or a coin flip."""
    if recipe.reward == 'binary':
        return arl.HintedBugFixEnv(hint=recipe.hint, cache=cache, sandbox=sandbox)
    return arl.RewardEnv(recipe.reward, reward_seed=recipe.seed, hint=recipe.hint, cache=cache,
                         sandbox=sandbox)


class Setting:
    """Tasks, environments and padding shared by the stages of one run."""

    def __init__(self, recipe, context, pool):
        self.recipe = recipe
        self.tasks, self.cache = gym_v2.load_tasks(validate=not context.reduced)
        self.env = arl.HintedBugFixEnv(hint=recipe.hint, cache=self.cache, sandbox=pool.run)
        self.rl_env = rl_env(recipe, self.cache, pool.run)
        self.placements = arl.rl_placements(self.tasks)
        n = 2 if context.reduced else 0               # a reduced run: two placements
        practised = set(sorted(self.placements)[:n or None])
        self.train = [t for t in self.tasks if t.split == 'train'][:recipe.train_tasks or None]
        self.practice = arl.group_tasks(practised, range(arl.TRAIN_VARIANTS), 'rl',
                                        first_id=len(self.tasks), env=self.env)
        self.paddings = {}
        self.splits, self.clusters = self.fresh_splits(len(self.tasks) + len(self.practice))

    def padded(self, task, k=0):
        """The task with padding k (seed k of agentrl.pad_blank_lines), validated once."""
        if (task.id, k) not in self.paddings:
            self.paddings[task.id, k] = arl.pad_tasks([task], self.recipe.pad_lines, self.env,
                                                      seed=k)[0]
        return self.paddings[task.id, k]

    def draw(self, rng, n):
        """n tasks for one RL update or rs round: half train, half practised, each padded with
        one of --fresh-padding paddings, all drawn from rng."""
        half = n // 2
        picked = rng.sample(self.train, n - half) + rng.sample(self.practice, half)
        return [self.padded(t, rng.randrange(max(1, self.recipe.fresh_padding)))
                for t in picked]

    def fresh_splits(self, first_id):
        """{split: padded fresh tasks}, {split: the placement of each task}."""
        held = sorted({arl.task_group(t) for t in self.tasks if t.split == 'heldout'})
        groups = {'practised': sorted(self.placements),
                  'unseen': [g for g in held if g not in self.placements],
                  'functions': sorted({arl.task_group(t) for t in self.tasks
                                       if t.split == 'stretch'})}
        splits, clusters = {}, {}
        for split, chosen in groups.items():
            chosen = chosen[:self.recipe.eval_tasks or None]
            made = arl.group_tasks(set(chosen), self.recipe.fresh_variants, split,
                                   first_id=first_id, env=self.env)
            first_id += len(made)
            splits[split] = [self.padded(t) for t in made]
            clusters[split] = [':'.join(map(str, arl.task_group(t))) for t in made]
        return splits, clusters


# ---- the stages (agentrl's saved functions only) -------------------------------------------

def sft_stage(recipe, setting, tok):
    """A fresh TinyAgent trained on one demonstration per training task -> (model, log)."""
    torch.manual_seed(recipe.seed)
    model = arl.TinyAgent(**dict(recipe.model_config, seed=recipe.seed))
    rng = random.Random(f'capstone:{recipe.seed}:sft')
    weights = arl.part_weights(recipe.copy_weight)
    examples, recoveries = [], 0
    for task in setting.train:
        played = setting.padded(task)
        example = (arl.recovery_example(setting.env, played, tok, recipe.mask_recovery)
                   if rng.random() < recipe.recovery_share else None)
        if example is None:
            example = arl.sft_examples([arl.teacher_rollout(setting.env, played, tok,
                                                            arl.expert_policy)])[0]
        else:
            recoveries += 1
        ids, mask = example
        examples.append((ids, arl.weighted_action_mask(ids, mask, tok, weights)))
    losses = arl.train_next_token(model, examples, recipe.sft_steps, lr=recipe.sft_lr,
                                  batch_size=recipe.sft_batch, seed=recipe.seed)
    tail = losses[-50:] or [float('nan')]
    return model, {'demonstrations': len(examples), 'recovery_demonstrations': recoveries,
                   'loss_first50': sum(losses[:50]) / max(1, len(losses[:50])),
                   'loss_last50': sum(tail) / len(tail)}


def rs_stage(recipe, setting, tok, model):
    """agentrl.expert_iteration on tasks drawn from RL's pool -> its log (model trained in
    place)."""
    rng = random.Random(f'capstone:{recipe.seed}:rs')
    tasks = setting.draw(rng, recipe.rs_tasks)
    history = (arl.expert_iteration(model, setting.env, tasks, tok, recipe.rs_rounds,
                                   recipe.rs_samples, recipe.rs_steps, lr=recipe.rs_lr,
                                   batch_size=recipe.sft_batch, seed=recipe.seed + 1)
               if recipe.rs_rounds else [])
    return {'rounds': history}


def local_sampler(env, tok, max_turns):
    """Groups sampled in this process: the episodes collect_episodes(model, env, [task] * G,
    tok, seed=s) gives each (task, G, s), all in one rollout_batch."""
    def sample(model, version, work):
        tasks, seeds = [], []
        for task, size, seed in work:
            rng = random.Random(seed)
            tasks += [task] * size
            seeds += [rng.randrange(2 ** 31) for _ in range(size)]
        flat = arl.rollout_batch(model, env, tasks, tok, seeds, max_turns=max_turns)
        out, at = [], 0
        for _, size, _ in work:
            out.append(flat[at:at + size])
            at += size
        return out
    return sample


def pool_sampler(pool):
    """Groups sampled by Chapter 13's RolloutPool workers (each runs collect_episodes)."""
    return lambda model, version, work: [g for _, g in pool.collect(model, version, work)]


def rl_stage(recipe, setting, model, sample, updates=None, teacher=None):
    """RLOO updates in place on model (with teacher: on-policy distillation from it) -> log.
    sample(model, version, work) -> the groups of work [(task, group size, seed)]."""
    rng = random.Random(f'capstone:{recipe.seed}:rl')
    opt = torch.optim.Adam(model.parameters(), lr=recipe.rl_lr)
    log, times = [], {'sampling_s': 0.0, 'update_s': 0.0}
    for u in range(1, (updates if updates is not None else recipe.rl_updates) + 1):
        tasks = setting.draw(rng, recipe.tasks_per_update)
        work = [(t, recipe.group, rng.randrange(2 ** 31)) for t in tasks]
        t0 = time.perf_counter()
        groups = sample(model, u, work)
        t1 = time.perf_counter()
        episodes = [e for g in groups for e in g]
        mixed = [g for g in groups if len({e.reward for e in g}) > 1]
        stats = {'update': u, 'reward': sum(e.reward for e in episodes) / len(episodes),
                 'mixed_groups': len(mixed)}
        if teacher is not None:
            full = arl.onpolicy_distill_step(model, teacher, opt, episodes)
            stats.update(loss=full['loss'], reverse_kl=full['reverse_kl'])
        elif mixed:
            rewards = torch.tensor([[e.reward for e in g] for g in mixed])       # [B, G]
            adv = arl.rloo_advantages(rewards).flatten()
            loss, norm = arl.fast_grpo_step(model, opt, [e for g in mixed for e in g], adv)
            stats.update(loss=loss, grad_norm=norm)
        times['sampling_s'] += t1 - t0
        times['update_s'] += time.perf_counter() - t1
        log.append(stats)
    return {'log': log, 'seconds': {k: round(v, 3) for k, v in times.items()}}


def evaluate(recipe, setting, tok, model, temperatures=(1.0,)):
    """{split: {t<T>: summarise()}} on the fresh splits, the same episode seeds for every
    policy (agentrl.sample_rewards)."""
    out = {}
    for split, tasks in setting.splits.items():
        out[split] = {}
        for t in temperatures:
            rewards, _ = arl.sample_rewards(model, setting.env, tasks, tok,
                                            recipe.samples_per_task, t, recipe.eval_seed,
                                            max_turns=recipe.max_turns)
            out[split][f't{t:g}'] = arl.summarise(rewards)
    return out


# ---- stage checkpoints, reused across runs of the same recipe prefix ------------------------

def stage_key(recipe, stage, reduced):
    upto = STAGES[:STAGES.index(stage) + 1]
    fields = {f: getattr(recipe, f) for s in upto for f in STAGE_FIELDS[s]}
    fields.update(seed=recipe.seed, reduced=reduced, stage=stage)
    text = json.dumps(fields, sort_keys=True, default=list)
    return f'{stage}_{hashlib.sha256(text.encode()).hexdigest()[:16]}'


def cached_stage(context, recipe, stage, make):
    """make() -> (model, log) of a stage, or the checkpoint and log a run of the same recipe up
    to this stage saved in <state>/capstone-stages/."""
    folder = context.state_dir.parent / 'capstone-stages'
    key = stage_key(recipe, stage, context.reduced)
    path = folder / f'{key}.pt'
    if path.exists():
        saved = torch.load(path, weights_only=False)
        print(f'{stage}: reused {path.name}', flush=True)
        return arl.load_checkpoint(path), dict(saved['log'], reused=True)
    t0 = time.time()
    model, log = make()
    log = dict(log, seconds=round(time.time() - t0))
    config = dict(recipe.model_config, seed=recipe.seed)
    harness.write_atomic(path, lambda tmp: torch.save(
        {'state_dict': model.state_dict(), 'model_config': config, 'log': log}, tmp))
    return model, log


EVAL_FIELDS = ('fresh_variants', 'eval_tasks', 'samples_per_task', 'control_temperatures',
               'eval_seed', 'max_turns')


def cached_evaluation(context, recipe, stage, make):
    """make() -> a stage's evaluation, or the one a run of the same recipe up to this stage
    and the same evaluation recorded in <state>/capstone-stages/ (the same policy, tasks and
    episode seeds give the same numbers)."""
    text = json.dumps({f: getattr(recipe, f) for f in EVAL_FIELDS}, sort_keys=True, default=list)
    key = f'{stage_key(recipe, stage, context.reduced)}_eval_' + \
        hashlib.sha256(text.encode()).hexdigest()[:8]
    path = context.state_dir.parent / 'capstone-stages' / f'{key}.json'
    if path.exists():
        print(f'{stage}: evaluation reused from {path.name}', flush=True)
        return json.loads(path.read_text())
    metrics = make()
    harness.write_atomic(path, lambda tmp: tmp.write_text(json.dumps(metrics)))
    return metrics


def save_stage(context, recipe, stage, model):
    path = context.results / f'{context.name}_{stage}.pt'
    config = dict(recipe.model_config, seed=recipe.seed)
    harness.write_atomic(path, lambda tmp: torch.save(
        {'state_dict': model.state_dict(), 'model_config': config}, tmp))


def copy_of(model, recipe):
    twin = arl.TinyAgent(**dict(recipe.model_config, seed=recipe.seed))
    twin.load_state_dict(model.state_dict())
    return twin.eval()


# ---- the method ------------------------------------------------------------------------------

def comparisons(metrics, stages):
    """Paired differences of one seed: each stage minus the one before, and the last minus the
    sharpening control -> {split: {name: (mean, stderr)}}."""
    out = {}
    for split in SPLITS:
        best, control = arl.sharpening_control(metrics['sft'], split)
        rows = {}
        for before, after in zip(stages, stages[1:]):
            rows[f'{after} - {before}'] = arl.paired(metrics[after][split]['t1']['per_task'],
                                                     metrics[before][split]['t1']['per_task'])
        rows[f'{stages[-1]} - control'] = arl.paired(
            metrics[stages[-1]][split]['t1']['per_task'], control)
        out[split] = {'control_temperature': best, **rows}
    return out


def run(recipe, context):
    tok = arl.CharTokenizer()
    t_all = time.time()
    with arl.SandboxPool(workers=1) as pool:
        setting = Setting(recipe, context, pool)
        print('fresh tasks:', {s: len(v) for s, v in setting.splits.items()},
              f'train {len(setting.train)}, practice {len(setting.practice)}', flush=True)
        logs, metrics, policies = {}, {}, {}
        seconds = {}

        model, logs['sft'] = cached_stage(context, recipe, 'sft',
                                          lambda: sft_stage(recipe, setting, tok))
        policies['sft'] = copy_of(model, recipe)
        stages = ['sft']
        if recipe.rs_rounds:
            def make_rs():
                log = rs_stage(recipe, setting, tok, model)
                return model, log
            model, logs['rs'] = cached_stage(context, recipe, 'rs', make_rs)
            policies['rs'] = copy_of(model, recipe)
            stages.append('rs')
        if recipe.rl_updates:
            def make_rl():
                if recipe.rollout_workers:
                    def worker():                 # a forked worker: its own sandbox process
                        with arl.SandboxPool(workers=1) as own:
                            arl.serve_rollouts(copy_of(model, recipe),
                                               rl_env(recipe, setting.cache, own.run), tok,
                                               max_turns=recipe.max_turns)
                    with arl.RolloutPool(recipe.rollout_workers, worker) as workers:
                        log = rl_stage(recipe, setting, model, pool_sampler(workers))
                else:
                    log = rl_stage(recipe, setting, model,
                                   local_sampler(setting.rl_env, tok, recipe.max_turns))
                return model, log
            model, logs['rl'] = cached_stage(context, recipe, 'rl', make_rl)
            policies['rl'] = copy_of(model, recipe)
            stages.append('rl')
        if recipe.distill_updates:
            start = stages[-2]
            student = copy_of(policies[start], recipe)

            def make_distill():
                log = rl_stage(recipe, setting, student,
                               local_sampler(setting.env, tok, recipe.max_turns),
                               updates=recipe.distill_updates, teacher=policies['rl'])
                return student, dict(log, student=start)
            policies['distill'], logs['distill'] = cached_stage(context, recipe, 'distill',
                                                                make_distill)
            stages.append('distill')
        context.save_checkpoint(policies[stages[-1]], dict(recipe.model_config, seed=recipe.seed))
        for stage in stages:
            if stage != stages[-1]:                # the last is results/<run>.pt
                save_stage(context, recipe, stage, policies[stage])
            seconds[stage] = logs[stage].get('seconds')
            t0 = time.time()
            temps = recipe.control_temperatures if stage == 'sft' else (1.0,)
            metrics[stage] = cached_evaluation(context, recipe, stage, lambda: evaluate(
                recipe, setting, tok, policies[stage], temps))
            seconds[f'eval_{stage}'] = round(time.time() - t0)
            print(f'{stage}: ' + ', '.join(f'{s} T=1 {metrics[stage][s]["t1"]["rate"]:.3f}'
                                           for s in SPLITS)
                  + f' ({seconds[stage]} s, evaluated in {seconds[f"eval_{stage}"]} s)',
                  flush=True)
    versus = comparisons(metrics, stages)
    for split, rows in versus.items():
        print(f'  {split} ({len(setting.splits[split])} tasks, control '
              f'{rows["control_temperature"]}): ' + '; '.join(
                  f'{k} {v[0]:+.3f} +- {v[1]:.3f}' for k, v in rows.items()
                  if k != 'control_temperature'), flush=True)
    seconds['all'] = round(time.time() - t_all)
    return {'stages': stages, 'logs': logs, 'metrics': metrics, 'versus': versus,
            'task_ids': {s: [(t.template, t.line, t.kind, t.variant) for t in v]
                         for s, v in setting.splits.items()},
            'clusters': setting.clusters, 'seconds': seconds}


# ---- the ledger over seeds ----------------------------------------------------------------------

def ledger(records, random_records=(), z=1.96):
    """Rows (split, comparison, mean, total standard error, low, high) over the seeds' records:
    per-task differences of each seed, the seeds averaged per task, the error clustered by
    placement with agentrl.seed_stderr; with random_records (the same seeds, --reward random),
    the real reward's RL stage minus the coin flip's."""
    rows = []
    first = records[0].results
    for split in SPLITS:
        clusters = first['clusters'][split]

        def rates(rec, stage, key='t1'):
            return rec.results['metrics'][stage][split][key]['per_task']

        stages = first['stages']
        pairs = [(f'{b} - {a}', lambda r, a=a, b=b: (rates(r, b), rates(r, a)))
                 for a, b in zip(stages, stages[1:])]
        pairs.append((f'{stages[-1]} - control', lambda r: (
            rates(r, stages[-1]), arl.sharpening_control(r.results['metrics']['sft'], split)[1])))
        for name, get in pairs:
            diffs = [[x - y for x, y in zip(*get(r))] for r in records]
            e = arl.seed_stderr(diffs, clusters)
            rows.append((split, name, e.mean, e.total_se, e.mean - z * e.total_se,
                         e.mean + z * e.total_se))
        if random_records:
            diffs = [[x - y for x, y in zip(rates(r, 'rl'), rates(c, 'rl'))]
                     for r, c in zip(records, random_records)]
            e = arl.seed_stderr(diffs, clusters)
            rows.append((split, 'rl - random-reward rl', e.mean, e.total_se,
                         e.mean - z * e.total_se, e.mean + z * e.total_se))
    return rows


def print_ledger(argv):
    """`capstone.py ledger STEM ... [--random STEM ...] [--results DIR]`: the ledger."""
    import argparse
    import pathlib
    parser = argparse.ArgumentParser(prog='capstone.py ledger')
    parser.add_argument('stems', nargs='+')
    parser.add_argument('--random', nargs='*', default=[])
    parser.add_argument('--results', type=pathlib.Path, default=harness.RESULTS)
    args = parser.parse_args(argv)
    records = [arl.load_record(s, args.results) for s in args.stems]
    randoms = [arl.load_record(s, args.results) for s in args.random]
    print(f"{'split':10s}{'comparison':24s}{'mean':>8s}{'se':>7s}   95% interval")
    for split, name, mean, se, lo, hi in ledger(records, randoms):
        print(f'{split:10s}{name:24s}{mean:+8.3f}{se:7.3f}   [{lo:+.3f}, {hi:+.3f}]')


LAB = harness.Lab(__file__, 'run', CapstoneRecipe, run)

if __name__ == '__main__':
    if sys.argv[1:2] == ['ledger']:
        print_ledger(sys.argv[2:])
    else:
        harness.main(LAB)
