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

Run from the repository root after gym_v2_rl_fresh.py for the same runs (single-threaded):
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_failures.py \
        hg_rloo_lr3e-4_u300 hg_rloo_lr3e-4_u300_s1 hg_rloo_lr3e-4_u300_s2 \
        --fresh hg_rloo_lr3e-4_u300 --tag hg_rloo_lr3e-4_u300
Results: results/gym_v2_failures_TAG.json.
"""

import pathlib
import sys
import time

import torch

import agentrl as arl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import evaluate as ev  # noqa: E402
import gym_v2  # noqa: E402
from gym_v2_rl_fresh import (  # noqa: E402
    FRESH_SEED, fresh_splits, placement_halves, replayed_policies, start_replay,
)
from gym_v2_warm_start import SAMPLES, load_tasks, played, write_record  # noqa: E402

CLASSES = ('no_edit', 'other_line', 'not_applied', 'wrong_change_at_bug',
           'wrong_change_elsewhere_on_line', 'right_fix')


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


def classify(model, env, tasks, tok, temperature, trained_lines):
    """Per task: the share of its SAMPLES episodes in each class; per class, how many episodes
    there were, how many were solved and how many had seen the hint before the edit; and how
    many `other_line` edits named a line on which the template has a placement the warm start
    trained on (`trained_lines`: template -> set of lines), beside how many would by chance
    (each such edit's share of trained lines among the function's other lines, summed)."""
    rewards, trajs = ev.sample_rewards(model, env, tasks, tok, SAMPLES, temperature, FRESH_SEED)
    per_task = {c: [0.0] * len(tasks) for c in CLASSES}
    counts = {c: {'episodes': 0, 'solved': 0, 'hint_seen': 0} for c in CLASSES}
    other_on_trained = other_chance = 0
    for k, (task, traj) in enumerate(trajs):
        c, hint_seen, line = first_edit_class(task, traj)
        per_task[c][k // SAMPLES] += 1 / SAMPLES
        counts[c]['episodes'] += 1
        counts[c]['solved'] += traj.reward > 0
        counts[c]['hint_seen'] += hint_seen
        if c == 'other_line':
            lines = trained_lines.get(task.template, set())
            other_on_trained += line in lines
            others = [n for n in range(1, len(task.code.splitlines()) + 1) if n != task.line]
            other_chance += sum(n in lines for n in others) / len(others)
    return {'rate': sum(map(sum, rewards)) / (len(tasks) * SAMPLES), 'per_task': per_task,
            'counts': counts, 'other_line_on_a_trained_line': other_on_trained,
            'other_line_on_a_trained_line_by_chance': other_chance}


def main():
    start = time.time()
    args, fresh, run, warm = start_replay(__doc__.splitlines()[0])
    tok = arl.CharTokenizer()
    tasks, cache = load_tasks()
    hint, pad = run['hint'], run.get('pad_lines', 0)    # as its warm start played the tasks
    trained_lines, shown_lines = {}, {}     # placements' lines; the lines the warm start saw
    for t in tasks:                          # them on (the same unless the tasks are padded)
        if t.split == 'train':
            trained_lines.setdefault(t.template, set()).add(t.line)
    for t in played(tasks, cache, pad).values():
        if t.split == 'train':
            shown_lines.setdefault(t.template, set()).add(t.line)
    result = {}
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=hint, cache=cache, sandbox=pool.run)
        placed = fresh_splits(tasks, env)
        splits = {s: gym_v2.pad_tasks(v, pad, env) for s, v in placed.items()}   # as played
        groups = placement_halves(tasks)
        shared = {split: sum(line in trained_lines.get(template, ()) for template, line, _ in g)
                  for split, g in groups.items()}
        print('placements whose line also holds a placement the warm start trained on: '
              + ', '.join(f'{split} {shared[split]} of {len(g)}' for split, g in groups.items()),
              flush=True)
        for split, split_tasks in splits.items():
            ids = [list(x) for x in fresh['task_ids'][split]]
            if [[t.template, t.line, t.kind, t.variant] for t in placed[split]] != ids:
                raise SystemExit(f'{split}: the fresh tasks differ from the record\'s')
            result[split] = {}
            for name, model, temperature, recorded in replayed_policies(fresh, split, warm):
                res = classify(model, env, split_tasks, tok, temperature, shown_lines)
                if abs(res['rate'] - recorded) > 1e-9:
                    raise SystemExit(f'{split} {name}: solve rate {res["rate"]} here, '
                                     f'{recorded} in the fresh record')
                result[split][name] = res
                shares = {c: sum(v) / len(v) for c, v in res['per_task'].items()}
                seen = sum(v['hint_seen'] for v in res['counts'].values())
                other = max(1, res['counts']['other_line']['episodes'])
                print(f'{split:9s} {name:28s} solved {res["rate"]:.3f}  ' + '  '.join(
                    f'{c} {shares[c]:.3f}' for c in CLASSES)
                    + f'  hint seen before the edit {seen / (len(split_tasks) * SAMPLES):.3f};'
                    ' other line on a trained line'
                    f' {res["other_line_on_a_trained_line"] / other:.3f}'
                    f' (chance {res["other_line_on_a_trained_line_by_chance"] / other:.3f})',
                    flush=True)
    versus = {}
    for split, res in result.items():
        versus[split] = {}
        for c in CLASSES:
            trained = [sum(x) / len(args.runs)
                       for x in zip(*(res[t]['per_task'][c] for t in args.runs))]
            versus[split][c] = ev.paired(trained, res['warm t1']['per_task'][c])
        print(f'{split}: trained (seeds averaged) minus warm T=1, paired by task: ' + ', '.join(
            f'{c} {d:+.3f} +- {se:.3f}' for c, (d, se) in versus[split].items()), flush=True)
    write_record(f'gym_v2_failures_{args.tag}', {
        'lab': 'book/labs/gym_v2_failures.py', 'tag': args.tag, 'runs': args.runs,
        'fresh': args.fresh, 'warm': fresh['warm'], 'samples_per_task': SAMPLES,
        'episode_seed': FRESH_SEED, 'classes': CLASSES,
        'placements_on_a_trained_line': {s: [shared[s], len(g)] for s, g in groups.items()},
        'result': result, 'versus': versus,
        'torch_version': torch.__version__, 'threads': torch.get_num_threads()}, start)


if __name__ == '__main__':
    main()
