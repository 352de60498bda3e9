"""Where the first edit goes wrong, on fresh instances, before and after RL.

The fresh-instance evaluation (gym_v2_rl_fresh.py) says how often a policy solves a task; this
lab says why it fails. With the line hint the failing `test` names the bug's line, so a policy
can localise without having seen the placement; what is left is to write the right change.
Every episode's FIRST edit is put in one class:

  no_edit       the episode ends without an edit
  other_line    the edit names another line than the bug's
  not_applied   it names the bug's line, but its <old> text is not on it (an error observation)
  wrong_change  it applies on the bug's line and leaves it unlike the reference line; split into
                at_bug (its <old> overlaps the bug's text: the right spot, the wrong change)
                and elsewhere_on_line (it changed other text of the line)
  right_fix     the edited line equals the reference solution's line

and the share of each class that still ends solved (a later edit can recover). Policies are
sampled on the fresh tasks of gym_v2_rl_fresh.py (the same tasks, the same episode seeds: the
solve rates equal that record's), the warm start at T=1 and at its control temperature, each
trained policy at T=1. Per class, the shares of the trained policies (seeds averaged) minus the
warm start's, paired by task, say what RL changed. Two more counts say whether a wrong edit
recalls training: how many edits to another line named a line on which the warm start trained a
placement of the same template (beside how many would by chance), and how many placements share
their line with such a trained placement (of another kind: a recalled fix there is a wrong change
on the right line).
A warm start trained on padded tasks (gym_v2_warm_start.py --pad-lines) and its RL runs play
the fresh tasks padded the same way; an edit to another line is then checked against the lines
the warm start was shown its placements on.

Run from the repository root after gym_v2_rl_fresh.py (single-threaded):
    .venv/bin/python book/labs/gym_v2_failures.py --fresh gym_v2_rl_fresh_hg_rloo_lr3e-4_u300
Record: results/<run>.json (kind analysis).
"""

import dataclasses

import agentrl as arl
import evaluate as ev
import gym_v2
import harness
from gym_v2_rl_fresh import (ReplayRecipe, check_replay, placement_halves, replay_setting,
                             replayed_policies)

CLASSES = ('no_edit', 'other_line', 'not_applied', 'wrong_change_at_bug',
           'wrong_change_elsewhere_on_line', 'right_fix')


@dataclasses.dataclass(frozen=True)
class FailuresRecipe(ReplayRecipe):
    pass


def first_edit_class(task, trajectory):
    """(class, hint_seen, line) of an episode's first edit of `task`: its class (one of
    CLASSES), whether an earlier observation held the line hint (`at line N:`, which only a
    failing `test` prints), and the line the edit named (0 without an edit)."""
    hint_seen = False
    for action, obs in trajectory.turns:
        call = arl.parse_call(action)
        if call.tool != 'edit':
            hint_seen = hint_seen or f'at line {task.line}:' in obs
            continue
        if call.line != task.line:
            return 'other_line', hint_seen, call.line
        bug_line = task.code.splitlines()[task.line - 1]
        if call.old not in bug_line:
            return 'not_applied', hint_seen, call.line
        edited = bug_line.replace(call.old, call.new, 1)
        if edited == task.solution.splitlines()[task.line - 1]:
            return 'right_fix', hint_seen, call.line
        overlaps = gym_v2.overlaps_bug(task, bug_line, call.old)
        kind = 'wrong_change_at_bug' if overlaps else 'wrong_change_elsewhere_on_line'
        return kind, hint_seen, call.line
    return 'no_edit', hint_seen, 0


