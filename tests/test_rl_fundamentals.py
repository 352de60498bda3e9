"""Tests for the Chapter 2 saves: TabularMDP, policy_evaluation, policy_iteration, discounted_returns."""

import itertools

import pytest
import torch

import agentrl as arl


def random_mdp(S, A, gamma, seed):
    """A random dense MDP; some transitions are zeroed so P is not trivially uniform-ish."""
    gen = torch.Generator().manual_seed(seed)
    P = torch.rand(S, A, S, generator=gen, dtype=torch.float64)
    P = P * (torch.rand(S, A, S, generator=gen, dtype=torch.float64) < 0.6)
    P[..., 0] += 1e-3                                          # every row keeps some mass
    P = P / P.sum(-1, keepdim=True)
    R = torch.randn(S, A, generator=gen, dtype=torch.float64)
    return arl.TabularMDP(P, R, gamma)


def random_policy(S, A, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.softmax(2.0 * torch.randn(S, A, generator=gen, dtype=torch.float64), -1)


def all_deterministic_values(mdp):
    """V of every deterministic policy, [A**S, S], by a batched linear solve."""
    S, A = mdp.n_states, mdp.n_actions
    policies = torch.tensor(list(itertools.product(range(A), repeat=S)))
    P_all = mdp.P[torch.arange(S), policies]                   # [N, S, S]
    r_all = mdp.R[torch.arange(S), policies]                   # [N, S]
    eye = torch.eye(S, dtype=torch.float64)
    return torch.linalg.solve(eye - mdp.gamma * P_all, r_all)


# ---------------------------------------------------------------- TabularMDP


def test_mdp_casts_to_float64_and_reports_sizes():
    P = torch.full((3, 2, 3), 1.0 / 3)
    mdp = arl.TabularMDP(P, torch.zeros(3, 2), 0.5)
    assert mdp.P.dtype == torch.float64 and mdp.R.dtype == torch.float64
    assert (mdp.n_states, mdp.n_actions) == (3, 2)


@pytest.mark.parametrize("gamma", [-0.1, 1.0001, 2.0])
def test_mdp_rejects_gamma_outside_unit_interval(gamma):
    P = torch.full((2, 2, 2), 0.5, dtype=torch.float64)
    with pytest.raises(ValueError, match="gamma"):
        arl.TabularMDP(P, torch.zeros(2, 2), gamma)


@pytest.mark.parametrize("gamma", [0.0, 1.0])
def test_mdp_accepts_gamma_at_the_ends(gamma):
    P = torch.full((2, 2, 2), 0.5, dtype=torch.float64)
    arl.TabularMDP(P, torch.zeros(2, 2), gamma)


def test_mdp_rejects_mismatched_shapes():
    P = torch.full((3, 2, 3), 1.0 / 3, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"R must have shape \[S, A\]"):
        arl.TabularMDP(P, torch.zeros(3, 3), 0.9)
    with pytest.raises(ValueError, match=r"P must have shape \[S, A, S\]"):
        arl.TabularMDP(torch.full((3, 2, 4), 0.25, dtype=torch.float64), torch.zeros(3, 2), 0.9)
    with pytest.raises(ValueError, match=r"P must have shape \[S, A, S\]"):
        arl.TabularMDP(torch.full((3, 3), 1.0 / 3, dtype=torch.float64), torch.zeros(3, 2), 0.9)


def test_mdp_rejects_rows_that_are_not_distributions():
    P = torch.full((2, 2, 2), 0.5, dtype=torch.float64)
    P[1, 0] = torch.tensor([0.5, 0.6])
    with pytest.raises(ValueError, match="probability distribution"):
        arl.TabularMDP(P, torch.zeros(2, 2), 0.9)
    P = torch.full((2, 2, 2), 0.5, dtype=torch.float64)
    P[0, 1] = torch.tensor([1.5, -0.5])
    with pytest.raises(ValueError, match="probability distribution"):
        arl.TabularMDP(P, torch.zeros(2, 2), 0.9)


def test_mdp_rejects_non_tensors_and_wrong_name_counts():
    with pytest.raises(TypeError):
        arl.TabularMDP([[[1.0]]], torch.zeros(1, 1), 0.9)
    P = torch.full((2, 2, 2), 0.5, dtype=torch.float64)
    with pytest.raises(ValueError, match="state_names"):
        arl.TabularMDP(P, torch.zeros(2, 2), 0.9, state_names=("a",))
    with pytest.raises(ValueError, match="action_names"):
        arl.TabularMDP(P, torch.zeros(2, 2), 0.9, action_names=("a", "b", "c"))


# ---------------------------------------------------------- policy_evaluation


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9, 0.99])
def test_iterative_evaluation_matches_linear_solve(seed, gamma):
    S, A = 3 + seed % 5, 2 + seed % 3
    mdp = random_mdp(S, A, gamma, seed)
    pi = random_policy(S, A, 100 + seed)
    tol = 1e-11
    V_iter, sweeps = arl.policy_evaluation(mdp, pi, tol=tol)
    V_exact, zero = arl.policy_evaluation(mdp, pi, exact=True)
    assert zero == 0 and sweeps >= 1
    assert V_iter.shape == (S,) and V_iter.dtype == torch.float64
    # contraction: once a sweep moves V by < tol, the remaining error is <= gamma tol / (1 - gamma)
    bound = gamma * tol / (1 - gamma) + 1e-12
    assert (V_iter - V_exact).abs().max().item() <= bound


