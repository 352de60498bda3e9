"""Chapter 10: entropy, token_kl, kl_penalty and regularised_pg_step against independent references.

The references are written out here: explicit softmax sums in Python loops, the three KL
estimators computed by hand with ``math``, expected gradients obtained by enumerating every
token of a small categorical distribution, and a hand-built surrogate loss for the update step.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch

import agentrl as arl
from lab_results import load_lab


# ---- entropy -------------------------------------------------------------------------------

def entropy_by_loops(logits, mask=None):
    """Entropy of softmax(logits[b, i]) for every predicted position, by explicit sums."""
    B, T, V = logits.shape
    out = torch.zeros(B, T - 1, dtype=torch.float64)
    for b in range(B):
        for i in range(T - 1):
            if mask is not None and mask[b, i] == 0:
                continue
            row = [float(x) for x in logits[b, i]]
            m = max(row)
            w = [math.exp(x - m) for x in row]
            s = sum(w)
            out[b, i] = -sum((wi / s) * math.log(wi / s) for wi in w if wi > 0)
    return out


def test_entropy_matches_explicit_softmax_sum():
    gen = torch.Generator().manual_seed(0)
    logits = 3 * torch.randn(3, 6, 11, generator=gen)             # [B, T, V]
    got = arl.entropy(logits)
    assert got.shape == (3, 5)
    assert torch.allclose(got.double(), entropy_by_loops(logits), atol=1e-5)


def test_entropy_mask_with_gaps_zeroes_exactly_the_masked_entries():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 7, 5, generator=gen)
    mask = torch.tensor([[0, 1, 1, 0, 1, 0], [1, 0, 0, 1, 1, 1]], dtype=torch.float32)
    got = arl.entropy(logits, mask)
    ref = entropy_by_loops(logits, mask)
    assert torch.allclose(got.double(), ref, atol=1e-5)
    assert (got[mask == 0] == 0).all()
    assert (got[mask == 1] > 0).all()


def test_entropy_known_values_and_extreme_logits():
    V = 8
    uniform = torch.zeros(1, 2, V)
    assert arl.entropy(uniform).item() == pytest.approx(math.log(V), abs=1e-6)
    peaked = torch.zeros(1, 2, V)
    peaked[..., 3] = 1e4                                          # probability 1, others underflow
    two = torch.full((1, 2, V), float('-inf'))
    two[..., [1, 6]] = 5.0                                        # -inf logits: masked vocabulary
    huge = torch.tensor([[[1e30, -1e30] + [0.0] * (V - 2)] * 2])
    for z, expected in ((peaked, 0.0), (two, math.log(2)), (huge, 0.0)):
        z = z.clone().requires_grad_()
        h = arl.entropy(z)
        assert torch.isfinite(h).all()
        assert h.item() == pytest.approx(expected, abs=1e-6)
        h.sum().backward()
        assert torch.isfinite(z.grad).all()                       # an entropy bonus never NaNs


def test_entropy_gradient_matches_closed_form():
    # dH/dz_a = -p_a (log p_a + H)
    gen = torch.Generator().manual_seed(2)
    z = torch.randn(1, 2, 6, generator=gen, dtype=torch.float64).requires_grad_()
    arl.entropy(z).sum().backward()
    p = torch.softmax(z[0, 0].detach(), -1)
    H = -(p * p.log()).sum()
    assert torch.allclose(z.grad[0, 0], -p * (p.log() + H), atol=1e-6)
    assert (z.grad[0, 1] == 0).all()                              # the last position predicts nothing


# ---- token_kl ------------------------------------------------------------------------------

def test_token_kl_matches_explicit_sum_and_is_zero_for_identical_models():
    gen = torch.Generator().manual_seed(3)
    a = 2 * torch.randn(2, 4, 7, generator=gen)
    b = 2 * torch.randn(2, 4, 7, generator=gen)
    got = arl.token_kl(a, b)
    for i in range(2):
        for t in range(3):
            p = torch.softmax(a[i, t].double(), -1)
            q = torch.softmax(b[i, t].double(), -1)
            assert got[i, t].item() == pytest.approx(sum(
                float(p[v] * (p[v].log() - q[v].log())) for v in range(7)), abs=1e-5)
    assert torch.allclose(arl.token_kl(a, a), torch.zeros(2, 3), atol=1e-6)
    mask = torch.tensor([[1, 0, 1], [0, 0, 1]])
    assert (arl.token_kl(a, b, mask)[mask == 0] == 0).all()


# ---- kl_penalty ----------------------------------------------------------------------------

LOGP = torch.tensor([[-0.5, -2.0, -9.0, -1.0], [-3.0, -0.1, -0.7, -9.0]])
LOGQ = torch.tensor([[-1.5, -1.0, -1.0, -1.0], [-2.0, -0.3, -2.7, -1.0]])
MASK = torch.tensor([[1, 1, 0, 1], [1, 1, 1, 0]])


def by_hand(estimator):
    values = []
    for b in range(2):
        for t in range(4):
            if MASK[b, t] == 0:
                continue
            log_r = float(LOGQ[b, t]) - float(LOGP[b, t])         # log(q / p) at the sample
            values.append({'k1': -log_r, 'k2': 0.5 * log_r ** 2,
                           'k3': math.exp(log_r) - 1 - log_r}[estimator])
    return sum(values) / len(values)


@pytest.mark.parametrize('estimator', ['k1', 'k2', 'k3'])
def test_kl_penalty_matches_hand_computation(estimator):
    got = arl.kl_penalty(LOGP, LOGQ, MASK, estimator).item()
    assert got == pytest.approx(by_hand(estimator), abs=1e-6)


def test_kl_penalty_hand_values_spelled_out():
    # masked tokens: log r = -1, 1, 0, 1, -0.2, -2
    assert arl.kl_penalty(LOGP, LOGQ, MASK, 'k1').item() == pytest.approx(1.2 / 6, abs=1e-6)
    assert arl.kl_penalty(LOGP, LOGQ, MASK, 'k2').item() == pytest.approx(
        0.5 * (1 + 1 + 0 + 1 + 0.04 + 4) / 6, abs=1e-6)


def test_kl_penalty_default_is_k3_and_unknown_estimator_raises():
    assert arl.kl_penalty(LOGP, LOGQ, MASK).item() == pytest.approx(by_hand('k3'), abs=1e-6)
    with pytest.raises(ValueError):
        arl.kl_penalty(LOGP, LOGQ, MASK, 'k4')
    assert arl.kl_penalty(LOGP, LOGQ, torch.zeros_like(MASK)).item() == 0.0


@pytest.mark.parametrize('estimator', ['k1', 'k2', 'k3'])
def test_kl_penalty_gradient_is_the_hand_derivative(estimator):
    logp = LOGP.clone().requires_grad_()
    logq = LOGQ.clone().requires_grad_()
    arl.kl_penalty(logp, logq, MASK, estimator).backward()
    n = int(MASK.sum())
    log_r = LOGQ - LOGP
    expected = {'k1': torch.ones_like(log_r), 'k2': -log_r, 'k3': 1 - log_r.exp()}[estimator] / n
    assert torch.allclose(logp.grad, expected * MASK, atol=1e-6)
    assert logq.grad is None or (logq.grad == 0).all()            # the reference is a constant


def test_expected_gradients_by_enumeration():
    """Differentiated on samples of pi: k1 -> 0, k2 -> grad KL(pi||q), k3 -> grad KL(q||pi)."""
    gen = torch.Generator().manual_seed(4)
    V = 6
    z = torch.randn(V, generator=gen, dtype=torch.float64)
    logq = torch.log_softmax(torch.randn(V, generator=gen, dtype=torch.float64), -1)
    p = torch.softmax(z, -1)
    expected = {}
    for est in ('k1', 'k2', 'k3'):
        total = torch.zeros(V, dtype=torch.float64)
        for x in range(V):                                       # E over x ~ pi, sample held fixed
            leaf = z.clone().requires_grad_()
            logp_x = torch.log_softmax(leaf, -1)[x].view(1, 1)
            arl.kl_penalty(logp_x, logq[x].view(1, 1), torch.ones(1, 1), est).backward()
            total += p[x] * leaf.grad
        expected[est] = total
    leaf = z.clone().requires_grad_()
    lp = torch.log_softmax(leaf, -1)
    g_rev, = torch.autograd.grad((lp.exp() * (lp - logq)).sum(), leaf)
    leaf = z.clone().requires_grad_()
    g_fwd, = torch.autograd.grad((logq.exp() * (logq - torch.log_softmax(leaf, -1))).sum(), leaf)
    assert torch.allclose(expected['k1'], torch.zeros(V, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(expected['k2'], g_rev, atol=1e-10)
    assert torch.allclose(expected['k3'], g_fwd, atol=1e-10)
    assert not torch.allclose(g_rev, g_fwd, atol=1e-3)            # the two directions differ


# ---- regularised_pg_step -------------------------------------------------------------------

@pytest.fixture(scope='module')
def small_batch():
    tok = arl.CharTokenizer()
    tasks = [t for t in arl.make_tasks(seed=0) if t.split == 'train'][:4]
    env = arl.BugFixEnv(cache={})
    episodes = [arl.teacher_rollout(env, t, tok, arl.expert_policy) for t in tasks]
    for e, r in zip(episodes, (1.0, 0.0, 0.0, 1.0)):
        e.reward = r                                             # mixed rewards for the baseline
    return tok, episodes


def fresh_model(seed):
    return arl.TinyAgent(vocab_size=101, d_model=16, n_layers=1, n_heads=2, seed=seed)


def test_regularised_step_without_penalty_equals_reinforce_step(small_batch):
    tok, episodes = small_batch
    a, b = fresh_model(0), fresh_model(0)
    ref = fresh_model(1)
    sa = arl.reinforce_step(a, torch.optim.SGD(a.parameters(), lr=1.0), episodes, grad_clip=1e9)
    sb = arl.regularised_pg_step(b, ref, torch.optim.SGD(b.parameters(), lr=1.0), episodes,
                                 baseline=False, grad_clip=1e9)
    assert sb['loss'] == pytest.approx(sa['loss'], abs=1e-6)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.allclose(pa, pb, atol=1e-6)


def surrogate(model, ref, episodes, kl_coef, kl_mode, estimator, entropy_coef):
    """The step's loss written out episode by episode and token by token."""
    ids, am, _, _ = arl.collate_trajectories(episodes)
    logits, _ = model(ids)
    with torch.no_grad():
        logits_ref, _ = ref(ids)
    logp, mask = arl.token_logprobs(logits, ids, am)
    logq, _ = arl.token_logprobs(logits_ref, ids, am)
    rewards = [e.reward for e in episodes]
    B = len(episodes)
    total = 0.0
    for b in range(B):
        adv = rewards[b] - (sum(rewards) - rewards[b]) / (B - 1)
        positions = [t for t in range(mask.shape[1]) if mask[b, t] > 0]
        for t in positions:
            if kl_mode == 'reward':
                to_go = sum(float((logp[b, s] - logq[b, s]).detach()) for s in positions if s >= t)
                total = total - (adv - kl_coef * to_go) * logp[b, t]
            else:
                total = total - adv * logp[b, t]
                log_r = logq[b, t] - logp[b, t]
                k = {'k1': -log_r, 'k2': 0.5 * log_r ** 2, 'k3': log_r.exp() - 1 - log_r}[estimator]
                total = total + kl_coef * k
        if entropy_coef:
            p = torch.softmax(logits[b, :-1], -1)
            h = -(p * torch.log_softmax(logits[b, :-1], -1)).sum(-1)
            total = total - entropy_coef * sum(h[t] for t in positions)
    return total / B


