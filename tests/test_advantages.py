"""Chapter 7: baselines, leave-one-out advantages, GAE, the value head, pg_step and the RLOO lab.

These tests import the generated package (``scripts/build_library.py``). Every saved function
is checked against an independent reference written here: plain loops over groups and time
steps, exact enumeration of small problems, and parameter updates compared with Chapter 6's
``reinforce_step``. The lab tests read the committed records under ``book/labs/results`` through
the book's reader (``lab_results.load_lab``, that is ``agentrl.load_record``): a missing record
fails the test that needs it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
import torch

import agentrl as arl
from lab_results import load_lab



# ---- rloo_advantages -----------------------------------------------------------------------

def loo_reference(rewards):
    """r_i minus the mean of the other rewards of its row, as explicit loops."""
    out = []
    for row in rewards.tolist():
        G = len(row)
        out.append([r - (sum(row) - r) / (G - 1) for r in row])
    return torch.tensor(out)


@pytest.mark.parametrize("G", [2, 3, 4, 7])
def test_rloo_matches_loops(G):
    gen = torch.Generator().manual_seed(G)
    rewards = torch.randn(5, G, generator=gen)
    got = arl.rloo_advantages(rewards)
    assert got.shape == (5, G)
    assert torch.allclose(got, loo_reference(rewards), atol=1e-6)
    # proportional to the group-centred rewards, and each row sums to zero
    assert torch.allclose(got, G / (G - 1) * (rewards - rewards.mean(-1, keepdim=True)), atol=1e-6)
    assert torch.allclose(got.sum(-1), torch.zeros(5), atol=1e-5)


def test_rloo_binary_groups_and_edge_cases():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 1.0],
                            [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    got = arl.rloo_advantages(rewards)
    third = 1.0 / 3.0
    assert torch.allclose(got[0], torch.tensor([1.0, -third, -third, -third]))
    assert torch.allclose(got[1], torch.tensor([third, third, -1.0, third]))
    assert torch.equal(got[2], torch.zeros(4)) and torch.equal(got[3], torch.zeros(4))
    # G = 2: each episode's baseline is the other one
    pair = arl.rloo_advantages(torch.tensor([[1.0, 0.0], [0.3, 0.7]]))
    assert torch.allclose(pair, torch.tensor([[1.0, -1.0], [-0.4, 0.4]]))
    # integer rewards are accepted; a group of one has no baseline
    assert arl.rloo_advantages(torch.tensor([[1, 0]])).dtype == torch.float32
    with pytest.raises(ValueError):
        arl.rloo_advantages(torch.ones(3, 1))


@pytest.mark.parametrize("G", [2, 3, 4])
def test_rloo_unbiased_and_group_mean_biased_by_enumeration(G):
    """On a 4-armed softmax bandit, enumerate every group of G arms: the leave-one-out estimate
    has expectation grad J exactly; the mean including the episode itself, (G-1)/G grad J."""
    r = torch.tensor([0.0, 0.2, 1.0, 0.5])
    theta = torch.tensor([0.5, 1.0, -0.5, 0.0], requires_grad=True)
    pi = theta.softmax(-1)
    grad_J, = torch.autograd.grad((pi * r).sum(), theta)          # autograd of the exact objective
    pi = pi.detach()
    arms = torch.tensor(list(itertools.product(range(4), repeat=G)))
    prob = pi[arms].prod(-1)
    score = torch.eye(4)[arms] - pi                                 # grad log softmax
    rw = r[arms]
    loo = (arl.rloo_advantages(rw)[..., None] * score).mean(1)
    incl = ((rw - rw.mean(-1, keepdim=True))[..., None] * score).mean(1)
    assert torch.allclose((prob[:, None] * loo).sum(0), grad_J, atol=1e-6)
    assert torch.allclose((prob[:, None] * incl).sum(0), (G - 1) / G * grad_J, atol=1e-6)


# ---- gae -----------------------------------------------------------------------------------

def gae_reference(rewards, values, mask, gamma, lam):
    """Direct sum of discounted TD errors over each row's policy positions."""
    adv = torch.zeros_like(values)
    for b in range(values.shape[0]):
        pos = [i for i in range(values.shape[1]) if mask[b, i] > 0]
        v = [float(values[b, i]) for i in pos] + [0.0]
        d = [float(rewards[b, i]) + gamma * v[k + 1] - v[k] for k, i in enumerate(pos)]
        for k, i in enumerate(pos):
            adv[b, i] = sum((gamma * lam) ** (j - k) * d[j] for j in range(k, len(pos)))
    return adv


@pytest.mark.parametrize("gamma,lam", [(1.0, 0.95), (0.9, 0.8), (1.0, 0.0), (1.0, 1.0),
                                       (0.99, 0.5), (0.5, 1.0)])
def test_gae_matches_direct_sum(gamma, lam):
    gen = torch.Generator().manual_seed(1)
    rewards = torch.randn(4, 11, generator=gen)
    values = torch.randn(4, 11, generator=gen)
    mask = (torch.rand(4, 11, generator=gen) > 0.45).float()
    mask[2] = 0.0                                                  # a row with no policy token
    mask[3] = torch.tensor([0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1.0])     # actions with gaps
    adv, ret = arl.gae(rewards, values, mask, gamma, lam)
    assert adv.shape == ret.shape == (4, 11)
    assert torch.allclose(adv, gae_reference(rewards, values, mask, gamma, lam), atol=1e-5)
    assert torch.allclose(ret, (adv + values) * mask, atol=1e-6)
    assert torch.equal(adv[mask == 0], torch.zeros(int((mask == 0).sum())))


def test_gae_limits_and_skipping():
    gen = torch.Generator().manual_seed(2)
    rewards = torch.randn(3, 9, generator=gen)
    values = torch.randn(3, 9, generator=gen)
    mask = torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0],
                         [1, 1, 1, 1, 1, 1, 1, 1, 1],
                         [0, 0, 1, 0, 1, 0, 0, 0, 1]]).float()
    gamma = 0.9
    adv0, _ = arl.gae(rewards, values, mask, gamma, 0.0)
    adv1, ret1 = arl.gae(rewards, values, mask, gamma, 1.0)
    for b in range(3):
        pos = mask[b].nonzero().flatten()
        v, r = values[b, pos], rewards[b, pos]
        v_next = torch.cat([v[1:], torch.zeros(1)])
        assert torch.allclose(adv0[b, pos], r + gamma * v_next - v, atol=1e-6)
        g = torch.zeros(len(pos))
        running = 0.0
        for k in reversed(range(len(pos))):
            running = float(r[k]) + gamma * running
            g[k] = running
        assert torch.allclose(adv1[b, pos], g - v, atol=1e-5)
        assert torch.allclose(ret1[b, pos], g, atol=1e-5)     # lambda = 1: returns = MC returns
    # rewards and values on observation positions are ignored
    noisy_r, noisy_v = rewards.clone(), values.clone()
    noisy_r[mask == 0] = 100.0
    noisy_v[mask == 0] = -100.0
    assert torch.allclose(arl.gae(noisy_r, noisy_v, mask, gamma, 0.7)[0],
                          arl.gae(rewards, values, mask, gamma, 0.7)[0], atol=1e-6)
    # inserting observation positions (mask 0) changes nothing: discounting counts policy tokens
    wide_r, wide_v, wide_m = (torch.zeros(3, 18) for _ in range(3))
    wide_r[:, ::2], wide_v[:, ::2], wide_m[:, ::2] = rewards, values, mask
    assert torch.allclose(arl.gae(wide_r, wide_v, wide_m, gamma, 0.7)[0][:, ::2],
                          arl.gae(rewards, values, mask, gamma, 0.7)[0], atol=1e-6)


def test_gae_outputs_are_constants():
    values = torch.randn(2, 5, requires_grad=True)
    adv, ret = arl.gae(torch.zeros(2, 5), values, torch.ones(2, 5))
    assert not adv.requires_grad and not ret.requires_grad


def test_gae_terminal_reward_decays_by_lambda():
    """With V = 0 and one terminal reward, the advantage k policy tokens before the end is lam^k."""
    mask = torch.tensor([[0, 1, 1, 0, 1, 1, 1.0]])
    rewards = torch.zeros(1, 7)
    rewards[0, 6] = 1.0
    adv, _ = arl.gae(rewards, torch.zeros(1, 7), mask, 1.0, 0.9)
    assert torch.allclose(adv[0, [1, 2, 4, 5, 6]], 0.9 ** torch.arange(4, -1, -1.0), atol=1e-6)


