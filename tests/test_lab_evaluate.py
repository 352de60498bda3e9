"""Checks of book/labs/evaluate.py (its lab-specific parts: edit_stats, the evaluate driver;
the saved functions it imports are tested in tests/test_policy_gradient.py), of the names
book/labs/gym_v2.py keeps for the saved task generator (tested in tests/test_variants.py), of
helpers of the gym_v2 labs, and of the refusals their recipes' check() makes before any work
(the harness itself: tests/test_labs.py).
Run: .venv/bin/python -m pytest tests/test_lab_evaluate.py -q
"""

import dataclasses
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'book' / 'labs'))

import agentrl as arl  # noqa: E402
import evaluate as ev  # noqa: E402
import gym_v2  # noqa: E402
import gym_v2_copying  # noqa: E402
import gym_v2_edit_parts  # noqa: E402
import gym_v2_warm_start  # noqa: E402


def test_evaluate_uses_the_saved_functions():
    """The labs call ev.<name>; the mechanisms are Chapter 6's saved code, not copies."""
    for name in ('pass_at_k', 'mean_se', 'paired', 'summarise', 'episode_seed', 'sample_rewards',
                 'expert_path_logprob', 'sharpening_control', 'versus_control'):
        assert getattr(ev, name) is getattr(arl, name), name


def test_edit_stats_by_hand():
    """The expert's first edit is on the bug's line and applies; the recovery expert's first
    edit is on another line and fails; an episode without an edit counts in neither."""
    env = arl.BugFixEnv(cache={})
    task = gym_v2.VariantTask(id=0, split='train', **gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)[0])
    tok = arl.CharTokenizer()
    expert = arl.teacher_rollout(env, task, tok, arl.expert_policy)
    recovery = arl.teacher_rollout(env, task, tok, gym_v2.recovery_policy)
    reader = arl.teacher_rollout(env, task, tok, lambda task, history: '<call> read </call>',
                                 max_turns=2)
    assert ev.edit_stats([(task, expert)]) == {'first_edit': 1.0, 'first_edit_on_bug_line': 1.0,
                                               'first_edit_applies': 1.0}
    assert ev.edit_stats([(task, recovery)]) == {'first_edit': 1.0, 'first_edit_on_bug_line': 0.0,
                                                 'first_edit_applies': 0.0}
    assert ev.edit_stats([(task, expert), (task, reader)]) == {
        'first_edit': 0.5, 'first_edit_on_bug_line': 0.5, 'first_edit_applies': 0.5}


def test_evaluate_reports_every_temperature_greedy_and_the_expert_path(capsys):
    torch.manual_seed(0)
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=5).eval()
    tasks = arl.make_tasks()[:2]
    result = ev.evaluate(model, env, {'a': tasks}, tok, samples=2, temperatures=(1.0, 0.5),
                         seed=3, max_turns=2)
    assert set(result['a']) == {'t1', 't0.5', 'greedy', 'expert_path'}
    rewards, _ = ev.sample_rewards(model, env, tasks, tok, 2, 0.5, seed=3, max_turns=2)
    assert result['a']['t0.5']['per_task'] == ev.summarise(rewards)['per_task']
    assert result['a']['greedy']['samples'] == 1
    probs = [math.exp(v) for v in ev.expert_path_logprob(model, env, tasks, tok)]
    assert result['a']['expert_path']['per_task'] == pytest.approx(probs)
    assert 'expert-path probability' in capsys.readouterr().out


def test_gym_v2_is_the_saved_generator_under_the_labs_names():
    """The generator is Chapter 4's saved code (tested in tests/test_variants.py); the lab
    module only keeps the names its scripts and recorded results use."""
    assert gym_v2.make_v2_tasks is arl.make_variant_tasks
    assert gym_v2.TEMPLATES is arl.VARIANT_TEMPLATES
    for name in ('VariantTask', 'variant_rows', 'group_key', 'task_group', 'group_tasks',
                 'one_per_group', 'recovery_policy', 'HintedBugFixEnv', 'STRETCH_FUNCS',
                 'TRAIN_VARIANTS'):
        assert getattr(gym_v2, name) is getattr(arl, name), name


def test_rl_lab_advantages_by_hand():
    """gym_v2_rl.advantages: rloo, group-normalised and positive-only, on one group."""
    import gym_v2_rl
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    others = torch.tensor([[1 / 3, 2 / 3, 2 / 3, 1 / 3]])
    assert torch.allclose(gym_v2_rl.advantages(r, 'rloo'), r - others)
    assert torch.equal(gym_v2_rl.advantages(r, 'positive'), r)
    assert torch.equal(gym_v2_rl.advantages(r, 'reinforce'), r)
    assert torch.allclose(gym_v2_rl.advantages(r, 'grpo').sum(), torch.tensor(0.0), atol=1e-6)
    with pytest.raises(ValueError):
        gym_v2_rl.advantages(r, 'ppo')


def test_restrict_cuts_an_evaluation_by_position():
    """(The placements it cuts by are arl.rl_placements', tested in tests/test_advantages.py.)"""
    import gym_v2_rl
    result = {'t1': {'rate': 0.5, 'per_task': [1.0, 0.0, 0.5, 0.5]}, 'control_temperature': 't1'}
    cut = gym_v2_rl.restrict(result, [0, 2])
    assert cut == {'t1': {'rate': 0.75, 'per_task': [1.0, 0.5]}}


