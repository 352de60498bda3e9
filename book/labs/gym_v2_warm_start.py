"""Warm start on BugFix v2: does imitation on a varied distribution solve unseen placements?

Trains a fresh TinyAgent (the Chapter 3 default, about 0.2M parameters) with the book's
warm-start recipe (`agentrl.train_next_token`'s steps, as in warm_start.py) on the `train` split
of book/labs/gym_v2.py, a share of the episodes being recovery demonstrations, then evaluates it
with book/labs/evaluate.py on four splits (one task per (template, line, kind) group, at most
--n-eval tasks each): T=1 with --samples-per-task episodes per task, greedy, pass@k and the
expert-path probability. What the recipe's options ask:

  --hint-share F       share of training episodes whose failing-test observation names the
                       bug's line (HintedBugFixEnv); the model is evaluated with it (`hint`) on
                       every split and without it (`plain`) on the unseen ones, paired by task
  --sweep MODE         also sample the unseen splits at --sweep-temperatures under observation
                       MODE: the sharpening control (the warm start at its best temperature),
                       which the RL lab needs
  --pad-lines K        insert 0..K blank lines into every task's function (pad_blank_lines,
                       Section 6.6), evaluation tasks too: one placement then sits on different
                       line numbers, so the line can be read from the hint but not recalled
                       from the function
  --copy-weight W      weight W on the loss of the right edit's line digits and `<old>` text,
                       the tokens the hint shows and the policy must copy (1: the book's recipe,
                       every action token alike); --part-weights PART=W gives one part (line,
                       old, or new: the fix's `|new` text) a weight of its own (0: as
                       --copy-weight says)
  --check-share F      share of demonstrations in which the expert runs `test` after its right
                       edit and submits after the check passes (gym_v2.checked_policy): a warm
                       start that sometimes checks its edit, so RL can find what a check is
                       worth when the edit was wrong
  --retry-share F      share of the demonstrations (of training tasks that have one) in which
                       the expert first makes a wrong edit that applies on the bug's line, checks
                       it, undoes it and makes the right edit (gym_v2.retry_policy): a warm start
                       that has seen the way back from an applied mistake
  --mask-retry-mistake the retry demonstrations' wrong edit gets weight 0 in the loss: the
                       policy sees it in its context and learns what follows it, not to make it
  --mask-recovery-mistake
                       the same for the recovery demonstrations' non-applying edit (its `<old>`
                       text not on the line it names): error masking, as Section 15.4 builds it
  --train-seed S       initialisation, expert draw and minibatch order: a second seed of one
                       recipe says whether a warm start's result belongs to the recipe or to its
                       draw
  --load STEM          evaluate the saved warm start STEM (its record and checkpoint) instead of
                       training one, e.g. the unpadded warm start on padded tasks; its training
                       options are taken from its record

Record: results/<run>.json (kind warm_start) and the policy beside it, results/<run>.pt, which
the RL lab starts from. For example, from the repository root:
    .venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 --steps 6000 \
        --sweep hint --pad-lines 6 --copy-weight 4
The training saves its state every --save-every steps; --resume continues a run that stopped.
"""

import dataclasses
import random
import time

import torch

import agentrl as arl
import evaluate as ev
import gym_v2
import harness
import warm_start
from harness import RecipeError, option

UNSEEN = ('heldout', 'stretch')   # splits also evaluated without the line hint
SPLITS = ('heldout', 'stretch', 'rename', 'train')
# Options a --load takes from the loaded record, with what the refusal says comes from it.
FROM_THE_RECORD = {'steps': 'its training comes', 'batch_size': 'its training comes',
                   'lr': 'its learning rate comes', 'recovery_share': 'its demonstrations come',
                   'train_seed': 'its seed comes', 'model_config': 'its training comes',
                   'copy_weight': 'its weights come', 'part_weights': 'its weights come',
                   'check_share': 'its demonstrations come', 'retry_share': 'its demonstrations come',
                   'mask_retry_mistake': 'its demonstrations come',
                   'mask_recovery_mistake': 'its demonstrations come'}


