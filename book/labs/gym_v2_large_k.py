"""RL against sharpening at large k: pass@k up to k = 256 on fresh instances, paired by task.

Does RL teach the policy to solve tasks its warm start could not, or does it concentrate the
warm start's probability on the tasks it could already solve? Yue et al. (2504.13837) answer with
pass@k at large k: sample many times, and if the starting model's pass@k catches up with and
overtakes the RL model's as k grows, RL narrowed what the model can reach instead of widening
it. This lab runs their protocol on the gym, with the book's sharpening control beside it:

  rl        the RL policy (its record names its warm start and the placements it practised)
            at T=1
  warm_t1   its warm start at T=1
  control   its warm start at the temperature that maximises its solve rate, read from the
            fresh evaluation of the same RL run (chosen on other fresh variants, so this lab's
            tasks play no part in choosing it)

on fresh instances (a variant no other evaluation drew) of both halves of the held-out
placements, `rl_groups` (the RL run practised other variants of them) and `heldout` (no run
saw them), `tasks_per_half` tasks each, one per placement. Every policy plays every task
`samples_per_task` times with the same per-episode sampling seeds (common random numbers), so
each comparison is paired by task. The record keeps each task's number of successes, from which
the unbiased pass@k (Section 6.8's pass_at_k) of every k up to the samples follows, and pairs
the RL policy's per-task pass@k against the control's and the warm start's at every k of `ks`.

Run from the repository root (about 30,000 episodes, about an hour on one core; with
--save-every 1 the run saves after each block of one policy on one half, and --resume continues
from the last block saved):
    .venv/bin/python book/labs/gym_v2_large_k.py --save-every 1
Record: results/gym_v2_large_k.json (kind fresh: the run, the control, task ids, per-task
summaries and the paired gaps).
"""

import dataclasses
import random

import agentrl as arl
import evaluate as ev
import gym_v2
import gym_v2_rl_fresh as fresh
import harness
from harness import RecipeError, option

KS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclasses.dataclass(frozen=True)
class LargeKRecipe(fresh.PlayedAsRunRecipe):
    runs: tuple = option(('gym_v2_rl_hg_rloo_lr3e-4',), 'the RL run whose policy is evaluated '
                         '(one record stem, with its checkpoint)', short='', stem=True)
    control_from: str = option('gym_v2_rl_fresh_hg_rloo_lr3e-4', 'the fresh evaluation of the '
                               "run whose best warm-start temperature per half is the control "
                               '(record stem)', short='control-', stem=True)
    fresh_variants: tuple = option((18,), 'variants no other evaluation drew (the standard '
                                   'fresh evaluation stops at 17)', short='variants-')
    tasks_per_half: int = option(20, 'tasks drawn per half, one per placement (0: all)',
                                 short='tasks')
    draw_seed: int = option(17, 'seed of the draw of the tasks', short='draw')
    samples_per_task: int = option(256, 'episodes per task and policy (n of pass@k)',
                                   short='samples')
    ks: tuple = option(KS, 'the k at which pass@k is paired by task', short='k-')
    episode_seed: int = option(2560, 'episode seeds of this evaluation, unused elsewhere',
                               short='seed')

    def reduced(self):
        return dataclasses.replace(self, tasks_per_half=2, samples_per_task=4, ks=(1, 2, 4))

    def check(self, context):
        if len(self.runs) != 1:
            raise RecipeError('--runs: one RL run (the policy whose weights are evaluated)')
        run = context.load(self.runs[0])
        run.checkpoint                               # an error if the weights are not there
        if run.recipe.get('train_on', 'train') == 'train':
            raise RecipeError('--run: an RL run trained on held-out placements '
                              '(--train-on heldout-groups or mixed)')
        control = context.load(self.control_from)
        if control.recipe['warm'] != self.warm:
            raise RecipeError(f'--control-from: its warm start is {control.recipe["warm"]}, '
                              f"the run's is {self.warm}")
        if min(self.fresh_variants, default=0) < 18:
            raise RecipeError('--fresh-variants: from 18 on (0-9 are the generator\'s, 10-17 '
                              'the fresh evaluations\')')
        if any(not 1 <= k <= self.samples_per_task for k in self.ks):
            raise RecipeError('--ks: every k between 1 and --samples-per-task')


