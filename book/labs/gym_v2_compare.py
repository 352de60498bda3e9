"""Tables of the gym_v2 warm-start runs (results/gym_v2_*.json), for GYM_V2.md.

Prints, per run and split, with the line-hint observation: T=1 solve rate +- SE over tasks,
greedy, pass@1/4/8 at T=1, the expert-path probability, where the first edit went; then the
sharpening control of each run (best temperature on heldout) and paired differences between
runs on the same tasks (every run evaluates the same task ids with the same sampling seeds).

    .venv/bin/python book/labs/gym_v2_compare.py mixed hint_only hint_recovery
"""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import evaluate as ev  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'


def load(tag):
    return json.loads((RESULTS / f'gym_v2_{tag}.json').read_text())


def main(tags):
    runs = {tag: load(tag) for tag in tags}
    print('| run | hint share | recovery | split | T=1 (SE) | greedy | pass@4 | pass@8 | expert path'
          ' | first edit on bug line | first edit applies |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for tag, r in runs.items():
        for mode in ('hint', 'plain'):
            for split, res in r['metrics'][mode].items():
                t1, greedy = res['t1'], res['greedy']
                print(f"| {tag} ({mode} obs) | {r['hint_share']:g} | {r['recovery_share']:g} | {split}"
                      f" | {t1['rate']:.3f} ({t1['stderr']:.3f}) | {greedy['rate']:.3f}"
                      f" | {t1['pass@4']:.3f} | {t1['pass@8']:.3f}"
                      f" | {res['expert_path']['mean_prob']:.3f}"
                      f" | {t1['first_edit_on_bug_line']:.2f} | {t1['first_edit_applies']:.2f} |")
    print()
    for tag, r in runs.items():
        for split in ('heldout', 'stretch'):
            held = r['metrics']['hint'][split]
            temps = sorted(k for k in held if k.startswith('t'))
            if len(temps) > 1:
                best, _ = ev.sharpening_control(r['metrics']['hint'], split)
                sweep = ', '.join(f"{k[1:]}: {held[k]['rate']:.3f} ({held[k]['stderr']:.3f})"
                                  for k in temps)
                print(f'{tag}: {split} T sweep {sweep}; control = T {best[1:]}')
    print()
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if runs[a]['eval_task_ids'] != runs[b]['eval_task_ids']:
                continue                  # paired only on the same tasks (32 vs 64 per split)
            for split in runs[a]['metrics']['hint']:
                diff, se = ev.paired(runs[a]['metrics']['hint'][split]['t1']['per_task'],
                                     runs[b]['metrics']['hint'][split]['t1']['per_task'])
                print(f'{a} - {b}, {split}, T=1, hint obs: {diff:+.3f} +- {se:.3f} (paired)')


if __name__ == '__main__':
    main(sys.argv[1:])