def test_split_heldout_partitions_an_evaluation_by_placement():
    import gym_v2_rl
    held = [gym_v2.VariantTask(id=i, func='f', kind='k', line=line, code='', solution='', fix='',
                               visible=(), hidden=(), split='heldout', template='t')
            for i, line in enumerate((1, 2, 1, 3))]
    result = {'t1': {'rate': 0.5, 'per_task': [1.0, 0.0, 0.5, 0.5]}, 'control_temperature': 't1'}
    halves = gym_v2_rl.split_heldout(result, held, {('t', 1, 'k')})
    assert halves == {'rl_groups': {'t1': {'rate': 0.75, 'per_task': [1.0, 0.5]}},
                      'heldout': {'t1': {'rate': 0.25, 'per_task': [0.0, 0.5]}}}
    assert gym_v2.task_group(held[3]) == ('t', 3, 'k')


def test_seeds_averaged_by_hand():
    runs = [{'s': {'t1': {'per_task': [1.0, 0.0, 0.5]}}},
            {'s': {'t1': {'per_task': [0.0, 0.0, 1.0]}}}]
    assert ev.seeds_averaged(runs, 's', 't1') == [0.5, 0.0, 0.75]


def test_template_name():
    assert [gym_v2.template_name(t) for t in arl.TEMPLATES[:1]] == ['clamp']


def two_groups(rewards):
    """A tiny policy and two groups of four of its episodes on two tasks, with `rewards` set
    by hand (8 numbers), for the RL lab's update."""
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    tasks = arl.make_tasks()[:2]
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=5).eval()
    episodes = arl.rollout_batch(model, env, [t for t in tasks for _ in range(4)], tok,
                                 seeds=list(range(8)), max_turns=2)
    for e, r in zip(episodes, rewards):
        e.reward = r
    return model, [episodes[:4], episodes[4:]]


def test_kl_penalty_to_an_identical_reference_changes_nothing_and_logs_zero_kl():
    """At the warm start the policy is its reference: the k2 penalty and its gradient are 0, so
    the KL arm's first update is the plain update, and the logged KL estimates are 0. After a
    step away from the reference the penalty pulls back: the KL arm moves the weights less."""
    import copy

    import gym_v2_rl
    model, groups = two_groups([float(i % 2) for i in range(8)])   # both groups mixed
    runs = {}
    for kl_coef in (0.0, 0.5):
        torch.manual_seed(0)
        policy = copy.deepcopy(model)
        opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
        stats = gym_v2_rl.update(policy, opt, groups, 'rloo', ref=model, kl_coef=kl_coef)
        runs[kl_coef] = (policy, stats)
    plain, with_kl = runs[0.0][0], runs[0.5][0]
    for a, b in zip(plain.parameters(), with_kl.parameters()):
        assert torch.allclose(a, b, atol=1e-6)
    assert runs[0.5][1]['kl_k1'] == pytest.approx(0, abs=1e-6)
    assert runs[0.5][1]['kl_k3'] == pytest.approx(0, abs=1e-6)
    assert 'kl_k1' not in runs[0.0][1]
    moved = {}
    for kl_coef in (0.0, 5.0):                        # a second step, now away from the reference
        policy = copy.deepcopy(plain)
        opt = torch.optim.SGD(policy.parameters(), lr=1e-2)
        stats = gym_v2_rl.update(policy, opt, groups, 'rloo', ref=model, kl_coef=kl_coef,
                                 grad_clip=1e9)
        moved[kl_coef] = sum(((p - q) ** 2).sum() for p, q in
                             zip(policy.parameters(), model.parameters())).item()
    assert stats['kl_k3'] > 0
    assert moved[5.0] < moved[0.0]


def test_reinforce_keeps_groups_of_successes_that_the_group_methods_drop():
    """A batch of one all-success and one all-failure group: no group method steps (every
    advantage is 0), REINFORCE steps on the successes; the log counts 0 mixed groups."""
    import copy

    import gym_v2_rl
    model, groups = two_groups([float(i < 4) for i in range(8)])
    for method in ('rloo', 'grpo', 'positive'):
        policy = copy.deepcopy(model)
        opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
        assert gym_v2_rl.update(policy, opt, groups, method) is None
    policy = copy.deepcopy(model)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    stats = gym_v2_rl.update(policy, opt, groups, 'reinforce')
    assert stats['groups'] == 0 and stats['grad_norm'] > 0
    assert any(not torch.equal(p, q) for p, q in zip(policy.parameters(), model.parameters()))
    for e in groups[0]:
        e.reward = 0.0
    assert gym_v2_rl.update(copy.deepcopy(model), opt, groups, 'reinforce') is None


