"""Chapter 8: the clipped PPO loss, the value loss, the PPO update and the PPO lab's results.

The saves are checked against independent references written here: plain Python loops over
episodes and tokens, the hand-derived gradient of the clipped surrogate in every case (clip
active or not, positive and negative advantages, ratios below, inside and above the interval),
an explicit sum of discounted TD errors for the advantages, and a parameter update recomputed
from a hand-written loss. The lab tests read the committed records under ``book/labs/results``
through ``agentrl.load_record``; a missing record fails them.
"""

from __future__ import annotations

import math

import pytest
import torch

import agentrl as arl
from lab_results import load_lab



# ---- ppo_loss against explicit loops -------------------------------------------------------

def reference_ppo(logp, logp_old, adv, mask, eps, aggregation):
    """Loss and statistics of the clipped surrogate, token by token in Python floats."""
    B, T = logp.shape
    per_episode, counts = [], []
    total, n, clipped, kl, ratio_sum = 0.0, 0, 0, 0.0, 0.0
    for b in range(B):
        s, k = 0.0, 0
        for t in range(T):
            if mask[b][t] <= 0:
                continue
            a = float(adv[b][t]) if adv.dim() == 2 else float(adv[b])
            r = math.exp(float(logp[b][t]) - float(logp_old[b][t]))
            unclipped, clip_term = r * a, min(max(r, 1 - eps), 1 + eps) * a
            s += min(unclipped, clip_term)
            k += 1
            clipped += clip_term < unclipped
            kl += (r - 1) - math.log(r)
            ratio_sum += r
        per_episode.append(s)
        counts.append(k)
        total += s
        n += k
    if aggregation == "token-mean":
        loss = -total / max(n, 1)
    elif aggregation == "seq-mean-token-sum":
        loss = -sum(per_episode) / B
    else:
        loss = -sum(s / max(k, 1) for s, k in zip(per_episode, counts)) / B
    stats = {"clip_fraction": clipped / max(n, 1), "approx_kl": kl / max(n, 1),
             "ratio_mean": ratio_sum / max(n, 1)}
    return loss, stats


def random_batch(seed, B=5, T=9, per_token=False):
    gen = torch.Generator().manual_seed(seed)
    logp_old = -torch.rand(B, T, generator=gen) * 3                        # [B, T-1]
    logp = logp_old + 0.4 * torch.randn(B, T, generator=gen)               # ratios around 1
    mask = (torch.rand(B, T, generator=gen) > 0.3).float()
    mask[2] = 0.0                                                          # no policy token
    mask[3, 1::2] = 0.0                                                    # gaps
    adv = torch.randn(B, T, generator=gen) if per_token else torch.randn(B, generator=gen)
    return logp, logp_old, adv, mask


@pytest.mark.parametrize("aggregation", arl.AGGREGATIONS)
@pytest.mark.parametrize("per_token", [False, True])
@pytest.mark.parametrize("eps", [0.1, 0.2])
def test_ppo_loss_matches_loops(aggregation, per_token, eps):
    logp, logp_old, adv, mask = random_batch(0, per_token=per_token)
    loss, stats = arl.ppo_loss(logp, logp_old, adv, mask, eps, aggregation)
    ref_loss, ref_stats = reference_ppo(logp, logp_old, adv, mask, eps, aggregation)
    assert loss.item() == pytest.approx(ref_loss, abs=1e-5)
    assert 0 < ref_stats["clip_fraction"] < 1                              # both regimes present
    for key, value in ref_stats.items():
        assert stats[key] == pytest.approx(value, abs=1e-5), key


@pytest.mark.parametrize("ratio", [0.5, 0.79, 0.95, 1.0, 1.05, 1.21, 1.6])
@pytest.mark.parametrize("advantage", [1.5, -0.7])
def test_clipped_gradient_by_hand(ratio, advantage):
    """Gradient w.r.t. logits: 0 when the clipped term is active, else -A r (onehot - p) / n."""
    eps = 0.2
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(1, 6, generator=gen)                              # [B, V]
    y = torch.tensor([2])
    logp_old = torch.log_softmax(logits, -1)[:, 2:3] - math.log(ratio)     # sets the ratio
    z = logits.clone().requires_grad_()
    logp = torch.log_softmax(z, -1)[:, 2:3]                                # [B, 1]
    loss, stats = arl.ppo_loss(logp, logp_old, torch.tensor([advantage]), torch.ones(1, 1), eps)
    (g,) = torch.autograd.grad(loss, z)
    active = (advantage > 0 and ratio > 1 + eps) or (advantage < 0 and ratio < 1 - eps)
    p = logits.softmax(-1)
    expected = torch.zeros_like(p) if active else \
        -advantage * ratio * (torch.nn.functional.one_hot(y, 6) - p)
    assert torch.allclose(g, expected, atol=1e-6)
    assert stats["clip_fraction"] == (1.0 if active else 0.0)
    outside = ratio < 1 - eps or ratio > 1 + eps
    if outside and not active:                                             # wrong-way move: full gradient
        assert g.abs().max() > 0.01


