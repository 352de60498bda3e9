"""Chapter 17's estimators against the estimator bugs it reproduces.

Two real bugs, kept as reference implementations that the book's functions must not share:
HumanEval's `estimate_pass_at_k` returns 1.0 for a problem nothing solved when k > n
(openai/human-eval issue 35), and a bootstrap best-of-k (k of the n outcomes drawn with
replacement, as verl's `best@k`; verl pull request 7240) reports the biased plug-in
1 - (1 - c/n)^k instead of pass@k. And `pass_hat_k` (tau-bench's pass^k) in product form.
Run: .venv/bin/python -m pytest tests/test_evaluation.py -q
"""

import math
import random
import statistics

import pytest

import agentrl as arl


def estimate_pass_at_k_reference(n, c, k):
    """The HumanEval reference estimator's logic (numpy left out)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def bootstrap_best_of_k(outcomes, k, draws, rng):
    return statistics.fmean(max(rng.choice(outcomes) for _ in range(k)) for _ in range(draws))


def test_nothing_correct_is_never_a_pass():
    """The reference scores an unsolved problem 1.0 when k > n; the book refuses the call."""
    assert estimate_pass_at_k_reference(2, 0, 5) == 1.0
    for estimator in (arl.pass_at_k, arl.pass_hat_k):
        with pytest.raises(ValueError):
            estimator(2, 0, 5)
    assert all(arl.pass_at_k(n, 0, k) == 0.0 for n in range(1, 20) for k in range(1, n + 1))


def test_a_bootstrap_best_of_k_is_the_plug_in_and_under_reports():
    """Drawn with replacement, best@k has expectation 1 - (1 - c/n)^k, below the unbiased
    pass@k whenever 0 < c < n and k > 1 (1 of 4 at k = 4: 0.684 against 1)."""
    rng = random.Random(0)
    for n, c, k in ((4, 1, 4), (8, 2, 8), (16, 2, 8)):
        plug_in = 1 - (1 - c / n) ** k
        boot = bootstrap_best_of_k([1] * c + [0] * (n - c), k, 20_000, rng)
        assert abs(boot - plug_in) < 0.01
        assert arl.pass_at_k(n, c, k) - plug_in > 0.05
    assert abs((1 - (3 / 4) ** 4) - 0.684) < 5e-4 and arl.pass_at_k(4, 1, 4) == 1.0


def test_pass_hat_k_is_the_subset_ratio_and_unbiased():
    for n in range(1, 25):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert abs(arl.pass_hat_k(n, c, k) - math.comb(c, k) / math.comb(n, k)) < 1e-12
                assert arl.pass_hat_k(n, c, k) >= 0.0
    n, k = 6, 3
    for p in (0.2, 0.5, 0.9):
        expected = sum(math.comb(n, c) * p ** c * (1 - p) ** (n - c) * arl.pass_hat_k(n, c, k)
                       for c in range(n + 1))
        assert abs(expected - p ** k) < 1e-12
    assert arl.pass_hat_k(1000, 900, 200) > 0.0            # no overflow, no underflow to junk