@pytest.mark.parametrize("seed", range(4))
def test_evaluation_satisfies_bellman_equation(seed):
    S, A = 6, 3
    mdp = random_mdp(S, A, 0.8, seed)
    pi = random_policy(S, A, seed)
    V, _ = arl.policy_evaluation(mdp, pi, exact=True)
    Q = mdp.R + mdp.gamma * mdp.P @ V                          # [S, A]
    assert torch.allclose((pi * Q).sum(-1), V, atol=1e-12)


def test_deterministic_policy_as_indices_equals_one_hot():
    mdp = random_mdp(5, 3, 0.9, 7)
    actions = torch.tensor([2, 0, 1, 1, 0])
    one_hot = torch.nn.functional.one_hot(actions, 3).to(torch.float64)
    V_idx, _ = arl.policy_evaluation(mdp, actions, exact=True)
    V_hot, _ = arl.policy_evaluation(mdp, one_hot, exact=True)
    assert torch.allclose(V_idx, V_hot, atol=0, rtol=0)


def test_evaluation_matches_monte_carlo_with_discounted_returns():
    mdp = random_mdp(4, 2, 0.7, 3)
    pi = random_policy(4, 2, 3)
    V, _ = arl.policy_evaluation(mdp, pi, exact=True)
    gen = torch.Generator().manual_seed(0)
    B, T = 4_000, 50                                           # 0.7**50 ~ 2e-8 truncation
    s = torch.zeros(B, dtype=torch.long)
    rewards = torch.zeros(B, T, dtype=torch.float64)
    for t in range(T):
        a = torch.multinomial(pi[s], 1, generator=gen)[:, 0]
        rewards[:, t] = mdp.R[s, a]
        s = torch.multinomial(mdp.P[s, a], 1, generator=gen)[:, 0]
    G0 = arl.discounted_returns(rewards, mdp.gamma)[:, 0]
    stderr = G0.std().item() / B ** 0.5
    assert abs(G0.mean().item() - V[0].item()) < 5 * stderr