@pytest.mark.parametrize('kl_mode,estimator,entropy_coef', [
    ('reward', 'k2', 0.0), ('loss', 'k1', 0.0), ('loss', 'k2', 0.0), ('loss', 'k3', 0.05),
    ('reward', 'k3', 0.05)])
def test_regularised_step_matches_hand_surrogate(small_batch, kl_mode, estimator, entropy_coef):
    tok, episodes = small_batch
    ref = fresh_model(1)
    model = fresh_model(2)
    by_hand = copy.deepcopy(model)
    loss = surrogate(by_hand, ref, episodes, 0.3, kl_mode, estimator, entropy_coef)
    grads = torch.autograd.grad(loss, list(by_hand.parameters()))
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    before = [p.detach().clone() for p in model.parameters()]
    stats = arl.regularised_pg_step(model, ref, opt, episodes, kl_coef=0.3, kl_mode=kl_mode,
                                    estimator=estimator, entropy_coef=entropy_coef, grad_clip=1e9)
    assert stats['loss'] == pytest.approx(loss.item(), abs=1e-4)
    for p0, p1, g in zip(before, model.parameters(), grads):
        assert torch.allclose(p0 - p1, g, atol=1e-5)              # SGD with lr 1: the step is the gradient


def test_regularised_step_stats(small_batch):
    tok, episodes = small_batch
    model = fresh_model(3)
    ref = copy.deepcopy(model)
    stats = arl.regularised_pg_step(model, ref, torch.optim.SGD(model.parameters(), lr=0.0),
                                    episodes, kl_coef=1.0)
    assert stats['kl'] == pytest.approx(0.0, abs=1e-6)            # identical to the reference
    assert stats['k1'] == pytest.approx(0.0, abs=1e-6) and stats['k3'] == pytest.approx(0.0, abs=1e-6)
    ids, am, _, _ = arl.collate_trajectories(episodes)
    with torch.no_grad():
        logits, _ = model(ids)
    _, mask = arl.token_logprobs(logits, ids, am)
    assert stats['tokens'] == int(mask.sum())
    assert stats['entropy'] == pytest.approx((arl.entropy(logits, mask).sum() / mask.sum()).item(),
                                             abs=1e-5)
    assert stats['reward'] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        arl.regularised_pg_step(model, ref, torch.optim.SGD(model.parameters(), lr=0.0), episodes,
                                kl_mode='neither')