def test_first_edit_class_by_hand():
    """gym_v2_failures.first_edit_class: each class from a hand-made episode, whether the hint
    came before the edit, and the line the edit named; only the first edit counts."""
    import gym_v2_failures as gf
    task = gym_v2.VariantTask(id=0, split='train', **gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)[0])
    _, row, body = task.fix.split(' ', 2)
    bad, good = body.split('|')
    bug_line = task.code.splitlines()[task.line - 1]
    start = bug_line.find(bad)
    assert int(row) == task.line and start > 0      # the bug is not the line's first character
    hint = f'FAIL ...\nat line {task.line}: {bug_line.strip()}\n0/2 passed'
    other = 1 if task.line != 1 else 2

    def episode(*actions, observation='ok'):
        return SimpleNamespace(turns=[(a, observation) for a in actions])

    def edit(line, old, new):
        return f'<call> edit sub {line} {old}|{new} </call>'

    cases = [
        (episode('<call> read </call>', '<call> submit </call>'), ('no_edit', False, 0)),
        (episode(edit(other, 'x', 'y')), ('other_line', False, other)),
        (episode(edit(task.line, 'no such text', 'y')), ('not_applied', False, task.line)),
        (episode(edit(task.line, bad, good)), ('right_fix', False, task.line)),
        (episode(edit(task.line, bad, good + '@')), ('wrong_change_at_bug', False, task.line)),
        (episode(edit(task.line, bug_line[:1], '@')),
         ('wrong_change_elsewhere_on_line', False, task.line)),
        (episode('<call> test </call>', edit(task.line, bad, good), observation=hint),
         ('right_fix', True, task.line)),
        (episode(edit(other, 'x', 'y'), edit(task.line, bad, good)), ('other_line', False, other)),
    ]
    for trajectory, want in cases:
        assert gf.first_edit_class(task, trajectory) == want, trajectory.turns


def test_padding_moves_the_line_not_the_bug():
    """pad_blank_lines inserts blank lines below the def line of the buggy and the reference
    source alike: the hint names the moved line and quotes the bug's text, the reference fix
    applies there and gives the padded reference, the task still validates, and the same task
    is always padded the same way (seeded by its placement and variant)."""
    rows = [r for v in range(8) for r in gym_v2.variant_rows(arl.TEMPLATES[2], 0, v)]
    tasks = [gym_v2.VariantTask(id=i, split='train', **r) for i, r in enumerate(rows)]
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    padded = arl.pad_tasks(tasks, 2, env)
    shifts = [p.line - t.line for t, p in zip(tasks, padded)]
    assert set(shifts) == {0, 1, 2}
    for task, pad in zip(tasks, padded):
        assert pad.code.splitlines()[pad.line - 1] == task.code.splitlines()[task.line - 1]
        assert pad.code.splitlines()[0] == task.code.splitlines()[0]        # the def line
        assert [x for x in pad.code.splitlines() if x] == task.code.splitlines()
        call = arl.parse_call(f'<call> edit {pad.fix} </call>')
        assert arl.apply_patch(pad.code, call.line, call.old, call.new) == (pad.solution, '')
        env.reset(pad)
        env.step('<call> read </call>')
        obs = env.step('<call> test </call>')[0]
        assert f'at line {pad.line}: ' in obs, obs
        assert gym_v2.task_group(task) == (task.template, task.line, task.kind)
    assert arl.pad_tasks(tasks, 2, env) == padded
    assert arl.pad_tasks(tasks, 0, env) == tasks
    broken = dataclasses.replace(tasks[0], solution=tasks[0].code)          # "fix" = the bug
    with pytest.raises(ValueError, match='padded task 0'):
        arl.pad_tasks([broken], 2, env)


def test_fresh_padding_draws_one_of_k_seeded_paddings_per_group():
    """gym_v2_rl.PaddingPool: padding seed 0 is the task as played, any other seed pads its
    unpadded original afresh (validated, the same bug line moved), made once and kept; over
    eight seeds one placement sits on more than one line number, which is what keeps a line
    from being recalled per task."""
    import gym_v2_rl
    rows = [r for r in gym_v2.variant_rows(arl.TEMPLATES[2], 0, 0)]
    tasks = [gym_v2.VariantTask(id=i, split='train', **r) for i, r in enumerate(rows)]
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    played = arl.pad_tasks(tasks, 6, env)
    pool = gym_v2_rl.PaddingPool({t.id: t for t in tasks}, 6, env)
    for task, first in zip(tasks, played):
        assert pool.draw(first, 0) is first
        drawn = [pool.draw(first, k) for k in range(8)]
        assert drawn[3] is pool.draw(first, 3)                   # made once, then kept
        assert drawn[3] == arl.pad_tasks([task], 6, env, seed=3)[0]
        assert len({d.line for d in drawn}) > 1
        for d in drawn:
            assert d.code.splitlines()[d.line - 1] == task.code.splitlines()[task.line - 1]
    assert len(pool.made) == 7 * len(tasks)
    moved = gym_v2_rl.PaddingPool({t.id: t for t in tasks}, 6, env, moved_only=True)
    for task, first in zip(tasks, played):
        drawn = [moved.draw(first, k) for k in range(8)]
        assert all(d.line > task.line for d in drawn)
        assert (first.line > task.line) == (drawn[0] == first)      # seed 0 when it moved
    never = gym_v2_rl.PaddingPool({t.id: t for t in tasks}, 0, env, moved_only=True)
    with pytest.raises(ValueError, match='no padding of 64 moved line'):
        never.draw(tasks[0], 0)


