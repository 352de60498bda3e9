"""The capstone's costs: TinyAgent's samplers beside `transformers`' generate, and one RL step.

    python scripts/bench_capstone.py            # batch 64, 32-token prompts, 64 new tokens, 5 rounds
    python scripts/bench_capstone.py --quick    # a tiny run (the tests use it)
    python scripts/bench_capstone.py --out book/labs/results/bench_capstone.json   # the record

Generation: the same shape three ways, interleaved round by round in one run so that a change in
the machine's load falls on all three alike: `agentrl.sample` (Chapter 3: one padded batch, KV
cache), the lockstep engine of `agentrl.rollout_batch` (Chapter 5: rows packed without padding
into one KV cache), and `transformers`' LlamaForCausalLM.generate (KV cache on) on a config of
TinyAgent's shape built in code (width, depth, heads, vocabulary, MLP width, tied embeddings; no
download). Every path decodes greedily from the same prompts for exactly --new-tokens tokens (no
stop token), so each produces batch x new tokens; the figure is tokens per second of wall time,
the median over --rounds rounds, and the ratio of each TinyAgent path to `generate`. The Llama
block is not TinyAgent's block (RMSNorm and a gated MLP of three matrices against LayerNorm and
a two-matrix GELU MLP; the parameter counts are printed): the comparison is of the generation
loop at one shape, not of two identical networks.

One RL step: --steps updates of the capstone's RL stage (book/labs/capstone.py, RLOO on 16 tasks
x 4 episodes with fresh padding) from the committed warm start, timed in three parts: sampling
(policy forward passes and the environments' Python), the sandbox calls inside it (each
`test` and `submit` through the pre-forked SandboxPool, with the task cache the labs keep), and
the update (`agentrl.fast_grpo_step`). Torch runs on one thread. --out writes a lab record (schema
1, kind 'benchmark'): the settings as its recipe, the machine, and the figures as its results.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "labs"))

import agentrl as arl  # noqa: E402
import bench_rollouts  # noqa: E402  (the benchmarks' record writer)

LAB = "scripts/bench_capstone.py"
WARM = "gym_v2_hint_recovery_6000_pad6_copy4"


def llama_twin(model):
    """A LlamaForCausalLM config of TinyAgent `model`'s shape, randomly initialised."""
    from transformers import LlamaConfig, LlamaForCausalLM
    block = model.blocks[0]
    d = model.embed.weight.shape[1]
    config = LlamaConfig(vocab_size=model.embed.weight.shape[0], hidden_size=d,
                         intermediate_size=block.up.weight.shape[0],
                         num_hidden_layers=len(model.blocks), num_attention_heads=block.n_heads,
                         num_key_value_heads=block.n_heads, max_position_embeddings=4096,
                         tie_word_embeddings=model.head.weight is model.embed.weight,
                         bos_token_id=arl.BOS_ID, eos_token_id=None, pad_token_id=arl.PAD_ID,
                         use_cache=True)
    torch.manual_seed(0)
    return LlamaForCausalLM(config).eval()


@torch.no_grad()
def lockstep_generate(model, prompts, new_tokens):
    """Greedy decoding through rollout_batch's engine (agentrl._KVCache, _forward_rows)."""
    cache = arl._KVCache(model, len(prompts))
    chunks = [list(p) for p in prompts]
    out = []
    for _ in range(new_tokens):
        token = arl._forward_rows(model, chunks, cache).argmax(-1)
        out.append(token)
        chunks = [[int(t)] for t in token]
    return torch.stack(out, 1)


def generation(model, batch, prompt_len, new_tokens, rounds, seed=0):
    """Tokens per second of the three paths, interleaved -> figures."""
    twin = llama_twin(model)
    gen = torch.Generator().manual_seed(seed)
    prompts = torch.randint(5, model.embed.weight.shape[0], (batch, prompt_len), generator=gen)
    paths = {
        "agentrl_sample": lambda: arl.sample(model, prompts, new_tokens, temperature=0.0,
                                             stop_ids=()).ids,
        "agentrl_lockstep": lambda: lockstep_generate(model, prompts.tolist(), new_tokens),
        "transformers_generate": lambda: twin.generate(
            prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=new_tokens,
            min_new_tokens=new_tokens, do_sample=False, use_cache=True,
            pad_token_id=arl.PAD_ID)[:, prompt_len:],
    }
    times = {name: [] for name in paths}
    shapes = {}
    with torch.no_grad():
        for name, fn in paths.items():          # one warm-up call each, untimed
            shapes[name] = list(fn().shape)
        for _ in range(rounds):
            for name, fn in paths.items():
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    tokens = batch * new_tokens
    out = {"batch": batch, "prompt_tokens": prompt_len, "new_tokens": new_tokens,
           "rounds": rounds, "decoding": "greedy, no stop token, KV cache on",
           "parameters": {"tinyagent": sum(p.numel() for p in model.parameters()),
                          "llama": sum(p.numel() for p in twin.parameters())},
           "output_shapes": shapes, "seconds": times}
    rate = {name: tokens / statistics.median(t) for name, t in times.items()}
    out["tokens_per_s"] = rate
    out["ratio_to_generate"] = {name: rate[name] / rate["transformers_generate"]
                                for name in ("agentrl_sample", "agentrl_lockstep")}
    return out


