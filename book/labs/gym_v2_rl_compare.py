"""Tables of the gym_v2 RL runs (results/gym_v2_rl_*.json), for GYM_V2.md.

Per run and unseen split: the trained policy at T=1 (+- SE over tasks), greedy, pass@8, the
held-out expert-path probability before and after, and the paired differences (per task, same
tasks and episode seeds) against the warm start at T=1 and against the sharpening control (the
warm start at its best temperature). Runs given as tag lists separated by ',' are seeds of one
recipe: their paired differences are also averaged over seeds (with the SE over seeds).

    .venv/bin/python book/labs/gym_v2_rl_compare.py rloo_lr1e-4 rloo_lr3e-4,rloo_lr3e-4_s1 \
        rloo_lr1e-3,rloo_lr1e-3_s1,rloo_lr1e-3_s2

Runs trained with --train-on heldout-groups get their own table (`--placements`): the
held-out evaluation is then two splits, `rl_groups` (unseen variants of the placements RL
trained on) and `heldout` (placements neither the warm start nor RL saw), and the trained
policy was also sampled at T=0.5:

    PYTHONPATH=. .venv/bin/python book/labs/gym_v2_rl_compare.py --placements \
        hg_rloo_lr3e-4,hg_rloo_lr3e-4_s1,hg_rloo_lr3e-4_s2
"""

import functools
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


@functools.cache
def heldout_tasks(warm_tag):
    """The warm start's held-out evaluation tasks, in the order of its per-task lists."""
    from gym_v2_warm_start import load_tasks
    warm = json.loads((RESULTS / f'gym_v2_{warm_tag}.json').read_text())
    by_id = {t.id: t for t in load_tasks()[0]}
    return tuple(by_id[i] for i in warm['eval_task_ids']['heldout'])


def warm_split(run, split):
    """The warm start's evaluation of a split as the run saw it (rl_groups / heldout cut from
    the warm start's held-out tasks by `gym_v2_rl.split_heldout`, as the lab cut them)."""
    import gym_v2_rl
    warm = json.loads((RESULTS / f"gym_v2_{run['warm']}.json").read_text())
    full = warm['metrics']['hint' if run['hint'] else 'plain']
    if split == 'stretch':
        return full[split]
    placements = {tuple(g) for g in run['rl_groups']}
    return gym_v2_rl.split_heldout(full['heldout'], heldout_tasks(run['warm']), placements)[split]


def pass_at(per_task, n, k):
    return sum(ev.pass_at_k(n, round(p * n), k) for p in per_task) / len(per_task)


def placements_table(groups):
    """One row per run and split: T=1, T=0.5, greedy, pass@8 of the trained policy and its
    paired differences against the warm start at T=1, at T=0.5, and at its best temperature."""
    print('| run | method | lr | split (tasks) | T=1 | T=0.5 | greedy | pass@8 | T=1 minus warm T=1'
          ' | T=1 minus control (T) | T=0.5 minus control | greedy minus warm greedy |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for group in groups:
        tags = group.split(',')
        runs = [load(t) for t in tags]
        per_split = {}
        for tag, r in zip(tags, runs):
            n = r['samples_per_task']
            for split in ('rl_groups', 'heldout', 'stretch'):
                m, v, w = r['metrics'][split], r['versus_control'][split], warm_split(r, split)
                g = ev.paired(m['greedy']['per_task'], w['greedy']['per_task'])
                at_t = v['at_extra_t_minus_control']
                per_split.setdefault(split, []).append(
                    (v['minus_warm_t1'], v['difference'], at_t[0], g[0]))
                print(f"| {tag} | {r['method']} | {r['lr']:g} | {split} ({v['tasks']})"
                      f" | {m['t1']['rate']:.3f} | {m['t0.5']['rate']:.3f} | {m['greedy']['rate']:.3f}"
                      f" | {pass_at(m['t1']['per_task'], n, 8):.3f}"
                      f" | {v['minus_warm_t1']:+.3f} ({v['minus_warm_t1_stderr']:.3f})"
                      f" | {v['difference']:+.3f} ({v['stderr']:.3f}) T{v['control_temperature'][1:]}"
                      f" | {at_t[0]:+.3f} ({at_t[1]:.3f}) | {g[0]:+.3f} ({g[1]:.3f}) |")
        if len(runs) > 1:
            for split, rows in per_split.items():
                cells = ' | '.join('{:+.3f} ({:.3f})'.format(*ev.mean_se(list(c)))
                                   for c in zip(*rows))
                print(f'| {group}: mean of {len(runs)} seeds (SE over seeds) | | | {split} | | | |'
                      f' | {cells} |')
            for split in per_split:     # the seeds' per-task rates averaged, then paired by task
                cells = []
                for key, versus in (('t1', 'warm t1'), ('t1', 'control'), ('t0.5', 'control'),
                                    ('greedy', 'warm greedy')):
                    mean_rates = ev.seeds_averaged([r['metrics'] for r in runs], split, key)
                    w = warm_split(runs[0], split)
                    base = (ev.sharpening_control({split: w}, split)[1] if versus == 'control'
                            else w[versus.split()[1]]['per_task'])
                    cells.append('{:+.3f} ({:.3f})'.format(*ev.paired(mean_rates, base)))
                print(f'| {group}: per-task rates averaged over {len(runs)} seeds (SE over tasks)'
                      f' | | | {split} | | | | | {" | ".join(cells)} |')
    for group in groups:
        for tag in group.split(','):
            r = load(tag)
            log = r['log']
            first = sum(s['reward'] for s in log[:25]) / 25
            last = sum(s['reward'] for s in log[-25:]) / 25
            mixed = sum(s['groups'] for s in log) / len(log)
            curve = ' / '.join(f'{p:.3f}' for _, p in r['heldout_expert_path_curve'])
            print(f"- {tag}: reward on RL's tasks, first 25 updates {first:.3f}, last 25"
                  f" {last:.3f}; mixed groups per update {mixed:.2f} of {r['tasks_per_update']};"
                  f" unseen held-out expert path every 25 updates {curve};"
                  f" {r['rl_seconds']} s RL + {r['eval_seconds']} s evaluation")


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
    if sys.argv[1:2] == ['--placements']:
        placements_table(sys.argv[2:])
    else:
        main(sys.argv[1:])