def _max_task():
    """Variant 0 of template 2 (a running maximum): line 2 '  t = mv[1]', fix 'sub 2 1|0'."""
    row = gym_v2.variant_rows(arl.TEMPLATES[2], 0, 0)[0]
    return gym_v2.VariantTask(id=0, split='train', **row)


def test_the_line_edit_bonus_pays_the_first_edit_on_the_bug_line_once():
    """gym_v2.LineEditBonusEnv: an edit whose old text is not on its line earns nothing, one
    that applies on another line earns nothing, the first edit that changes the bug's line earns
    the bonus (even with a wrong fix), a second one earns nothing more, a solve earns 1 + bonus
    and a new episode pays again. The plain environment pays 1 for the solve only."""
    task = _max_task()
    op, line, patch = task.fix.split(' ', 2)
    old, _, new = patch.partition('|')
    other = int(line) + 1
    word = task.code.splitlines()[other - 1].split()[0]
    shaped = gym_v2.LineEditBonusEnv(0.25, hint=True, cache={})
    shaped.reset(task)
    plan = [f'{op} {line} {old}@|x',                     # old text not on the line
            f'{op} {other} {word}|{word}{word}',         # applies, on another line
            f'{op} {line} {old}|9',                      # applies on the bug line, wrong fix
            f'{op} {line} 9|{new}']                      # applies there again: the right fix
    steps = [shaped.step(f'<call> edit {a} </call>') for a in plan]
    assert [bool(info['error']) for *_, info in steps] == [True, False, False, False]
    assert [reward for _, reward, *_ in steps] == [0.0, 0.0, 0.25, 0.0]
    for env, paid in ((shaped, [0.0, 0.25, 1.0]),
                      (gym_v2.HintedBugFixEnv(hint=True, cache={}), [0.0, 0.0, 1.0])):
        env.reset(task)
        assert [env.step(f'<call> {a} </call>')[1]
                for a in ('read', f'edit {task.fix}', 'submit')] == paid


def test_solved_reads_the_submit_not_the_shaped_reward():
    """gym_v2.solved: with a bonus of 1 an edit that applies and is then submitted unfixed is
    paid 1, as a solve would be; solved reads the submit's observation and tells them apart."""
    task = _max_task()
    env = gym_v2.LineEditBonusEnv(1.0, hint=True, cache={})
    for plan, reward, solved in ((['edit sub 2 1|9', 'submit'], 1.0, False),
                                 ([f'edit {task.fix}', 'submit'], 2.0, True),
                                 (['submit'], 0.0, False), (['read'], 0.0, False)):
        env.reset(task)
        turns, total = [], 0.0
        for action in plan:
            obs, r, *_ = env.step(f'<call> {action} </call>')
            turns.append((action, obs))
            total += r
        assert total == reward, plan
        assert gym_v2.solved(SimpleNamespace(turns=turns)) is solved, plan
    assert not gym_v2.solved(SimpleNamespace(turns=[]))


def test_the_bonus_at_the_bug_pays_only_an_edit_that_overlaps_the_bugs_text():
    """With at_bug, a change elsewhere on the bug's line (paid by the plain bonus) earns nothing
    and does not use up the payment; the next edit whose old text overlaps the bug's text is
    paid, wrong fix or not. An edit that leaves the line as it was is never paid.
    gym_v2.overlaps_bug is the failures lab's test of the same spot."""
    task = _max_task()
    same, elsewhere, at_bug = 'sub 2 1|1', 'sub 2 t|tt', 'sub 2 [1|[9'
    for flag, paid in ((False, [0.0, 0.25, 0.0]), (True, [0.0, 0.0, 0.25])):
        env = gym_v2.LineEditBonusEnv(0.25, at_bug=flag, hint=True, cache={})
        env.reset(task)
        steps = [env.step(f'<call> edit {a} </call>') for a in (same, elsewhere, at_bug)]
        assert [info['error'] for *_, info in steps] == ['', '', '']
        assert [reward for _, reward, *_ in steps] == paid
    line = task.code.splitlines()[task.line - 1]
    assert gym_v2.overlaps_bug(task, line, '[1') and gym_v2.overlaps_bug(task, line, '1]')
    assert not gym_v2.overlaps_bug(task, line, 't =') and not gym_v2.overlaps_bug(task, line, 'x')


def refused(lab_name, argv, capsys):
    """The message with which the harness refuses a command line of the lab, before any work."""
    import harness
    with pytest.raises(SystemExit):
        harness.prepare(harness.lab(lab_name), argv)
    return capsys.readouterr().err


