"""The arms of single labs of book/labs, run reduced, and the records Part II quotes.

An RL run stopped halfway and resumed must end exactly where an uninterrupted run ends, and so must
the warm-start labs' training loop (warm_start.imitate, which is train_next_token step for step);
each arm a chapter measures (a reward, recovery demonstrations, rejection sampling and DPO,
distillation, GiGPO, progress, PPO's sanity check) runs reduced and writes a record that reads
back to its recipe; the sanity checks' committed records say what Section 18.5 says.
Run: .venv/bin/python -m pytest tests/test_lab_arms.py -q
"""

import json
import math

import pytest
import torch

from lab_runs import WARM, run_lab, without_seconds

import agentrl as arl  # noqa: E402
import harness  # noqa: E402


def test_a_resumed_rl_run_ends_where_an_uninterrupted_one_does(tmp_path):
    """Stop after update 2 (its state saved), resume: the record and the checkpoint are those of
    the run that was never stopped, bit for bit (PPO: weights, value head, Adam, the task and
    padding draws and torch's generator all carry over)."""
    name, straight, halves = 'gym_v2_rl', tmp_path / 'straight', tmp_path / 'halves'
    common = ['--reduced', '--save-every', '1', '--warm', WARM, '--train-on', 'mixed',
              '--fresh-padding', '2', '--method', 'ppo', '--updates', '3']
    path = run_lab(name, [*common, '--results', str(straight), '--state', str(tmp_path / 's1')])
    stop = ['--results', str(halves), '--state', str(tmp_path / 's2'), '--stop-after', '2']
    assert run_lab(name, [*common, *stop]) is None
    assert (tmp_path / 's2' / path.stem / 'state.pt').exists()
    resumed = run_lab(name, [*common, '--results', str(halves), '--state', str(tmp_path / 's2'),
                             '--resume'])
    assert resumed.name == path.name
    a, b = (json.loads(p.read_text()) for p in (path, resumed))
    assert without_seconds(a['results']) == without_seconds(b['results'])
    assert a['recipe'] == b['recipe']
    x, y = (torch.load(p.with_suffix('.pt'), weights_only=True)['state_dict']
            for p in (path, resumed))
    assert all(torch.equal(x[k], y[k]) for k in x)


def test_imitate_is_train_next_token_step_for_step_even_when_resumed(tmp_path):
    """warm_start.imitate, the warm-start labs' training loop, gives train_next_token's losses
    and weights exactly, also when it stops after step 2 and resumes from its saved state."""
    import warm_start
    tok = arl.CharTokenizer()
    with arl.SandboxPool() as pool:
        env = arl.BugFixEnv(cache={}, sandbox=pool.run)
        examples = warm_start.expert_examples(arl.make_tasks()[:6], tok, env)
    config = dict(warm_start.MODEL_CONFIG, d_model=16, n_layers=1, n_heads=2)
    recipe = warm_start.WarmStartRecipe(steps=5)
    straight = arl.TinyAgent(**config)
    want = arl.train_next_token(straight, examples, steps=5, lr=5e-3, batch_size=4, seed=3)
    lab = harness.lab('warm_start')
    for stop_after in (0, 2):
        model = arl.TinyAgent(**config)
        context = harness.Context(lab, 'imitate', tmp_path, tmp_path, stop_after=stop_after)
        if stop_after:
            with pytest.raises(harness.Stopped):
                warm_start.imitate(model, examples, 5, 5e-3, 4, 3, context, recipe)
            model = arl.TinyAgent(**dict(config, seed=1))        # the state, not these, counts
            context = harness.Context(lab, 'imitate', tmp_path, tmp_path, resume=True)
        got = warm_start.imitate(model, examples, 5, 5e-3, 4, 3, context, recipe)
        assert got == want
        assert all(torch.equal(p, q) for p, q in zip(straight.parameters(), model.parameters()))