def test_ratio_one_gives_the_policy_gradient():
    """At logp == logp_old the clipped loss has the gradient of Chapter 6's loss with A as weights."""
    logp, _, adv, mask = random_batch(3, per_token=True)
    for aggregation in arl.AGGREGATIONS:
        a = logp.clone().requires_grad_()
        b = logp.clone().requires_grad_()
        (ga,) = torch.autograd.grad(arl.ppo_loss(a, logp.clone(), adv, mask, 0.2, aggregation)[0], a)
        (gb,) = torch.autograd.grad(arl.reinforce_loss(b, mask, adv, aggregation), b)
        assert torch.allclose(ga, gb, atol=1e-6)


def test_infinite_eps_is_the_unclipped_surrogate():
    logp, logp_old, adv, mask = random_batch(4)
    a = logp.clone().requires_grad_()
    loss, stats = arl.ppo_loss(a, logp_old, adv, mask, float("inf"))
    ratio = (a - logp_old).exp()
    ref = -(ratio * adv[:, None] * mask).sum() / mask.sum()
    assert loss.item() == pytest.approx(ref.item(), abs=1e-6)
    (g1,) = torch.autograd.grad(loss, a, retain_graph=True)
    (g2,) = torch.autograd.grad(ref, a)
    assert torch.allclose(g1, g2, atol=1e-6)
    assert stats["clip_fraction"] == 0.0


def test_ppo_loss_ignores_masked_positions_and_constants():
    logp, logp_old, adv, mask = random_batch(5)
    changed = logp.masked_fill(mask == 0, float("-inf"))                  # -inf off the mask
    changed_old = logp_old.masked_fill(mask == 0, float("-inf"))
    a = changed.clone().requires_grad_()
    loss, stats = arl.ppo_loss(a, changed_old, adv, mask)
    assert loss.item() == pytest.approx(arl.ppo_loss(logp, logp_old, adv, mask)[0].item(), abs=1e-6)
    loss.backward()
    assert torch.isfinite(a.grad).all() and (a.grad[mask == 0] == 0).all()
    assert all(math.isfinite(v) for v in stats.values())
    # advantages and logp_old are constants: no gradient reaches them
    adv_g = adv.clone().requires_grad_()
    old_g = logp_old.clone().requires_grad_()
    arl.ppo_loss(logp.clone().requires_grad_(), old_g, adv_g, mask)[0].backward()
    assert adv_g.grad is None and old_g.grad is None


def test_ppo_loss_stats_at_ratio_one():
    logp, _, adv, mask = random_batch(6)
    _, stats = arl.ppo_loss(logp, logp.clone(), adv, mask)
    assert stats == {"clip_fraction": 0.0, "approx_kl": 0.0, "ratio_mean": 1.0}


