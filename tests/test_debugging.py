"""Chapter 18: probe environments, the dashboard's invariants and the bug injector.

Every planted bug must be flagged by the probe the chapter names within four updates, and the
clean code must raise no flag on any probe; the injector must restore the clean functions. The
probes are checked against their closed forms: the policy token count per episode, the reward an
untrained policy sees on a known episode, and a bandit that a correct learner solves.
"""

from __future__ import annotations

import pytest
import torch

import agentrl as arl

CATCHES = {'mask_off_by_one': ('bandit', 0, 'sampler_gap'),
           'logp_misaligned': ('bandit', 0, 'sampler_gap'),
           'nan_log_zero': ('bandit', 0, 'not_finite'),
           'stale_sampler': ('bandit', 1, 'sampler_gap'),
           'wrong_action_mask': ('masked', 0, 'tokens'),
           'reward_on_pad': ('masked', 0, 'seen_gap'),
           'groups_crossed': ('groups', 0, 'constant_adv'),
           'empty_leak': ('groups', 0, 'constant_adv'),
           'baseline_dropped': ('groups', 0, 'constant_adv')}


@pytest.fixture(autouse=True)
def one_thread():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def test_every_bug_has_a_catching_probe():
    assert set(CATCHES) == set(arl.BUGS)


@pytest.mark.parametrize('bug', sorted(CATCHES))
def test_each_planted_bug_is_flagged(bug):
    kind, update, flag = CATCHES[bug]
    first, flags = arl.first_flag(kind, updates=4, bug=bug)
    assert first is not None and first <= update, (bug, first, flags)
    assert flag in flags, (bug, flags)


@pytest.mark.parametrize('kind', arl.PROBES)
def test_clean_code_raises_no_flag(kind):
    assert arl.first_flag(kind, updates=3) == (None, [])


def test_the_injector_restores_the_clean_functions():
    names = ('token_logprobs', 'build_action_mask', 'group_advantages', 'episode_advantages',
             'place_rewards', 'outcome_scores', 'rollout', 'rollout_batch')
    before = {name: getattr(arl, name) for name in names}
    for bug in arl.BUGS:
        with arl.inject_bug(bug):
            assert any(getattr(arl, name) is not before[name] for name in names), bug
        assert all(getattr(arl, name) is before[name] for name in names), bug
    with pytest.raises(ValueError):
        with arl.inject_bug('no_such_bug'):
            pass


def test_probe_episodes_have_their_closed_form_token_counts():
    tok = arl.ProbeTokenizer()
    model = arl.TinyAgent(vocab_size=tok.vocab_size, d_model=32, n_layers=1, n_heads=2, seed=0)
    env = arl.ProbeEnv(0)
    for kind in arl.PROBES:
        groups = arl.probe_groups(model, env, tok, kind, n_tasks=4, group=4, seed=1)
        tokens = [float(e.action_mask.sum()) for g in groups for e in g]
        assert sum(tokens) / len(tokens) == pytest.approx(arl.PROBE_TOKENS[kind] if kind != 'groups'
                                                          else 14 / 16), kind


def test_probe_rewards_follow_their_definitions():
    env = arl.ProbeEnv(0)
    task = arl.ProbeTask('delayed')
    env.reset(task)
    assert env.step('a')[1:3] == (0.0, False)
    assert env.step('c')[1:3] == (1.0, True)
    env.reset(arl.ProbeTask('groups', 'c', empty_first=True))
    assert env.step('')[1] == -1.0
    env.reset(arl.ProbeTask('groups', 'c'))
    assert env.step('<eos>')[1] == 1.0
    env.reset(arl.ProbeTask('cue', 'b'))
    assert env.step('b')[1] == 1.0


def test_a_correct_learner_solves_the_bandit():
    log = arl.run_probe('bandit', updates=12)
    assert sum(d['reward'] for d in log[-3:]) / 3 > 0.6
    assert log[-1]['entropy'] < log[0]['entropy']
