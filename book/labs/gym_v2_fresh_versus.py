"""Two fresh-instance records side by side: is one arm's RL (or warm start) above the other's?

gym_v2_rl_fresh.py compares RL with its own warm start. Two arms that start from different warm
starts need one more comparison: each against the other's sharpening control, since a new warm
start can be better or worse than the best one measured before. The records must hold the same
fresh tasks in the same order (checked), so every difference is paired by task; the trained
policies' per-task rates are averaged over their seeds first.

Printed per split, each as the mean difference +- its standard error over tasks:
  A control - B control        the warm starts, each at its own best temperature
  A RL T=1 - B RL T=1          the trained policies (seeds averaged)
  A RL T=1 - B control         A's RL against the other warm start at its best temperature
  A RL greedy - B RL greedy
and both arms' pass@8 at T=1 (trained: seeds averaged).

Run from the repository root (reads results only, a second):
    .venv/bin/python book/labs/gym_v2_fresh_versus.py A_TAG B_TAG
where results/gym_v2_rl_fresh_A_TAG.json and ..._B_TAG.json exist.
"""

import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import evaluate as ev  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'


def load(tag):
    path = RESULTS / f'gym_v2_rl_fresh_{tag}.json'
    if not path.exists():
        raise SystemExit(f'no fresh record {path.name}: run gym_v2_rl_fresh.py --tag {tag}')
    return json.loads(path.read_text())


def arm(record, split):
    """{name: per-task rates} of one record's split: its control (the warm start at its best
    temperature), its trained policies at T=1 and greedy (seeds averaged)."""
    trained = [record['trained'][tag] for tag in record['runs']]
    _, control = ev.sharpening_control(record['control'], split)
    return {'control': control, 'rl': ev.seeds_averaged(trained, split, 't1'),
            'rl greedy': ev.seeds_averaged(trained, split, 'greedy')}


def pass_at_8(record, split):
    """(warm start, trained seeds averaged) pass@8 at T=1."""
    trained = [record['trained'][tag][split]['t1']['pass@8'] for tag in record['runs']]
    return record['control'][split]['t1']['pass@8'], sum(trained) / len(trained)


def versus(a, b):
    """{split: {row: (difference, standard error)}} of record a against record b."""
    if a['task_ids'] != b['task_ids']:
        raise SystemExit(f"{a['tag']} and {b['tag']} were evaluated on different fresh tasks")
    rows = {}
    for split in a['task_ids']:
        x, y = arm(a, split), arm(b, split)
        rows[split] = {'A control - B control': ev.paired(x['control'], y['control']),
                       'A RL T=1 - B RL T=1': ev.paired(x['rl'], y['rl']),
                       'A RL T=1 - B control': ev.paired(x['rl'], y['control']),
                       'A RL greedy - B RL greedy': ev.paired(x['rl greedy'], y['rl greedy'])}
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('a', help='tag of a gym_v2_rl_fresh record')
    parser.add_argument('b', help='tag of another, on the same fresh tasks')
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    print(f"A = {args.a} (warm start {a['warm']}), B = {args.b} (warm start {b['warm']})")
    for split, rows in versus(a, b).items():
        tasks = len(a['task_ids'][split])
        (wa, ra), (wb, rb) = pass_at_8(a, split), pass_at_8(b, split)
        print(f'{split} ({tasks} tasks): pass@8 at T=1, warm / RL: A {wa:.3f} / {ra:.3f},'
              f' B {wb:.3f} / {rb:.3f}')
        for name, (d, se) in rows.items():
            print(f'  {name:26s} {d:+.3f} +- {se:.3f}')


if __name__ == '__main__':
    main()
