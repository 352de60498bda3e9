"""Tables of the gym_v2 RL runs (results/gym_v2_rl_*.json), for GYM_V2.md.

Per run and unseen split: the trained policy at T=1 (+- SE over tasks), greedy, pass@8, the
held-out expert-path probability before and after, and the paired differences (per task, same
tasks and episode seeds) against the warm start at T=1 and against the sharpening control (the
warm start at its best temperature). Runs given as tag lists separated by ',' are seeds of one
recipe: their paired differences are also averaged over seeds (with the SE over seeds).

    .venv/bin/python book/labs/gym_v2_rl_compare.py rloo_lr1e-4 rloo_lr3e-4,rloo_lr3e-4_s1 \
        rloo_lr1e-3,rloo_lr1e-3_s1,rloo_lr1e-3_s2
"""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import evaluate as ev  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'


def load(tag):
    return json.loads((RESULTS / f'gym_v2_rl_{tag}.json').read_text())


def greedy_gain(run, split):
    """Trained greedy minus the warm start's greedy, paired by task (one episode each)."""
    warm = json.loads((RESULTS / f"gym_v2_{run['warm']}.json").read_text())
    mode = 'hint' if run['hint'] else 'plain'
    return ev.paired(run['metrics'][split]['greedy']['per_task'],
                     warm['metrics'][mode][split]['greedy']['per_task'])


def main(groups):
    print('| run | method | lr | tasks x group | updates | episodes | split | T=1 (SE) | greedy'
          ' | greedy minus warm greedy | pass@8 | expert path (warm -> RL, heldout) | minus warm T=1'
          ' | minus control (T) |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for group in groups:
        tags = group.split(',')
        runs = [load(t) for t in tags]
        for tag, r in zip(tags, runs):
            curve = r['heldout_expert_path_curve']
            for split in ('heldout', 'stretch'):
                m, v = r['metrics'][split], r['versus_control'][split]
                path = f"{curve[0][1]:.3f} -> {curve[-1][1]:.3f}" if split == 'heldout' else ''
                print(f"| {tag} | {r['method']} | {r['lr']:g} | {r['tasks_per_update']} x {r['group']}"
                      f" | {r['updates']} | {r['episodes']} | {split}"
                      f" | {m['t1']['rate']:.3f} ({m['t1']['stderr']:.3f}) | {m['greedy']['rate']:.3f}"
                      " | {:+.3f} ({:.3f})".format(*greedy_gain(r, split)) +
                      f" | {m['t1']['pass@8']:.3f} | {path}"
                      f" | {v['minus_warm_t1']:+.3f} ({v['minus_warm_t1_stderr']:.3f})"
                      f" | {v['difference']:+.3f} ({v['stderr']:.3f}) T{v['control_temperature'][1:]} |")
        if len(runs) > 1:
            for split in ('heldout', 'stretch'):
                diffs = [r['versus_control'][split]['difference'] for r in runs]
                mean, se = ev.mean_se(diffs)
                warm = [r['versus_control'][split]['minus_warm_t1'] for r in runs]
                wmean, wse = ev.mean_se(warm)
                print(f"| {group}: mean of {len(runs)} seeds | | | | | | {split} | | | | |"
                      f" | {wmean:+.3f} ({wse:.3f} over seeds) | {mean:+.3f} ({se:.3f} over seeds) |")


if __name__ == '__main__':
    main(sys.argv[1:])