def classify(model, env, tasks, tok, temperature, trained_lines, recipe):
    """Per task: the share of its episodes in each class and its solve rate; per class, how
    many episodes there were, how many were solved and how many had seen the hint before the
    edit; and how many `other_line` edits named a line on which the template has a placement
    the warm start trained on (`trained_lines`: template -> set of lines), beside how many would
    by chance (each such edit's share of trained lines among the function's other lines,
    summed)."""
    samples = recipe.samples_per_task
    rewards, trajs = ev.sample_rewards(model, env, tasks, tok, samples, temperature,
                                       recipe.episode_seed)
    per_task = {c: [0.0] * len(tasks) for c in CLASSES}
    counts = {c: {'episodes': 0, 'solved': 0, 'hint_seen': 0} for c in CLASSES}
    other_on_trained = other_chance = 0
    for k, (task, traj) in enumerate(trajs):
        c, hint_seen, line = first_edit_class(task, traj)
        per_task[c][k // samples] += 1 / samples
        counts[c]['episodes'] += 1
        counts[c]['solved'] += traj.reward > 0
        counts[c]['hint_seen'] += hint_seen
        if c == 'other_line':
            lines = trained_lines.get(task.template, set())
            other_on_trained += line in lines
            others = [n for n in range(1, len(task.code.splitlines()) + 1) if n != task.line]
            other_chance += sum(n in lines for n in others) / len(others)
    return {'rate': sum(map(sum, rewards)) / (len(tasks) * samples), 'per_task': per_task,
            'counts': counts, 'other_line_on_a_trained_line': other_on_trained,
            'other_line_on_a_trained_line_by_chance': other_chance,
            'solved_per_task': [sum(r) / len(r) for r in rewards]}


def run(recipe, context):
    fresh, run_record, warm, tasks, cache, placed = replay_setting(recipe, context)
    tok = arl.CharTokenizer()
    hint, pad = run_record.recipe['hint'], run_record.recipe.get('pad_lines', 0)
    trained_lines, shown_lines = {}, {}     # placements' lines; the lines the warm start saw
    for t in tasks:                          # them on (the same unless the tasks are padded)
        if t.split == 'train':
            trained_lines.setdefault(t.template, set()).add(t.line)
        if t.split == 'train':               # the padded line (pad_blank_lines, not validated)
            shown = arl.pad_blank_lines(t, pad) if pad else t
            shown_lines.setdefault(t.template, set()).add(shown.line)

    result = {}
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=hint, cache=cache, sandbox=pool.run)
        splits = {s: arl.pad_tasks(v, pad, env) for s, v in placed.items()}   # as played
        groups = placement_halves(tasks)
        shared = {split: sum(line in trained_lines.get(template, ()) for template, line, _ in g)
                  for split, g in groups.items()}
        print('placements whose line also holds a placement the warm start trained on: '
              + ', '.join(f'{split} {shared[split]} of {len(g)}' for split, g in groups.items()),
              flush=True)
        for split, split_tasks in splits.items():
            result[split] = {}
            for name, model, temperature, recorded in replayed_policies(fresh, split, warm,
                                                                        context):
                res = classify(model, env, split_tasks, tok, temperature, shown_lines, recipe)
                check_replay(split, name, res.pop('solved_per_task'), recorded)
                result[split][name] = res
                shares = {c: sum(v) / len(v) for c, v in res['per_task'].items()}
                seen = sum(v['hint_seen'] for v in res['counts'].values())
                other = max(1, res['counts']['other_line']['episodes'])
                print(f'{split:9s} {name:28s} solved {res["rate"]:.3f}  ' + '  '.join(
                    f'{c} {shares[c]:.3f}' for c in CLASSES)
                    + f'  hint seen before the edit'
                    f' {seen / (len(split_tasks) * recipe.samples_per_task):.3f};'
                    ' other line on a trained line'
                    f' {res["other_line_on_a_trained_line"] / other:.3f}'
                    f' (chance {res["other_line_on_a_trained_line_by_chance"] / other:.3f})',
                    flush=True)
    versus = {}
    for split, res in result.items():
        versus[split] = {}
        for c in CLASSES:
            trained = [sum(x) / len(recipe.runs)
                       for x in zip(*(res[stem]['per_task'][c] for stem in recipe.runs))]
            versus[split][c] = ev.paired(trained, res['warm t1']['per_task'][c])
        print(f'{split}: trained (seeds averaged) minus warm T=1, paired by task: ' + ', '.join(
            f'{c} {d:+.3f} +- {se:.3f}' for c, (d, se) in versus[split].items()), flush=True)
    return {'classes': CLASSES,
            'placements_on_a_trained_line': {s: [shared[s], len(g)] for s, g in groups.items()},
            'result': result, 'versus': versus}


LAB = harness.Lab(__file__, 'analysis', FailuresRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