@pytest.mark.parametrize('argv, message', [
    (['--copy-weight', '4'], 'its weights come from its record'),
    (['--part-weights', 'old=10'], 'its weights come from its record'),
    (['--train-seed', '1'], 'its seed comes from its record'),
    (['--check-share', '0.5'], 'its demonstrations come from its record'),
    (['--retry-share', '0.5'], 'its demonstrations come from its record'),
    (['--mask-retry-mistake'], 'its demonstrations come from its record'),
    (['--lr', '2.5e-3'], 'its learning rate comes from its record'),
])
def test_the_warm_start_lab_refuses_training_options_with_load(capsys, argv, message):
    """gym_v2_warm_start --load evaluates a saved warm start: options that would change how it
    was trained stop the run before any work, with a message, instead of being ignored. The
    options it takes from the loaded record are accepted at the record's own values."""
    import harness
    assert message in refused('gym_v2_warm_start',
                              ['--load', 'gym_v2_hint_recovery_3000', *argv], capsys)
    recipe, _ = harness.prepare(harness.lab('gym_v2_warm_start'), [
        '--load', 'gym_v2_hint_recovery_6000_pad6_copy4', '--copy-weight', '4', '--pad-lines', '6'])
    loaded = gym_v2_warm_start.recipe_of_record(arl.load_record(
        'gym_v2_hint_recovery_6000_pad6_copy4', harness.RESULTS))
    assert (recipe.steps, recipe.weights()) == (6000, loaded.weights()) == (
        6000, {'line': 4, 'old': 4, 'new': 1})


def test_the_warm_start_lab_refuses_a_mask_without_retry_demonstrations(capsys):
    """--mask-retry-mistake masks what only retry demonstrations have: without --retry-share it
    would train the recipe under another name, so the run stops first."""
    assert 'give --retry-share' in refused('gym_v2_warm_start', ['--mask-retry-mistake'], capsys)


@pytest.mark.parametrize('argv, message', [
    (['--warm', 'gym_v2_hint_recovery_3000', '--fresh-padding', '8'], 'trained on padded tasks'),
    (['--warm', 'gym_v2_hint_recovery_6000_pad6', '--moved-only'], 'chooses among the paddings'),
    (['--warm', 'gym_v2_hint_recovery_6000_pad6', '--bonus-at-bug'], 'give B'),
    (['--warm', 'gym_v2_hint_recovery_6000_pad6_copy4_check5_retry5'],
     'has no sharpening control'),
    (['--warm', 'gym_v2_hint_recovery_6000_pad6', '--refill', '8'], 'give --episode-budget'),
    (['--warm', 'gym_v2_hint_recovery_6000_pad6', '--refill', '8', '--episode-budget', '64',
      '--method', 'ppo'], 'nothing to refill'),
    (['--with-stretch'], 'adds placements'),
    (['--ppo-epochs', '1'], 'apply to --method ppo'),
    (['--lora-alpha', '8'], 'give R'),
    (['--pad-lines', '2'], 'follows from the records'),
])
def test_the_rl_lab_refuses_options_it_cannot_honour(capsys, argv, message):
    """gym_v2_rl stops before any training, with a message that names the problem, when asked
    for fresh paddings of a warm start that was never padded, for --moved-only alone, for
    --bonus-at-bug without a bonus, for dynamic sampling without a budget of episodes or with
    a method that learns from every group, to start from a warm start evaluated without its
    sharpening control (its record was written without --sweep, and the trained policy's
    comparison, made after the training, would fail), for options of PPO or LoRA without
    them, or for a padding other than the warm start's."""
    assert message in refused('gym_v2_rl', argv, capsys)


def test_the_rereading_labs_refuse_runs_their_fresh_record_did_not_evaluate(capsys):
    assert 'follows from the records' in refused(
        'gym_v2_failures', ['--fresh', 'gym_v2_rl_fresh_hg_rloo_lr3e-4_u300',
                            '--runs', 'gym_v2_rl_hg_rloo_lr3e-4_u300'], capsys)


def test_dynamic_sampling_steps_on_exactly_n_mixed_groups(monkeypatch, tmp_path):
    """gym_v2_rl --refill N plays rounds of --tasks-per-update groups until N have mixed rewards
    and takes each step on exactly those N groups (every episode of them with a non-zero RLOO
    advantage); the run stops at the first update after --episode-budget episodes. The
    evaluation after training is cut off: the loop is what is checked."""
    import gym_v2_rl
    import harness
    steps = []

    def step(model, optimizer, episodes, adv, grad_clip):
        rewards = [e.reward for e in episodes]
        distinct = [len(set(rewards[i:i + 4])) for i in range(0, len(rewards), 4)]
        steps.append((len(episodes), distinct, int((adv != 0).sum())))
        return 0.0, 0.0

    class Evaluated(Exception):
        pass

    def stop(*args, **kwargs):
        raise Evaluated

    monkeypatch.setattr(gym_v2_rl.arl, 'fast_grpo_step', step)
    monkeypatch.setattr(gym_v2_rl.ev, 'evaluate', stop)
    recipe, context = harness.prepare(gym_v2_rl.LAB, [
        '--warm', 'gym_v2_hint_recovery_6000_pad6_copy4', '--train-on', 'mixed',
        '--tasks-per-update', '4', '--refill', '2', '--episode-budget', '40',
        '--fresh-padding', '2', '--task-limit', '8', '--eval-tasks', '1',
        '--results', str(tmp_path), '--state', str(tmp_path)])
    context.reduced = True            # the task list without its validation: the same tasks
    with pytest.raises(Evaluated):
        gym_v2_rl.run(recipe, context)
    assert steps, 'no step was taken'
    for episodes, distinct, nonzero in steps:
        assert episodes == 8 and distinct == [2, 2] and nonzero == 8
    assert len(steps) <= 3      # 16 episodes per round: the budget of 40 ends it by update 3