# ---- the lab's committed record (book/labs/kl_seeds.py) ------------------------------------

@pytest.fixture(scope='module')
def lab():
    return load_lab('kl_seeds')


def window(curve, start):
    return sum(curve[start:start + 10]) / 10


def test_lab_schema(lab):
    assert lab.kind == 'seeds' and lab.lab == 'book/labs/kl_seeds.py'
    assert lab.results['complete'] is True
    arms = lab.results['arms']
    assert set(arms) == set(lab.recipe['arms']) == {'none', 'kl'}
    assert arms['none']['kl_coef'] == 0.0 and arms['kl']['kl_coef'] == 1.0
    for arm in arms.values():
        assert [r['seed'] for r in arm['runs']] == [0, 1, 2]
        for run in arm['runs']:
            assert run['steps'] == len(run['curve']) == len(run['curve_kl']) == len(run['curve_entropy']) == 100
            for name in ('rl_t1', 'rl_greedy', 'heldout_t1'):
                assert name in run['after'] and name in run['paired_diff']
    assert len(lab.recipe['rl_tasks']['ids']) == 64


def test_lab_claims_of_the_chapter(lab):
    for none, pen in zip(lab.results['arms']['none']['runs'], lab.results['arms']['kl']['runs']):
        # the penalty holds the exact KL far below the free run's over the last ten updates
        assert window(pen['curve_kl'], 90) < 0.2 * window(none['curve_kl'], 90)
        # entropy rose slightly without the penalty and fell slightly with it
        assert window(none['curve_entropy'], 90) > window(none['curve_entropy'], 0)
        assert window(pen['curve_entropy'], 90) < window(pen['curve_entropy'], 0)
        # the penalty's gradient dominated: mean norm before clipping several times the free run's
        assert pen['grad_norm_mean'] > 3 * none['grad_norm_mean']
        # no solve-rate gain from the penalty on the RL tasks
        assert pen['after']['rl_t1']['rate'] <= none['after']['rl_t1']['rate']
        for run in (none, pen):
            assert run['after']['heldout_t1']['rate'] == 0.0