# ---- ValueHead -----------------------------------------------------------------------------

def small_agent(seed=0):
    return arl.TinyAgent(vocab_size=101, d_model=32, n_layers=2, n_heads=4, seed=seed)


def test_value_head_shares_the_trunk():
    policy = small_agent()
    critic = arl.ValueHead(policy)
    assert critic.policy is policy
    ids = torch.randint(3, 101, (3, 12), generator=torch.Generator().manual_seed(0))
    logits, values = critic(ids)
    assert logits.shape == (3, 12, 101) and values.shape == (3, 12)
    assert torch.equal(logits, policy(ids)[0])
    assert torch.equal(values, torch.zeros(3, 12))                 # zero-initialised head
    # values are causal: changing a later token leaves earlier values unchanged
    with torch.no_grad():
        critic.value.weight.normal_(generator=torch.Generator().manual_seed(1))
        v1 = critic(ids)[1]
        changed = ids.clone()
        changed[:, 8] = (changed[:, 8] + 1) % 101
        v2 = critic(changed)[1]
    assert torch.allclose(v1[:, :8], v2[:, :8], atol=1e-6) and not torch.allclose(v1[:, 8:], v2[:, 8:])
    # a value loss reaches both the head and the shared trunk
    critic(ids)[1].pow(2).sum().backward()
    assert critic.value.weight.grad.abs().sum() > 0
    assert policy.blocks[0].qkv.weight.grad.abs().sum() > 0


# ---- pg_step and collect_groups --------------------------------------------------------------

def fake_episodes(n=4, T=14, seed=0):
    """Trajectories with random ids, an action mask with gaps and 0/1 rewards."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        length = T - i                                            # different lengths -> padding
        ids = torch.randint(3, 101, (length,), generator=gen)
        mask = torch.zeros(length)
        mask[2:5], mask[7:length - 1] = 1.0, 1.0
        out.append(arl.Trajectory(ids, mask, torch.zeros(length - 1), float(i % 2), [], '', True))
    return out


def params(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_pg_step_with_rewards_is_reinforce_step():
    episodes = fake_episodes()
    a, b = small_agent(), small_agent()
    rewards = torch.tensor([e.reward for e in episodes])
    stats_a = arl.pg_step(a, torch.optim.SGD(a.parameters(), lr=0.1), episodes, rewards)
    stats_b = arl.reinforce_step(b, torch.optim.SGD(b.parameters(), lr=0.1), episodes)
    assert torch.allclose(params(a), params(b), atol=1e-7)
    for key in ('loss', 'grad_norm', 'reward', 'tokens'):
        assert stats_a[key] == pytest.approx(stats_b[key], abs=1e-6)
    assert {'weight_mean', 'weight_abs_mean', 'zero_weight'} <= set(stats_a)


def test_pg_step_per_token_weights_and_silent_episodes():
    episodes = fake_episodes()
    ids, action_mask, _, _ = arl.collate_trajectories(episodes)
    adv = torch.tensor([0.5, -0.25, 0.0, 1.0])
    a, b = small_agent(), small_agent()
    arl.pg_step(a, torch.optim.SGD(a.parameters(), lr=0.1), episodes, adv)
    per_token = adv[:, None].expand(-1, ids.shape[1] - 1).clone()
    per_token[action_mask[:, 1:] == 0] = 123.0                    # off-mask entries must not matter
    stats = arl.pg_step(b, torch.optim.SGD(b.parameters(), lr=0.1), episodes, per_token)
    assert torch.allclose(params(a), params(b), atol=1e-7)
    assert stats['zero_weight'] == pytest.approx(0.25)
    n = action_mask[:, 1:].sum(-1)
    assert stats['weight_abs_mean'] == pytest.approx(float((adv.abs() * n).sum() / n.sum()), abs=1e-6)
    # all-zero advantages: zero loss and zero gradient
    c = small_agent()
    before = params(c)
    stats0 = arl.pg_step(c, torch.optim.SGD(c.parameters(), lr=0.1), episodes, torch.zeros(4))
    assert stats0['grad_norm'] == 0.0 and stats0['zero_weight'] == 1.0
    assert torch.equal(params(c), before)


def test_pg_step_on_a_value_head_trains_only_the_policy():
    episodes = fake_episodes()
    critic = arl.ValueHead(small_agent())
    with torch.no_grad():
        critic.value.weight.fill_(0.3)
    head_before = critic.value.weight.clone()
    trunk_before = params(critic.policy)
    arl.pg_step(critic, torch.optim.SGD(critic.parameters(), lr=0.1), episodes,
                torch.tensor([1.0, -1.0, 0.5, -0.5]))
    assert torch.equal(critic.value.weight, head_before)
    assert not torch.equal(params(critic.policy), trunk_before)


def test_collect_groups_matches_collect_episodes():
    tok = arl.CharTokenizer()
    tasks = [t for t in arl.make_tasks(seed=0) if t.split == 'train'][:2]
    env = arl.BugFixEnv(cache={})
    model = small_agent()                                         # random: parse errors, no sandbox
    groups = arl.collect_groups(model, env, tasks, tok, group_size=3, seed=5, max_turns=1,
                                max_action_tokens=8)
    flat = arl.collect_episodes(model, env, [t for t in tasks for _ in range(3)], tok, seed=5,
                                max_turns=1, max_action_tokens=8)
    assert [len(g) for g in groups] == [3, 3]
    for got, want in zip([e for g in groups for e in g], flat):
        assert torch.equal(got.ids, want.ids)
    assert not torch.equal(groups[0][0].ids, groups[0][1].ids)     # distinct seeds within a group


# ---- the RLOO lab --------------------------------------------------------------------------

def test_rloo_lab_schema_and_budget():
    lab = load_lab("rloo_seeds")
    rec = lab.recipe
    assert rec["method"] == "RLOO" and rec["group_size"] == 4 and rec["tasks_per_step"] == 2
    assert rec["steps"] * rec["episodes_per_step"] == 800
    assert rec["aggregation"] == "seq-mean-token-sum"
    assert [r["seed"] for r in lab.results["runs"]] == [0, 1, 2]
    names = [e[0] for e in rec["eval"]["sets"]]
    assert names == ["rl_t1", "rl_greedy", "heldout_t1"]
    for run in lab.results["runs"]:
        assert run["steps"] == 100 and len(run["curve"]) == 100
        assert run["groups"] == 200 and 0 <= run["constant_groups"] <= 200
        assert 0 <= run["silent_steps"] <= 100
        for n in names:
            after = run["after"][n]
            assert len(after["per_task"]) == after["tasks"]
            assert after["rate"] == pytest.approx(sum(after["per_task"]) / after["tasks"], abs=1e-6)
            d = torch.tensor(after["per_task"]) - torch.tensor(lab.results["before"][n]["per_task"])
            assert run["paired_diff"][n]["mean"] == pytest.approx(d.mean().item(), abs=1e-6)


def test_rloo_and_reinforce_labs_share_the_evaluation():
    rloo, pg = load_lab("rloo_seeds"), load_lab("reinforce_seeds")
    assert rloo.recipe["rl_tasks"]["ids"] == pg.recipe["rl_tasks"]["ids"]
    assert rloo.recipe["eval"] == pg.recipe["eval"]
    for n in ("rl_t1", "rl_greedy", "heldout_t1"):
        assert rloo.results["before"][n]["per_task"] == pg.results["before"][n]["per_task"]


def paired(a_run, b_run, name):
    d = torch.tensor(a_run["after"][name]["per_task"]) - torch.tensor(b_run["after"][name]["per_task"])
    return d.mean().item(), d.std().item() / math.sqrt(len(d))


def test_grouped_ablation_schema():
    lab = load_lab("grouped_reinforce_seeds")
    rec = lab.recipe
    assert rec["method"].startswith("REINFORCE on groups")
    assert rec["group_size"] == 4 and rec["tasks_per_step"] == 2
    assert rec["steps"] * rec["episodes_per_step"] == 800
    assert [r["seed"] for r in lab.results["runs"]] == [0, 1, 2]


def test_chapter_claims_about_the_labs():
    """The numbers Section 7.3's Evidence callout and reading state."""
    pg, grouped, rloo = (load_lab(n) for n in ("reinforce_seeds", "grouped_reinforce_seeds",
                                                "rloo_seeds"))
    for lab in (grouped, rloo):
        assert lab.results["before"] == pg.results["before"]
        assert lab.recipe["rl_tasks"]["ids"] == pg.recipe["rl_tasks"]["ids"]
    assert pg.results["before"]["rl_t1"]["rate"] == pytest.approx(0.177, abs=5e-4)
    for p, g, r in zip(pg.results["runs"], grouped.results["runs"], rloo.results["runs"]):
        assert 0.339 - 5e-4 <= p["after"]["rl_t1"]["rate"] <= 0.370 + 5e-4
        assert 0.271 - 5e-4 <= g["after"]["rl_t1"]["rate"] <= 0.318 + 5e-4
        assert 0.161 - 5e-4 <= r["after"]["rl_t1"]["rate"] <= 0.182 + 5e-4
        # RLOO: no change on the RL tasks, a drop in greedy solve rate
        assert -0.016 - 5e-4 <= r["paired_diff"]["rl_t1"]["mean"] <= 0.005 + 5e-4
        assert 0.344 - 5e-4 <= r["after"]["rl_greedy"]["rate"] <= 0.422 + 5e-4
        # the baseline's effect: negative and at least 2.9 standard errors on every seed
        m, se = paired(r, g, "rl_t1")
        assert -0.141 - 5e-4 <= m <= -0.104 + 5e-4 and -m / se >= 2.9
        # the grouping's effect: same sign on every seed, within two standard errors on each
        m, se = paired(g, p, "rl_t1")
        assert -0.089 - 5e-4 <= m <= -0.021 + 5e-4 and -m / se < 2.0
        # counts quoted in the callout and in design problem 1
        assert 31 <= r["silent_steps"] <= 44 and 114 <= r["constant_groups"] <= 130
        assert 23 <= g["zero_gradient_steps"] <= 42 and 6 <= p["zero_gradient_steps"] <= 10
        assert 0.31 - 5e-3 <= p["mean_reward_last"] <= 0.38 + 5e-3
        assert 0.135 - 5e-4 <= r["mean_reward_last"] <= 0.215 + 5e-4
        for lab_run in (p, g, r):
            assert lab_run["after"]["heldout_t1"]["rate"] == 0.0