def test_the_copying_lab_reads_the_line_digit_of_the_first_edit():
    """gym_v2_copying finds the first digit of the expert edit's line number (in the policy's
    tokens, not in an observation that quotes an edit), keeps only the tasks whose padding
    moved the line to a one-digit number, and reads the probabilities of the padded and the
    unpadded digit off the policy's next-token distribution, which it compares by hand."""
    tok = arl.CharTokenizer()
    rows = [r for v in range(8) for r in gym_v2.variant_rows(arl.TEMPLATES[2], 0, v)]
    tasks = [gym_v2.VariantTask(id=i, split='train', **r) for i, r in enumerate(rows)]
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    padded = arl.pad_tasks(tasks, 2, env)
    pairs = [(t, p) for t, p in zip(tasks, padded) if gym_v2_copying.moved(t, p)]
    assert pairs and all(p.line != t.line and p.line < 10 for t, p in pairs)
    assert not gym_v2_copying.moved(tasks[0], tasks[0])
    plain, pad = pairs[0]
    traj = arl.teacher_rollout(env, pad, tok, arl.expert_policy)
    at = gym_v2_copying.line_digit_position(traj.ids, traj.action_mask, tok)
    assert tok.decode(traj.ids[at:at + 1].tolist()) == str(pad.line)
    assert traj.action_mask[at] == 1
    assert tok.decode(traj.ids[at - 9:at].tolist()) == 'edit sub '
    model = arl.TinyAgent(vocab_size=tok.vocab_size, d_model=16, n_layers=1, n_heads=2).eval()
    (hinted, unpadded), = gym_v2_copying.hinted_or_unpadded(model, env, [(plain, pad)], tok)
    with torch.no_grad():
        probs = torch.softmax(model(traj.ids[None, :at])[0][0, -1], -1)
    assert hinted == pytest.approx(probs[tok.encode(str(pad.line))[0]].item())
    assert unpadded == pytest.approx(probs[tok.encode(str(plain.line))[0]].item())
    reader = arl.teacher_rollout(env, pad, tok, lambda task, history: '<call> read </call>')
    with pytest.raises(ValueError, match='no edit'):
        gym_v2_copying.line_digit_position(reader.ids, reader.action_mask, tok)


def test_the_copy_weight_falls_on_the_right_edits_line_and_old_text_only():
    """--copy-weight W puts W on the line digits and `<old>` text of an episode's last edit (in a
    recovery episode, the right edit, not the mistake before it) and leaves every other loss
    weight as the book's recipe has it; W = 1 is the recipe itself. --part-weight gives the
    line, the old text and the fix's `|new` text weights of their own."""
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    task = gym_v2.VariantTask(id=0, split='train', **gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)[0])
    envs = {'hint': env, 'plain': env}
    for recovery in (0.0, 1.0):
        (ids, plain), = gym_v2_warm_start.expert_examples([task], tok, envs, 1, recovery, 0)
        (same, weighted), = gym_v2_warm_start.expert_examples(
            [task], tok, envs, 1, recovery, 0, arl.part_weights(5))
        assert same == ids and set(plain) == {0, 1} and set(weighted) == {0, 1, 5}
        assert all(w == p if w != 5 else p == 1 for p, w in zip(plain, weighted))
        _, line, patch = task.fix.split(' ', 2)
        old, new = patch.split('|')
        assert tok.decode([i for i, w in zip(ids, weighted) if w == 5]) == line + old
        weights = arl.part_weights(5, [('old', 3), ('new', 2)])
        (_, parts), = gym_v2_warm_start.expert_examples([task], tok, envs, 1, recovery, 0, weights)
        assert [tok.decode([i for i, w in zip(ids, parts) if w == k]) for k in (5, 3, 2)] == \
            [line, old, '|' + new]
        assert all(w == p for p, w in zip(plain, parts) if w < 2)
        spans = arl.action_spans(torch.tensor(plain, dtype=torch.float))
        edits = [a for a, b in spans if tok.decode(ids[a:b]).startswith('<call> edit ')]
        assert len(edits) == 1 + int(recovery)    # the recovery episode's mistake stays at 1


def test_a_checked_demonstration_tests_the_right_edit_before_its_submit():
    """gym_v2.checked_policy puts one `test` between the right edit and the submit of the
    expert and of the recovery expert (not after the recovery's mistake), the check passes
    and the episode still solves; --check-share draws which demonstrations check from a
    stream of its own, so at share 0 the demonstrations are the recipe's, token for token,
    and at share 1 every one of them checks."""
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    rows = [r for v in range(3) for r in gym_v2.variant_rows(arl.TEMPLATES[0], 0, v)]
    tasks = [gym_v2.VariantTask(id=i, split='train', **r) for i, r in enumerate(rows)]
    task = tasks[0]
    for policy, plan in ((arl.expert_policy, ['read', 'test', 'edit', 'test', 'submit']),
                         (gym_v2.recovery_policy,
                          ['read', 'test', 'edit', 'edit', 'test', 'submit'])):
        _, reward, history = arl.run_episode(env, task, gym_v2.checked_policy(policy))
        assert reward == 1.0
        assert [arl.parse_call(a).tool for a, _ in history] == plan
        check = history[plan.index('submit') - 1][1]
        n = len(task.visible)
        assert 'FAIL' not in check and check.endswith(f'{n}/{n} passed')
    envs = {'hint': env, 'plain': env}
    recipe = gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0)
    assert gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0, check_share=0) == recipe
    checked = gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0, check_share=1)
    for (ids, _), (more, mask) in zip(recipe, checked):
        calls = [tok.decode(more[a:b]) for a, b in
                 arl.action_spans(torch.tensor(mask, dtype=torch.float))]
        assert calls[-2:] == ['<call> test </call>', '<call> submit </call>']
        assert len(more) > len(ids) and calls.count('<call> test </call>') == 2