def test_chapter_gradient_table_values():
    """The six-token table of Section 8.3: stats as printed in the chapter."""
    ratios = torch.tensor([0.7, 1.0, 1.3, 0.7, 1.0, 1.3])
    adv = torch.tensor([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    logp = torch.zeros(6, 1)
    _, stats = arl.ppo_loss(logp, -ratios.log()[:, None], adv, torch.ones(6, 1))
    k3 = ((ratios - 1) - ratios.log()).mean().item()
    assert stats["clip_fraction"] == pytest.approx(2 / 6)
    assert stats["approx_kl"] == pytest.approx(k3, abs=1e-6)
    assert round(stats["approx_kl"], 4) == 0.0314
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-6)


# ---- value_loss ----------------------------------------------------------------------------

def reference_value_loss(values, returns, mask, values_old=None, eps=None):
    total, n = 0.0, 0
    for b in range(values.shape[0]):
        for t in range(values.shape[1]):
            if mask[b][t] <= 0:
                continue
            v, r = float(values[b][t]), float(returns[b][t])
            err = (v - r) ** 2
            if values_old is not None and eps is not None:
                old = float(values_old[b][t])
                v_clip = old + min(max(v - old, -eps), eps)
                err = max(err, (v_clip - r) ** 2)
            total += err
            n += 1
    return 0.5 * total / max(n, 1)


@pytest.mark.parametrize("clip", [None, 0.1, 0.3])
def test_value_loss_matches_loops(clip):
    gen = torch.Generator().manual_seed(7)
    values = torch.randn(4, 7, generator=gen)
    returns = torch.rand(4, 7, generator=gen)
    values_old = values + 0.3 * torch.randn(4, 7, generator=gen)
    mask = (torch.rand(4, 7, generator=gen) > 0.3).float()
    got = arl.value_loss(values, returns, mask, values_old, clip).item()
    assert got == pytest.approx(reference_value_loss(values, returns, mask, values_old, clip), abs=1e-6)


def test_value_clipping_gradient_cases():
    """Moved towards the target beyond eps: zero gradient; inside or away from it: plain gradient."""
    values = torch.tensor([[0.1, 0.5, -0.5, 0.25]], requires_grad=True)
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    loss = arl.value_loss(values, torch.ones(1, 4), mask, torch.zeros(1, 4), clip_eps=0.2)
    (g,) = torch.autograd.grad(loss, values)
    assert torch.allclose(g, torch.tensor([[-0.3, 0.0, -0.5, 0.0]]), atol=1e-6)
    assert loss.item() == pytest.approx(0.5 * (0.81 + 0.64 + 2.25) / 3, abs=1e-6)
    # without values_old, clip_eps alone does nothing; returns get no gradient
    returns = torch.ones(1, 4, requires_grad=True)
    plain = arl.value_loss(values, returns, mask, clip_eps=0.2)
    assert plain.item() == pytest.approx(0.5 * (0.81 + 0.25 + 2.25) / 3, abs=1e-6)
    plain.backward()
    assert returns.grad is None


# ---- ppo_update against a hand-written update ----------------------------------------------

def tiny_policy(seed=0):
    return arl.TinyAgent(vocab_size=12, d_model=16, n_layers=1, n_heads=2, seed=seed)


def fake_episodes(seed=0):
    """Trajectories with gaps in the action mask and different lengths (no environment needed)."""
    gen = torch.Generator().manual_seed(seed)
    episodes = []
    for length, reward in ((9, 1.0), (7, 0.0), (11, 1.0), (8, 0.0)):
        ids = torch.randint(3, 12, (length,), generator=gen)
        action_mask = torch.zeros(length)
        action_mask[2:4] = 1.0                                             # first action
        action_mask[5:length - 1] = 1.0                                    # second action
        episodes.append(arl.Trajectory(ids, action_mask, torch.zeros(length - 1), reward, [], "", True))
    return episodes


def reference_advantages(rewards, values, mask, gamma, lam):
    """A_t = sum_j (gamma lam)^j delta_{t+j} over the policy positions of each row, explicitly."""
    A = torch.zeros_like(values)
    for b in range(values.shape[0]):
        steps = [i for i in range(values.shape[1]) if mask[b, i] > 0]
        vals = [float(values[b, i]) for i in steps] + [0.0]
        deltas = [float(rewards[b, i]) + gamma * vals[k + 1] - vals[k] for k, i in enumerate(steps)]
        for k, i in enumerate(steps):
            A[b, i] = sum((gamma * lam) ** j * d for j, d in enumerate(deltas[k:]))
    return A


def test_ppo_update_first_step_matches_hand_written_loss():
    torch.manual_seed(0)
    model = arl.ValueHead(tiny_policy())
    torch.nn.init.normal_(model.value.weight, std=0.5)                     # nonzero values
    episodes = fake_episodes()
    gamma, lam, vf_coef, lr = 1.0, 0.9, 0.5, 0.1

    # the reference: one SGD step on -mean(A * ratio) + vf_coef * 0.5 * mean((V - R)^2)
    reference = arl.ValueHead(tiny_policy())
    reference.load_state_dict(model.state_dict())
    ids, action_mask, _, _ = arl.collate_trajectories(episodes)
    with torch.no_grad():
        logits, values = reference(ids)
        logp_old, mask = arl.token_logprobs(logits, ids, action_mask)
    values_old = values[:, :-1]
    rewards = torch.zeros_like(logp_old)
    for b, e in enumerate(episodes):
        rewards[b, int(mask[b].nonzero().max())] = e.reward
    A = reference_advantages(rewards, values_old, mask, gamma, lam)
    R = A + values_old
    logits, values = reference(ids)
    logp, _ = arl.token_logprobs(logits, ids, action_mask)
    keep = mask > 0
    pi_loss = -(A * (logp - logp_old).exp())[keep].mean()
    v_loss = 0.5 * ((values[:, :-1] - R) ** 2)[keep].mean()
    grads = torch.autograd.grad(pi_loss + vf_coef * v_loss, list(reference.parameters()))
    expected = [p.detach() - lr * g for p, g in zip(reference.parameters(), grads)]

    stats = arl.ppo_update(model, torch.optim.SGD(model.parameters(), lr=lr), episodes, epochs=1,
                           minibatches=1, vf_coef=vf_coef, gamma=gamma, lam=lam, grad_clip=1e9)
    for p, e in zip(model.parameters(), expected):
        assert torch.allclose(p, e, atol=1e-6)
    assert stats["steps"] == 1
    assert stats["reward"] == pytest.approx(0.5)
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-6)
    assert stats["clip_fraction"] == 0.0
    assert stats["policy_loss"] == pytest.approx(pi_loss.item(), abs=1e-6)
    assert stats["value_loss"] == pytest.approx(v_loss.item(), abs=1e-6)
    assert stats["tokens"] == int(mask.sum())
    assert stats["advantage_mean"] == pytest.approx(A[keep].mean().item(), abs=1e-6)