def test_mean_per_task_averages_runs_task_by_task_and_rejects_ragged_runs():
    assert arl.mean_per_task([[0.0, 1.0, 0.5], [1.0, 1.0, 0.0]]) == [0.5, 1.0, 0.25]
    assert arl.mean_per_task([[0.25, 0.75]]) == [0.25, 0.75]
    with pytest.raises(ValueError, match='same tasks'):
        arl.mean_per_task([[0.0, 1.0], [1.0]])


def test_rl_setting_raises_unless_it_rebuilds_the_labs_setting():
    """Section 7.7's rl_setting checks what it rebuilt against a lab's records: a run record that
    counts one task more, a warm start's record that is not the run's, or a model that is not
    the record's warm start, is refused."""
    lab = load_lab('gym_v2_rl_hg_rloo_lr3e-4')
    warm_record = lab.linked('warm')
    assert warm_record.stem == 'gym_v2_hint_recovery_3000'
    stranger = arl.TinyAgent(seed=1).eval()          # not the warm start: other expert paths
    tok = arl.CharTokenizer()
    with arl.SandboxPool(workers=1) as pool:
        env = arl.HintedBugFixEnv(hint=True, cache={}, sandbox=pool.run)
        with pytest.raises(ValueError, match='not the warm start'):
            arl.rl_setting(lab, load_lab('gym_v2_hint_recovery_3000_pad2'), stranger, env, tok)
        one_more = dataclasses.replace(lab, results={**lab.results,
                                                     'rl_tasks': lab.results['rl_tasks'] + 1})
        with pytest.raises(ValueError, match="not the lab's"):
            arl.rl_setting(one_more, warm_record, stranger, env, tok)
        with pytest.raises(ValueError, match='expert path'):
            arl.rl_setting(lab, warm_record, stranger, env, tok)


def test_same_evaluation_wants_equal_samples_and_expert_paths_within_its_tolerance():
    """Section 7.7's same_evaluation: the sampled numbers of two records of the warm start must
    be equal; their expert-path probabilities may differ in the last bits, as on another CPU."""
    def record(rate=0.5, prob=0.25):
        return {'heldout': {'t1': {'rate': rate, 'per_task': [rate, 0.0]},
                            'expert_path': {'mean_prob': prob, 'per_task': [prob, 0.125]}}}
    assert arl.same_evaluation(record(), record())
    assert arl.same_evaluation(record(), record(prob=0.25 + 8e-7))     # another CPU's rounding
    assert not arl.same_evaluation(record(), record(prob=0.26))
    assert not arl.same_evaluation(record(), record(rate=0.625))        # other episodes
    assert not arl.same_evaluation(record(), {'rl_groups': record()['heldout']})
    shorter = record()
    shorter['heldout']['expert_path']['per_task'].pop()
    assert not arl.same_evaluation(record(), shorter)


def test_the_300_update_runs_support_section_7_7():
    """Appendix C.4's reading of the 300-update arms, three seeds each on the same fresh episodes: the
    mixing, not the length, lifts the unseen placements (mixed beats RLOO there by more than
    two standard errors, and RLOO alone falls below the warm start), and mixed stays level with
    the sharpening control, not ahead of it."""
    rloo = load_lab('gym_v2_rl_fresh_hg_rloo_lr3e-4_u300')
    mixed = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u300')
    warm = rloo.results['control']
    assert arl.same_evaluation(mixed.results['control'], warm)
    unseen = {name: arl.seeds_per_task(f, 'heldout', 't1') for name, f in
              (('rloo', rloo), ('mixed', mixed))}
    d, se = arl.paired(unseen['mixed'], unseen['rloo'])
    assert d > 2 * se
    d, se = arl.paired(unseen['rloo'], rloo.control('heldout')['t1']['per_task'])
    assert d < -2 * se
    _, control = arl.sharpening_control(warm, 'heldout')
    d, se = arl.paired(unseen['mixed'], control)
    assert abs(d) < 2 * se


def test_twice_the_updates_spend_the_mixed_runs_unseen_gain():
    """Longer training and mixed batches (the labs' index), Appendix C.4's Evidence: mixed batches for 600
    updates gain more on RL's placements than at 300 and give back the unseen ones (both by more
    than two standard errors, the same fresh episodes, seeds averaged), ending level with the warm
    start at T=1 there and below the sharpening control."""
    short = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u300')
    long = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u600')
    warm = short.results['control']
    assert arl.same_evaluation(long.results['control'], warm)
    rl, unseen = (arl.paired(*(arl.seeds_per_task(f, split, 't1') for f in (long, short)))
                  for split in ('rl_groups', 'heldout'))
    assert rl[0] > 2 * rl[1] and unseen[0] < -2 * unseen[1]
    d, se = arl.paired(arl.seeds_per_task(long, 'heldout', 't1'), warm['heldout']['t1']['per_task'])
    assert abs(d) < 2 * se
    _, control = arl.sharpening_control(warm, 'heldout')
    assert arl.paired(arl.seeds_per_task(long, 'heldout', 't1'), control)[0] < 0


def _seed_rows(record, split):
    """The rows of an analysis record's result on `split` (gym_v2_failures, gym_v2_checks) that
    are its RL runs, in the order of recipe['runs']; the other rows are the warm start's ('warm
    t1', ...). A row is named by its run's tag (the run record's stem without 'gym_v2_rl_')."""
    rows = [key for key in record.results['result'][split] if not key.startswith('warm ')]
    tag = lambda name: name.removeprefix('gym_v2_rl_')
    assert [tag(row) for row in rows] == [tag(run) for run in record.recipe['runs']], record.stem
    return rows


def _first_edit_shares(record, split, policy_tags, classes):
    """Per task, the share of first edits in `classes`, averaged over the rows `policy_tags`."""
    result = record.results['result'][split]
    n = len(result[policy_tags[0]]['per_task']['right_fix'])
    return [sum(result[tag]['per_task'][c][i] for tag in policy_tags for c in classes)
            / len(policy_tags) for i in range(n)]