def test_a_retry_demonstration_undoes_its_wrong_edit_and_then_fixes():
    """gym_v2.wrong_edit_candidates are edits on the bug's line that apply, are not the fix and
    are undone exactly by swapping their old and new text; gym_v2.wrong_edits keeps one whose
    visible tests fail; gym_v2.retry_policy plays the wrong edit, a failing check whose hint
    shows the edited line, the undo, the right edit and the submit, and solves. The checks lab
    reads it as a retry that undid and solved. --retry-share draws from a stream of its own:
    share 0 gives the recipe's demonstrations token for token."""
    import gym_v2_checks
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    rows = [r for v in range(3) for r in gym_v2.variant_rows(arl.TEMPLATES[0], 0, v)]
    tasks = [gym_v2.VariantTask(id=i, split='train', **r) for i, r in enumerate(rows)]
    for task in tasks:
        for patch in gym_v2.wrong_edit_candidates(task):
            assert patch.startswith('sub ')
            edit = gym_v2.as_edit(patch)
            assert edit.line == task.line and edit.old and edit.new != edit.old
            code, err = arl.apply_patch(task.code, task.line, edit.old, edit.new)
            assert not err and code != task.solution
            assert arl.apply_patch(code, task.line, edit.new, edit.old) == (task.code, '')
    wrong = gym_v2.wrong_edits(tasks, env)
    assert wrong and all(p in gym_v2.wrong_edit_candidates(t) for t in tasks
                         for p in [wrong.get(t.id)] if p)
    task = next(t for t in tasks if t.id in wrong)
    traj = arl.teacher_rollout(env, task, tok, gym_v2.retry_policy(wrong))
    assert traj.reward == 1.0 and gym_v2.solved(traj)
    assert [arl.parse_call(a).tool for a, _ in traj.turns] == \
        ['read', 'test', 'edit', 'test', 'edit', 'edit', 'submit']
    first, undo, fix = (arl.parse_call(traj.turns[i][0]) for i in (2, 4, 5))
    edited = arl.apply_patch(task.code, first.line, first.old, first.new)[0]
    assert f'at line {task.line}: {edited.splitlines()[task.line - 1].strip()}' \
        in traj.turns[3][1] and 'FAIL' in traj.turns[3][1]
    assert (undo.line, undo.old, undo.new) == (first.line, first.new, first.old)
    assert traj.turns[5][0] == f'<call> edit {task.fix} </call>'
    seen = gym_v2_checks.after_the_edit(traj)
    assert {k for k, v in seen.items() if v} == \
        {'checked', 'check_failed', 'retried', 'retry_undid', 'solved_after_retry'}
    plain = next(t for t in tasks if t.id not in wrong)   # it gets the expert's plan
    assert arl.run_episode(env, plain, gym_v2.retry_policy(wrong))[2] == \
        arl.run_episode(env, plain, arl.expert_policy)[2]
    envs = {'hint': env, 'plain': env}
    recipe = gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0)
    assert gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0, retry_share=0,
                                             wrong=wrong) == recipe
    retried = gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0, retry_share=1,
                                                wrong=wrong)
    for task, (ids, _), (more, mask) in zip(tasks, recipe, retried):
        calls = [tok.decode(more[a:b]) for a, b in
                 arl.action_spans(torch.tensor(mask, dtype=torch.float))]
        if task.id in wrong:
            assert calls[2] == f'<call> edit {wrong[task.id]} </call>' and len(calls) == 7
        else:
            assert more == ids
    masked = gym_v2_warm_start.expert_examples(tasks, tok, envs, 1, 0.5, 0, retry_share=1,
                                               wrong=wrong, mask_mistake=True)
    for task, (ids, mask), (same, left) in zip(tasks, retried, masked):
        assert same == ids
        dropped = [i for i, (m, k) in enumerate(zip(mask, left)) if m != k]
        assert all(left[i] == 0 for i in dropped)
        want = f'<call> edit {wrong[task.id]} </call>' if task.id in wrong else ''
        assert tok.decode([ids[i] for i in dropped]) == want


