"""Checks of book/labs/evaluate.py (pass@k, paired errors, expert-path probability) and of the
v2 task generator in book/labs/gym_v2.py.
Run: .venv/bin/python -m pytest tests/test_lab_evaluate.py -q
"""

import itertools
import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'book' / 'labs'))

import agentrl as arl  # noqa: E402
import evaluate as ev  # noqa: E402
import gym_v2  # noqa: E402


def brute_pass_at_k(n, c, k):
    """Share of the k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize('n', range(1, 9))
def test_pass_at_k_matches_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert ev.pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_k_rejects_bad_counts():
    for n, c, k in ((4, 5, 1), (4, 2, 0), (4, 2, 5), (4, -1, 1)):
        with pytest.raises(ValueError):
            ev.pass_at_k(n, c, k)


def test_pass_at_1_is_the_solve_rate():
    rewards = [[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]]
    s = ev.summarise(rewards, ks=(1, 4))
    assert s['pass@1'] == pytest.approx(s['rate']) == pytest.approx(5 / 12)
    assert s['pass@4'] == pytest.approx(2 / 3)      # tasks 1 and 3 have a success among 4


def test_paired_standard_error_by_hand():
    # differences 0.5, 0, -0.5: mean 0, sample std sqrt(0.5 / 2) = 0.5, SE 0.5 / sqrt(3)
    mean, se = ev.paired([1.0, 0.5, 0.0], [0.5, 0.5, 0.5])
    assert mean == pytest.approx(0.0)
    assert se == pytest.approx(0.5 / math.sqrt(3))
    # differences 0.25, 0.75: mean 0.5, std sqrt(0.125) , SE sqrt(0.125) / sqrt(2) = 0.25
    mean, se = ev.paired([0.5, 1.0], [0.25, 0.25])
    assert (mean, se) == (pytest.approx(0.5), pytest.approx(0.25))
    with pytest.raises(ValueError):
        ev.paired([1.0], [1.0, 0.0])


def test_pairing_removes_the_shared_task_spread():
    easy_hard = [0.9, 0.1, 0.8, 0.2]
    shifted = [v + 0.05 for v in easy_hard]
    assert ev.paired(shifted, easy_hard) == (pytest.approx(0.05), pytest.approx(0.0, abs=1e-12))
    assert ev.mean_se(shifted)[1] > 0.1


def test_expert_path_probability_is_the_product_of_step_probabilities():
    """One teacher-forced pass gives the same number as walking the episode token by token."""
    torch.manual_seed(0)
    tok, env = arl.CharTokenizer(), arl.BugFixEnv(cache={})
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=3)
    task = arl.make_tasks()[0]
    traj = arl.teacher_rollout(env, task, tok, arl.expert_policy)
    walked = 0.0
    for t in range(1, len(traj.ids)):
        if traj.action_mask[t]:
            logits, _ = model(traj.ids[None, :t])
            walked += torch.log_softmax(logits[0, -1] / 0.7, -1)[traj.ids[t]].item()
    (batched,) = ev.expert_path_logprob(model, env, [task], tok, temperature=0.7)
    assert batched == pytest.approx(walked, abs=1e-4)


def test_renaming_is_consistent_and_leaves_attributes_strings_and_builtins():
    src = ("def f(xs, c):\n  out = []\n  for x in xs:\n    if x == c: out.append('x')\n"
           "  return len(out)\n")
    new = gym_v2.rewrite(src, {'f': 'g', 'xs': 'q', 'c': 'k', 'out': 'o', 'x': 'z'}, lambda v: v)
    assert new == ("def g(q, k):\n  o = []\n  for z in q:\n    if z == k: o.append('x')\n"
                   "  return len(o)\n")


def test_variants_rename_everything_renamable():
    rows = gym_v2.variant_rows(arl.TEMPLATES[0], seed=0, variant=1)
    code = rows[0]['solution']
    assert 'clamp' not in code and ' lo' not in code and ' hi' not in code
    names = gym_v2.renamable(code)
    assert all(1 <= len(n) <= 3 for n in names)
    assert rows[0]['func'] == names[0] and rows[0]['template'] == 'clamp'


def test_recovery_expert_shows_a_failed_edit_then_solves():
    env = arl.BugFixEnv(cache={})
    task = gym_v2.VariantTask(id=0, split='train', **gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)[0])
    text, reward, history = arl.run_episode(env, task, gym_v2.recovery_policy)
    assert reward == 1.0
    assert [obs.startswith('error') for _, obs in history[2:4]] == [True, False]


def test_line_hint_names_the_bug_line():
    task = gym_v2.VariantTask(id=0, split='train', **gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)[0])
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    env.reset(task)
    obs, *_ = env.step('<call> test </call>')
    assert f'at line {task.line}: ' in obs and obs.startswith('FAIL')
    plain = gym_v2.HintedBugFixEnv(hint=False, cache={})
    plain.reset(task)
    assert 'at line' not in plain.step('<call> test </call>')[0]


@pytest.mark.parametrize('temperature', [1.0, 0.0])
def test_batched_sampling_gives_the_episodes_one_at_a_time_gives(temperature):
    """sample_rewards through rollout_batch: same rewards, ids and actions as arl.rollout."""
    torch.manual_seed(0)
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=5).eval()
    tasks = arl.make_tasks()[:3]
    a, ta = ev.sample_rewards(model, env, tasks, tok, 2, temperature, seed=7, batched=True)
    b, tb = ev.sample_rewards(model, env, tasks, tok, 2, temperature, seed=7, batched=False)
    assert a == b
    assert [t.id for t, _ in ta] == [t.id for t, _ in tb]
    assert all(torch.equal(x.ids, y.ids) and x.text == y.text for (_, x), (_, y) in zip(ta, tb))


def test_rl_lab_advantages_by_hand():
    """gym_v2_rl.advantages: rloo, shrunken leave-one-out and positive-only, on one group."""
    import gym_v2_rl
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    others = torch.tensor([[1 / 3, 2 / 3, 2 / 3, 1 / 3]])
    assert torch.allclose(gym_v2_rl.advantages(r, 'rloo'), r - others)
    assert torch.allclose(gym_v2_rl.advantages(r, 'shrunk'), r - 0.25 * others)
    assert torch.equal(gym_v2_rl.advantages(r, 'positive'), r)
    assert torch.allclose(gym_v2_rl.advantages(r, 'grpo').sum(), torch.tensor(0.0), atol=1e-6)
    with pytest.raises(ValueError):
        gym_v2_rl.advantages(r, 'ppo')


def test_group_tasks_make_only_the_asked_groups_and_variants_validated():
    """gym_v2.group_tasks: the asked (template, line, kind) groups under the asked variants,
    ids from first_id, each one a task the saved validate_task accepts."""
    env = arl.BugFixEnv(cache={})
    rows = gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)
    groups = {gym_v2.group_key(rows[0]), gym_v2.group_key(rows[1])}
    tasks = gym_v2.group_tasks(groups, (3, 4), 'rl', first_id=100, env=env)
    assert tasks and [t.id for t in tasks] == list(range(100, 100 + len(tasks)))
    assert {(t.template, t.line, t.kind) for t in tasks} <= groups
    assert {t.variant for t in tasks} == {3, 4} and {t.split for t in tasks} == {'rl'}
    assert all(arl.validate_task(t, run=env.run)[0] for t in tasks)


def test_rl_groups_are_half_the_heldout_groups_and_restrict_cuts_by_position():
    import gym_v2_rl
    tasks = [gym_v2.VariantTask(id=i, func='f', kind='k', line=i % 5, code='', solution='',
                                fix='', visible=(), hidden=(), split='heldout', template='t')
             for i in range(10)]
    groups = gym_v2_rl.rl_groups(tasks)
    assert len(groups) == 2 and groups == gym_v2_rl.rl_groups(tasks)   # drawn once, fixed
    result = {'t1': {'rate': 0.5, 'per_task': [1.0, 0.0, 0.5, 0.5]}, 'control_temperature': 't1'}
    cut = gym_v2_rl.restrict(result, [0, 2])
    assert cut == {'t1': {'rate': 0.75, 'per_task': [1.0, 0.5]}}