def test_the_first_edits_say_why_the_unseen_placements_do_not_gain():
    """Appendix C.5's first edits, from the committed records of
    gym_v2_failures.py: the classes cover every episode and reproduce the fresh solve rates'
    tasks; the hint was on screen before nearly every first edit; on RL's placements both arms
    cut edits to another line and raise the right fix (more than two standard errors); on the
    unseen placements RLOO alone leaves the edits to another line level and lowers the right
    fix, and the mixed runs lower the edits to another line and raise the wrong changes while
    the right fix stays level."""
    rloo = load_lab('gym_v2_failures_hg_rloo_lr3e-4_u300')
    mixed = load_lab('gym_v2_failures_hg_mixed_rloo_lr3e-4_u600')
    wrong = ('wrong_change_at_bug', 'wrong_change_elsewhere_on_line')
    for record in (rloo, mixed):
        fresh = record.linked('fresh')
        assert record.recipe['runs'] == fresh.runs
        for split, by_policy in record.results['result'].items():
            trained = dict(zip(_seed_rows(record, split), fresh.trained(split)))
            for tag, r in by_policy.items():
                shares = [sum(r['per_task'][c][i] for c in record.results['classes'])
                          for i in range(len(r['per_task']['right_fix']))]
                assert all(abs(s - 1) < 1e-9 for s in shares), (split, tag)
                seen, episodes = (sum(c[k] for c in r['counts'].values())
                                  for k in ('hint_seen', 'episodes'))
                assert seen >= 0.97 * episodes
                expected = (fresh.control(split)[tag.split()[1]] if tag.startswith('warm ')
                            else trained[tag]['t1'])
                assert abs(r['rate'] - expected['rate']) < 1e-9, (split, tag)

    def versus_warm(record, split, classes):
        mine = _first_edit_shares(record, split, _seed_rows(record, split), classes)
        return arl.paired(mine, _first_edit_shares(record, split, ['warm t1'], classes))

    for record in (rloo, mixed):
        d, se = versus_warm(record, 'rl_groups', ('other_line',))
        assert d < -2 * se
        d, se = versus_warm(record, 'rl_groups', ('right_fix',))
        assert d > 2 * se
    d, se = versus_warm(rloo, 'heldout', ('other_line',))
    assert abs(d) < 2 * se
    d, se = versus_warm(rloo, 'heldout', ('right_fix',))
    assert d < -2 * se
    d, se = versus_warm(mixed, 'heldout', ('other_line',))
    assert d < -2 * se
    d, se = versus_warm(mixed, 'heldout', wrong)
    assert d > 2 * se
    d, se = versus_warm(mixed, 'heldout', ('right_fix',))
    assert abs(d) < 2 * se


def test_the_stretch_placements_do_not_carry_over():
    """More placements to practise, and Appendix C.5: adding the stretch templates' 45 placements to RL's
    tasks (mixed batches, 300 updates, three seeds) lowers both halves against the mixed 300-update
    arm, by more than two standard errors, on the same fresh episodes; the unseen placements end
    level with the warm start at T=1 and below the sharpening control."""
    stretch = load_lab('gym_v2_rl_fresh_hg_mixed_stretch_rloo_lr3e-4_u300')
    mixed = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u300')
    warm = mixed.results['control']
    assert arl.same_evaluation(stretch.results['control'], warm)
    mixed_tasks = mixed.linked('runs')[0].results['rl_tasks']
    for run in stretch.linked('runs'):
        assert run.recipe['train_on'] == 'mixed' and len(run.results['stretch_groups_trained']) == 45
        assert run.recipe['updates'] == 300 and run.results['rl_tasks'] > mixed_tasks
    for split in ('rl_groups', 'heldout'):
        d, se = arl.paired(*(arl.seeds_per_task(f, split, 't1') for f in (stretch, mixed)))
        assert d < -2 * se, split
    mine = arl.seeds_per_task(stretch, 'heldout', 't1')
    d, se = arl.paired(mine, warm['heldout']['t1']['per_task'])
    assert abs(d) < 2 * se
    _, control = arl.sharpening_control(warm, 'heldout')
    assert arl.paired(mine, control)[0] < 0


def test_the_warm_start_does_not_copy_the_hinted_line_and_rl_from_padded_tasks_only_sharpens():
    """Padded tasks, and Appendix C.6: on padded tasks whose bug moved, the book's warm start puts more
    probability on the unpadded line digit than on the hinted one on every split; the warm starts
    trained on padded tasks put at least as much on the hinted digit on their own train split; RL
    from the padded warm start (mixed batches, 300 updates, three seeds, padded tasks) does not
    raise the hinted digit on held-out tasks, and on fresh unseen placements it beats the warm start
    at T=1 on every seed (by more than two standard errors, seeds averaged) while staying within two
    of its sharpening control."""
    copying = load_lab('gym_v2_copying_pad2')
    assert copying.recipe['pad_lines'] == 2
    result = copying.results['result']
    for split, row in result['gym_v2_hint_recovery_3000'].items():
        assert row['unpadded'] > 2 * row['hinted'] and row['tasks'] >= 20, split
        assert row['hinted'] == pytest.approx(sum(p for p, _ in row['per_task']) / row['tasks'])
    for warm in ('gym_v2_hint_recovery_3000_pad2', 'gym_v2_hint_recovery_3000_pad2_d128'):
        assert load_lab(warm).recipe['pad_lines'] == 2
        train = result[warm]['train']
        assert train['hinted'] > train['unpadded'], warm
    fresh = load_lab('gym_v2_rl_fresh_hg_mixed_pad2_rloo_lr3e-4_u300')
    assert fresh.recipe['pad_lines'] == 2 and fresh.recipe['warm'] == 'gym_v2_hint_recovery_3000_pad2'
    rl = [result[run]['heldout']['hinted'] for run in fresh.runs]
    assert sum(rl) / len(rl) <= result['gym_v2_hint_recovery_3000_pad2']['heldout']['hinted']
    for run in fresh.linked('runs'):
        assert (run.recipe['pad_lines'], run.recipe['train_on'], run.recipe['updates']) == (
            2, 'mixed', 300)
    warm = fresh.results['control']
    for trained in fresh.trained('heldout'):
        assert arl.paired(trained['t1']['per_task'], warm['heldout']['t1']['per_task'])[0] > 0
    mine = arl.seeds_per_task(fresh, 'heldout', 't1')
    d, se = arl.paired(mine, warm['heldout']['t1']['per_task'])
    assert d > 2 * se
    _, control = arl.sharpening_control(warm, 'heldout')
    d, se = arl.paired(mine, control)
    assert abs(d) < 2 * se


def test_more_padding_makes_the_copy_likelier_and_rl_from_it_still_only_learns_its_placements():
    """Padded tasks, and Appendix C.6: on tasks padded with up to six blank lines, the warm start trained
    6,000 steps on them puts more probability on the hinted digit than on the unpadded one on every
    split, and more than the 3,000-step one; RL from it (mixed batches, 300 updates, three seeds)
    lowers the hinted digit on held-out and train tasks, beats its sharpening control on fresh
    instances of RL's placements by more than two standard errors, and stays within two of it on the
    unseen placements."""
    copying = load_lab('gym_v2_copying_pad6')
    assert copying.recipe['pad_lines'] == 6
    result = copying.results['result']
    longer = result['gym_v2_hint_recovery_6000_pad6']
    shorter = result['gym_v2_hint_recovery_3000_pad6']
    for split, row in longer.items():
        assert row['hinted'] > row['unpadded'] and row['hinted'] > shorter[split]['hinted'], split
    fresh = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_rloo_lr3e-4_u300')
    assert fresh.recipe['pad_lines'] == 6 and fresh.recipe['warm'] == 'gym_v2_hint_recovery_6000_pad6'
    for split in ('heldout', 'train'):
        rl = [result[run][split]['hinted'] for run in fresh.runs]
        assert sum(rl) / len(rl) < longer[split]['hinted'], split
    for half, beats in (('rl_groups', True), ('heldout', False)):
        _, control = arl.sharpening_control(fresh.results['control'], half)
        d, se = arl.paired(arl.seeds_per_task(fresh, half, 't1'), control)
        assert (d > 2 * se) if beats else (abs(d) < 2 * se), half


