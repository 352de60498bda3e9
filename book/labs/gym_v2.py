"""BugFix v2: the variant task distribution of Chapter 4, Section 4.8, under the labs' names.

The generator is saved book code (`agentrl`): consistent renaming to fresh 1-3 character names,
shifted constants, tests drawn per variant, the 26 EXTRA_TEMPLATES, the train / rename /
heldout / stretch splits by (template, line, kind) group and by variant, recovery
demonstrations and the line hint (see the section and book/labs/README.md). This module keeps
the names the lab scripts and their recorded results use: `make_v2_tasks` is
`arl.make_variant_tasks` and `TEMPLATES` is `arl.VARIANT_TEMPLATES`. The padding of a task
(`pad_blank_lines`, `pad_tasks`) and the weighted imitation loss (`edit_parts`,
`weighted_action_mask`) are Chapter 6's saved code, which the labs call as `agentrl.<name>`;
the shaped reward `LineEditBonusEnv` and `overlaps_bug` are Chapter 11's.

The labs share one validated task list per (task seed, train variants): `load_tasks` makes it
once (a few minutes: every task is validated through a pre-forked SandboxPool) and keeps it,
with the sandbox results that validated it, in book/labs/runs/cache/; `played` pads the tasks
a run plays.

Run this file to print the split sizes and a hinted recovery episode:
    .venv/bin/python book/labs/gym_v2.py
"""

import pickle
import random
import re

import agentrl as arl
import harness
from agentrl import (  # noqa: F401  (re-exported for the lab scripts)
    EXTRA_TEMPLATES, HELDOUT_FRACTION, STRETCH_FUNCS, TRAIN_VARIANTS, HintedBugFixEnv,
    LineEditBonusEnv, VariantTask, fresh_names, group_key, group_tasks, make_variant,
    one_per_group, overlaps_bug, recovery_policy, renamable, rewrite, task_group, template_name, variant_rows,
    wrong_line_patch,
)

TEMPLATES = arl.VARIANT_TEMPLATES
make_v2_tasks = arl.make_variant_tasks

def load_tasks(seed=0, train_variants=TRAIN_VARIANTS, validate=True):
    """(the validated v2 tasks, the sandbox cache that validated them), made once and kept in
    book/labs/runs/cache/ (a cache: deleting it costs the next run the validation).

    validate=False (a --reduced run) skips the sandbox validation when no validated list is
    kept: at task seed 0 it drops no task, so the list is the same, made in seconds."""
    path = harness.CACHE / f'gym_v2_tasks_seed{seed}_v{train_variants}.pkl'
    if path.exists():
        return pickle.loads(path.read_bytes())
    if not validate:
        quick = path.with_name(path.stem + '_unvalidated.pkl')
        if not quick.exists():
            tasks = make_v2_tasks(seed=seed, train_variants=train_variants, validate=False)
            harness.write_atomic(quick, lambda tmp: tmp.write_bytes(pickle.dumps(tasks)))
        return pickle.loads(quick.read_bytes()), {}
    cache = {}
    with arl.SandboxPool(workers=1) as pool:    # pre-forked: about 10x faster than a fresh
        env = arl.BugFixEnv(cache=cache, sandbox=pool.run)   # process per sandbox call
        tasks = make_v2_tasks(seed=seed, train_variants=train_variants, env=env)
        for task in tasks:                       # the expert's `test` observation, run once
            env.run(task.code, task.visible)
    harness.write_atomic(path, lambda tmp: tmp.write_bytes(pickle.dumps((tasks, cache))))
    return tasks, cache


def played(tasks, cache, pad_lines, ids=None):
    """{task id: the task an episode plays} for the tasks whose ids are in `ids` (default all):
    the task itself, or with pad_lines > 0 the task padded by agentrl.pad_tasks and validated
    (its sandbox results join `cache`). Splits, groups and placements are always read from the
    unpadded tasks: padding moves line numbers, not placements."""
    chosen = [t for t in tasks if ids is None or t.id in ids]
    if not pad_lines:
        return {t.id: t for t in chosen}
    with arl.SandboxPool(workers=1) as pool:
        env = arl.BugFixEnv(cache=cache, sandbox=pool.run)
        padded = arl.pad_tasks(chosen, pad_lines, env)
        for task in padded:
            env.run(task.code, task.visible)
    return {t.id: t for t in padded}


def as_edit(patch):
    """The parsed edit (line, old, new) of a patch such as a task's fix, `sub N old|new`."""
    return arl.parse_call(f'<call> edit {patch} </call>')