def test_the_rl_lab_trains_on_a_chosen_reward_and_logs_the_gold_one(tmp_path):
    """gym_v2_rl --reward random (Chapter 11's random-reward control; partial and visible run
    the same code path): the run is named by its reward, RL's rollouts are paid by
    agentrl.RewardEnv, and the log keeps `solved`, the share of episodes that passed every
    hidden test, beside the reward paid. A reward other than the binary one refuses a line-edit
    bonus on top of it."""
    path = run_lab('gym_v2_rl', ['--reduced', '--warm', WARM, '--train-on', 'mixed',
                                 '--fresh-padding', '2', '--reward', 'random',
                                 '--results', str(tmp_path), '--state', str(tmp_path / 's')])
    record = json.loads(path.read_text())
    assert 'rewardrandom' in path.stem and record['recipe']['reward'] == 'random'
    assert all({'reward', 'solved'} <= set(step) for step in record['results']['log'])
    import gym_v2_rl
    with pytest.raises(SystemExit):
        harness.prepare(gym_v2_rl.LAB, ['--warm', WARM, '--reward', 'partial',
                                        '--line-edit-bonus', '0.5'])


def test_recovery_demonstrations_with_the_mistake_masked_train_the_experts_actions(tmp_path):
    """--mask-recovery-mistake: a recovery demonstration's targets are exactly the expert's
    actions (its non-applying edit stays in the context, out of the loss); unmasked, the mistake
    is a target too. The option needs recovery demonstrations, and a reduced run of it writes a
    record that reads back to its recipe."""
    import gym_v2
    import gym_v2_warm_start as gws
    tok = arl.CharTokenizer()
    env = arl.BugFixEnv(cache={})
    tasks = [t for t in arl.make_tasks() if t.split == 'train' and gym_v2.wrong_line_patch(t)][:3]
    envs = {'plain': env, 'hint': env}
    expert = gws.expert_examples(tasks, tok, envs, 0.0, 0.0, seed=0)
    masked = gws.expert_examples(tasks, tok, envs, 0.0, 1.0, seed=0, mask_recovery=True)
    plain = gws.expert_examples(tasks, tok, envs, 0.0, 1.0, seed=0)
    for (e_ids, e_mask), (ids, mask), (_, p_mask) in zip(expert, masked, plain):
        assert len(ids) > len(e_ids)                                  # the mistake and its error
        assert [i for i, m in zip(ids, mask) if m] == [i for i, m in zip(e_ids, e_mask) if m]
        assert sum(p_mask) > sum(mask)
    lab = harness.lab('gym_v2_warm_start')
    with pytest.raises(harness.RecipeError, match='--recovery-share'):
        lab.recipe(mask_recovery_mistake=True, recovery_share=0.0).check(None)
    path = run_lab('gym_v2_warm_start', ['--reduced', '--results', str(tmp_path), '--state',
                                         str(tmp_path / 'runs'), '--mask-recovery-mistake'])
    record = arl.load_record(path.stem, tmp_path)
    assert record.recipe['mask_recovery_mistake'] is True
    assert path.stem == harness.run_name(lab, harness.recipe_of(record))


def test_rejection_sampling_control_and_dpo_arms_run_reduced(tmp_path):
    """gym_v2_rl's --method random_kept keeps as many episodes as succeeded, drawn whatever their
    reward (the control of --method positive at equal kept episodes); --method dpo steps on one
    (best, worst) pair per mixed group against the warm start. Both run reduced and write a
    record that reads back to its recipe."""
    import random as random_module
    import gym_v2_rl
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]])
    picked = gym_v2_rl.advantages(rewards, 'random_kept', random_module.Random(3))
    assert picked.sum() == rewards.sum() and set(picked.flatten().tolist()) <= {0.0, 1.0}
    assert torch.equal(picked, gym_v2_rl.advantages(rewards, 'random_kept', random_module.Random(3)))
    lab = harness.lab('gym_v2_rl')
    for method in ('random_kept', 'dpo'):
        path = run_lab('gym_v2_rl', ['--reduced', '--results', str(tmp_path), '--state',
                                     str(tmp_path / 'runs'), '--warm', WARM, '--train-on',
                                     'mixed', '--method', method, '--lr', '3e-4'])
        record = arl.load_record(path.stem, tmp_path)
        assert record.recipe['method'] == method
        assert path.stem == harness.run_name(lab, harness.recipe_of(record))