def test_ppo_update_steps_and_keys():
    torch.manual_seed(0)
    model = arl.ValueHead(tiny_policy())
    stats = arl.ppo_update(model, torch.optim.Adam(model.parameters(), lr=1e-3), fake_episodes(),
                           epochs=3, minibatches=2)
    assert stats["steps"] == 6
    for key in ("policy_loss", "value_loss", "clip_fraction", "approx_kl", "ratio_mean",
                "grad_norm", "reward", "tokens", "value_mean", "advantage_mean"):
        assert math.isfinite(stats[key]), key
    assert not model.training


def test_ppo_update_without_reward_and_zero_values_changes_nothing():
    """Untrained (zero) value head and no success: every advantage, target and loss is 0."""
    torch.manual_seed(0)
    model = arl.ValueHead(tiny_policy())
    before = [p.detach().clone() for p in model.parameters()]
    episodes = fake_episodes()
    for e in episodes:
        e.reward = 0.0
    stats = arl.ppo_update(model, torch.optim.Adam(model.parameters(), lr=1e-2), episodes)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before))
    assert stats["grad_norm"] == 0.0 and stats["value_mean"] == 0.0


# ---- the lab -------------------------------------------------------------------------------

def test_ppo_lab_schema_and_budget():
    lab = load_lab("ppo_seeds")
    reinforce = load_lab("reinforce_seeds")
    assert lab.kind == "seeds" and lab.lab == "book/labs/ppo_seeds.py"
    assert lab.recipe["method"] == "PPO"
    assert lab.recipe["steps"] == 100 and lab.recipe["episodes_per_step"] == 8
    assert lab.recipe["epochs"] == 2 and lab.recipe["minibatches"] == 2
    assert lab.recipe["lam"] == 0.95 and lab.recipe["clip_eps"] == 0.2
    assert [r["seed"] for r in lab.results["runs"]] == [0, 1, 2]
    assert lab.recipe["rl_tasks"]["ids"] == reinforce.recipe["rl_tasks"]["ids"]
    assert lab.recipe["eval"] == reinforce.recipe["eval"]
    for name in ("rl_t1", "rl_greedy", "heldout_t1"):                      # same warm start, same eval
        assert lab.results["before"][name]["per_task"] == reinforce.results["before"][name]["per_task"]
    for run in lab.results["runs"]:
        assert run["steps"] == 100 and len(run["curve"]) == 100
        assert set(run["after"]) == {"rl_t1", "rl_greedy", "heldout_t1"}
        for key in ("clip_fraction", "approx_kl", "ratio_mean", "value_loss", "grad_norm"):
            assert math.isfinite(run["diagnostics_mean"][key])
        d = (torch.tensor(run["after"]["rl_t1"]["per_task"])
             - torch.tensor(lab.results["before"]["rl_t1"]["per_task"]))
        assert run["paired_diff"]["rl_t1"]["mean"] == pytest.approx(d.mean().item(), abs=1e-9)