def checked_policy(policy):
    """The scripted policy with a `test` between its right edit and the submit: the expert
    checks its fix before handing it in. (The test passes, since the edit is the reference
    fix; what a failing check looks like is never demonstrated.) The wrapped policy is asked
    with the check left out of its history, so its plan runs as before around it."""
    check = '<call> test </call>'

    def act(task, history):
        fix = f'<call> edit {task.fix} </call>'
        actions = [action for action, _ in history]
        if actions and actions[-1] == fix:
            return check
        kept = [turn for i, turn in enumerate(history)
                if not (i and actions[i - 1] == fix and actions[i] == check)]
        return policy(task, kept)
    return act


def wrong_edit_candidates(task):
    """Edits on the bug's line that apply and change the bug's text into something other than the
    reference fix: the saved bug mutations of the buggy source whose span overlaps the bug's
    (`sub L old|wrong`, `old` grown to cover both spans), in source order. Each is written so that
    its own `<old>` is the first match on the line and its `<new>` the first match afterwards, so
    `sub L new|old` undoes it exactly."""
    fix = as_edit(task.fix)
    line_no, bad = fix.line, fix.old
    line = task.code.splitlines()[line_no - 1]
    fixed = task.solution.splitlines()[line_no - 1]
    b0 = line.find(bad)
    out = []
    for _kind, row, m0, m1, repl in arl.bug_mutations(task.code):
        if row != line_no or m1 <= b0 or m0 >= b0 + len(bad):
            continue
        changed = line[:m0] + repl + line[m1:]
        a, b = min(m0, b0), max(m1, b0 + len(bad))
        old, new = line[a:b], changed[a:b + len(changed) - len(line)]
        patch = f'sub {line_no} {old}|{new}'
        if (changed in (line, fixed) or not new or line.find(old) != a
                or changed.find(new) != a or patch in out):
            continue
        out.append(patch)
    return out


def wrong_edits(tasks, env, seed=0):
    """{task id: one wrong edit of wrong_edit_candidates, drawn with a seeded random order, whose
    visible tests still fail} (a task with none is left out). The check after it then shows a
    failure and, under the hint, the edited line."""
    picked = {}
    for task in tasks:
        candidates = wrong_edit_candidates(task)
        random.Random(f'{seed}:wrong:{task.id}').shuffle(candidates)
        for patch in candidates:
            edit = as_edit(patch)
            code, err = arl.apply_patch(task.code, edit.line, edit.old, edit.new)
            assert not err, (task.id, patch, err)
            if 'FAIL' in arl.report_tests(env.run(code, task.visible), task.visible):
                picked[task.id] = patch
                break
    return picked


def retry_policy(wrong):
    """The expert that tries a wrong fix first: read, test, a wrong edit that applies
    (wrong[task.id], from wrong_edits), a failing check, the edit that undoes it, the right
    edit, submit. What it shows is the way back from an applied mistake: the check, then the
    undo copied from the edited line the hint shows, then a fresh attempt at the original line.
    A task without a wrong edit gets the expert's plan."""
    def act(task, history):
        if task.id not in wrong:
            return arl.expert_policy(task, history)
        mistake = as_edit(wrong[task.id])
        plan = ('read', 'test', f'edit {wrong[task.id]}', 'test',
                f'edit sub {mistake.line} {mistake.new}|{mistake.old}', f'edit {task.fix}',
                'submit')
        return f'<call> {plan[min(len(history), len(plan) - 1)]} </call>'
    return act


def solved(trajectory):
    """Whether an episode ended in a submit whose hidden tests all passed, read from its last
    observation: under LineEditBonusEnv its reward alone cannot say (with a bonus of 1, an
    edit that applies and a solve without one are both paid 1)."""
    obs = trajectory.turns[-1][1] if trajectory.turns else ''
    last = re.fullmatch(r'hidden: (\d+)/(\d+) passed', obs)
    return bool(last) and last[1] == last[2] != '0'


def main():
    tasks = make_v2_tasks()
    splits = ('train', 'rename', 'heldout', 'stretch')
    counts = {s: sum(t.split == s for t in tasks) for s in splits}
    groups = {s: len({task_group(t) for t in tasks if t.split == s}) for s in counts}
    print('templates', len(TEMPLATES), 'tasks per split', counts, 'groups per split', groups)
    task = next(t for t in tasks if t.split == 'heldout')
    env = HintedBugFixEnv(hint=True, cache={})
    print(arl.run_episode(env, task, recovery_policy)[0])


if __name__ == '__main__':
    main()