def test_the_distillation_arms_run_reduced(tmp_path):
    """Chapter 16's arms: gym_v2_rl --method onpolicy_distill (per-token advantages from a
    teacher's log-probabilities; it needs --teacher) and --method dagger (the scripted expert
    labels every turn played) run reduced and write records that read back to their recipes;
    a teacher without the method, or the method without a teacher, is refused."""
    import gym_v2_rl
    lab = harness.lab('gym_v2_rl')
    common = ['--reduced', '--results', str(tmp_path), '--state', str(tmp_path / 'runs'),
              '--warm', 'gym_v2_hint_recovery_3000', '--train-on', 'heldout-groups',
              '--lr', '3e-4']
    for method, extra in (('onpolicy_distill', ['--teacher', 'gym_v2_rl_hg_rloo_lr3e-4']),
                          ('dagger', [])):
        path = run_lab('gym_v2_rl', common + ['--method', method] + extra)
        record = arl.load_record(path.stem, tmp_path)
        assert record.recipe['method'] == method
        assert path.stem == harness.run_name(lab, harness.recipe_of(record))
        log = [row for row in record.results['log'] if 'grad_norm' in row]
        assert log, method
        if method == 'onpolicy_distill':
            assert all(row['reverse_kl'] >= 0 for row in log)
            assert 'from-rl_hg_rloo_lr3e-4' in path.stem
        else:
            assert all(row['examples'] > 0 for row in log)
    for argv in (['--warm', 'gym_v2_hint_recovery_3000', '--teacher', 'gym_v2_rl_hg_rloo_lr3e-4'],
                 ['--warm', 'gym_v2_hint_recovery_3000', '--method', 'onpolicy_distill']):
        with pytest.raises(SystemExit):
            harness.prepare(gym_v2_rl.LAB, argv)


def test_the_gigpo_arm_runs_reduced_with_per_turn_weights(tmp_path):
    """Chapter 12's GiGPO arm: gym_v2_rl --method gigpo trains on per-turn credit."""
    path = run_lab('gym_v2_rl', ['--reduced', '--results', str(tmp_path), '--state',
                                 str(tmp_path / 'runs'), '--warm', WARM, '--train-on', 'mixed',
                                 '--fresh-padding', '2', '--lr', '3e-4', '--method', 'gigpo'])
    record = json.loads(path.read_text())
    assert record['recipe']['method'] == 'gigpo'
    assert any('grad_norm' in row for row in record['results']['log'])
    rl = harness.lab('gym_v2_rl')
    import gym_v2_rl
    tok = arl.CharTokenizer()
    e = arl.play_episode(arl.BugFixEnv(cache={}), arl.make_tasks(seed=0)[0], tok,
                         lambda context, turns: (tok.encode('<call> read </call>'), [0.0] * 8),
                         max_turns=2)
    w = gym_v2_rl.turn_weights([e], [[1.0, -2.0]])
    spans = arl.action_spans(e.action_mask)
    assert w[0, spans[0][0] - 1:spans[0][1] - 1].eq(1.0).all()
    assert w[0, spans[1][0] - 1:spans[1][1] - 1].eq(-2.0).all()
    lengths = [end - start for start, end in spans]
    assert w.abs().sum() == lengths[0] + 2 * lengths[1]
    assert rl.name == 'gym_v2_rl'