def test_the_300_update_penalty_supports_section_10_7():
    """10.7's reading at 300 updates, on the same fresh episodes: KL 0.1 costs nothing on RL's
    placements against RLOO (within two standard errors), recovers part of RLOO's loss on the
    unseen ones (more than two), and stays below the warm start and below mixed batches there."""
    rloo = load_lab('gym_v2_rl_fresh_hg_rloo_lr3e-4_u300')
    kl = load_lab('gym_v2_rl_fresh_hg_rloo_kl0.1_lr3e-4_u300')
    mixed = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u300')
    assert arl.same_evaluation(kl.results['control'], rloo.results['control'])
    t1 = lambda f, split: arl.seeds_per_task(f, split, 't1')
    d, se = arl.paired(t1(kl, 'rl_groups'), t1(rloo, 'rl_groups'))
    assert abs(d) < 2 * se
    d, se = arl.paired(t1(kl, 'heldout'), t1(rloo, 'heldout'))
    assert d > 2 * se
    d, se = arl.paired(t1(kl, 'heldout'), t1(mixed, 'heldout'))
    assert d < -2 * se
    assert arl.mean_se(t1(kl, 'heldout'))[0] < rloo.control('heldout')['t1']['rate']


def test_the_penalty_adds_nothing_to_mixed_batches_at_300_updates():
    """10.7: on top of mixed batches, KL 0.1 leaves the unseen placements where mixing alone
    put them (within two standard errors) and keeps less of the gain on RL's placements."""
    mixed = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_lr3e-4_u300')
    both = load_lab('gym_v2_rl_fresh_hg_mixed_rloo_kl0.1_lr3e-4_u300')
    assert arl.same_evaluation(both.results['control'], mixed.results['control'])
    t1 = lambda f, split: arl.seeds_per_task(f, split, 't1')
    d, se = arl.paired(t1(both, 'heldout'), t1(mixed, 'heldout'))
    assert abs(d) < 2 * se
    d, se = arl.paired(t1(both, 'rl_groups'), t1(mixed, 'rl_groups'))
    assert d < -2 * se


