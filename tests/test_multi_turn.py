"""Chapter 12: truncation flags, collation of long multi-turn episodes, turn-level credit.

Two bugs practitioners met are reproduced as tests of the book's code: rows cut at a per-turn
length bound, which drops the later turns of a merged multi-turn row (rLLM pull request 575),
and a truncation flag lost between the engine and the trainer (OpenRLHF pull request 1327).
"""

from __future__ import annotations

import types

import pytest
import torch

import agentrl as arl


@pytest.fixture(scope="module")
def env():
    return arl.BugFixEnv(cache={})


def scripted(actions):
    """act() for play_episode that plays the given action texts, one per turn."""
    def act(context, turns, tok=arl.CharTokenizer()):
        ids = tok.encode(actions[min(len(turns), len(actions) - 1)])
        return ids, [-0.5] * len(ids)
    return act


def test_collate_keeps_every_turn_of_a_long_episode(tok, tasks, env):
    """A merged row longer than any per-turn bound keeps all its policy tokens and log-probs."""
    long = arl.play_episode(env, tasks[0], tok, scripted(['<call> read </call>'] * 8), max_turns=8)
    short = arl.play_episode(env, tasks[0], tok, scripted(['<call> submit </call>']), max_turns=8)
    assert len(long.turns) == 8 and len(short.turns) == 1
    ids, mask, logp, real = arl.collate_trajectories([short, long])
    for b, t in enumerate([short, long]):
        assert int(mask[b].sum()) == int(t.action_mask.sum())
        assert torch.equal(ids[b, :len(t.ids)], t.ids)
        assert torch.equal(logp[b, :len(t.ids) - 1], t.logp)
    spans = arl.action_spans(mask[1])
    assert len(spans) == 8 and spans[-1][1] > 48          # the last turn lies past any call cap
    # the rLLM bug: cutting the merged row at a per-turn bound drops the later turns
    first = spans[0][0]
    assert len([s for s in spans if s[1] <= first + 48]) < 8


def test_truncation_flags_turn_cap_and_token_cap(tok, tasks, env):
    capped = arl.play_episode(env, tasks[0], tok, scripted(['<call> read </call>']), max_turns=3)
    assert arl.truncation_flags(capped, tok) == {'turn_cap': True, 'cut_turns': []}
    cut = arl.play_episode(env, tasks[0], tok,
                           scripted(['<call> edit sub 2', '<call> submit </call>']), max_turns=8)
    flags = arl.truncation_flags(cut, tok)
    assert flags == {'turn_cap': False, 'cut_turns': [0]}
    assert cut.turns[0][1].startswith('error:')


def test_flags_survive_batched_sampling(tok, tasks, env):
    """The OpenRLHF bug: a length-cut rollout must not come back looking complete."""
    model = arl.TinyAgent(vocab_size=tok.vocab_size, seed=0)
    episodes = arl.collect_episodes(model, env, tasks[:2], tok, seed=0, max_turns=2,
                                    max_action_tokens=4)
    for e in episodes:
        flags = arl.truncation_flags(e, tok)
        ends = [int(e.ids[end - 1]) for _, end in arl.action_spans(e.action_mask)]
        assert flags['cut_turns'] == [k for k, last in enumerate(ends)
                                      if last not in (tok.end_call_id, tok.eos_id)]
        assert flags['turn_cap'] == (not e.done)
    assert any(arl.truncation_flags(e, tok)['cut_turns'] for e in episodes)


def test_state_env_replays_the_context(tok, tasks, env):
    task = tasks[0]
    actions = ['<call> read </call>', '<call> test </call>']
    played = arl.play_episode(env, task, tok, scripted(actions + ['<call> submit </call>']))
    text = arl.StateEnv(env).reset((task, actions))
    prefix = [tok.bos_id] + tok.encode(text + '\n')
    assert played.ids[:len(prefix)].tolist() == prefix
    with pytest.raises(ValueError):
        arl.StateEnv(env).reset((task, ['<call> submit </call>']))


def episode(actions, reward):
    return types.SimpleNamespace(turns=[(a, '') for a in actions], reward=reward)


def test_credit_functions_on_a_hand_built_group():
    group = [episode(['r', 't', 'e1', 's'], 1.0), episode(['r', 't', 'e2', 's'], 0.0),
             episode(['r', 't', 'e2', 's'], 0.0), episode(['r', 't', 'e1', 's'], 1.0)]
    rloo = arl.rloo_turn_credit(group)
    assert rloo[0] == [pytest.approx(2 / 3)] * 4 and rloo[1] == [pytest.approx(-2 / 3)] * 4
    step = arl.gigpo_turn_credit(group, episode_level=False)
    assert step[0] == [0.5, 0.5, 0.5, 0.0]       # after the edits, each step group is uniform
    both = arl.gigpo_turn_credit(group)
    assert both[1][0] == pytest.approx(-2 / 3 - 0.5)
    values = {(): 0.5, ('r',): 0.5, ('r', 't'): 0.5, ('r', 't', 'e1'): 1.0,
              ('r', 't', 'e2'): 0.0}
    assert arl.true_turn_advantages(group[0], values) == [0.0, 0.0, 0.5, 0.0]
    assert arl.true_turn_advantages(group[1], values) == [0.0, 0.0, -0.5, 0.0]
    states = arl.visited_states('task', group)
    assert set(states) == set(values)


def test_cluster_bootstrap_corr():
    clusters = [[(float(i), float(i) + 0.1 * (-1) ** j) for j in range(3)] for i in range(6)]
    r, low, high = arl.cluster_bootstrap_corr(clusters, resamples=200)
    assert 0.99 < r <= 1.0 and low <= r <= high
    assert arl.pearson([1, 1, 1], [1, 2, 3]) != arl.pearson([1, 1, 1], [1, 2, 3])   # nan


def test_the_turn_credit_record_scores_as_the_chapter_prints():
    """Section 12.4: on the lab's record, every credit correlates positively and moderately with
    the truth, the methods' intervals overlap, and the second truth estimate agrees best."""
    record = arl.load_record('gym_v2_turn_credit')
    groups = [arl.replayed_group(t) for t in record.results['tasks']]
    scores = {}
    for name, method in (('rloo', arl.rloo_turn_credit), ('gigpo', arl.gigpo_turn_credit),
                         ('truth2', None)):
        clusters = []
        for group, (v1, v2) in groups:
            truth = [a for e in group for a in arl.true_turn_advantages(e, v1)]
            est = ([a for e in group for a in arl.true_turn_advantages(e, v2)] if method is None
                   else [a for turns in method(group) for a in turns])
            clusters.append(list(zip(est, truth)))
        scores[name] = arl.cluster_bootstrap_corr(clusters)
    for name in ('rloo', 'gigpo'):
        r, low, high = scores[name]
        assert 0.2 < r < scores['truth2'][0]
    assert scores['rloo'][2] > scores['gigpo'][1] and scores['gigpo'][2] > scores['rloo'][1]