@dataclasses.dataclass(frozen=True)
class GymWarmStartRecipe(harness.Recipe):
    hint_share: float = option(0.5, 'share of training episodes played with the line hint',
                               short='hint')
    recovery_share: float = option(0.25, 'share of recovery demonstrations', short='rec')
    steps: int = option(1000, 'optimiser steps', short='steps')
    batch_size: int = option(8, 'expert episodes per step', short='b')
    lr: float = option(5e-3, 'peak learning rate of the warm-up and cosine schedule', short='lr')
    model_config: dict = option(warm_start.MODEL_CONFIG, 'TinyAgent configuration', short='')
    pad_lines: int = option(0, 'insert 0..K blank lines into every task (agentrl.pad_blank_lines)',
                            short='pad')
    copy_weight: int = option(1, "weight on the right edit's line digits and old text",
                              short='copy')
    part_weights: dict = option({'line': 0, 'old': 0, 'new': 0},
                                "weight of one part of the right edit (0: as --copy-weight says; "
                                "new: 1)", short='')
    check_share: float = option(0.0, 'share of demonstrations that run `test` after the right '
                                'edit, before the submit (gym_v2.checked_policy)', short='check')
    retry_share: float = option(0.0, 'share of demonstrations that make a wrong edit, check it, '
                                'undo it and make the right one (gym_v2.retry_policy)',
                                short='retry')
    mask_retry_mistake: bool = option(False, "leave the retry demonstrations' wrong edit out of "
                                      'the loss', short='masked')
    mask_recovery_mistake: bool = option(False, "leave the recovery demonstrations' non-applying "
                                         'edit out of the loss', short='recmasked')
    train_seed: int = option(0, 'initialisation, expert draw and minibatch order', short='t')
    task_seed: int = option(0, 'seed of the v2 task set')
    train_variants: int = option(gym_v2.TRAIN_VARIANTS, 'variants of each placement for training')
    train_tasks: int = option(0, 'train on the first N training tasks (0: all)')
    n_eval: int = option(64, 'tasks per evaluation split, one per group', short='eval')
    samples_per_task: int = option(8, 'episodes per evaluation task at each temperature',
                                   short='samples')
    eval_seed: int = option(2024, 'episode seeds of the evaluation')
    max_turns: int = option(8, 'turns of an evaluation episode')
    sweep: str = option('', 'observations of the sharpening control sweep (empty: none)',
                        choices=('', 'plain', 'hint'), short='sweep-')
    sweep_temperatures: tuple = option((0.1, 0.2, 0.3, 0.5, 0.7),
                                       'temperatures of the sharpening control', short='sweepT-')
    sweep_splits: tuple = option(UNSEEN, 'splits of the sharpening control', short='sweepon-')
    load: str = option('', 'evaluate this warm start (record stem) instead of training one',
                       short='load-', stem=True)


    def reduced(self):
        return dataclasses.replace(self, steps=4, train_tasks=24, n_eval=2, samples_per_task=2,
                                   max_turns=3, sweep_temperatures=(0.5,))

    def weights(self):
        """{part: weight} of the right edit's line, old text and fix (agentrl.part_weights)."""
        return arl.part_weights(self.copy_weight,
                                [(p, w) for p, w in self.part_weights.items() if w])

    def resolve(self, context):
        if not self.load:
            return self
        loaded = recipe_of_record(context.load(self.load))
        defaults = GymWarmStartRecipe()
        return dataclasses.replace(self, **{
            key: getattr(loaded, key) for key in FROM_THE_RECORD
            if getattr(self, key) == getattr(defaults, key)})

    def check(self, context):
        if self.load:
            loaded = recipe_of_record(context.load(self.load))
            for key, what in FROM_THE_RECORD.items():
                if getattr(self, key) != getattr(loaded, key):
                    raise RecipeError(f'--load evaluates a trained warm start; {what} from its '
                                      f'record, so {harness.flag(key)} does not apply')
        for name in ('hint_share', 'recovery_share', 'check_share', 'retry_share'):
            if not 0 <= getattr(self, name) <= 1:
                raise RecipeError(f'{harness.flag(name)} takes a share in [0, 1], '
                                  f'not {getattr(self, name)}')
        if self.copy_weight < 1 or min(self.part_weights.values()) < 0:
            raise RecipeError('--copy-weight and --part-weights take positive integers')
        if self.mask_retry_mistake and not self.retry_share:
            raise RecipeError('--mask-retry-mistake masks the wrong edit of retry '
                              'demonstrations; give --retry-share')
        if self.mask_recovery_mistake and not self.recovery_share:
            raise RecipeError('--mask-recovery-mistake masks the non-applying edit of recovery '
                              'demonstrations; give --recovery-share')
        if self.sweep and not set(self.sweep_splits) <= set(UNSEEN):
            raise RecipeError(f'--sweep-splits: the sweep is of the unseen splits {UNSEEN}')

    @classmethod
    def from_record(cls, recipe, results):
        values = super().from_record(recipe, results)
        values['load'] = values.pop('loaded_from', None) or ''
        values['mask_retry_mistake'] = values.pop('retry_mistake_masked', False)
        copy = values.get('copy_weight', 1)
        implied = {'line': copy, 'old': copy, 'new': 1}
        used = values.pop('part_weights', implied)
        values['part_weights'] = {p: 0 if used[p] == implied[p] else used[p] for p in arl.EDIT_PARTS}
        # What records made before these options were recorded say about them.
        values['n_eval'] = max(len(v) for v in results['eval_task_ids'].values())
        swept = {mode: [s for s in UNSEEN if 'control_temperature' in res.get(s, {})]
                 for mode, res in results['metrics'].items() if mode in ('plain', 'hint')}
        for mode, splits in swept.items():
            if splits:
                extra = [k for k in results['metrics'][mode][splits[0]]
                         if k.startswith('t') and k not in ('t1',)]
                values.update(sweep=mode, sweep_splits=tuple(splits),
                              sweep_temperatures=tuple(float(k[1:]) for k in extra))
        return values