def test_a_fresh_padding_per_group_helps_a_little_and_paying_only_the_copy_does_not():
    """Padded tasks, and Appendix C.6: RL from the 0-6 warm start with a fresh padding per group
    (--fresh-padding 8) beats the one-padding arm on the same fresh unseen instances and its warm
    start at T=1 on every seed, by more than two standard errors seeds averaged, and stays within
    two of the sharpening control; with the bug line moved on every draw (--moved-only) the hinted
    digit rises on held-out tasks, where the other arms lower it, and both halves fall below the
    fresh-padding arm by more than two standard errors."""
    one = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_rloo_lr3e-4_u300')
    fresh = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_fresh8_rloo_lr3e-4_u300')
    moved = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_moved8_rloo_lr3e-4_u300')
    for lab, moved_only in ((fresh, False), (moved, True)):
        assert arl.same_evaluation(lab.results['control'], one.results['control'])
        for run in lab.linked('runs'):
            assert run.recipe['fresh_padding'] == 8
            assert run.recipe.get('moved_only', False) == moved_only
            assert run.recipe['pad_lines'] == 6 and run.recipe['updates'] == 300
            assert run.results['paddings_made'] > 0

    def unseen(lab):
        return arl.seeds_per_task(lab, 'heldout', 't1')

    d, se = arl.paired(unseen(fresh), unseen(one))
    assert d > 2 * se
    warm = fresh.control('heldout')['t1']['per_task']
    assert all(arl.paired(trained['t1']['per_task'], warm)[0] > 0
               for trained in fresh.trained('heldout'))
    _, control = arl.sharpening_control(fresh.results['control'], 'heldout')
    d, se = arl.paired(unseen(fresh), control)
    assert abs(d) < 2 * se
    copying = load_lab('gym_v2_copying_pad6').results['result']

    def hinted(lab):
        rows = [copying[run]['heldout']['hinted'] for run in lab.runs]
        return sum(rows) / len(rows)

    start = copying['gym_v2_hint_recovery_6000_pad6']['heldout']['hinted']
    assert hinted(moved) > start > max(hinted(one), hinted(fresh))
    for half in ('rl_groups', 'heldout'):
        d, se = arl.paired(*(arl.seeds_per_task(lab, half, 't1') for lab in (moved, fresh)))
        assert d < -2 * se, half


def test_the_edit_parts_multiply_back_to_the_recorded_expert_path():
    """gym_v2_edit_parts on the book's warm start: the product of a task's parts, averaged over
    both halves of the held-out tasks, is the warm start's recorded held-out expert path; the
    warm start is least sure of the `<old>` text on every split; the mixed 600-update RL arm
    does not beat the warm start's exact path at its best temperature on unseen placements by
    two standard errors (Appendix C.6)."""
    parts = load_lab('gym_v2_edit_parts_unpadded').results['result']
    warm = parts['gym_v2_hint_recovery_3000']
    recorded = load_lab('gym_v2_hint_recovery_3000').metrics['hint']['heldout']['expert_path']

    def paths(row):
        return [math.exp(sum(task.values())) for task in row['per_task']]

    held = paths(warm['t1']['rl_groups']) + paths(warm['t1']['heldout'])
    assert sum(held) / len(held) == pytest.approx(recorded['mean_prob'], abs=1e-4)
    for split, row in warm['t1'].items():
        assert row['old'] < min(row['line'], row['new']), split
    best = max(warm, key=lambda t: warm[t]['heldout']['expert_path'])
    mixed = arl.mean_per_task([paths(parts[run]['t1']['heldout'])
                               for run in ('gym_v2_rl_hg_mixed_rloo_lr3e-4_u600',
                                           'gym_v2_rl_hg_mixed_rloo_lr3e-4_u600_s1',
                                           'gym_v2_rl_hg_mixed_rloo_lr3e-4_u600_s2')])
    d, se = arl.paired(mixed, paths(warm[best]['heldout']))
    assert abs(d) < 2 * se


def test_weighting_the_copied_tokens_makes_the_warm_start_copy_the_line():
    """Weighting the copied tokens, and Appendix C.6: the 0-6 warm start trained with the right edit's line
    digits and old text weighted 4 times (--copy-weight 4), all else equal, puts over 0.9 of the
    line digit on the hinted one on every split (the recipe under 0.5), and at its best temperature
    beats the recipe's warm start at its best by more than two standard errors on held-out and
    stretch tasks, paired by task; weight 10 copies the digit as well and solves fewer held-out
    tasks at T=1 than weight 4, its fix part lower on the unseen placements."""
    tags = {1: 'gym_v2_hint_recovery_6000_pad6', 4: 'gym_v2_hint_recovery_6000_pad6_copy4',
            10: 'gym_v2_hint_recovery_6000_pad6_copy10'}
    records = {w: load_lab(stem) for w, stem in tags.items()}
    for w, record in records.items():
        assert record.recipe.get('copy_weight', 1) == w and record.recipe['steps'] == 6000
        assert record.recipe['pad_lines'] == 6
        assert record.results['eval_task_ids'] == records[1].results['eval_task_ids']
    copying = load_lab('gym_v2_copying_pad6_copy').results['result']
    for split in ('heldout', 'stretch', 'rename', 'train'):
        assert copying[tags[1]][split]['hinted'] < 0.5
        assert min(copying[tags[w]][split]['hinted'] for w in (4, 10)) > 0.9, split

    def at_best(w, split):
        res = records[w].metrics['hint'][split]
        return res[res['control_temperature']]['per_task']

    for split in ('heldout', 'stretch'):
        d, se = arl.paired(at_best(4, split), at_best(1, split))
        assert d > 2 * se, split
    held = {w: records[w].metrics['hint']['heldout']['t1']['rate'] for w in records}
    assert held[4] > held[10] > held[1]
    parts = load_lab('gym_v2_edit_parts_pad6_copy').results['result']
    assert parts[tags[10]]['t1']['heldout']['new'] < parts[tags[4]]['t1']['heldout']['new']


def test_rl_from_the_weighted_warm_start_stays_level_with_its_control_on_unseen_placements():
    """Appendix C.6 and the copy-weight experiment: on the fresh instances of the recipe's fresh-padding arm
    (the same tasks), the weight-4 warm start at its best temperature beats the recipe's at its best
    on both halves by two standard errors; RL from it (three seeds) beats its control on RL's
    placements by two standard errors and is within two of it on the unseen ones, where its gain
    over RL from the recipe's warm start is the warm start's."""
    copy4 = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300')
    from_recipe = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_fresh8_rloo_lr3e-4_u300')
    assert copy4.recipe['warm'] == 'gym_v2_hint_recovery_6000_pad6_copy4' and len(copy4.runs) == 3
    assert copy4.results['task_ids'] == from_recipe.results['task_ids']
    assert copy4.recipe['episode_seed'] == from_recipe.recipe['episode_seed']
    for half in ('rl_groups', 'heldout'):
        d, se = arl.paired(arl.sharpening_control(copy4.results['control'], half)[1],
                           arl.sharpening_control(from_recipe.results['control'], half)[1])
        assert d > 2 * se, half
    control = arl.sharpening_control(copy4.results['control'], 'rl_groups')[1]
    d, se = arl.paired(arl.seeds_per_task(copy4, 'rl_groups', 't1'), control)
    assert d > 2 * se
    control = arl.sharpening_control(copy4.results['control'], 'heldout')[1]
    d, se = arl.paired(arl.seeds_per_task(copy4, 'heldout', 't1'), control)
    assert abs(d) < 2 * se
    d, se = arl.paired(*(arl.seeds_per_task(lab, 'heldout', 't1') for lab in (copy4, from_recipe)))
    assert d > 2 * se


def test_weighting_the_fix_as_well_undoes_the_copy_of_the_line():
    """Weighting the copied tokens: with the line at 4 and the `<old>` text at 10 the warm start
    still copies the hinted digit (over 0.9 on every split) and puts more on the unseen placements'
    `<old>` text than weight 4; weighting the fix's `|new` text 4 as well drops the hinted digit
    under 0.5 on every split, back to the recipe's level. (Seed 0 only: a second seed of both
    says the drop is the seed's; see
    test_whether_the_old_text_weighted_warm_start_copies_is_the_seeds.)"""
    tags = {'4/10/1': 'gym_v2_hint_recovery_6000_pad6_line4_old10',
            '4/10/4': 'gym_v2_hint_recovery_6000_pad6_line4_old10_new4'}
    assert load_lab(tags['4/10/1']).recipe['part_weights'] == {'line': 4, 'old': 10, 'new': 1}
    assert load_lab(tags['4/10/4']).recipe['part_weights'] == {'line': 4, 'old': 10, 'new': 4}
    copying = load_lab('gym_v2_copying_pad6_copy').results['result']
    for split in ('heldout', 'stretch', 'rename', 'train'):
        assert copying[tags['4/10/1']][split]['hinted'] > 0.9, split
        assert copying[tags['4/10/4']][split]['hinted'] < 0.5, split
    parts = load_lab('gym_v2_edit_parts_pad6_copy').results['result']
    unseen = {w: parts[stem]['t1']['heldout'] for w, stem in
              {**tags, '4/4/1': 'gym_v2_hint_recovery_6000_pad6_copy4'}.items()}
    assert unseen['4/10/1']['old'] > unseen['4/4/1']['old'] + 0.1