def test_the_edit_parts_split_the_expert_path_exactly():
    """arl.edit_parts names each token of an edit (line digits, old text, `|new`, the rest
    `calls`), every token of another call `calls`, and its parts' log-probabilities sum to the
    expert path's (Section 6.8's expert_path_logprob) on the same episode, at T=1 and below."""
    tok = arl.CharTokenizer()
    names = arl.edit_parts('<call> edit sub 12 return jj|return r4 </call>', tok)
    assert len(names) == len(tok.encode('<call> edit sub 12 return jj|return r4 </call>'))
    text = ''.join(n[0] for n in names)          # `<call>` is one token, ' edit sub ' ten
    assert text == 'c' * 11 + 'll' + 'c' + 'o' * 9 + 'n' * 10 + 'cc'
    assert set(arl.edit_parts('<call> test </call>', tok)) == {'calls'}
    with pytest.raises(ValueError, match='not an edit of the form'):
        arl.edit_parts('<call> edit sub x jj </call>', tok)
    rows = gym_v2.variant_rows(arl.TEMPLATES[2], 0, 0)
    task = gym_v2.VariantTask(id=0, split='train', **rows[0])
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    torch.manual_seed(0)
    model = arl.TinyAgent(vocab_size=tok.vocab_size, d_model=16, n_layers=1, n_heads=2).eval()
    parts = gym_v2_edit_parts.part_logprobs(model, env, task, tok)
    assert set(parts) == set(arl.EDIT_PART_NAMES) and all(v < 0 for v in parts.values())
    whole, = arl.expert_path_logprob(model, env, [task], tok)
    assert sum(parts.values()) == pytest.approx(whole, abs=1e-4)
    cooled = gym_v2_edit_parts.part_logprobs(model, env, task, tok, temperature=0.5)
    whole, = arl.expert_path_logprob(model, env, [task], tok, temperature=0.5)
    assert sum(cooled.values()) == pytest.approx(whole, abs=1e-4) and cooled != parts


def test_after_the_edit_reads_a_check_and_a_retry_by_hand():
    """gym_v2_checks.after_the_edit on scripted episodes: the expert that checks its right edit
    (a passing check), a wrong edit that applies (here a no-op) then a failing check then the
    right edit (a retry that solves), the same wrong edit checked and submitted at once, a wrong
    edit undone, repeated, or followed by an edit that does not apply, and the book's expert,
    which never checks."""
    import gym_v2_checks
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache={})
    task = gym_v2.VariantTask(id=0, split='train', **gym_v2.variant_rows(arl.TEMPLATES[0], 0, 0)[0])
    op, line, patch = task.fix.split(' ', 2)
    noop = f'{op} {line} {patch.partition("|")[0]}|{patch.partition("|")[0]}'

    def scripted(*plan):
        return lambda task, history: f'<call> {plan[min(len(history), len(plan) - 1)]} </call>'

    def seen(policy):
        kinds = gym_v2_checks.after_the_edit(arl.teacher_rollout(env, task, tok, policy))
        return {kind for kind, happened in kinds.items() if happened}

    assert seen(gym_v2.checked_policy(arl.expert_policy)) == {'checked'}
    assert seen(scripted('read', 'test', f'edit {noop}', 'test', f'edit {task.fix}', 'submit')) \
        == {'checked', 'check_failed', 'retried', 'solved_after_retry'}
    assert seen(scripted('read', 'test', f'edit {noop}', 'test', 'submit')) \
        == {'checked', 'check_failed', 'submitted_failing'}
    assert seen(arl.expert_policy) == set()
    old = patch.partition('|')[0]
    assert old == '>'                  # the wrong edits below must stay valid Python
    wrong, undo = f'{op} {line} {old}|{old}=', f'{op} {line} {old}=|{old}'   # > to >=: no fix
    failed = {'checked', 'check_failed', 'retried'}
    for retry, kind in ((undo, 'retry_undid'), (wrong, 'retry_repeated'),
                        (f'{op} {line} #@!|x', 'retry_not_applied')):
        assert seen(scripted('read', 'test', f'edit {wrong}', 'test', f'edit {retry}',
                             'submit')) == failed | {kind}


def test_the_rereading_labs_replay_each_policy_of_the_fresh_record_once(monkeypatch):
    """gym_v2_rl_fresh.replayed_policies lists what gym_v2_failures and gym_v2_checks replay:
    the warm start at T=1 and at its control temperature (once when the control is T=1), each
    run at T=1, with the per-task solve rates the replay must reproduce."""
    import gym_v2_rl_fresh as fr
    import harness
    context = harness.Context(fr.LAB)
    monkeypatch.setattr(context, 'load', lambda stem: SimpleNamespace(checkpoint=stem))
    monkeypatch.setattr(fr.arl, 'load_checkpoint', lambda path: f'policy {path}')
    rloo = arl.load_record('gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300',
                           harness.RESULTS)
    rows = fr.replayed_policies(rloo, 'heldout', 'warm', context)
    assert [(name, model, t) for name, model, t, _ in rows[:2]] == [
        ('warm t1', 'warm', 1.0), ('warm t0.1', 'warm', 0.1)]
    assert rows[1][3] == rloo.control('heldout')['t0.1']['per_task']
    assert [row[1] for row in rows[2:]] == [f'policy {stem}' for stem in rloo.runs]
    assert [row[3] for row in rows[2:]] == [t['t1']['per_task'] for t in rloo.trained('heldout')]
    check25 = arl.load_record('gym_v2_rl_fresh_hg_mixed_pad6_copy4_check25_fresh8_rloo_lr3e-4_u300',
                              harness.RESULTS)
    assert check25.versus('heldout')['control_temperature'] == 't1'
    assert [row[0] for row in fr.replayed_policies(check25, 'heldout', 'warm', context)] == [
        'warm t1', *check25.runs]
