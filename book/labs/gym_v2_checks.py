"""Whether a policy checks its edit with a test, and what it does when the check fails.

A warm start trained with --check-share sometimes runs `test` after its edit before the submit,
as its demonstrations did (where the check always passed: the expert's edit is right). With
the line hint a failing check names the bug's line again, with its current text, so a policy
that checks can see a wrong edit and make another. No demonstration shows that; only the
reward can say what it is worth. Per episode of the fresh tasks (gym_v2_rl_fresh.py's, with
its episode seeds: the solve rates equal that record's), after the first edit that applies:

  checked       the next call is `test`
  check_failed  that test failed (its observation holds a FAIL)
  retried       a failing check was followed by another edit, which
    retry_undid        puts back what the first edit changed (its <old> and <new> swapped),
    retry_repeated     is the first edit again, or
    retry_not_applied  does not apply (an error observation); any other retry applies a new change
  solved_after_retry   a retried episode that ends solved
  submitted_failing    a failing check followed at once by the submit

as shares of all the task's episodes, per task, so that trained policies (seeds averaged) are
paired by task against the warm start at T=1. The warm start is also read at its control
temperature, the trained policies at T=1.

Run from the repository root after gym_v2_rl_fresh.py (single-threaded):
    .venv/bin/python book/labs/gym_v2_checks.py --fresh FRESH
Record: results/<run>.json (kind analysis).
"""

import dataclasses

import agentrl as arl
import evaluate as ev
import gym_v2
import harness
from gym_v2_rl_fresh import ReplayRecipe, check_replay, replay_setting, replayed_policies

KINDS = ('checked', 'check_failed', 'retried', 'retry_undid', 'retry_repeated',
         'retry_not_applied', 'solved_after_retry', 'submitted_failing')


@dataclasses.dataclass(frozen=True)
class ChecksRecipe(ReplayRecipe):
    pass


def after_the_edit(trajectory):
    """{kind: bool} of KINDS for one episode (see the module's docstring)."""
    seen = dict.fromkeys(KINDS, False)
    tools = [arl.parse_call(action).tool for action, _ in trajectory.turns]
    applied = [i for i, (tool, (_, obs)) in enumerate(zip(tools, trajectory.turns))
               if tool == 'edit' and not obs.startswith('error')]
    if not applied or applied[0] + 1 >= len(tools) or tools[applied[0] + 1] != 'test':
        return seen
    check = applied[0] + 1
    seen['checked'] = True
    seen['check_failed'] = 'FAIL' in trajectory.turns[check][1]
    if seen['check_failed'] and check + 1 < len(tools):
        seen['retried'] = tools[check + 1] == 'edit'
        seen['submitted_failing'] = tools[check + 1] == 'submit'
    if seen['retried']:
        first, retry = (arl.parse_call(trajectory.turns[i][0]) for i in (applied[0], check + 1))
        same_line = retry.line == first.line
        if same_line and (retry.old, retry.new) == (first.new, first.old):
            seen['retry_undid'] = True
        elif same_line and (retry.old, retry.new) == (first.old, first.new):
            seen['retry_repeated'] = True
        elif trajectory.turns[check + 1][1].startswith('error'):
            seen['retry_not_applied'] = True
    seen['solved_after_retry'] = seen['retried'] and gym_v2.solved(trajectory)
    return seen


def shares(model, env, tasks, tok, temperature, recipe):
    """(solve rate, per-task solve rates, {kind: per-task share of episodes})."""
    samples = recipe.samples_per_task
    rewards, trajs = ev.sample_rewards(model, env, tasks, tok, samples, temperature,
                                       recipe.episode_seed)
    per_task = {k: [0.0] * len(tasks) for k in KINDS}
    for n, (_, traj) in enumerate(trajs):
        for kind, happened in after_the_edit(traj).items():
            per_task[kind][n // samples] += happened / samples
    solved = [sum(r) / len(r) for r in rewards]
    return sum(map(sum, rewards)) / (len(tasks) * samples), solved, per_task


def run(recipe, context):
    fresh, run_record, warm, tasks, cache, placed = replay_setting(recipe, context)
    tok = arl.CharTokenizer()
    result, versus = {}, {}
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=run_record.recipe['hint'], cache=cache,
                                     sandbox=pool.run)
        for split, unpadded in placed.items():
            split_tasks = arl.pad_tasks(unpadded, run_record.recipe.get('pad_lines', 0), env)
            result[split] = {}
            for name, model, temperature, recorded in replayed_policies(fresh, split, warm,
                                                                        context):
                rate, solved, per_task = shares(model, env, split_tasks, tok, temperature, recipe)
                check_replay(split, name, solved, recorded)
                result[split][name] = {'rate': rate, 'per_task': per_task}
                print(f'{split:9s} {name:44s} solved {rate:.3f}  ' + '  '.join(
                    f'{k} {sum(v) / len(v):.3f}' for k, v in per_task.items()), flush=True)
            versus[split] = {}
            for kind in KINDS:
                trained = [sum(x) / len(recipe.runs) for x in
                           zip(*(result[split][stem]['per_task'][kind] for stem in recipe.runs))]
                versus[split][kind] = ev.paired(trained, result[split]['warm t1']['per_task'][kind])
            print(f'{split}: trained (seeds averaged) minus warm T=1, paired by task: ' + ', '.join(
                f'{k} {d:+.3f} +- {se:.3f}' for k, (d, se) in versus[split].items()), flush=True)
    return {'kinds': KINDS, 'result': result, 'versus': versus}


LAB = harness.Lab(__file__, 'analysis', ChecksRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