def test_ppo_lab_claims_of_the_chapter():
    """Section 8.6: PPO lowered the solve rates on every seed, with small KL and clip fractions."""
    lab = load_lab("ppo_seeds")
    reinforce = load_lab("reinforce_seeds")
    before = lab.results["before"]
    for run in lab.results["runs"]:
        d = run["paired_diff"]["rl_t1"]
        assert run["after"]["rl_t1"]["rate"] < before["rl_t1"]["rate"]
        assert d["mean"] + 2 * d["stderr"] < 0                             # > 2 standard errors below 0
        assert run["after"]["rl_greedy"]["rate"] <= 0.172 + 1e-9 < before["rl_greedy"]["rate"]
        assert run["after"]["heldout_t1"]["rate"] == 0.0
        assert 0.001 < run["diagnostics_mean"]["approx_kl"] < 0.003
        assert run["approx_kl_max"] < 0.025
        assert run["diagnostics_mean"]["clip_fraction"] < 0.011
        assert run["clip_fraction_max"] < 0.045
    rates = sorted(run["after"]["rl_t1"]["rate"] for run in lab.results["runs"])
    assert [round(r, 3) for r in rates] == [0.0, 0.042, 0.094]
    collapsed = lab.results["runs"][2]
    assert collapsed["mean_reward_last"] == 0.0 and collapsed["value_mean_last"] < 0.01
    for run in reinforce.results["runs"]:                                  # the comparison
        assert run["after"]["rl_t1"]["rate"] > before["rl_t1"]["rate"]


def test_detached_value_ablation_supports_the_chapter_claims():
    """Section 8.6: keeping the value loss out of the trunk did not prevent the damage."""
    ablation, ppo = load_lab("ppo_detached_value_seeds"), load_lab("ppo_seeds")
    assert ablation.results["before"] == ppo.results["before"]
    assert ablation.recipe["steps"] * ablation.recipe["episodes_per_step"] == 800
    runs = ablation.results["runs"]
    assert [run["seed"] for run in runs] == [0, 1, 2]
    t1 = [run["paired_diff"]["rl_t1"] for run in runs]
    greedy = [run["paired_diff"]["rl_greedy"] for run in runs]
    assert all(d["mean"] < 0 for d in t1)
    assert sum(-d["mean"] > 2 * d["stderr"] for d in t1) == 2
    assert all(-d["mean"] > 2.8 * d["stderr"] for d in greedy)
    assert all(run["after"]["heldout_t1"]["rate"] == 0.0 for run in runs)


def test_one_step_ppo_from_the_copying_warm_start_gains_less_than_rloo():
    """Appendix C.3, to which 8.7 points: PPO with one optimiser step per batch from the
    weight-4 warm start (mixed batches, a fresh padding per group, 300 updates, three seeds), on
    the same fresh tasks and episodes as RLOO from it: above the control on RL's placements but
    two standard errors below RLOO there; every seed below the control on the unseen placements,
    the mean within two standard errors of it; pass@8 on the unseen placements below RLOO's and
    the warm start's."""
    ppo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_ppo1x1_lr3e-4_u300")
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    assert ppo.recipe["warm"] == "gym_v2_hint_recovery_6000_pad6_copy4" and len(ppo.runs) == 3
    assert ppo.results["task_ids"] == rloo.results["task_ids"]
    assert arl.same_evaluation(ppo.results["control"], rloo.results["control"])
    for run in ppo.linked("runs"):
        assert run.recipe["method"] == "ppo" and all(s["steps"] == 1 and s["clip_fraction"] == 0
                                                     for s in run.log), run.stem
    rates = {name: {half: arl.seeds_per_task(lab, half, "t1") for half in ("rl_groups", "heldout")}
             for name, lab in (("ppo", ppo), ("rloo", rloo))}
    control = {half: arl.sharpening_control(ppo.results["control"], half)[1]
               for half in ("rl_groups", "heldout")}
    d, se = arl.paired(rates["ppo"]["rl_groups"], control["rl_groups"])
    assert d > se
    d, se = arl.paired(rates["ppo"]["rl_groups"], rates["rloo"]["rl_groups"])
    assert d < -2 * se
    d, se = arl.paired(rates["ppo"]["heldout"], control["heldout"])
    assert -2 * se < d < 0
    assert all(arl.paired(t["t1"]["per_task"], control["heldout"])[0] < 0
               for t in ppo.trained("heldout"))
    pass8 = {name: sum(t["t1"]["pass@8"] for t in lab.trained("heldout")) / 3
             for name, lab in (("ppo", ppo), ("rloo", rloo))}
    assert pass8["ppo"] < pass8["rloo"] < ppo.control("heldout")["t1"]["pass@8"]
