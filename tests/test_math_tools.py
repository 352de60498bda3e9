"""Appendix A saves: effective_sample_size, kl_estimators, mean_and_stderr, episodes_for_error_bar.

Each function is checked against an independent reference: explicit loops over weights or
samples, closed forms, and exact expectations by enumeration over small categorical
distributions.
"""

from __future__ import annotations

import math

import pytest
import torch

import agentrl as arl


def _categorical(V, seed, scale=1.0):
    gen = torch.Generator().manual_seed(seed)
    return torch.softmax(scale * torch.randn(V, generator=gen, dtype=torch.float64), -1)


# ---------------------------------------------------------------- effective_sample_size


def _ess_loop(weights):
    total = sum(weights)
    squares = sum(w * w for w in weights)
    return total * total / squares


@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_ess_equal_weights_is_n(n):
    for value in [0.0, -3.5, 12.0]:                     # any common log-weight
        ess = arl.effective_sample_size(torch.full((n,), value, dtype=torch.float64))
        assert ess.item() == pytest.approx(n, rel=1e-12)


def test_ess_single_nonzero_weight_is_one():
    w = torch.tensor([0.0, 0.0, 5.0, 0.0], dtype=torch.float64)
    assert arl.effective_sample_size(w.log()).item() == pytest.approx(1.0, rel=1e-12)


def test_ess_matches_loop_formula_and_is_scale_invariant():
    gen = torch.Generator().manual_seed(0)
    log_w = 2.0 * torch.randn(50, generator=gen, dtype=torch.float64)
    reference = _ess_loop([math.exp(v) for v in log_w.tolist()])
    assert arl.effective_sample_size(log_w).item() == pytest.approx(reference, rel=1e-10)
    assert arl.effective_sample_size(log_w + 123.0).item() == pytest.approx(reference, rel=1e-10)


def test_ess_is_stable_for_huge_log_weights():
    # sequence-level log-weights of a few thousand overflow exp() but not the log-space formula
    log_w = torch.tensor([5000.0, 5000.0, 4000.0], dtype=torch.float64)
    ess = arl.effective_sample_size(log_w)
    assert torch.isfinite(ess) and ess.item() == pytest.approx(2.0, rel=1e-12)


def test_ess_reduces_over_dim_and_stays_in_range():
    gen = torch.Generator().manual_seed(1)
    log_w = torch.randn(4, 9, generator=gen, dtype=torch.float64)
    rows = arl.effective_sample_size(log_w, dim=-1)
    cols = arl.effective_sample_size(log_w, dim=0)
    assert rows.shape == (4,) and cols.shape == (9,)
    for i in range(4):
        assert rows[i].item() == pytest.approx(_ess_loop(log_w[i].exp().tolist()), rel=1e-10)
    assert bool(((rows >= 1) & (rows <= 9)).all()) and bool(((cols >= 1) & (cols <= 4)).all())


# ---------------------------------------------------------------- kl_estimators


def test_kl_estimators_match_their_definitions_pointwise():
    logp = torch.tensor([-0.1, -2.0, -0.7, -5.0], dtype=torch.float64)
    logq = torch.tensor([-0.3, -1.0, -0.7, -2.0], dtype=torch.float64)
    k1, k2, k3 = arl.kl_estimators(logp, logq)
    for i in range(4):
        r = math.exp(logq[i].item() - logp[i].item())
        assert k1[i].item() == pytest.approx(-math.log(r), abs=1e-12)
        assert k2[i].item() == pytest.approx(0.5 * math.log(r) ** 2, abs=1e-12)
        assert k3[i].item() == pytest.approx((r - 1) - math.log(r), abs=1e-12)
    assert bool((k2 >= 0).all()) and bool((k3 >= 0).all())
    assert k1.shape == k2.shape == k3.shape == logp.shape


def test_kl_estimators_keep_batch_shape():
    logp = torch.zeros(2, 3, 5, dtype=torch.float64)
    ks = arl.kl_estimators(logp, logp)
    assert all(k.shape == (2, 3, 5) and bool((k == 0).all()) for k in ks)


