"""Chapter 13: the rollout worker pool, weight sync, behaviour_gap and the off-policy corrections.

The pool tests start real processes (fork, gloo on the loopback device) with a small random
TinyAgent and short episodes, and check against computations made here in the test's own
process: episodes sampled directly with collect_episodes, parameters compared bitwise, and the
number of live child processes after every run, including runs whose worker crashes or hangs.
The correction tests compare rollout_correction and behaviour_gap with explicit loops. Two
more read /proc to check that a local pool listens on the loopback address only, and run the
same saved functions under torchrun (three processes on this machine).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from pathlib import Path

import pytest
import torch

import agentrl as arl

ROOT = Path(__file__).resolve().parent.parent
EPISODE = {"max_turns": 2, "max_action_tokens": 8}


@pytest.fixture(scope="module")
def gym():
    torch.set_num_threads(1)                      # the pool forks: no thread pool in the parent
    tok = arl.CharTokenizer()
    tasks = [t for t in arl.make_tasks(seed=0) if t.split == "train"][:4]
    return tok, tasks, arl.BugFixEnv(cache={})


def tiny_agent(seed):
    return arl.TinyAgent(vocab_size=101, d_model=16, n_layers=1, n_heads=2, seed=seed).eval()


def serving(gym, seed=1):
    tok, _, env = gym
    return lambda: arl.serve_rollouts(tiny_agent(seed), env, tok, **EPISODE)


def no_children():
    deadline = time.monotonic() + 5
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not multiprocessing.active_children()


# ---- the pool ------------------------------------------------------------------------------

def test_weight_sync_is_bitwise_and_by_version(gym):
    trainer = tiny_agent(seed=0)
    flat = torch.nn.utils.parameters_to_vector(trainer.parameters()).detach()
    with arl.RolloutPool(2, serving(gym)) as pool:
        before = pool.worker_weights()
        assert not any(torch.equal(w, flat) for w in before)        # workers start elsewhere
        pool.send_weights(trainer, 3)
        assert pool.version == 3
        assert all(torch.equal(w, flat) for w in pool.worker_weights())
        with torch.no_grad():
            next(trainer.parameters()).add_(1.0)
        pool.send_weights(trainer, 3)                                 # same version: not sent
        assert all(torch.equal(w, flat) for w in pool.worker_weights())
        pool.send_weights(trainer, 4)
        new = torch.nn.utils.parameters_to_vector(trainer.parameters()).detach()
        assert all(torch.equal(w, new) for w in pool.worker_weights())
    assert no_children()


def test_one_and_two_workers_give_the_same_episodes(gym):
    tok, tasks, env = gym
    trainer = tiny_agent(seed=0)
    work = [(tasks[i], 2, 50 + i) for i in range(3)]
    runs = {}
    for n in (1, 2):
        with arl.RolloutPool(n, serving(gym)) as pool:
            runs[n] = pool.collect(trainer, 7, work)
        assert no_children()
    assert [v for v, _ in runs[1]] == [7, 7, 7] == [v for v, _ in runs[2]]
    for i, (task, g, seed) in enumerate(work):
        direct = arl.collect_episodes(trainer, env, [task] * g, tok, seed=seed, **EPISODE)
        for a, b, c in zip(direct, runs[1][i][1], runs[2][i][1]):
            assert torch.equal(a.ids, b.ids) and torch.equal(a.ids, c.ids)
            assert torch.equal(a.logp, b.logp) and torch.equal(a.logp, c.logp)
            assert a.reward == b.reward == c.reward


def test_crashing_worker_raises_and_leaves_no_process(gym):
    def crash():
        raise RuntimeError("worker crashed")

    with pytest.raises(RuntimeError):
        with arl.RolloutPool(2, crash, timeout=20) as pool:
            pool.collect(tiny_agent(0), 0, [(gym[1][0], 1, 0)])
    assert no_children()


def test_hanging_worker_times_out_and_is_killed(gym):
    def hang():
        time.sleep(600)

    start = time.monotonic()
    with pytest.raises(RuntimeError):
        with arl.RolloutPool(1, hang, timeout=3) as pool:
            pool.collect(tiny_agent(0), 0, [(gym[1][0], 1, 0)])
    assert time.monotonic() - start < 60
    assert no_children()


def test_exception_in_the_trainer_block_stops_the_workers(gym):
    with pytest.raises(ValueError):
        with arl.RolloutPool(2, serving(gym)):
            raise ValueError("bug in the training loop")
    assert no_children()


def test_pool_rejects_zero_workers():
    with pytest.raises(ValueError):
        arl.RolloutPool(0, lambda: None)


# ---- behaviour_gap and rollout_correction ----------------------------------------------------

LOG_R = [[math.log(1.0), math.log(1.1), math.log(0.9)], [math.log(1.0), math.log(5.0), 0.7]]
MASK = [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]


def weights_by_hand(mode, cap, cap_low=None):
    cap_low = 1 / cap if cap_low is None else cap_low
    out = []
    for row, m in zip(LOG_R, MASK):
        tokens = [lr for lr, k in zip(row, m) if k]
        total = sum(tokens)
        if mode == "tis":
            w = [min(math.exp(lr), cap) for lr in row]
        elif mode == "mis":
            rho = math.exp(total)
            w = [rho if cap_low <= rho <= cap else 0.0] * len(row)
        elif mode == "geo-mask":
            geo = math.exp(total / len(tokens))
            w = [1.0 if cap_low <= geo <= cap else 0.0] * len(row)
        else:
            w = [1.0] * len(row)
        out.append([x if k else 0.0 for x, k in zip(w, m)])
    return torch.tensor(out)


@pytest.mark.parametrize("mode", arl.CORRECTIONS)
@pytest.mark.parametrize("cap", [1.05, 2.0, 6.0])
def test_rollout_correction_matches_loops(mode, cap):
    logp_old = torch.tensor(LOG_R) - 1.5
    logp_mu = torch.full_like(logp_old, -1.5)
    w, stats = arl.rollout_correction(logp_old, logp_mu, torch.tensor(MASK), mode, cap)
    assert torch.allclose(w, weights_by_hand(mode, cap), atol=1e-5)
    rejected = sum(1 for row in weights_by_hand(mode, cap) if row.sum() == 0) / 2
    assert stats["rejected"] == pytest.approx(rejected if mode in ("mis", "geo-mask") else 0.0)
    if mode == "tis":
        over = sum(1 for row, m in zip(LOG_R, MASK) for lr, k in zip(row, m) if k and math.exp(lr) > cap)
        assert stats["truncated"] == pytest.approx(over / 5)
    kept = w[torch.tensor(MASK) > 0]
    if kept.sum() > 0:
        assert stats["ess"] == pytest.approx(float(kept.sum() ** 2 / (kept ** 2).sum() / 5), rel=1e-5)


def test_rollout_correction_cap_low_and_detached():
    logp_old = torch.tensor(LOG_R, requires_grad=True)
    w, _ = arl.rollout_correction(logp_old, torch.zeros(2, 3), torch.tensor(MASK), "mis", 6.0, 1.0)
    assert not w.requires_grad
    assert torch.allclose(w, weights_by_hand("mis", 6.0, 1.0), atol=1e-5)   # 0.99 < 1: rejected
    with pytest.raises(ValueError):
        arl.rollout_correction(logp_old, torch.zeros(2, 3), torch.tensor(MASK), "sequence")


def test_behaviour_gap_by_hand():
    logp_mu = torch.tensor([[-1.0, -2.0, -0.5], [-0.1, -3.0, -9.0]])
    log_r = torch.tensor([[0.1, -0.3, 0.0], [0.05, 0.5, 4.0]])
    gap = arl.behaviour_gap(logp_mu + log_r, logp_mu, torch.tensor(MASK))
    vals = [lr for row, m in zip(log_r.tolist(), MASK) for lr, k in zip(row, m) if k]
    ratios = [math.exp(v) for v in vals]
    mean_r = sum(ratios) / 5
    assert gap["mean_abs"] == pytest.approx(sum(abs(v) for v in vals) / 5, rel=1e-5)
    assert gap["max_abs"] == pytest.approx(0.5, rel=1e-5)
    assert gap["ratio_std"] == pytest.approx(math.sqrt(sum((r - mean_r) ** 2 for r in ratios) / 4), rel=1e-4)
    assert gap["outside"] == pytest.approx(sum(not 0.8 <= r <= 1.25 for r in ratios) / 5)  # 0.74, 1.65
    assert gap["kl"] == pytest.approx(sum(r - 1 - v for r, v in zip(ratios, vals)) / 5, rel=1e-4)


# ---- where the pool listens, and the same code under torchrun ---------------------------------

def listening_addresses(pids):
    """Local IPv4/IPv6 addresses of the TCP sockets in LISTEN state owned by pids (from /proc)."""
    inodes = set()
    for pid in pids:
        for fd in (Path(f"/proc/{pid}/fd")).iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:               # 0A: LISTEN
                addresses.append(fields[1].split(":")[0])
    return addresses


def test_local_pool_listens_on_loopback_only(gym):
    # Without GLOO_SOCKET_IFNAME=lo, gloo listens on the address the host name resolves to: on a
    # host whose name resolves to 127.0.0.1 this passes either way; elsewhere it catches the leak.
    loopback = {"0100007F", "00000000000000000000000001000000"}        # 127.0.0.1, ::1
    with arl.RolloutPool(2, serving(gym)) as pool:
        pool.send_weights(tiny_agent(0), 0)
        addresses = listening_addresses([os.getpid()] + [p.pid for p in pool.processes])
    assert addresses and set(addresses) <= loopback
    assert no_children()


TORCHRUN_SCRIPT = '''
import os
import torch
import agentrl as arl
torch.set_num_threads(1)
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
tok, env = arl.CharTokenizer(), arl.BugFixEnv(cache={})
tasks = [t for t in arl.make_tasks(seed=0) if t.split == "train"][:3]
kw = {"max_turns": 2, "max_action_tokens": 8}
if rank == 0:
    model = arl.TinyAgent(vocab_size=101, d_model=16, n_layers=1, n_heads=2, seed=0).eval()
    with arl.RolloutPool(world - 1) as pool:
        got = pool.collect(model, 1, [(t, 2, 10 + i) for i, t in enumerate(tasks)])
    direct = [arl.collect_episodes(model, env, [t] * 2, tok, seed=10 + i, **kw) for i, t in enumerate(tasks)]
    same = all(torch.equal(a.ids, b.ids) for d, (_, g) in zip(direct, got) for a, b in zip(d, g))
    print("RESULT", same, [v for v, _ in got])
else:
    arl.join_group(rank, world)
    arl.serve_rollouts(arl.TinyAgent(vocab_size=101, d_model=16, n_layers=1, n_heads=2, seed=5).eval(),
                       env, tok, **kw)
    torch.distributed.destroy_process_group()
'''


def test_same_functions_run_under_torchrun(torchrun):
    done = torchrun(TORCHRUN_SCRIPT, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RESULT True [1, 1, 1]" in done.stdout