class Timed:
    """A sandbox run function that adds up the wall time of its calls."""

    def __init__(self, run):
        self.run, self.seconds, self.calls = run, 0.0, 0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.run(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def rl_step(steps, quick):
    """--steps updates of the capstone's RL stage from the committed warm start -> figures."""
    import capstone
    import harness

    recipe = capstone.CapstoneRecipe()
    if quick:
        recipe = recipe.reduced()

    class Context:                      # what capstone.Setting reads of a harness context
        reduced = quick

    tok = arl.CharTokenizer()
    model = arl.load_checkpoint(harness.RESULTS / f"{WARM}.pt")
    with arl.SandboxPool(workers=1) as pool:
        setting = capstone.Setting(recipe, Context(), pool)
        timed = Timed(setting.rl_env.sandbox)
        setting.rl_env.sandbox = timed
        sampler = capstone.local_sampler(setting.rl_env, tok, recipe.max_turns)
        start = time.perf_counter()
        log = capstone.rl_stage(recipe, setting, model, sampler, updates=steps)
        wall = time.perf_counter() - start
    s = log["seconds"]
    return {"updates": steps, "tasks_per_update": recipe.tasks_per_update, "group": recipe.group,
            "episodes_per_update": recipe.tasks_per_update * recipe.group,
            "sampling_s": s["sampling_s"] - timed.seconds, "sandbox_s": timed.seconds,
            "sandbox_calls": timed.calls, "update_s": s["update_s"],
            "other_s": wall - s["sampling_s"] - s["update_s"], "wall_s": wall,
            "mixed_groups": [u["mixed_groups"] for u in log["log"]]}


def run(batch=64, prompt_len=32, new_tokens=64, rounds=5, steps=2, quick=False):
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    model = arl.load_checkpoint(ROOT / "book" / "labs" / "results" / f"{WARM}.pt")
    res = {"generation": generation(model, batch, prompt_len, new_tokens, rounds),
           "rl_step": rl_step(steps, quick)}
    res["config"] = {"batch": batch, "prompt_tokens": prompt_len, "new_tokens": new_tokens,
                     "rounds": rounds, "rl_updates": steps, "quick": quick, "warm": WARM,
                     "torch_threads": torch.get_num_threads()}
    return res


def report(res):
    g, r = res["generation"], res["rl_step"]
    lines = [f"generation: batch {g['batch']}, {g['prompt_tokens']}-token prompts, "
             f"{g['new_tokens']} new tokens, greedy, median of {g['rounds']} interleaved rounds; "
             f"parameters TinyAgent {g['parameters']['tinyagent']}, "
             f"Llama {g['parameters']['llama']}",
             f"{'':26}{'tokens/s':>12}{'vs generate':>13}"]
    for name, rate in g["tokens_per_s"].items():
        ratio = g["ratio_to_generate"].get(name, 1.0)
        lines.append(f"{name:26}{rate:12.0f}{ratio:12.2f}x")
    n = r["updates"]
    lines.append(f"RL step ({r['episodes_per_update']} episodes, mean of {n} updates): "
                 f"sampling {r['sampling_s'] / n:.2f} s, sandbox {r['sandbox_s'] / n:.2f} s "
                 f"({r['sandbox_calls'] / n:.0f} calls), update {r['update_s'] / n:.2f} s, "
                 f"other {r['other_s'] / n:.2f} s")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64, help="sequences decoded together")
    parser.add_argument("--prompt-tokens", type=int, default=32, help="tokens of every prompt")
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens generated per row")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    parser.add_argument("--steps", type=int, default=3, help="RL updates timed")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes: batch 4, 8 new tokens, 1 round, one reduced RL update")
    parser.add_argument("--out", type=Path, help="also write the figures as a lab record (JSON)")
    args = parser.parse_args(argv)
    if args.quick:
        res = run(batch=4, prompt_len=8, new_tokens=8, rounds=1, steps=1, quick=True)
    else:
        res = run(args.batch, args.prompt_tokens, args.new_tokens, args.rounds, args.steps)
    print(report(res))
    if args.out:
        bench_rollouts.write_record(args.out, res, LAB)
    return 0


if __name__ == "__main__":
    sys.exit(main())
