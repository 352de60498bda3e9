"""Does a policy copy the bug's line number from the hint, or work it out from the function?

gym_v2_failures.py found that a third of the warm start's first edits on unseen placements name
another line than the one the hint names, and suggested recall as the cause: the policy writes the
line on which it was taught a fix for that function. This lab asks, token by token, whether the
line number in the edit comes from the hint at all. Each evaluation task of a warm start's
record (one per group of held-out, stretch, rename and train) is padded as
`gym_v2_warm_start.py --pad-lines K` pads it; the expert's episode is played with the line hint
(read, test, then the edit), and at the token that starts the edit's line number the policy's
next-token distribution is read off (teacher forcing, one forward pass per task, exact):

  hinted    the probability of the padded line's digit: the number the hint and the listing show
  unpadded  the probability of the unpadded line's digit: where the bug sits in every unpadded
            instance of the function, which no observation of this episode shows

Only tasks whose padding moved the bug's line and whose two line numbers are single digits
count. A policy that copies the hint puts its mass on `hinted`; one that places the bug by the
function's shape (a recalled placement, or lines counted without the blank ones), on `unpadded`.

Run from the repository root (single-threaded, seconds per policy):
    .venv/bin/python book/labs/gym_v2_copying.py --warm gym_v2_hint_recovery_3000_pad2 \
        --policies gym_v2_hint_recovery_3000 gym_v2_hint_recovery_3000_pad2
(--policies takes the stems of records with a checkpoint: warm starts and RL runs.)
Record: results/<run>.json (kind analysis).

`PolicyRecipe` and `policy_setting` are shared with gym_v2_edit_parts.py, which reads policies
token by token on a warm start's evaluation tasks too.
"""

import dataclasses
import time

import torch

import agentrl as arl
import gym_v2
import gym_v2_warm_start
import harness
from harness import RecipeError, option

SPLITS = ('heldout', 'stretch', 'rename', 'train')


@dataclasses.dataclass(frozen=True)
class PolicyRecipe(harness.Recipe):
    """Policies read on a warm start's evaluation tasks, padded as that warm start was trained."""
    warm: str = option('gym_v2_hint_recovery_3000_pad2', 'warm start whose evaluation tasks and '
                       'padding are used (record stem)', short='', stem=True)
    policies: tuple = option(('gym_v2_hint_recovery_3000', 'gym_v2_hint_recovery_3000_pad2'),
                             'policies to read (stems of records with a checkpoint)', short='',
                             stem=True)
    eval_tasks: int = option(0, 'the first N evaluation tasks of each split (0: all)')
    pad_lines: int = option(0, 'blank-line padding, as the warm start was trained',
                            in_name=False)

    def reduced(self):
        return dataclasses.replace(self, eval_tasks=2)

    def resolve(self, context):
        trained = gym_v2_warm_start.recipe_of_record(context.load(self.warm))
        return harness.derive(self, {'pad_lines': trained.pad_lines})

    def check(self, context):
        if not self.policies:
            raise RecipeError('--policies: give at least one policy')
        for stem in self.policies:
            context.load(stem).checkpoint          # an error now, not after the others


@dataclasses.dataclass(frozen=True)
class CopyingRecipe(PolicyRecipe):
    def check(self, context):
        super().check(context)
        if not self.pad_lines:
            raise RecipeError(f'{self.warm} was not trained on padded tasks: nothing moved')


def policy_setting(recipe, context):
    """(the warm start's record, the v2 tasks, their cache, {task id: the task an episode plays}
    for its evaluation tasks, padded as it was trained)."""
    warm = context.load(recipe.warm)
    trained = gym_v2_warm_start.recipe_of_record(warm)
    tasks, cache = gym_v2.load_tasks(trained.task_seed, trained.train_variants,
                                     validate=not context.reduced)
    ids = {i for v in warm.results['eval_task_ids'].values() for i in v}
    return warm, tasks, cache, gym_v2.played(tasks, cache, recipe.pad_lines, ids)


def policies(recipe, context):
    """(stem, policy) of every policy the recipe reads."""
    for stem in recipe.policies:
        yield stem, arl.load_checkpoint(context.load(stem).checkpoint)


def line_digit_position(ids, action_mask, tok):
    """Index in ids of the first digit of the first edit's line number (the token after the
    policy's `edit sub `)."""
    pattern = tok.encode('edit sub ')
    ids = ids.tolist()
    for i in range(len(ids) - len(pattern)):
        if ids[i:i + len(pattern)] == pattern and action_mask[i]:
            return i + len(pattern)
    raise ValueError('the episode has no edit')


def hinted_or_unpadded(model, env, pairs, tok):
    """pairs of (unpadded task, padded task) -> per task (P(hinted digit), P(unpadded digit))."""
    out = []
    for plain, padded in pairs:
        traj = arl.teacher_rollout(env, padded, tok, arl.expert_policy)
        at = line_digit_position(traj.ids, traj.action_mask, tok)
        with torch.no_grad():
            logits = model(traj.ids[None, :at])[0][0, -1]
        probs = torch.softmax(logits, -1)
        out.append((probs[tok.encode(str(padded.line))[0]].item(),
                    probs[tok.encode(str(plain.line))[0]].item()))
    return out


def moved(task, padded):
    """The padding moved the bug's line, and both line numbers are one character."""
    return padded.line != task.line and padded.line < 10


def run(recipe, context):
    warm, tasks, cache, play = policy_setting(recipe, context)
    by_id = {t.id: t for t in tasks}
    pairs = {s: [(by_id[i], play[i]) for i in warm.results['eval_task_ids'][s]
                 if moved(by_id[i], play[i])][:recipe.eval_tasks or None] for s in SPLITS}
    print('tasks whose line moved:', {s: len(v) for s, v in pairs.items()},
          f'({time.time() - context.start:.0f} s)', flush=True)
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache=cache)
    result = {}
    for name, model in policies(recipe, context):
        result[name] = {}
        for split, split_pairs in pairs.items():
            probs = hinted_or_unpadded(model, env, split_pairs, tok)
            n = len(probs)
            row = {'tasks': n, 'hinted': sum(p for p, _ in probs) / n,
                   'unpadded': sum(q for _, q in probs) / n,
                   'hinted_more_likely': sum(p > q for p, q in probs) / n, 'per_task': probs}
            result[name][split] = row
            print(f'{name:32s} {split:8s} ({n:2d} tasks): P(hinted digit) {row["hinted"]:.3f},'
                  f' P(unpadded digit) {row["unpadded"]:.3f}, hinted more likely on'
                  f' {row["hinted_more_likely"]:.2f} of tasks', flush=True)
    return {'task_ids': {s: [p.id for _, p in v] for s, v in pairs.items()}, 'result': result}


LAB = harness.Lab(__file__, 'analysis', CopyingRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