def test_evaluation_rejects_bad_policies():
    mdp = random_mdp(3, 2, 0.9, 0)
    with pytest.raises(ValueError, match=r"\[S, A\]"):
        arl.policy_evaluation(mdp, torch.full((3, 3), 1.0 / 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="probability distribution"):
        arl.policy_evaluation(mdp, torch.full((3, 2), 0.6, dtype=torch.float64))
    with pytest.raises(ValueError, match="deterministic policy"):
        arl.policy_evaluation(mdp, torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="deterministic policy"):
        arl.policy_evaluation(mdp, torch.tensor([0, 1]))
    with pytest.raises(TypeError):
        arl.policy_evaluation(mdp, [[0.5, 0.5]] * 3)


def test_exact_evaluation_reports_singular_system_at_gamma_one():
    P = torch.zeros(2, 1, 2, dtype=torch.float64)
    P[0, 0, 1] = 1.0
    P[1, 0, 1] = 1.0                                           # state 1 is absorbing
    mdp = arl.TabularMDP(P, torch.tensor([[1.0], [0.0]]), 1.0)
    with pytest.raises(ValueError, match="singular"):
        arl.policy_evaluation(mdp, torch.tensor([0, 0]), exact=True)
    V, _ = arl.policy_evaluation(mdp, torch.tensor([0, 0]))   # iteration still works here
    assert V.tolist() == [1.0, 0.0]


def test_iterative_evaluation_raises_when_it_cannot_converge():
    P = torch.ones(1, 1, 1, dtype=torch.float64)               # one state, reward 1 forever
    mdp = arl.TabularMDP(P, torch.ones(1, 1), 1.0)
    with pytest.raises(RuntimeError, match="did not converge"):
        arl.policy_evaluation(mdp, torch.tensor([0]), max_iters=50)


# ----------------------------------------------------------- policy_iteration


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gamma", [0.5, 0.9, 0.95])
def test_policy_iteration_is_optimal_against_brute_force(seed, gamma):
    S, A = 4 + seed % 2, 2 + seed % 2                           # at most 3**5 = 243 policies
    mdp = random_mdp(S, A, gamma, 1000 + seed)
    pi, V, rounds = arl.policy_iteration(mdp)
    assert pi.shape == (S, A) and rounds >= 1
    assert torch.equal(pi.sum(-1), torch.ones(S, dtype=torch.float64))   # one-hot rows
    best = all_deterministic_values(mdp).max(0).values          # [S]
    assert torch.allclose(V, best, atol=1e-10, rtol=0)
    V_check, _ = arl.policy_evaluation(mdp, pi, exact=True)     # V belongs to the returned policy
    assert torch.allclose(V, V_check, atol=1e-12, rtol=0)


def test_policy_iteration_from_any_start_reaches_the_same_value():
    mdp = random_mdp(5, 3, 0.9, 42)
    _, V_default, _ = arl.policy_iteration(mdp)
    for start in (torch.tensor([2, 2, 2, 2, 2]), random_policy(5, 3, 1)):
        _, V, _ = arl.policy_iteration(mdp, start)
        assert torch.allclose(V, V_default, atol=1e-10, rtol=0)


def test_policy_iteration_is_stable_under_ties():
    P = torch.zeros(2, 3, 2, dtype=torch.float64)
    P[:, :, 1] = 1.0                                            # every action leads to state 1
    mdp = arl.TabularMDP(P, torch.zeros(2, 3), 0.9)             # all actions tie everywhere
    pi, V, rounds = arl.policy_iteration(mdp, torch.tensor([1, 2]))
    assert rounds == 1 and pi.argmax(-1).tolist() == [1, 2] and V.abs().max().item() == 0.0


# --------------------------------------------------------- discounted_returns


def returns_naive(rewards, gamma):
    B, T = rewards.shape
    out = torch.zeros(B, T, dtype=rewards.dtype)
    for b in range(B):
        for t in range(T):
            out[b, t] = sum(gamma ** k * rewards[b, t + k].item() for k in range(T - t))
    return out


@pytest.mark.parametrize("gamma", [0.0, 0.37, 0.9, 1.0])
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (4, 12)])
def test_discounted_returns_matches_naive_loop(gamma, shape):
    gen = torch.Generator().manual_seed(shape[1])
    rewards = torch.randn(*shape, generator=gen, dtype=torch.float64)
    got = arl.discounted_returns(rewards, gamma)
    assert got.shape == rewards.shape and got.dtype == rewards.dtype
    assert torch.allclose(got, returns_naive(rewards, gamma), atol=1e-12)


def test_discounted_returns_1d_equals_batch_row_and_keeps_float32():
    rewards = torch.tensor([[0.0, 1.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
    batch = arl.discounted_returns(rewards, 0.5)
    assert batch.dtype == torch.float32
    for b in range(2):
        assert torch.equal(arl.discounted_returns(rewards[b], 0.5), batch[b])
    assert batch[1].tolist() == [1.875, 1.75, 1.5, 1.0]


def test_discounted_returns_zero_padding_does_not_change_earlier_returns():
    rewards = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)
    padded = torch.cat([rewards, torch.zeros(4, dtype=torch.float64)])
    assert torch.equal(arl.discounted_returns(padded, 0.9)[:3], arl.discounted_returns(rewards, 0.9))


def test_discounted_returns_does_not_modify_its_input():
    rewards = torch.tensor([1.0, 2.0, 3.0])
    before = rewards.clone()
    arl.discounted_returns(rewards, 0.9)
    assert torch.equal(rewards, before)


@pytest.mark.parametrize("gamma", [-0.01, 1.01, 3.0])
def test_discounted_returns_rejects_gamma_outside_unit_interval(gamma):
    with pytest.raises(ValueError, match="gamma"):
        arl.discounted_returns(torch.zeros(3), gamma)


def test_discounted_returns_rejects_bad_tensors():
    with pytest.raises(TypeError, match="floating-point"):
        arl.discounted_returns(torch.tensor([0, 1, 0]), 0.9)
    with pytest.raises(TypeError, match="floating-point"):
        arl.discounted_returns([0.0, 1.0], 0.9)
    with pytest.raises(ValueError, match=r"\[T\] or \[B, T\]"):
        arl.discounted_returns(torch.zeros(2, 3, 4), 0.9)
    with pytest.raises(ValueError, match=r"\[T\] or \[B, T\]"):
        arl.discounted_returns(torch.tensor(1.0), 0.9)