def recipe_of_record(record):
    """The recipe of a warm start's record."""
    return harness.build(GymWarmStartRecipe, record.recipe, record.results)


def expert_examples(tasks, tokenizer, envs, hint_share, recovery_share, seed, weights=None,
                    check_share=0.0, retry_share=0.0, wrong=None, mask_mistake=False,
                    mask_recovery=False):
    """(ids, loss mask) of one expert episode per task, cut after its last action; a seeded
    recovery_share of them are recovery episodes, a seeded hint_share played in envs['hint'],
    a seeded retry_share of the tasks with a wrong edit in `wrong` ({task id: patch},
    gym_v2.wrong_edits) retry after it (gym_v2.retry_policy), with mask_mistake its wrong edit
    left out of the loss (weight 0: in the context, never a target), a seeded check_share test
    the right edit before submitting (gym_v2.checked_policy); weights ({part: weight},
    agentrl.part_weights) weight the last edit's parts (agentrl.weighted_action_mask); with
    mask_recovery a recovery episode's non-applying edit is left out of the loss likewise."""
    weights = weights or arl.part_weights()
    wrong = wrong or {}
    rng = random.Random(seed)
    check_rng = random.Random(f'{seed}:check')   # its own streams: the other draws stay as they were
    retry_rng = random.Random(f'{seed}:retry')
    retry = gym_v2.retry_policy(wrong)
    examples = []
    for task in tasks:
        recovering = rng.random() < recovery_share
        policy = gym_v2.recovery_policy if recovering else arl.expert_policy
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
        weighted = arl.weighted_action_mask(ids, mask[:end], tokenizer, weights)
        if mask_mistake and retrying:
            weighted = leave_out(ids, weighted, tokenizer, f'<call> edit {wrong[task.id]} </call>')
        mistake = gym_v2.wrong_line_patch(task) if recovering and not retrying else None
        if mask_recovery and mistake:
            weighted = leave_out(ids, weighted, tokenizer, f'<call> edit {mistake} </call>')
        examples.append((ids, weighted))
    return examples


def leave_out(ids, mask, tokenizer, action):
    """The loss mask with weight 0 on the first action span that decodes to `action`."""
    for start, end in arl.action_spans(torch.tensor(mask, dtype=torch.float)):
        if tokenizer.decode(ids[start:end]) == action:
            return mask[:start] + [0] * (end - start) + mask[end:]
    raise ValueError(f'no action {action!r} in the episode')


def eval_splits(tasks, recipe):
    """{split: the evaluation tasks (unpadded)}: one per group, at most n_eval, seeded."""
    return {s: gym_v2.one_per_group(tasks, s, recipe.n_eval, seed=recipe.eval_seed)
            for s in SPLITS}