def drawn_splits(tasks, env, recipe):
    """{split: unpadded fresh tasks}: of each half of the held-out placements, the fresh tasks
    of `fresh_variants`, at most one per placement, `tasks_per_half` of them drawn with
    `draw_seed` (kept in placement order)."""
    out, first_id = {}, len(tasks)
    for split, groups in fresh.placement_halves(tasks).items():
        order = sorted(groups)
        random.Random(f'{recipe.draw_seed}:{split}').shuffle(order)
        chosen = []
        for placement in order:                   # placements in the drawn order, until enough
            made = gym_v2.group_tasks({placement}, recipe.fresh_variants, split,
                                      first_id=first_id, env=env)[:1]
            chosen += made
            first_id += len(made)
            if len(chosen) == recipe.tasks_per_half:
                break
        out[split] = sorted(chosen, key=lambda t: (gym_v2.task_group(t), t.variant))
    return out


def summary(rewards, ks):
    """summarise() at every k of ks, with each task's number of successes."""
    out = ev.summarise(rewards, ks=ks)
    out['successes'] = [int(sum(r)) for r in rewards]
    return out


def per_task_pass(summary_, k):
    """Each task's unbiased pass@k from its successes."""
    n = summary_['samples']
    return [ev.pass_at_k(n, c, k) for c in summary_['successes']]


def run(recipe, context):
    tok = arl.CharTokenizer()
    warm = context.load(recipe.warm)
    run_record = context.load(recipe.runs[0])
    control_record = context.load(recipe.control_from)
    tasks, cache = fresh.warm_tasks(warm, context)
    policies = {'rl': arl.load_checkpoint(run_record.checkpoint),
                'warm': arl.load_checkpoint(warm.checkpoint)}
    saved = context.saved_state(recipe)
    got = saved['got'] if saved else {}               # 'split|policy|key' -> summary
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=recipe.hint, cache=cache, sandbox=pool.run)
        placed = drawn_splits(tasks, env, recipe)
        splits = {s: arl.pad_tasks(v, recipe.pad_lines, env) for s, v in placed.items()}
        print('fresh tasks:', {s: len(v) for s, v in splits.items()}, flush=True)
        best = {s: control_record.versus(s)['control_temperature'] for s in splits}
        blocks = [(split, policy, key) for split in splits
                  for policy, key in (('warm', 't1'), ('warm', best[split]), ('rl', 't1'))]
        blocks = list(dict.fromkeys(blocks))          # the control may be T=1 itself
        for block, (split, policy, key) in enumerate(blocks, 1):
            name = f'{split}|{policy}|{key}'
            if name not in got:                       # a resumed run skips what it has
                rewards, _ = ev.sample_rewards(policies[policy], env, splits[split], tok,
                                               recipe.samples_per_task, float(key[1:]),
                                               recipe.episode_seed, max_turns=recipe.max_turns)
                got[name] = summary(rewards, recipe.ks)
            print(f'  {split:9s} {policy:4s} {key:5s} '
                  + ' '.join(f'pass@{k} {got[name][f"pass@{k}"]:.3f}' for k in recipe.ks),
                  flush=True)
            context.progress(block, lambda: {'got': got}, recipe)
    control, trained, versus = {}, {}, {}
    for split, made in splits.items():
        control[split] = {key: got[f'{split}|warm|{key}'] for key in ('t1', best[split])}
        trained[split] = {'t1': got[f'{split}|rl|t1']}
        rows = {}
        for k in recipe.ks:
            rl_k = per_task_pass(trained[split]['t1'], k)
            control_k = per_task_pass(control[split][best[split]], k)
            warm_k = per_task_pass(control[split]['t1'], k)
            rows[str(k)] = {'rl minus control': ev.paired(rl_k, control_k),
                            'rl minus warm t1': ev.paired(rl_k, warm_k),
                            'control minus warm t1': ev.paired(control_k, warm_k)}
            gap = rows[str(k)]['rl minus control']
            print(f'  {split:9s} pass@{k}: rl minus control {gap[0]:+.3f} +- {gap[1]:.3f}',
                  flush=True)
        versus[split] = {'control_temperature': best[split], 'tasks': len(made),
                         'placements': len({gym_v2.task_group(t) for t in placed[split]}),
                         'pass@k': rows}
    return {'task_ids': {s: [(t.template, t.line, t.kind, t.variant) for t in v]
                         for s, v in placed.items()},
            'control': control, 'trained': {recipe.runs[0]: trained}, 'versus': versus}


LAB = harness.Lab(__file__, 'fresh', LargeKRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