def test_the_leash_from_the_copying_warm_start_stays_level_on_unseen_placements():
    """A KL penalty from the copying warm start (Appendix C.3, which 10.7 points to): RLOO + KL
    0.1 from the weight-4 warm start (three seeds), on the same fresh tasks and episodes as RLOO
    from it, beats the control on RL's placements by two standard errors, is within one of it on
    the unseen ones, differs from RLOO by under two on both halves, and keeps the unseen
    placements' pass@8 at the warm start's where RLOO's fell."""
    kl = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_kl0.1_lr3e-4_u300")
    rloo = load_lab("gym_v2_rl_fresh_hg_mixed_pad6_copy4_fresh8_rloo_lr3e-4_u300")
    assert kl.recipe["warm"] == "gym_v2_hint_recovery_6000_pad6_copy4" and len(kl.runs) == 3
    assert kl.results["task_ids"] == rloo.results["task_ids"]
    assert arl.same_evaluation(kl.results["control"], rloo.results["control"])
    for half, beats in (("rl_groups", True), ("heldout", False)):
        control = arl.sharpening_control(kl.results["control"], half)[1]
        d, se = arl.paired(arl.seeds_per_task(kl, half, "t1"), control)
        assert (d > 2 * se) if beats else (abs(d) < se), half
        d, se = arl.paired(arl.seeds_per_task(kl, half, "t1"), arl.seeds_per_task(rloo, half, "t1"))
        assert abs(d) < 2 * se, half
    pass8 = {name: sum(t["t1"]["pass@8"] for t in lab.trained("heldout")) / 3
             for name, lab in (("kl", kl), ("rloo", rloo))}
    warm = kl.control("heldout")["t1"]["pass@8"]
    assert abs(pass8["kl"] - warm) < 0.005 and pass8["rloo"] < warm - 0.01