def test_the_progress_arm_runs_reduced_and_counts_its_continuations(tmp_path):
    """Section 20.2's process-reward arm: gym_v2_rl --method progress weights each turn by its
    Monte Carlo progress under the policy being trained, keeps every group, and logs the
    continuations it sampled; --credit-samples belongs to it alone."""
    path = run_lab('gym_v2_rl', ['--reduced', '--results', str(tmp_path), '--state',
                                 str(tmp_path / 'runs'), '--warm', WARM, '--train-on', 'mixed',
                                 '--lr', '3e-4', '--method', 'progress', '--credit-samples', '2'])
    record = json.loads(path.read_text())
    assert record['recipe']['method'] == 'progress' and record['recipe']['credit_samples'] == 2
    log = record['results']['log']
    assert all(row['continuations'] > 0 and row['continuations'] % 2 == 0 for row in log)
    assert any('grad_norm' in row for row in log)
    import gym_v2_rl
    for argv in (['--credit-samples', '2'], ['--method', 'progress', '--refill', '4']):
        with pytest.raises(SystemExit):
            harness.prepare(gym_v2_rl.LAB, ['--warm', WARM] + argv)


def test_the_sanity_check_and_the_dashboard_run_reduced(tmp_path):
    """gym_v2_rl --train-on perfectible (the sanity check of 2510.26788) trains on the train tasks
    the warm start solved 20-80% of the time, evaluates start and end on them at the same seeds
    and records their paired difference; --dashboard adds entropy, KL to the warm start (exact
    and k3) and the explained variances to the log, and changes nothing else."""
    import gym_v2_rl
    lab = harness.lab('gym_v2_rl')
    rates = arl.load_record(WARM).metrics['hint']['train']['t1']['per_task']
    low, high = gym_v2_rl.PERFECTIBLE
    path = run_lab('gym_v2_rl', ['--reduced', '--results', str(tmp_path), '--state',
                                 str(tmp_path / 'runs'), '--warm', WARM, '--train-on',
                                 'perfectible', '--dashboard', '--lr', '3e-4'])
    record = arl.load_record(path.stem, tmp_path)
    assert path.stem == harness.run_name(lab, harness.recipe_of(record))
    sanity = record.results['sanity']
    assert 0 < len(sanity['task_ids']) <= 4 and any(low <= p <= high for p in rates)
    start, end = sanity['start']['per_task'], sanity['end']['per_task']
    assert len(start) == len(end) == len(sanity['task_ids'])
    assert sanity['end_minus_start'][0] == pytest.approx(sum(end) / len(end) - sum(start) / len(start))
    for row in record.log:
        assert row['entropy'] > 0 and row['policy_tokens'] > 0
        assert row['kl_start'] >= 0 and math.isfinite(row['kl_start_k3'])
    assert record.log[0]['kl_start'] < 1e-6    # the first batch is scored by the warm start itself
    # the dashboard on PPO: the value head's explained variance; plain runs are unchanged
    scores = {}
    for extra in ([], ['--dashboard']):
        out = tmp_path / ('dash' if extra else 'plain')
        p = run_lab('gym_v2_rl', ['--reduced', '--results', str(out), '--state', str(out / 'runs'),
                                  '--warm', WARM, '--train-on', 'mixed', '--method', 'ppo',
                                  '--lr', '3e-4'] + extra)
        scores[bool(extra)] = json.loads(p.read_text())['results']
    assert all('value_ev' in row for row in scores[True]['log'])
    same = [{k: row[k] for k in plain} for row, plain in zip(scores[True]['log'],
                                                             scores[False]['log'])]
    assert same == scores[False]['log']
    assert scores[True]['metrics'] == scores[False]['metrics']
    with pytest.raises(SystemExit):
        harness.prepare(lab, ['--warm', WARM, '--train-on', 'perfectible', '--fresh-padding', '2'])