@harness.with_sandbox_pool
def run(recipe, context, pool):
    torch.manual_seed(recipe.train_seed)
    tok = arl.CharTokenizer()
    tasks, cache = gym_v2.load_tasks(recipe.task_seed, recipe.train_variants,
                                     validate=not context.reduced)
    unpadded_train = [t for t in tasks if t.split == 'train'][:recipe.train_tasks or None]
    unpadded_eval = eval_splits(tasks, recipe)
    ids = {t.id for t in unpadded_train} | {t.id for v in unpadded_eval.values() for t in v}
    play = gym_v2.played(tasks, cache, recipe.pad_lines, ids)
    envs = {mode: gym_v2.HintedBugFixEnv(hint=mode == 'hint', cache=cache, sandbox=pool.run)
            for mode in ('plain', 'hint')}
    train = [play[t.id] for t in unpadded_train]
    splits = {s: [play[t.id] for t in v] for s, v in unpadded_eval.items()}
    print(f'{len(tasks)} tasks, {len(train)} train; evaluating on',
          {s: len(v) for s, v in splits.items()}, f'({time.time() - context.start:.0f} s)',
          flush=True)
    wrong = {}
    if recipe.retry_share:
        wrong = gym_v2.wrong_edits(train, envs['plain'], seed=recipe.train_seed)
        print(f'{len(wrong)} of {len(train)} training tasks have a wrong edit that applies and '
              f'fails a visible test', flush=True)
    examples = expert_examples(train, tok, envs, recipe.hint_share, recipe.recovery_share,
                               recipe.train_seed, recipe.weights(), recipe.check_share,
                               recipe.retry_share, wrong, recipe.mask_retry_mistake,
                               recipe.mask_recovery_mistake)
    print(f'{len(examples)} expert episodes, {sum(len(e[0]) for e in examples) / len(examples):.0f}'
          f' tokens on average ({time.time() - context.start:.0f} s)', flush=True)
    if recipe.load:
        loaded = context.load(recipe.load)
        model = arl.load_checkpoint(loaded.checkpoint)
        loss_first, loss_last = loaded.results['loss_first50'], loaded.results['loss_last50']
        train_seconds = loaded.results['train_seconds']   # the model's, kept by a re-evaluation
        print(f'loaded the warm start {recipe.load}', flush=True)
    else:
        model = arl.TinyAgent(**recipe.model_config)
        t0 = time.time()
        losses = warm_start.imitate(model, examples, recipe.steps, recipe.lr, recipe.batch_size,
                                    recipe.train_seed, context, recipe)
        train_seconds = time.time() - t0
        loss_first, loss_last = warm_start.mean_first(losses), warm_start.mean_last(losses)
        print(f'trained {recipe.steps} steps in {train_seconds:.0f} s; loss {loss_first:.3f}'
              f' -> {loss_last:.3f}', flush=True)
    context.save_checkpoint(model, recipe.model_config)

    t0 = time.time()
    metrics = {}
    for mode, env in envs.items():                 # plain only where the comparison matters
        print(f'evaluating with {mode} observations', flush=True)
        chosen = splits if mode == 'hint' else {s: splits[s] for s in UNSEEN}
        metrics[mode] = ev.evaluate(model, env, chosen, tok, samples=recipe.samples_per_task,
                                    seed=recipe.eval_seed, max_turns=recipe.max_turns)
    for s in UNSEEN:
        diff, se = ev.paired(metrics['hint'][s]['t1']['per_task'],
                             metrics['plain'][s]['t1']['per_task'])
        metrics.setdefault('hint_minus_plain_t1', {})[s] = {'difference': diff, 'stderr': se}
        print(f'  {s:8s} hint - plain at T=1: {diff:+.3f} +- {se:.3f} (paired)', flush=True)
    if recipe.sweep:
        print(f'sharpening control sweep with {recipe.sweep} observations', flush=True)
        chosen = metrics[recipe.sweep]
        sweep = ev.evaluate(model, envs[recipe.sweep], {s: splits[s] for s in recipe.sweep_splits},
                            tok, samples=recipe.samples_per_task,
                            temperatures=recipe.sweep_temperatures, seed=recipe.eval_seed,
                            max_turns=recipe.max_turns)
        for s, res in sweep.items():
            chosen[s].update({k: v for k, v in res.items() if k.startswith('t')})
            best, _ = ev.sharpening_control(chosen, s)
            chosen[s]['control_temperature'] = best
            print(f'  {s} sharpening control: best temperature {best}', flush=True)
    return {
        'parameters': sum(p.numel() for p in model.parameters()),
        'templates': len(gym_v2.TEMPLATES), 'stretch_templates': list(gym_v2.STRETCH_FUNCS),
        'split_sizes': {s: sum(t.split == s for t in tasks) for s in SPLITS},
        'eval_task_ids': {s: [t.id for t in v] for s, v in splits.items()},
        'part_weights': recipe.weights(), 'retry_tasks': len(wrong),
        'expert_tokens_mean': sum(len(ids) for ids, _ in examples) / len(examples),
        'loss_first50': loss_first, 'loss_last50': loss_last,
        'metrics': metrics,
        'train_seconds': round(train_seconds), 'eval_seconds': round(time.time() - t0),
    }


LAB = harness.Lab(__file__, 'warm_start', GymWarmStartRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
