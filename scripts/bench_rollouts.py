"""Time one GRPO step both ways, and the sandbox both ways, from the committed warm start.

    python scripts/bench_rollouts.py                           # 64 episodes, 40 sandbox calls
    python scripts/bench_rollouts.py --episodes 8 --calls 5    # a quick run (the tests use it)
    python scripts/bench_rollouts.py --out book/labs/results/bench_rollouts.json   # the record
    python scripts/bench_rollouts.py --kernels    # also: the share of the fast step in ATen's
                                                  # matmul and attention kernels

Sampling: rollout, one episode at a time with a fresh sandbox process per call, against
rollout_batch (episodes in lockstep through one KV cache, a SandboxPool), on the same
tasks and seeds; it also counts the episodes whose ids, masks and rewards agree and the largest
log-probability difference. Update: Chapter 9's grpo_step (one padded batch, plus a no-grad
forward pass for logp_old) against one step on trajectory_logprobs (length buckets, logp_old
= logp.detach(), exact for a single optimiser step per batch), from the same weights on the same
episodes. Sandbox: the median wall time of a `test` call through BugFixEnv, fresh process
against pre-forked worker. With --kernels, the fast step runs once more under torch's
profiler, which sums the time spent inside the matrix-multiply and attention kernels: a floor
that no rearranging of the Python around them can go below, short of changing the model, the
episodes' lengths or the precision. Torch runs on one thread. Times are wall-clock seconds and,
since the machine may be shared, also the CPU seconds of this process (sandbox work in other
processes is not in the CPU figure). --out writes the figures as a lab record (schema 1, kind
'benchmark', read by the chapters with agentrl.load_record('bench_rollouts')): the run's
settings as its recipe, the machine it ran on, and the three measurements as its results.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import torch

import agentrl as arl
from ext.toolchain import machine

ROOT = Path(__file__).resolve().parent.parent

WARM_START = ROOT / "book" / "labs" / "results" / "warm_start.pt"
LAB = "scripts/bench_rollouts.py"   # the record's `lab`: the script that makes it
GROUP_SIZE = 4
LR = 3e-4


def load_policy():
    state = torch.load(WARM_START, weights_only=True)
    model = arl.TinyAgent(**state["model_config"])
    model.load_state_dict(state["state_dict"])
    return model.eval()


def timed(fn):
    """fn() -> (result, wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def group_seeds(n_episodes, seed):
    """The per-episode seeds collect_groups / collect_episodes draw for `seed`."""
    rng = random.Random(seed)
    return [rng.randrange(2 ** 31) for _ in range(n_episodes)]


def bucketed_grpo_step(model, optimizer, groups):
    """grpo_step's update for one epoch as Chapter 14 saves it (fast_grpo_step): length buckets,
    and no extra forward pass, since with one optimiser step per batch logp_old = logp."""
    rewards = torch.tensor([[e.reward for e in g] for g in groups])           # [B, G]
    episodes = [e for g in groups for e in g]
    return arl.fast_grpo_step(model, optimizer, episodes, arl.group_advantages(rewards).flatten())[0]


def sampling(model, tok, tasks, seed, pool):
    """Both rollout paths on the same (task, seed) pairs -> (figures, batched groups)."""
    repeated = [t for t in tasks for _ in range(GROUP_SIZE)]
    seeds = group_seeds(len(repeated), seed)
    slow_env, fast_env = arl.BugFixEnv(cache={}), arl.BugFixEnv(cache={}, sandbox=pool.run)
    slow, wall_a, cpu_a = timed(lambda: [arl.rollout(model, slow_env, task, tok, seed=s)
                                         for task, s in zip(repeated, seeds)])
    fast, wall_b, cpu_b = timed(lambda: arl.rollout_batch(model, fast_env, repeated, tok, seeds))
    tokens = sum(len(e.ids) for e in fast)
    same = [torch.equal(a.ids, b.ids) and torch.equal(a.action_mask, b.action_mask)
            and a.reward == b.reward and a.text == b.text for a, b in zip(slow, fast)]
    diffs = [(a.logp - b.logp).abs().max().item() for a, b, s in zip(slow, fast, same) if s]
    figures = {
        "episodes": len(fast), "tokens": tokens,
        "policy_tokens": int(sum(e.action_mask.sum() for e in fast)),
        "one_at_a_time_s": wall_a, "one_at_a_time_cpu_s": cpu_a,
        "batched_s": wall_b, "batched_cpu_s": cpu_b,
        "same_episodes": sum(same), "max_logp_diff": max(diffs, default=0.0),
    }
    groups = [fast[i:i + GROUP_SIZE] for i in range(0, len(fast), GROUP_SIZE)]
    return figures, groups


def update(model, groups):
    """Both update paths from the same weights on the same groups."""
    model_a, model_b = copy.deepcopy(model), copy.deepcopy(model)
    opt_a = torch.optim.Adam(model_a.parameters(), lr=LR)
    opt_b = torch.optim.Adam(model_b.parameters(), lr=LR)
    stats, wall_a, cpu_a = timed(lambda: arl.grpo_step(model_a, opt_a, groups))
    loss_b, wall_b, cpu_b = timed(lambda: bucketed_grpo_step(model_b, opt_b, groups))
    change = max((pa - p0).abs().max().item() for pa, p0 in
                 zip(model_a.parameters(), model.parameters()))
    gap = max((pa - pb).abs().max().item() for pa, pb in
              zip(model_a.parameters(), model_b.parameters()))
    padded = len(groups) * GROUP_SIZE * max(len(e.ids) for g in groups for e in g)
    return {"padded_s": wall_a, "padded_cpu_s": cpu_a, "bucketed_s": wall_b,
            "bucketed_cpu_s": cpu_b, "padded_tokens": padded,
            "loss_diff": abs(stats["loss"] - loss_b), "max_weight_change": change,
            "max_weight_diff": gap}


def sandbox(task, calls, pool):
    """Median wall time of one `test` call through BugFixEnv, without a result cache."""
    out = {}
    for name, run in (("fresh", None), ("preforked", pool.run)):
        env = arl.BugFixEnv(sandbox=run)
        times = []
        for _ in range(calls):
            env.reset(task)
            start = time.perf_counter()
            env.step("<call> test </call>")
            times.append(time.perf_counter() - start)
        out[f"{name}_ms"] = 1000 * statistics.median(times)
    out["protections"] = list(pool.protections)
    return out


KERNELS = {"matmul": ("aten::mm", "aten::addmm", "aten::bmm"),
           "attention": ("aten::_scaled_dot_product_flash_attention_for_cpu",
                         "aten::_scaled_dot_product_flash_attention_for_cpu_backward")}


def kernel_seconds(fn):
    """Run fn() under torch's profiler -> (wall seconds, {kernel family: seconds inside it})."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        fn()
        wall = time.perf_counter() - start
    self_us = {e.key: e.self_cpu_time_total for e in prof.key_averages()}
    return wall, {family: sum(self_us.get(name, 0) for name in names) / 1e6
                  for family, names in KERNELS.items()}


def kernels(model, tok, tasks, seed, pool):
    """The fast step's sampling and update, each under the profiler, from the same weights."""
    repeated = [t for t in tasks for _ in range(GROUP_SIZE)]
    env = arl.BugFixEnv(cache={}, sandbox=pool.run)
    episodes = []
    with torch.no_grad():
        wall_s, inside_s = kernel_seconds(lambda: episodes.extend(arl.rollout_batch(
            model, env, repeated, tok, group_seeds(len(repeated), seed))))
    groups = [episodes[i:i + GROUP_SIZE] for i in range(0, len(episodes), GROUP_SIZE)]
    model = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    wall_u, inside_u = kernel_seconds(lambda: bucketed_grpo_step(model, opt, groups))
    return {"sampling_s": wall_s, "sampling_kernels_s": inside_s,
            "update_s": wall_u, "update_kernels_s": inside_u}


def report_kernels(k):
    lines = [f"{'under the profiler':28}{'wall s':>10}"
             + "".join(f"{f + ' s':>12}" for f in KERNELS) + f"{'floor share':>13}"]
    floor = 0.0
    for part in ("sampling", "update"):
        inside = k[f"{part}_kernels_s"]
        floor += sum(inside.values())
        lines.append(f"{part:28}{k[f'{part}_s']:10.3f}"
                     + "".join(f"{inside[f]:12.3f}" for f in KERNELS)
                     + f"{sum(inside.values()) / k[f'{part}_s']:13.2f}")
    lines.append(f"matmul and attention kernels alone: {floor:.3f} s per GRPO step")
    return "\n".join(lines)


def report(res):
    s, u, b = res["sampling"], res["update"], res["sandbox"]
    n, tokens = s["episodes"], s["tokens"]
    lines = [f"{n} episodes ({n // GROUP_SIZE} tasks x {GROUP_SIZE}), {tokens} tokens, "
             f"{s['policy_tokens']} of them the policy's",
             f"{'':28}{'one at a time':>16}{'batched':>12}{'ratio':>8}"]
    for label, a, c in (("sampling wall s", s["one_at_a_time_s"], s["batched_s"]),
                        ("sampling CPU s", s["one_at_a_time_cpu_s"], s["batched_cpu_s"])):
        lines.append(f"{label:28}{a:16.3f}{c:12.3f}{a / c:8.1f}")
    lines.append(f"{'episodes/s (wall)':28}{n / s['one_at_a_time_s']:16.1f}"
                 f"{n / s['batched_s']:12.1f}")
    lines.append(f"{'tokens/s (wall)':28}{tokens / s['one_at_a_time_s']:16.0f}"
                 f"{tokens / s['batched_s']:12.0f}")
    lines.append(f"same episodes: {s['same_episodes']}/{n}, max |logp difference| on them "
                 f"{s['max_logp_diff']:.1e}")
    lines.append(f"{'':28}{'padded+old fwd':>16}{'bucketed':>12}{'ratio':>8}")
    for label, a, c in (("update wall s", u["padded_s"], u["bucketed_s"]),
                        ("update CPU s", u["padded_cpu_s"], u["bucketed_cpu_s"])):
        lines.append(f"{label:28}{a:16.3f}{c:12.3f}{a / c:8.1f}")
    lines.append(f"update: {u['padded_tokens']} padded tokens; loss differs by "
                 f"{u['loss_diff']:.1e}, weights by {u['max_weight_diff']:.1e} "
                 f"(the step moved them by {u['max_weight_change']:.1e})")
    slow = s["one_at_a_time_s"] + u["padded_s"]
    fast = s["batched_s"] + u["bucketed_s"]
    lines.append(f"{'GRPO step wall s':28}{slow:16.3f}{fast:12.3f}{slow / fast:8.1f}")
    lines.append(f"{'sandbox test call ms':28}{b['fresh_ms']:16.2f}{b['preforked_ms']:12.2f}"
                 f"{b['fresh_ms'] / b['preforked_ms']:8.1f}   (fresh vs pre-forked, median)")
    lines.append("protections: " + ", ".join(b["protections"]))
    if "kernels" in res:
        lines.append(report_kernels(res["kernels"]))
    return "\n".join(lines)


def run(episodes=64, calls=40, seed=0, workers=1, with_kernels=False):
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tok = arl.CharTokenizer()
    train = [t for t in arl.make_tasks(seed=0) if t.split == "train"]
    tasks = train[:max(1, episodes // GROUP_SIZE)]
    model = load_policy()
    with arl.SandboxPool(workers=workers) as pool:
        res = {"sampling": None, "update": None, "sandbox": None}
        res["sampling"], groups = sampling(model, tok, tasks, seed, pool)
        res["update"] = update(model, groups)
        res["sandbox"] = sandbox(train[0], calls, pool)
        if with_kernels:
            res["kernels"] = kernels(model, tok, tasks, seed, pool)
    res["config"] = {"episodes": len(tasks) * GROUP_SIZE, "group_size": GROUP_SIZE,
                     "calls": calls, "seed": seed, "sandbox_workers": workers,
                     "torch_threads": torch.get_num_threads()}
    return res


def record(res, lab=LAB):
    """A benchmark's figures as a lab record (schema 1): its config as the recipe, the machine,
    and the measurements (here sampling, update, sandbox and, with --kernels, kernels) as the
    results. Every benchmark script writes its record through this and write_record."""
    results = {key: value for key, value in res.items() if key != "config"}
    return {"schema": arl.RECORD_SCHEMA, "lab": lab, "kind": "benchmark",
            "recipe": res["config"], "machine": machine(), "results": results}


def write_record(path, res, lab=LAB):
    """Write record(res, lab) to path atomically: a temporary file beside it, then a rename."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record(res, lab), indent=1) + "\n")
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64, help="a multiple of 4")
    parser.add_argument("--calls", type=int, default=40, help="sandbox calls per path")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="SandboxPool workers")
    parser.add_argument("--kernels", action="store_true",
                        help="also time the fast step's matmul and attention kernels")
    parser.add_argument("--out", type=Path, help="also write the figures as a lab record (JSON)")
    args = parser.parse_args(argv)
    res = run(args.episodes, args.calls, args.seed, args.workers, args.kernels)
    print(report(res))
    if args.out:
        write_record(args.out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
