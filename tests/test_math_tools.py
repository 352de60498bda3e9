"""Appendix A saves: importance sampling, KL estimators, error bars, comparing two arms (A.8).

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


# ---------------------------------------------------------------- comparing two arms (A.8)


def _gaussian_clusters(R, C, n, sd_cluster, sd_task, seed):
    """R evaluations of C clusters of n tasks: effect 0.1 + cluster part + task part, [R, C * n]."""
    gen = torch.Generator().manual_seed(seed)
    u = sd_cluster * torch.randn(R, C, 1, generator=gen, dtype=torch.float64)
    v = sd_task * torch.randn(R, C, n, generator=gen, dtype=torch.float64)
    return (0.1 + u + v).reshape(R, C * n)


def test_paired_stderr_exact_small_case_and_mean_and_stderr():
    mean, se = arl.paired_stderr([0, 1, 1, 0], [1, 1, 1, 0])   # differences 1, 0, 0, 0
    assert mean == 0.25 and se == pytest.approx(0.25, rel=1e-12)
    gen = torch.Generator().manual_seed(20)
    a = torch.rand(50, generator=gen, dtype=torch.float64)
    b = torch.rand(50, generator=gen, dtype=torch.float64)
    ref_mean, ref_se = arl.mean_and_stderr(b - a)
    mean, se = arl.paired_stderr(a.tolist(), b.tolist())
    assert mean == pytest.approx(ref_mean.item(), abs=1e-14)
    assert se == pytest.approx(ref_se.item(), rel=1e-12)


def test_paired_stderr_rejects_bad_input():
    with pytest.raises(ValueError, match='same tasks'):
        arl.paired_stderr([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ValueError, match='at least 2 tasks'):
        arl.paired_stderr([0.5], [0.7])
    with pytest.raises(ValueError, match='at least 2 tasks'):
        arl.paired_stderr([], [])
    with pytest.raises(TypeError, match='tolist'):
        arl.paired_stderr(torch.zeros(3), torch.ones(3))
    with pytest.raises(ValueError, match='not finite'):
        arl.paired_stderr([0.1, float('nan')], [0.2, 0.3])


def test_cluster_stderr_exact_small_case():
    # residuals -1.5 -0.5 | 0.5 1.5: cluster sums -2 and 2; SE^2 = 2/1 * (4 + 4) / 16 = 1
    mean, se = arl.cluster_stderr([1.0, 2.0, 3.0, 4.0], ['x', 'x', 'y', 'y'])
    assert mean == 2.5 and se == pytest.approx(1.0, rel=1e-12)


def test_cluster_stderr_with_one_task_per_cluster_is_the_paired_one():
    gen = torch.Generator().manual_seed(21)
    d = torch.randn(40, generator=gen, dtype=torch.float64).tolist()
    mean, se = arl.cluster_stderr(d, [('t', i, 'kind') for i in range(40)])
    assert (mean, se) == pytest.approx(arl.paired_stderr([0.0] * 40, d), rel=1e-12)


def test_cluster_stderr_ignores_label_order_and_shift():
    values = [0.3, -0.1, 0.8, 0.2, 0.0, 0.5, -0.4]
    labels = ['a', 'b', 'a', 'c', 'b', 'c', 'a']
    _, se = arl.cluster_stderr(values, labels)
    order = [3, 0, 6, 1, 5, 2, 4]
    _, se_perm = arl.cluster_stderr([values[i] for i in order], [labels[i] for i in order])
    _, se_shift = arl.cluster_stderr([v + 7.0 for v in values], labels)
    assert se_perm == pytest.approx(se, rel=1e-12) and se_shift == pytest.approx(se, rel=1e-9)


def test_cluster_stderr_is_unbiased_for_equal_clusters_and_paired_is_not():
    R, C, n, sd_c, sd_t = 3000, 20, 4, 0.2, 0.3
    values = _gaussian_clusters(R, C, n, sd_c, sd_t, seed=22)
    labels = [i // n for i in range(C * n)]
    exact = sd_c**2 / C + sd_t**2 / (C * n)
    clustered = [arl.cluster_stderr(row, labels)[1] ** 2 for row in values.tolist()]
    paired = [arl.paired_stderr([0.0] * (C * n), row)[1] ** 2 for row in values.tolist()]
    assert sum(clustered) / R == pytest.approx(exact, rel=0.05)
    assert values.mean(-1).var().item() == pytest.approx(exact, rel=0.08)
    assert sum(paired) / R < 0.6 * exact     # tasks treated as independent: far too small


def test_cluster_stderr_rejects_bad_input():
    with pytest.raises(ValueError, match='at least 2 clusters'):
        arl.cluster_stderr([0.1, 0.2, 0.3], ['a', 'a', 'a'])
    with pytest.raises(ValueError, match='3 tasks but clusters has 2'):
        arl.cluster_stderr([0.1, 0.2, 0.3], ['a', 'b'])
    with pytest.raises(ValueError, match='at least 2 clusters'):
        arl.cluster_stderr([], [])
    with pytest.raises(TypeError):
        arl.cluster_stderr([0.1, 0.2], 'ab')


def test_seed_stderr_exact_cases():
    tasks = [0.5, -0.25, 0.0, 1.0, 0.25]
    same = arl.seed_stderr([tasks, tasks, tasks])
    assert same.seed_spread == 0 and same.seed_se == 0
    assert same.noise_spread == pytest.approx(0.0, abs=1e-12)
    assert same.task_se == pytest.approx(arl.paired_stderr([0.0] * 5, tasks)[1], rel=1e-12)
    assert same.total_se == same.task_se
    # additive seed offsets and nothing else: the residual is 0 and the seed part is exact
    offsets = [0.1, -0.2, 0.4]
    shifted = arl.seed_stderr([[x + g for x in tasks] for g in offsets])
    spread = statistics_stdev(offsets)
    assert shifted.noise_spread == pytest.approx(0.0, abs=1e-12)
    assert shifted.seed_spread == pytest.approx(spread, rel=1e-12)
    assert shifted.seed_se == pytest.approx(spread / math.sqrt(3), rel=1e-12)
    assert shifted.mean == pytest.approx(sum(tasks) / 5 + sum(offsets) / 3, rel=1e-12)
    assert shifted.total_se == pytest.approx(math.hypot(shifted.task_se, shifted.seed_se))
    assert shifted.seed_means == pytest.approx([sum(tasks) / 5 + g for g in offsets])


def statistics_stdev(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def test_seed_stderr_total_matches_the_exact_variance():
    R, S, N, sd_task, sd_seed, sd_rest = 2000, 4, 60, 0.3, 0.06, 0.15
    gen = torch.Generator().manual_seed(23)
    d = (sd_task * torch.randn(R, 1, N, generator=gen, dtype=torch.float64)
         + sd_seed * torch.randn(R, S, 1, generator=gen, dtype=torch.float64)
         + sd_rest * torch.randn(R, S, N, generator=gen, dtype=torch.float64))
    fits = [arl.seed_stderr(d[r].tolist()) for r in range(R)]
    exact_task = sd_task**2 / N + sd_rest**2 / (N * S)
    exact_seed = sd_seed**2 / S
    assert sum(f.task_se**2 for f in fits) / R == pytest.approx(exact_task, rel=0.05)
    assert sum(f.seed_se**2 for f in fits) / R == pytest.approx(exact_seed, rel=0.1)
    spread = statistics_stdev([f.mean for f in fits])
    assert math.sqrt(sum(f.total_se**2 for f in fits) / R) == pytest.approx(spread, rel=0.05)


def test_seed_stderr_clustered_task_part_and_errors():
    rows = [[0.1, 0.3, -0.2, 0.4], [0.0, 0.5, -0.1, 0.2]]
    labels = ['p', 'p', 'q', 'q']
    fit = arl.seed_stderr(rows, labels)
    averaged = [(x + y) / 2 for x, y in zip(*rows)]
    assert fit.task_se == pytest.approx(arl.cluster_stderr(averaged, labels)[1], rel=1e-12)
    with pytest.raises(ValueError, match='at least 2 seeds'):
        arl.seed_stderr([[0.1, 0.2]])
    with pytest.raises(ValueError, match='same tasks'):
        arl.seed_stderr([[0.1, 0.2], [0.1, 0.2, 0.3]])
    with pytest.raises(ValueError, match='at least 2 tasks'):
        arl.seed_stderr([[0.1], [0.2]])
    with pytest.raises(ValueError, match='at least 2 seeds'):
        arl.seed_stderr([])


def test_min_detectable_effect_quantiles_and_power():
    from statistics import NormalDist
    z = NormalDist()
    assert arl.min_detectable_effect(1.0) == pytest.approx(z.inv_cdf(0.975) + z.inv_cdf(0.8))
    assert arl.min_detectable_effect(1.0) == pytest.approx(2.8016, abs=1e-4)
    assert arl.min_detectable_effect(0.0) == 0.0
    assert arl.min_detectable_effect(0.03, comparisons=4) == pytest.approx(
        arl.min_detectable_effect(0.03, alpha=0.05 / 4))
    assert arl.min_detectable_effect(0.03, comparisons=1) == arl.min_detectable_effect(0.03)
    se = 0.02
    for power in (0.5, 0.8, 0.9):
        mde = arl.min_detectable_effect(se, power=power)
        reached = z.cdf(mde / se - z.inv_cdf(0.975)) + z.cdf(-mde / se - z.inv_cdf(0.975))
        assert reached == pytest.approx(power, abs=1e-3)


def test_min_detectable_effect_power_by_simulation():
    gen = torch.Generator().manual_seed(24)
    R, N, sd = 20_000, 100, 0.3
    mde = arl.min_detectable_effect(sd / math.sqrt(N))
    x = mde + sd * torch.randn(R, N, generator=gen, dtype=torch.float64)
    mean, se = arl.mean_and_stderr(x)
    assert ((mean / se).abs() > 1.96).double().mean().item() == pytest.approx(0.8, abs=0.015)


def test_min_detectable_effect_rejects_bad_input():
    with pytest.raises(ValueError, match='se'):
        arl.min_detectable_effect(-0.1)
    with pytest.raises(ValueError, match='se'):
        arl.min_detectable_effect(float('nan'))
    with pytest.raises(ValueError, match='alpha and power'):
        arl.min_detectable_effect(0.1, alpha=1.5)
    with pytest.raises(ValueError, match='alpha and power'):
        arl.min_detectable_effect(0.1, power=0.0)
    for m in (0, 1.5):
        with pytest.raises(ValueError, match='comparisons'):
            arl.min_detectable_effect(0.1, comparisons=m)


def test_bernoulli_sample_var_is_the_sample_variance_of_the_episodes():
    # per task, rate (1 - rate) * k / (k - 1) is the n - 1 sample variance of its 0/1 outcomes
    episodes = [[1, 0, 0, 1, 1, 0, 0, 0], [1] * 8, [0, 1, 0, 0, 0, 0, 0, 0]]
    rates = [sum(e) / 8 for e in episodes]
    expected = sum(statistics_stdev(e) ** 2 for e in episodes) / 3
    assert arl.bernoulli_sample_var(rates, 8) == pytest.approx(expected, rel=1e-12)
    gen = torch.Generator().manual_seed(25)
    p = torch.rand(4000, generator=gen, dtype=torch.float64)
    draws = (torch.rand(4000, 4, generator=gen, dtype=torch.float64) < p[:, None]).double()
    estimate = arl.bernoulli_sample_var(draws.mean(-1).tolist(), 4)
    assert estimate == pytest.approx((p * (1 - p)).mean().item(), rel=0.05)
    with pytest.raises(ValueError, match='at least 2 samples'):
        arl.bernoulli_sample_var([0.5], 1)
    with pytest.raises(ValueError, match=r'\[0, 1\]'):
        arl.bernoulli_sample_var([0.5, 1.5], 8)
    with pytest.raises(ValueError, match='empty'):
        arl.bernoulli_sample_var([], 8)


def _anova_loop(values, labels):
    groups = {}
    for x, c in zip(values, labels):
        groups.setdefault(c, []).append(x)
    N, C = len(values), len(groups)
    mean = sum(values) / N
    msw = sum((x - sum(g) / len(g)) ** 2 for g in groups.values() for x in g) / (N - C)
    msb = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values()) / (C - 1)
    n0 = (N - sum(len(g) ** 2 for g in groups.values()) / N) / (C - 1)
    return msw, msb, n0


def test_variance_components_match_one_way_anova_by_hand():
    values = [0.2, 0.4, 0.1, 0.9, 0.7, -0.3, 0.0, 0.1, 0.5]
    labels = ['a', 'a', 'a', 'b', 'b', 'c', 'c', 'c', 'c']
    msw, msb, n0 = _anova_loop(values, labels)
    comp = arl.variance_components(values, labels, samples=4, sample_var=0.2)
    assert comp.cluster == pytest.approx(max(0.0, (msb - msw) / n0), rel=1e-12)
    assert comp.task == pytest.approx(max(0.0, msw - 0.2 / 4), rel=1e-12)
    assert comp.sample == 0.2
    flat = arl.variance_components([1.0, 1.0, 2.0, 2.0], ['a', 'a', 'b', 'b'])
    assert flat.task == 0.0 and flat.cluster == pytest.approx(0.5, rel=1e-12)
    noisy = arl.variance_components([1.0, 0.0, 1.0, 0.0], ['a', 'a', 'b', 'b'])
    assert noisy.cluster == 0.0                       # clipped: clusters differ less than tasks


def test_variance_components_are_unbiased_by_simulation():
    R, C, n, sd_c, sd_t = 2000, 25, 3, 0.3, 0.2
    values = _gaussian_clusters(R, C, n, sd_c, sd_t, seed=26)
    labels = [i // n for i in range(C * n)]
    fits = [arl.variance_components(row, labels) for row in values.tolist()]
    assert sum(f.cluster for f in fits) / R == pytest.approx(sd_c**2, rel=0.05)
    assert sum(f.task for f in fits) / R == pytest.approx(sd_t**2, rel=0.05)


def test_variance_components_reject_bad_input():
    with pytest.raises(ValueError, match='one task'):
        arl.variance_components([0.1, 0.2, 0.3], ['a', 'b', 'c'])
    with pytest.raises(ValueError, match='at least 2 clusters'):
        arl.variance_components([0.1, 0.2], ['a', 'a'])
    with pytest.raises(ValueError, match='sample_var'):
        arl.variance_components([0.1, 0.2, 0.3, 0.4], ['a', 'a', 'b', 'b'], sample_var=-1.0)
    with pytest.raises(ValueError, match='2 labels'):
        arl.variance_components([0.1, 0.2, 0.3], ['a', 'b'])


def test_effective_clusters_and_design_stderr_for_unequal_clusters():
    assert arl.effective_clusters(['a'] * 4 + ['b'] * 4 + ['c'] * 4) == pytest.approx((3.0, 4.0))
    assert arl.effective_clusters(['a', 'b', 'b', 'b']) == pytest.approx((1.6, 2.5))
    comp = arl.VarianceComponents(cluster=0.02, task=0.05, sample=0.2)
    sizes = [1, 2, 2, 4, 6]
    labels = [c for c, n in enumerate(sizes) for _ in range(n)]
    N, k = sum(sizes), 8
    exact = (0.02 * sum(n * n for n in sizes) / N**2 + (0.05 + 0.2 / k) / N)
    C_eff, n_eff = arl.effective_clusters(labels)
    assert arl.design_stderr(comp, C_eff, n_eff, k) ** 2 == pytest.approx(exact, rel=1e-12)
    assert arl.design_stderr(comp, 10, 3, 4) == pytest.approx(
        math.sqrt(0.02 / 10 + 0.05 / 30 + 0.2 / 120), rel=1e-12)
    with pytest.raises(ValueError, match='non-empty'):
        arl.effective_clusters([])
    with pytest.raises(ValueError, match='>= 1'):
        arl.design_stderr(comp, 0, 3, 4)


def test_design_stderr_matches_simulated_spread():
    R, C, n, sd_c, sd_t = 4000, 12, 5, 0.2, 0.4
    values = _gaussian_clusters(R, C, n, sd_c, sd_t, seed=27)
    comp = arl.VarianceComponents(sd_c**2, sd_t**2, 0.0)
    assert values.mean(-1).std().item() == pytest.approx(arl.design_stderr(comp, C, n, 1),
                                                         rel=0.04)


def test_plan_design_feasible_case_gives_the_smallest_resources():
    comp = arl.VarianceComponents(cluster=0.005, task=0.04, sample=0.3)
    plan = arl.plan_design(comp, 0.05, 60, 4, 8)
    mde = lambda C, n, k: arl.min_detectable_effect(arl.design_stderr(comp, C, n, k))
    assert plan.mde == pytest.approx(mde(60, 4, 8)) and plan.mde > 0.05
    assert plan.floor == pytest.approx(arl.min_detectable_effect(math.sqrt(0.005 / 60)))
    assert mde(60, plan.tasks_per_cluster, 8) <= 0.05 < mde(60, plan.tasks_per_cluster - 1, 8)
    assert mde(plan.clusters, 4, 8) <= 0.05 < mde(plan.clusters - 1, 4, 8)
    assert mde(60, 4, plan.samples) <= 0.05 < mde(60, 4, plan.samples - 1)
    assert 'reachable' in plan.note
    # with two tasks per cluster the task term alone is too large: episodes cannot help
    two = arl.plan_design(comp, 0.05, 60, 2, 8)
    assert two.samples is None and two.tasks_per_cluster == plan.tasks_per_cluster
    done = arl.plan_design(comp, 0.2, 60, 2, 8)
    assert done.mde <= 0.2 and done.note.startswith('resolves')


def test_plan_design_impossible_case_says_so():
    comp = arl.VarianceComponents(cluster=0.022, task=0.048, sample=0.018)
    plan = arl.plan_design(comp, 0.05, 30, 10, 8)
    assert plan.tasks_per_cluster is None and plan.samples is None
    assert plan.floor > 0.05 and plan.mde > plan.floor
    assert 'out of reach' in plan.note and f'{plan.clusters} clusters' in plan.note
    mde = lambda C: arl.min_detectable_effect(arl.design_stderr(comp, C, 10, 8))
    assert mde(plan.clusters) <= 0.05 < mde(plan.clusters - 1)
    with pytest.raises(ValueError, match='effect'):
        arl.plan_design(comp, 0.0, 30, 10, 8)
    stricter = arl.plan_design(comp, 0.05, 30, 10, 8, comparisons=2)
    assert stricter.clusters > plan.clusters and stricter.floor > plan.floor