def test_k1_and_k3_expectations_equal_exact_kl_by_enumeration():
    p, q = _categorical(20, 2), _categorical(20, 3)
    exact = sum(p[i].item() * math.log(p[i].item() / q[i].item()) for i in range(20))
    k1, k2, k3 = arl.kl_estimators(p.log(), q.log())    # one value per outcome
    assert (p * k1).sum().item() == pytest.approx(exact, rel=1e-10)
    assert (p * k3).sum().item() == pytest.approx(exact, rel=1e-10)
    assert abs((p * k2).sum().item() - exact) > 1e-3    # k2 is biased at this distance


def test_k3_sample_mean_approaches_exact_kl():
    p, q = _categorical(30, 4), _categorical(30, 5)
    exact = (p * (p.log() - q.log())).sum().item()
    gen = torch.Generator().manual_seed(6)
    n = 400_000
    x = torch.multinomial(p, n, replacement=True, generator=gen)
    k1, _, k3 = arl.kl_estimators(p.log()[x], q.log()[x])
    for k in (k1, k3):
        stderr = k.std().item() / math.sqrt(n)
        assert abs(k.mean().item() - exact) < 5 * stderr
    assert abs(k3.mean().item() - exact) / exact < 0.02


def test_k3_is_accurate_for_tiny_log_ratios():
    # expm1 avoids the cancellation in exp(x) - 1 - x; k3 ~ x^2 / 2 for small x
    logp = torch.zeros(3, dtype=torch.float64)
    logq = torch.tensor([1e-6, -1e-7, 3e-8], dtype=torch.float64)
    _, k2, k3 = arl.kl_estimators(logp, logq)
    assert torch.allclose(k3, k2, rtol=1e-5, atol=0)


# ---------------------------------------------------------------- mean_and_stderr


def test_mean_and_stderr_against_direct_formula():
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(37, generator=gen, dtype=torch.float64) * 3 + 1
    values = x.tolist()
    n = len(values)
    mean = sum(values) / n
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    m, se = arl.mean_and_stderr(x)
    assert m.item() == pytest.approx(mean, rel=1e-12)
    assert se.item() == pytest.approx(s / math.sqrt(n), rel=1e-12)


def test_mean_and_stderr_bernoulli_and_dims():
    x = torch.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    m, se = arl.mean_and_stderr(x, dim=-1)
    p = 0.75
    assert m.tolist() == [0.75, 0.0]
    # sample variance with n - 1: n p (1 - p) / (n - 1)
    assert se[0].item() == pytest.approx(math.sqrt(4 * p * (1 - p) / 3 / 4), rel=1e-12)
    assert se[1].item() == 0.0
    m0, se0 = arl.mean_and_stderr(x, dim=0)
    assert m0.shape == se0.shape == (4,)


def test_stderr_matches_spread_of_means_over_repetitions():
    gen = torch.Generator().manual_seed(8)
    draws = torch.rand(20_000, 50, generator=gen, dtype=torch.float64)
    means, ses = arl.mean_and_stderr(draws)
    assert ses.mean().item() == pytest.approx(means.std().item(), rel=0.03)
    assert ses.mean().item() == pytest.approx(math.sqrt(1 / 12 / 50), rel=0.02)


# ---------------------------------------------------------------- episodes_for_error_bar


def test_episodes_for_error_bar_closed_form_and_worst_case():
    assert arl.episodes_for_error_bar(0.5, 0.05) == 385          # 384.16 rounded up
    assert arl.episodes_for_error_bar(0.5, 0.01) == 9604
    for p in [0.05, 0.2, 0.5, 0.9]:
        n = arl.episodes_for_error_bar(p, 0.03)
        assert 1.96 * math.sqrt(p * (1 - p) / n) <= 0.03 + 1e-12
        if n > 1:
            assert 1.96 * math.sqrt(p * (1 - p) / (n - 1)) > 0.03
    assert arl.episodes_for_error_bar(0.3, 0.05) == arl.episodes_for_error_bar(0.7, 0.05)
    assert arl.episodes_for_error_bar(0.5, 0.05, z=1.0) == 100
