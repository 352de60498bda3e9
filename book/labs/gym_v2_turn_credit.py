"""Turn-level credit against the truth: the Monte Carlo value of every visited state.

The gym's observations are a function of the task and the actions, so a state is the history of
actions, and the value of a state under a policy can be estimated by sampling the rest of the
episode from it many times (agentrl.StateEnv replays the history; agentrl.state_values averages
the continuations' rewards). The true advantage of a turn is then V(state after it) - V(state
before it), up to Monte Carlo error. This lab samples groups of episodes from a policy on the RL
tasks of a run of gym_v2_rl.py (one task per placement and variant, padded as that run padded
them), estimates the value of every state the groups visited, and records, per task, each
episode's actions, whether each observation was an error, its reward, and the values. No policy
is trained: Chapter 12 scores trajectory-level RLOO credit and GiGPO-style anchor-state credit
against these values (agentrl.rloo_turn_credit, agentrl.gigpo_turn_credit).

A second, independent set of continuations (seed + 1) is recorded beside the first, so that the
reader can measure how much of a disagreement is the truth's own Monte Carlo noise.

Run from the repository root (single-threaded; about 10 CPU minutes with the defaults,
12 placements and 12 continuations per state and estimate):
    .venv/bin/python book/labs/gym_v2_turn_credit.py
Record: results/<run>.json (kind analysis).
"""

import dataclasses
import time

import torch

import agentrl as arl
import gym_v2
import gym_v2_warm_start
import harness
from harness import option


@dataclasses.dataclass(frozen=True)
class TurnCreditRecipe(harness.Recipe):
    """Groups of episodes from a policy on RL's tasks, and the Monte Carlo value of each state."""
    policy: str = option('gym_v2_hint_recovery_6000_pad6_copy4', 'policy whose credit is '
                         'measured (stem of a record with a checkpoint)', short='', stem=True)
    run: str = option('gym_v2_rl_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300', 'RL run whose '
                      'placements and padding give the tasks (record stem)', short='', stem=True)
    variants: tuple = option((0,), 'variants of each RL placement to use', item=int)
    group: int = option(4, 'episodes per task (the RL recipe\'s group size)')
    samples: int = option(12, 'continuations per visited state, per estimate')
    seed: int = option(0, 'seed of the groups (the continuations use seed + 1000, + 2000)')
    max_turns: int = option(8, 'turn cap of an episode, continuations included')
    task_limit: int = option(12, 'the first N placements, in sorted order (0: all 31)')

    def reduced(self):
        return dataclasses.replace(self, samples=2, task_limit=2)


def run(recipe, context):
    torch.manual_seed(recipe.seed)
    tok = arl.CharTokenizer()
    lab = context.load(recipe.run)
    warm = context.load(lab.recipe['warm'])
    trained = gym_v2_warm_start.recipe_of_record(warm)
    tasks, cache = gym_v2.load_tasks(trained.task_seed, trained.train_variants,
                                     validate=not context.reduced)
    model = arl.load_checkpoint(context.load(recipe.policy).checkpoint)
    placements = sorted(tuple(g) for g in lab.results['rl_groups'])
    placements = set(placements[:recipe.task_limit or None])
    out, start = [], time.time()
    with arl.SandboxPool(workers=1) as pool:
        env = gym_v2.HintedBugFixEnv(hint=lab.recipe['hint'], cache=cache, sandbox=pool.run)
        rl_tasks = gym_v2.group_tasks(placements, recipe.variants, 'rl', first_id=len(tasks),
                                      env=env)
        rl_tasks = arl.pad_tasks(rl_tasks, lab.recipe['pad_lines'], env)
        groups = arl.collect_groups(model, env, rl_tasks, tok, recipe.group, seed=recipe.seed,
                                    max_turns=recipe.max_turns)
        for i, (task, episodes) in enumerate(zip(rl_tasks, groups)):
            states = arl.visited_states(task, episodes)
            values = [arl.state_values(model, env, tok, states, recipe.samples,
                                       seed=recipe.seed + 1000 * (j + 1) + 97 * i,
                                       max_turns=recipe.max_turns) for j in range(2)]
            out.append({
                'task': task.id, 'group': list(gym_v2.task_group(task)),
                'episodes': [{'actions': [a for a, _ in e.turns],
                              'error': [o.startswith('error:') for _, o in e.turns],
                              'reward': e.reward, 'done': e.done} for e in episodes],
                'values': [[[list(k), v[k]] for k in sorted(states, key=str)] for v in values]})
            print(f'task {i + 1}/{len(rl_tasks)}: {len(states)} states, rewards '
                  f'{[e.reward for e in episodes]} ({time.time() - start:.0f} s)', flush=True)
    return {'tasks': out, 'seconds': round(time.time() - start)}


LAB = harness.Lab(__file__, 'analysis', TurnCreditRecipe, run)

if __name__ == '__main__':
    harness.main(LAB)
