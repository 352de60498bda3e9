"""Batched rollouts (Chapter 5's rollout_batch, trajectory_logprobs) against the one-at-a-time
path, and the benchmark script at a small size.

rollout_batch gives every episode its own generator, so on the same seeds it must sample the
same episodes as rollout: same ids, masks, texts and rewards, log-probabilities within 1e-5
(they come from differently shaped matrix products, so only rounding may differ).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

import agentrl as arl

ROOT = Path(__file__).resolve().parent.parent
WARM_START = ROOT / "book" / "labs" / "results" / "warm_start.pt"


@pytest.fixture(scope="module")
def gym():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tok = arl.CharTokenizer()
    train = [t for t in arl.make_tasks(seed=0) if t.split == "train"]
    return tok, train, arl.BugFixEnv(cache={})


@pytest.fixture(scope="module")
def warm():
    state = torch.load(WARM_START, weights_only=True)
    model = arl.TinyAgent(**state["model_config"])
    model.load_state_dict(state["state_dict"])
    return model.eval()


def seeds(n, seed=0):
    rng = random.Random(seed)
    return [rng.randrange(2 ** 31) for _ in range(n)]


def assert_same(one, batched):
    assert len(one) == len(batched)
    for a, b in zip(one, batched):
        assert torch.equal(a.ids, b.ids)
        assert torch.equal(a.action_mask, b.action_mask)
        assert (a.text, a.turns, a.reward, a.done) == (b.text, b.turns, b.reward, b.done)
        assert a.logp.shape == b.logp.shape
        assert (a.logp - b.logp).abs().max().item() < 1e-5
        assert bool((b.logp[b.action_mask[1:] == 0] == 0).all())


@pytest.mark.parametrize("batch_size", [16, 5])      # 5 < 16 episodes: rows are refilled
@pytest.mark.parametrize("temperature", [1.0, 1.6])  # at 1.6 episodes last 2 to 8 turns
def test_batched_equals_one_at_a_time_from_the_warm_start(gym, warm, batch_size, temperature):
    tok, train, env = gym
    tasks, s = [train[i % 8] for i in range(16)], seeds(16)
    one = [arl.rollout(warm, env, t, tok, seed=x, temperature=temperature)
           for t, x in zip(tasks, s)]
    assert len({len(t.ids) for t in one}) > 1, "episodes should end at different tokens"
    if temperature > 1:
        assert len({len(t.turns) for t in one}) > 1, "episodes should end at different turns"
    assert_same(one, arl.rollout_batch(warm, env, tasks, tok, s, batch_size=batch_size,
                                       temperature=temperature))


def test_batched_equals_one_at_a_time_for_noise_actions(gym):
    """An untrained policy: actions run to max_action_tokens, control ids, eight turns."""
    tok, train, env = gym
    model = arl.TinyAgent(vocab_size=tok.vocab_size, seed=0).eval()
    tasks, s = train[:4], seeds(4, 1)
    kw = dict(max_turns=3, max_action_tokens=20)
    one = [arl.rollout(model, env, t, tok, seed=x, **kw) for t, x in zip(tasks, s)]
    assert_same(one, arl.rollout_batch(model, env, tasks, tok, s, batch_size=3, **kw))


@pytest.mark.parametrize("kw", [{"temperature": 0.0}, {"temperature": 0.7, "top_p": 0.9}])
def test_batched_equals_one_at_a_time_greedy_and_top_p(gym, warm, kw):
    tok, train, env = gym
    tasks, s = train[8:14], seeds(6, 2)
    one = [arl.rollout(warm, env, t, tok, seed=x, **kw) for t, x in zip(tasks, s)]
    assert_same(one, arl.rollout_batch(warm, env, tasks, tok, s, batch_size=4, **kw))


def test_batched_with_a_sandbox_pool_and_threads(gym, warm):
    tok, train, env = gym
    tasks, s = train[:6], seeds(6, 3)
    one = [arl.rollout(warm, env, t, tok, seed=x) for t, x in zip(tasks, s)]
    with arl.SandboxPool(workers=2) as pool:
        fast_env = arl.BugFixEnv(sandbox=pool.run)
        assert_same(one, arl.rollout_batch(warm, fast_env, tasks, tok, s, env_threads=2))


def test_trajectory_logprobs_match_one_padded_batch(gym, warm):
    tok, train, env = gym
    episodes = arl.rollout_batch(warm, env, train[:10], tok, seeds(10, 4))
    ids, action_mask, _, _ = arl.collate_trajectories(episodes)
    with torch.no_grad():
        want, want_mask = arl.token_logprobs(warm(ids)[0], ids, action_mask)
    for max_tokens in (1, 1000, 10 ** 6):              # one per bucket ... one bucket
        logp, mask = arl.trajectory_logprobs(warm, episodes, max_tokens=max_tokens)
        assert torch.equal(mask, want_mask)
        assert (logp - want).abs().max().item() < 1e-5
    logp.sum().backward()
    assert warm.embed.weight.grad is not None and warm.embed.weight.grad.abs().sum() > 0
    warm.zero_grad()


def test_benchmark_runs_at_a_small_size(capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_rollouts
    res = bench_rollouts.run(episodes=8, calls=3, with_kernels=True)
    text = bench_rollouts.report(res)
    assert res["sampling"]["episodes"] == 8
    assert res["sampling"]["same_episodes"] == 8
    assert res["sampling"]["max_logp_diff"] < 1e-5
    assert res["update"]["loss_diff"] < 1e-5
    assert res["update"]["max_weight_diff"] <= 1e-5
    for label in ("sampling wall s", "episodes/s", "tokens/s", "update wall s",
                  "GRPO step wall s", "sandbox test call ms", "protections:",
                  "matmul and attention kernels alone"):
        assert label in text
    for part in ("sampling", "update"):      # the profiler found both kernel families
        inside = res["kernels"][f"{part}_kernels_s"]
        assert 0 < inside["matmul"] and 0 < inside["attention"]
        assert sum(inside.values()) < res["kernels"][f"{part}_s"]