def test_rl_from_the_old_text_weighted_warm_start_stays_level_on_unseen_placements():
    """Weighting the copied tokens: RL from the line 4 / old 10 warm start (three seeds, the same
    fresh tasks as RL from weight 4) beats its control on RL's placements by two standard errors, is
    within two of it on the unseen ones, and ends below RL from weight 4 on RL's placements."""
    l4o10 = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_l4o10_fresh8_rloo_lr3e-4_u300')
    copy4 = load_lab('gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300')
    assert l4o10.recipe['warm'] == 'gym_v2_hint_recovery_6000_pad6_line4_old10'
    assert len(l4o10.runs) == 3 and l4o10.results['task_ids'] == copy4.results['task_ids']
    for half, beats in (('rl_groups', True), ('heldout', False)):
        control = arl.sharpening_control(l4o10.results['control'], half)[1]
        d, se = arl.paired(arl.seeds_per_task(l4o10, half, 't1'), control)
        assert (d > 2 * se) if beats else (abs(d) < 2 * se), half
    d, se = arl.paired(*(arl.seeds_per_task(lab, 'rl_groups', 't1') for lab in (l4o10, copy4)))
    assert d < -2 * se


def test_more_placements_from_the_copying_warm_start_do_not_carry_to_unseen_ones():
    """More placements to practise, from the copying warm start: RLOO from the weight-4 warm start
    with the stretch templates' 45 placements added to RL's tasks (three seeds), on the same fresh
    tasks and episodes as RLOO without them: above the control on RL's placements by two standard
    errors, below it on the unseen ones by under two, and within two of RLOO without them on both
    halves."""
    stretch = load_lab("gym_v2_rl_fresh_hg_mixed_stretch_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    assert stretch.recipe["warm"] == "gym_v2_hint_recovery_6000_pad6_copy4" and len(stretch.runs) == 3
    assert stretch.results["task_ids"] == rloo.results["task_ids"]
    assert arl.same_evaluation(stretch.results["control"], rloo.results["control"])
    for run in stretch.linked("runs"):
        assert run.recipe["train_on"] == "mixed" and run.recipe["method"] == "rloo", run.stem
        assert len(run.results["stretch_groups_trained"]) == 45, run.stem
        assert run.results["rl_tasks"] == 833, run.stem
    for half, beats in (("rl_groups", True), ("heldout", False)):
        mine = arl.seeds_per_task(stretch, half, "t1")
        d, se = arl.paired(mine, arl.sharpening_control(stretch.results["control"], half)[1])
        assert (d > 2 * se) if beats else (-2 * se < d < 0), half
        d, se = arl.paired(mine, arl.seeds_per_task(rloo, half, "t1"))
        assert abs(d) < 2 * se, half


# A reward for an edit that applies: (line_edit_bonus, bonus_at_bug) -> (fresh, failures) records
BONUS_ARMS = {
    (0.2, False): ("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_bonus0.2_lr3e-4_u300",
                   "gym_v2_failures_hg_mixed_pad6_copy4_fresh8_rloo_bonus0.2_lr3e-4_u300"),
    (0.5, False): ("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_bonus0.5_lr3e-4_u300",
                   "gym_v2_failures_hg_mixed_pad6_copy4_fresh8_rloo_bonus0.5_lr3e-4_u300"),
    (1.0, False): ("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_bonus1.0_lr3e-4_u300",
                   "gym_v2_failures_hg_mixed_pad6_copy4_fresh8_rloo_bonus1.0_lr3e-4_u300"),
    (0.5, True): ("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_bonusatbug0.5_lr3e-4_u300",
                  "gym_v2_failures_hg_mixed_pad6_copy4_fresh8_rloo_bonusatbug0.5_lr3e-4_u300"),
}


def _unseen_applies(fresh):
    return sum(t["t1"]["first_edit_applies"] for t in fresh.trained("heldout")) / len(fresh.runs)


def test_a_bonus_for_an_edit_that_applies_buys_the_copy_not_the_transfer():
    """A reward for an edit that applies: RLOO from the weight-4 warm start with a bonus for the
    first edit that applies on the bug's line (0.2, 0.5, 1.0, and 0.5 paid only at the bug's text),
    three seeds each, on the same fresh tasks and episodes as RLOO without it. Every arm beats the
    control on RL's placements by two standard errors and is within two of it, and of RLOO, on the
    unseen ones; yet the plain bonus raises the unseen first edits that apply well above RLOO's, and
    paying only the bug's text raises them less."""
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    applies = {}
    for (bonus, at_bug), (stem, _) in BONUS_ARMS.items():
        fresh = load_lab(stem)
        assert fresh.recipe["warm"] == "gym_v2_hint_recovery_6000_pad6_copy4" and len(fresh.runs) == 3
        assert fresh.results["task_ids"] == rloo.results["task_ids"]
        assert arl.same_evaluation(fresh.results["control"], rloo.results["control"])
        for record in fresh.linked("runs"):
            assert record.recipe["method"] == "rloo" and record.recipe["train_on"] == "mixed", record.stem
            paid_where = record.recipe.get("bonus_at_bug", False)   # 0.2 and 0.5 predate the option
            assert (record.recipe["line_edit_bonus"], paid_where) == (bonus, at_bug), record.stem
        for half, beats in (("rl_groups", True), ("heldout", False)):
            mine = arl.seeds_per_task(fresh, half, "t1")
            d, se = arl.paired(mine, arl.sharpening_control(fresh.results["control"], half)[1])
            assert (d > 2 * se) if beats else abs(d) < 2 * se, (stem, half)
        d, se = arl.paired(arl.seeds_per_task(fresh, "heldout", "t1"),
                           arl.seeds_per_task(rloo, "heldout", "t1"))
        assert abs(d) < 2 * se, stem
        applies[bonus, at_bug] = _unseen_applies(fresh)
    assert all(applies[b, False] > _unseen_applies(rloo) + 0.05 for b in (0.2, 0.5, 1.0))
    assert applies[0.5, True] < applies[0.5, False] - 0.05


def test_the_bonus_moves_the_first_edits_it_pays_for():
    """A reward for an edit that applies, from gym_v2_failures.py on the fresh unseen placements:
    every bonus arm cuts the first edits that do not apply and raises the wrong changes by more than
    two standard errors against the warm start, while the right fix stays within two; the plain
    bonus of 0.5 raises the changes elsewhere on the line (which it pays) more than the bonus paid
    only at the bug's text does, paired by task."""
    records = {arm: load_lab(failures) for arm, (_, failures) in BONUS_ARMS.items()}
    wrong = ("wrong_change_at_bug", "wrong_change_elsewhere_on_line")
    for arm, record in records.items():
        assert record.recipe["fresh"] == BONUS_ARMS[arm][0] and len(record.recipe["runs"]) == 3

        def versus_warm(classes):
            mine = _first_edit_shares(record, "heldout", _seed_rows(record, "heldout"), classes)
            return arl.paired(mine, _first_edit_shares(record, "heldout", ["warm t1"], classes))

        d, se = versus_warm(("not_applied",))
        assert d < -2 * se, record.stem
        d, se = versus_warm(wrong)
        assert d > 2 * se, record.stem
        d, se = versus_warm(("right_fix",))
        assert abs(d) < 2 * se, record.stem
    plain, at_bug = records[0.5, False], records[0.5, True]
    elsewhere = ("wrong_change_elsewhere_on_line",)
    d, se = arl.paired(
        _first_edit_shares(plain, "heldout", _seed_rows(plain, "heldout"), elsewhere),
        _first_edit_shares(at_bug, "heldout", _seed_rows(at_bug, "heldout"), elsewhere))
    assert d > 2 * se


# Checking the edit: checks record -> the warm start's share of checked demonstrations
CHECK_ARMS = {
    "gym_v2_checks_hg_mixed_pad6_copy4_check25_fresh8_rloo_lr3e-4_u300": 0.25,
    "gym_v2_checks_hg_mixed_pad6_copy4_check5_fresh8_rloo_lr3e-4_u300": 0.5,
}


def test_rl_learns_to_check_its_edit_on_unseen_placements_but_its_retries_do_not_solve():
    """Checking the edit: RLOO from warm starts whose demonstrations sometimes test the right edit
    before the submit (three seeds each, the same fresh tasks as RLOO from weight 4). On the unseen
    placements RL raises the share of episodes that check their edit and that edit again after a
    failing check by more than two standard errors against the warm start, a behaviour learned on
    other placements; yet the retries almost never solve (under 2% of the episodes) and the solve
    rate stays within two standard errors of the warm start's control."""
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    for stem, share in CHECK_ARMS.items():
        checks = load_lab(stem)
        fresh, warm = checks.linked("fresh"), checks.linked("warm")
        assert fresh.recipe["warm"] == warm.stem
        assert warm.recipe["check_share"] == share and warm.recipe["part_weights"] == {
            "line": 4, "old": 4, "new": 1}
        assert fresh.results["task_ids"] == rloo.results["task_ids"] and len(fresh.runs) == 3
        assert fresh.recipe["episode_seed"] == rloo.recipe["episode_seed"]
        assert checks.recipe["runs"] == fresh.runs
        for record in fresh.linked("runs"):
            assert (record.recipe["method"], record.recipe["train_on"], record.recipe["updates"]) == (
                "rloo", "mixed", 300), record.stem
        for kind in ("checked", "retried"):
            d, se = checks.results["versus"]["heldout"][kind]
            assert d > 2 * se, (stem, kind)
        for row in _seed_rows(checks, "heldout"):
            solved_after_retry = checks.results["result"]["heldout"][row]["per_task"]["solved_after_retry"]
            assert sum(solved_after_retry) / len(solved_after_retry) < 0.02, row
        control = arl.sharpening_control(fresh.results["control"], "heldout")[1]
        d, se = arl.paired(arl.seeds_per_task(fresh, "heldout", "t1"), control)
        assert abs(d) < 2 * se, stem


def test_whether_the_old_text_weighted_warm_start_copies_is_the_seeds():
    """Weighting the copied tokens, second seeds: trained with --train-seed 1, the line 4 / old 10
    warm start copies the hinted digit far less than its seed-0 twin (by more than 0.3 on every
    split) and less than the line 4 / old 10 / new 4 warm start of the same seed, the opposite of
    seed 0's order: seed 0's drop belongs to the seed, not to weighting the fix."""
    tags = {(0, False): "gym_v2_hint_recovery_6000_pad6_line4_old10",
            (0, True): "gym_v2_hint_recovery_6000_pad6_line4_old10_new4",
            (1, False): "gym_v2_hint_recovery_6000_pad6_line4_old10_t1",
            (1, True): "gym_v2_hint_recovery_6000_pad6_line4_old10_new4_t1"}
    for (seed, fix), stem in tags.items():
        record = load_lab(stem)
        assert record.recipe.get("train_seed", 0) == seed, stem
        assert record.recipe["part_weights"] == {"line": 4, "old": 10, "new": 4 if fix else 1}, stem
    copying = load_lab("gym_v2_copying_pad6_copy_train_seed").results["result"]
    for split in ("heldout", "stretch", "rename", "train"):
        hinted = {key: copying[stem][split]["hinted"] for key, stem in tags.items()}
        assert hinted[1, False] < hinted[0, False] - 0.3, split
        assert hinted[1, False] < hinted[1, True] and hinted[0, True] < hinted[0, False], split


def test_the_weight_4_warm_start_copies_less_under_a_second_seed():
    """Weighting the copied tokens, second seeds: the weight-4 warm start the later arms start from,
    trained again with --train-seed 1 (all else the same), copies the hinted digit less on every
    split (0.52 against 0.94 on held-out tasks), solves fewer held-out tasks at T=1 and puts fewer
    first edits on the bug's line: seed 0's copy was a good draw, not the recipe's."""
    tags = {0: "gym_v2_hint_recovery_6000_pad6_copy4", 1: "gym_v2_hint_recovery_6000_pad6_copy4_t1"}
    records = {seed: load_lab(stem) for seed, stem in tags.items()}
    for seed, record in records.items():
        assert record.recipe.get("train_seed", 0) == seed and record.recipe["copy_weight"] == 4
        assert (record.recipe["steps"], record.recipe["pad_lines"], record.recipe["hint_share"]) == (
            6000, 6, 1.0)
    copying = load_lab("gym_v2_copying_pad6_copy_train_seed").results["result"]
    for split in ("heldout", "stretch", "rename", "train"):
        assert copying[tags[1]][split]["hinted"] < copying[tags[0]][split]["hinted"] - 0.1, split
    assert copying[tags[1]]["heldout"]["hinted"] < copying[tags[0]]["heldout"]["hinted"] - 0.4
    heldout = {seed: r.metrics["hint"]["heldout"] for seed, r in records.items()}
    assert heldout[1]["t1"]["rate"] < heldout[0]["t1"]["rate"] - 0.1
    assert heldout[1]["t1"]["first_edit_on_bug_line"] < heldout[0]["t1"]["first_edit_on_bug_line"] - 0.3


def test_weight_4_beats_weight_1_with_the_seeds_matched_and_averaged():
    """Weighting the copied tokens, and Appendix C.6: weights 1 and 4 on the copied tokens, each trained
    under seeds 0 and 1 (all else the same). Under seed 1 the recipe's weights copy the hinted digit
    better than under seed 0 and weight 4 barely better again; with each task's rate at its best
    temperature averaged over the two seeds, weight 4 still beats weight 1 on the held-out tasks and
    the stretch functions by more than two standard errors, paired by task."""
    tags = {("1", 0): "gym_v2_hint_recovery_6000_pad6",
            ("1", 1): "gym_v2_hint_recovery_6000_pad6_t1",
            ("4", 0): "gym_v2_hint_recovery_6000_pad6_copy4",
            ("4", 1): "gym_v2_hint_recovery_6000_pad6_copy4_t1"}
    records = {key: load_lab(stem) for key, stem in tags.items()}
    for (weight, seed), record in records.items():
        assert (record.recipe.get("copy_weight", 1), record.recipe.get("train_seed", 0)) == (
            int(weight), seed)
        assert (record.recipe["steps"], record.recipe["pad_lines"],
                record.recipe["recovery_share"]) == (6000, 6, 0.25)
    copying = load_lab("gym_v2_copying_pad6_copy_train_seed").results["result"]
    seed_0 = load_lab("gym_v2_copying_pad6_copy").results["result"]
    hinted = lambda key: (copying if key[1] else seed_0)[tags[key]]["heldout"]["hinted"]
    assert hinted(("1", 1)) > hinted(("1", 0)) + 0.1
    assert hinted(("1", 1)) < hinted(("4", 1)) < hinted(("1", 1)) + 0.1

    def at_best(key, split):
        res = records[key].metrics["hint"][split]
        return res[res["control_temperature"]]["per_task"]

    for split in ("heldout", "stretch"):
        averaged = {w: [(a + b) / 2 for a, b in zip(at_best((w, 0), split), at_best((w, 1), split))]
                    for w in ("1", "4")}
        d, se = arl.paired(averaged["4"], averaged["1"])
        assert d > 2 * se, split


def assert_the_recipe_learns_its_placements_and_not_the_unseen(fresh_stem, warm):
    """An arm run with the recipe the RL arms share from the weight-4 warm start on (RLOO, mixed
    batches, 300 updates, lr 3e-4, a fresh padding per group, three seeds) from the warm start
    `warm` (its record's stem), evaluated in the fresh record `fresh_stem` on the same fresh tasks
    and episodes as RLOO from weight 4: it beats its own control on RL's placements by more than two
    standard errors and stays within two of it on the unseen ones."""
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    fresh = load_lab(fresh_stem)
    assert fresh.recipe["warm"] == warm
    assert fresh.results["task_ids"] == rloo.results["task_ids"]
    assert fresh.recipe["episode_seed"] == rloo.recipe["episode_seed"]
    assert len(fresh.runs) == 3
    for record in fresh.linked("runs"):
        recipe = record.recipe
        assert (recipe["method"], recipe["train_on"], recipe["updates"], recipe["lr"],
                recipe["fresh_padding"]) == ("rloo", "mixed", 300, 3e-4, 8), record.stem
    for split, learned in (("rl_groups", True), ("heldout", False)):
        control = arl.sharpening_control(fresh.results["control"], split)[1]
        d, se = arl.paired(arl.seeds_per_task(fresh, split, "t1"), control)
        assert (d > 2 * se) if learned else (abs(d) < 2 * se), split


def test_rl_from_the_second_seed_of_weight_4_learns_its_placements_and_not_the_unseen():
    """Weighting the copied tokens, second seeds: RLOO with the shared recipe, started from the
    weight-4 warm start trained under --train-seed 1 (which copies far less than seed 0), on the
    same fresh tasks and episodes. As from seed 0, it beats its own control on RL's placements by
    more than two standard errors and stays within two of it on the unseen ones: the chapters' RL
    result does not rest on seed 0's good draw."""
    assert load_lab("gym_v2_hint_recovery_6000_pad6_copy4_t1").recipe["train_seed"] == 1
    assert_the_recipe_learns_its_placements_and_not_the_unseen(
        "gym_v2_rl_fresh_hg_mixed_pad6_copy4_t1_fresh8_rloo_lr3e-4_u300",
        "gym_v2_hint_recovery_6000_pad6_copy4_t1")


def test_rl_from_retry_demonstrations_retries_more_on_unseen_placements_without_solving_more():
    """Checking the edit, and retrying: RLOO from the warm start whose demonstrations also retry
    after a wrong edit that applies (check share 0.5, retry share 0.5, the wrong edit left out of
    the loss), three seeds, the same fresh tasks and episodes as RLOO from weight 4. It beats its
    control on RL's placements by more than two standard errors; on the unseen placements it checks
    and retries more than the warm start by more than two standard errors, its retries solve under
    3% of the episodes, and its solve rate stays within two standard errors of the control."""
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    fresh = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_check5_retry5m_fresh8_rloo_lr3e-4_u300")
    checks = load_lab("gym_v2_checks_hg_mixed_pad6_copy4_check5_retry5m_fresh8_rloo_lr3e-4_u300")
    warm = fresh.linked("warm")
    assert (warm.recipe["check_share"], warm.recipe["retry_share"],
            warm.recipe["retry_mistake_masked"]) == (0.5, 0.5, True)
    assert fresh.results["task_ids"] == rloo.results["task_ids"]
    assert fresh.recipe["episode_seed"] == rloo.recipe["episode_seed"]
    assert len(fresh.runs) == 3 and checks.recipe["runs"] == fresh.runs
    for record in fresh.linked("runs"):
        assert (record.recipe["method"], record.recipe["train_on"], record.recipe["updates"]) == (
            "rloo", "mixed", 300)
    for kind in ("checked", "retried"):
        d, se = checks.results["versus"]["heldout"][kind]
        assert d > 2 * se, kind
    for row in _seed_rows(checks, "heldout"):
        after = checks.results["result"]["heldout"][row]["per_task"]["solved_after_retry"]
        assert sum(after) / len(after) < 0.03, row
    for split, learned in (("rl_groups", True), ("heldout", False)):
        control = arl.sharpening_control(fresh.results["control"], split)[1]
        d, se = arl.paired(arl.seeds_per_task(fresh, split, "t1"), control)
        assert (d > 2 * se) if learned else (abs(d) < 2 * se), split


def test_dynamic_sampling_at_the_same_budget_learns_what_rloo_learns():
    """Dynamic sampling, and Appendix C.7: RLOO from the weight-4 warm start with DAPO's dynamic sampling
    (rounds of 16 groups until 8 have mixed rewards, one step on those 8), stopped at RLOO's 19,200
    episodes per seed, three seeds, on the same fresh tasks and episodes. Every step holds 8 mixed
    groups and there are under a third as many steps as RLOO's; it beats the control on RL's
    placements by more than two standard errors, stays within two of it on the unseen ones, and is
    within two standard errors of RLOO on both."""
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    fresh = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_refill8_e19200")
    assert fresh.recipe["warm"] == rloo.recipe["warm"] == "gym_v2_hint_recovery_6000_pad6_copy4"
    assert fresh.results["task_ids"] == rloo.results["task_ids"]
    assert fresh.recipe["episode_seed"] == rloo.recipe["episode_seed"]
    assert len(fresh.runs) == 3
    for record, base in zip(fresh.linked("runs"), rloo.linked("runs")):
        recipe = record.recipe
        assert (recipe["method"], recipe["train_on"], recipe["lr"], recipe["fresh_padding"],
                recipe["refill"], record.seed) == ("rloo", "mixed", 3e-4, 8, 8, base.seed)
        episodes = record.results["episodes"]
        assert 19200 <= episodes < 19200 + 8 * 64 and base.results["episodes"] == 19200
        assert sum(s["episodes"] for s in record.log) == episodes
        assert all(s["groups"] == 8 and s["mixed_found"] >= 8 for s in record.log
                   if s["rounds"] < 8)
        steps = sum("grad_norm" in s for s in base.log)
        assert 3 * len(record.log) < steps
    for split, learned in (("rl_groups", True), ("heldout", False)):
        control = arl.sharpening_control(fresh.results["control"], split)[1]
        mine = arl.seeds_per_task(fresh, split, "t1")
        d, se = arl.paired(mine, control)
        assert (d > 2 * se) if learned else (abs(d) < 2 * se), split
        d, se = arl.paired(mine, arl.seeds_per_task(rloo, split, "t1"))
        assert abs(d) < 2 * se, split


def test_at_three_times_the_episodes_dynamic_sampling_and_rloo_end_level():
    """More episodes, and Appendix C.7: dynamic sampling (57,600 episodes per seed) and RLOO for 900 updates
    (the same 57,600), three seeds each, on the same fresh tasks and episodes as RLOO's 300 updates.
    Dynamic sampling takes under a third of RLOO's steps; both stay within two standard errors of
    the control on the unseen placements and of each other on both halves, and dynamic sampling ends
    above RLOO's 300 updates on the unseen ones by more than two."""
    fresh = {"u300": load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300"),
             "u900": load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u900"),
             "refill8_e57600":
                 load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_refill8_e57600")}
    assert all(f.results["task_ids"] == fresh["u300"].results["task_ids"]
               and f.recipe["episode_seed"] == fresh["u300"].recipe["episode_seed"]
               and len(f.runs) == 3 for f in fresh.values())
    steps = {}
    for arm in ("u900", "refill8_e57600"):
        records = fresh[arm].linked("runs")
        assert all(57600 <= r.results["episodes"] < 57600 + 8 * 64 and r.recipe["lr"] == 3e-4
                   for r in records)
        steps[arm] = [sum("grad_norm" in s for s in r.log) for r in records]
    assert 3 * max(steps["refill8_e57600"]) < min(steps["u900"])
    per_task = {arm: {split: arl.seeds_per_task(f, split, "t1")
                      for split in ("rl_groups", "heldout")} for arm, f in fresh.items()}
    for arm in ("u900", "refill8_e57600"):
        control = arl.sharpening_control(fresh[arm].results["control"], "heldout")[1]
        d, se = arl.paired(per_task[arm]["heldout"], control)
        assert abs(d) < 2 * se, arm
    for split in ("rl_groups", "heldout"):
        d, se = arl.paired(per_task["refill8_e57600"][split], per_task["u900"][split])
        assert abs(d) < 2 * se, split
    d, se = arl.paired(per_task["refill8_e57600"]["heldout"], per_task["u300"]["heldout"])
    assert d > 2 * se


def test_a_policy_four_times_larger_learns_its_placements_and_not_the_unseen():
    """A policy four times larger: the weight-4 warm start at d_model 128 (four times the
    parameters, lr 2.5e-3) is level with d_model 64's two seeds at imitation (each at its best
    temperature, the seeds' per-task rates averaged, held-out within two standard errors); RLOO from
    it, with the shared recipe on the same fresh tasks and episodes, beats its own control on RL's
    placements by more than two standard errors and stays within two of it on the unseen ones."""
    wide = load_lab("gym_v2_hint_recovery_6000_pad6_copy4_d128_lr2.5e-3")
    narrow = [load_lab("gym_v2_hint_recovery_6000_pad6_copy4"),
              load_lab("gym_v2_hint_recovery_6000_pad6_copy4_t1")]
    assert wide.recipe["model_config"]["d_model"] == 128 and wide.recipe["lr"] == 2.5e-3
    assert wide.results["parameters"] > 3.9 * narrow[0].results["parameters"]
    assert all(r.recipe["copy_weight"] == 4 and r.recipe["steps"] == 6000 for r in (wide, *narrow))

    def at_best(record):
        res = record.metrics["hint"]["heldout"]
        return res[res["control_temperature"]]["per_task"]

    averaged = [(a + b) / 2 for a, b in zip(*map(at_best, narrow))]
    d, se = arl.paired(at_best(wide), averaged)
    assert abs(d) < 2 * se
    assert_the_recipe_learns_its_placements_and_not_the_unseen(
        "gym_v2_rl_fresh_hg_mixed_pad6_copy4_d128_fresh8_rloo_lr3e-4_u300",
        "gym_v2_hint_recovery_6000_pad6_copy4_d128_lr2.5e-3")