def test_explained_variance_and_baseline():
    """dashboard_stats' explained variance: 1 for an exact prediction, 0 for the mean, None for a
    constant target; RLOO's leave-one-out baseline explains none of a group's own spread."""
    import gym_v2_rl
    t = torch.tensor([0.0, 1.0, 1.0, 0.0])
    assert gym_v2_rl.explained_variance(t, t.clone()) == pytest.approx(1.0)
    assert gym_v2_rl.explained_variance(t, torch.full_like(t, 0.5)) == pytest.approx(0.0)
    assert gym_v2_rl.explained_variance(torch.ones(3), torch.zeros(3)) is None


SANITY = [f'gym_v2_rl_hint_recovery_6000_pad6_copy4_perfectible_dash_lr3e-4_u40{s}'
          for s in ('', '_s1', '_s2')]


def test_the_sanity_check_records_say_what_section_18_5_says():
    """Section 18.5's reading of the sanity check's three records: on every seed the training
    accuracy rises by more than the smallest change the evaluation detects, about twice it, and by
    more than half of it within the first ten updates; averaged over the
    seeds, from the first ten updates to the last ten, the constant groups grow, the entropy falls
    and the KL to the warm start grows; k3 runs below the exact KL; the variance RLOO's baseline
    explains is below zero."""
    runs = [arl.load_record(stem) for stem in SANITY]
    for run in runs:
        s = run.results['sanity']
        diff, se = s['end_minus_start']
        assert diff > 1.5 * arl.min_detectable_effect(se)
        assert s['end']['rate'] > s['start']['rate']

    def mean(key, rows):
        values = [r[key] if key != 'constant' else 1 - r['groups'] / run.results['rl_tasks']
                  for run in runs for r in run.log[rows] if r.get(key, 0) is not None]
        return sum(values) / len(values)
    first, last = slice(0, 10), slice(-10, None)
    start = sum(run.results['sanity']['start']['rate'] for run in runs) / len(runs)
    assert mean('solved', first) - start > (mean('solved', last) - start) / 2
    assert mean('constant', last) > mean('constant', first)
    assert mean('entropy', last) < mean('entropy', first)
    assert mean('kl_start', last) > mean('kl_start', first)
    for rows in (first, last):
        assert mean('kl_start_k3', rows) < mean('kl_start', rows)
        assert mean('baseline_ev', rows) < 0


PPO_SANITY = [f'gym_v2_rl_hint_recovery_6000_pad6_copy4_perfectible_ppo_dash_lr3e-4_u40{s}'
              for s in ('', '_s1', '_s2')]


def test_the_ppo_sanity_check_records_say_what_section_18_5_says():
    """Section 18.5's reading of PPO's sanity check: on every seed the accuracy rises by more than
    one and a half times the smallest detectable change; the value head's explained variance has
    a median within 0.05 of zero and exceeds 0.5 in at most a few updates, while the value loss
    falls and starts above the reward's variance; the KL to the warm start is several times
    RLOO's in the first and last ten updates while the entropy falls by under a tenth."""
    runs = [arl.load_record(stem) for stem in PPO_SANITY]
    rloo = [arl.load_record(stem) for stem in SANITY]
    for run in runs:
        s = run.results['sanity']
        diff, se = s['end_minus_start']
        assert diff > 1.5 * arl.min_detectable_effect(se)

    def mean(records, key, rows):
        values = [r[key] for run in records for r in run.log[rows] if r.get(key) is not None]
        return sum(values) / len(values)
    first, last = slice(0, 10), slice(-10, None)
    explained = sorted(r['value_ev'] for run in runs for r in run.log if r['value_ev'] is not None)
    assert abs(explained[len(explained) // 2]) < 0.05
    assert sum(v > 0.5 for v in explained) <= 3
    assert mean(runs, 'value_loss', last) < mean(runs, 'value_loss', first)
    variance = [r['reward_std'] ** 2 for run in runs for r in run.log[first]]
    assert mean(runs, 'value_loss', first) > sum(variance) / len(variance)
    for rows in (first, last):
        assert mean(runs, 'kl_start', rows) > 5 * mean(rloo, 'kl_start', rows)
    assert mean(runs, 'entropy', last) > 0.9 * mean(runs, 'entropy', first)
