"""The capstone's scale-out and its benchmark.

The capstone's RL stage (book/labs/capstone.py) with its rollouts spread over two Chapter 13
workers under torchrun (three processes: the trainer and two workers) must end with the same
weights, bit for bit, as the same updates sampled in one process; and the benchmark
(scripts/bench_capstone.py) must run at a tiny size and write every figure its record promises.
Run: .venv/bin/python -m pytest tests/test_capstone.py -q
"""

import json
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent

# Rank 0 runs three RL updates of the capstone's reduced recipe (group 4) from the committed warm
# start with the workers sampling, then the same three updates sampled in its own process, and
# compares the weights; the other ranks serve rollouts with their own sandbox.
TORCHRUN_SCRIPT = '''
import dataclasses, os, sys
import torch
sys.path.insert(0, os.path.join(os.environ["BOOK_ROOT"], "book", "labs"))
import agentrl as arl
import capstone, harness
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
recipe = dataclasses.replace(capstone.CapstoneRecipe().reduced(), group=4, rl_updates=3)
tok = arl.CharTokenizer()
warm = harness.RESULTS / "gym_v2_hint_recovery_6000_pad6_copy4.pt"


class Context:
    reduced = True


if rank == 0:
    with arl.SandboxPool(workers=1) as sandbox:
        setting = capstone.Setting(recipe, Context(), sandbox)
        spread = arl.load_checkpoint(warm)
        with arl.RolloutPool(world - 1) as pool:
            log_pool = capstone.rl_stage(recipe, setting, spread, capstone.pool_sampler(pool))
        alone = arl.load_checkpoint(warm)
        log_one = capstone.rl_stage(recipe, setting, alone,
                                    capstone.local_sampler(setting.rl_env, tok, recipe.max_turns))
    a = torch.nn.utils.parameters_to_vector(spread.parameters())
    b = torch.nn.utils.parameters_to_vector(alone.parameters())
    w = torch.nn.utils.parameters_to_vector(arl.load_checkpoint(warm).parameters())
    steps = sum("loss" in u for u in log_one["log"])
    same_logs = [{k: v for k, v in u.items()} for u in log_pool["log"]] == log_one["log"]
    print("RESULT", torch.equal(a, b), same_logs, steps, float((a - w).abs().max()))
else:
    arl.join_group(rank, world)
    with arl.SandboxPool(workers=1) as sandbox:
        arl.serve_rollouts(arl.load_checkpoint(warm),     # its weights come from rank 0
                           capstone.rl_env(recipe, {}, sandbox.run), tok,
                           max_turns=recipe.max_turns)
    torch.distributed.destroy_process_group()
'''


def test_the_rl_stage_spread_over_two_workers_equals_one_process(torchrun):
    done = torchrun(TORCHRUN_SCRIPT, timeout=300, BOOK_ROOT=str(ROOT))
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))
    print(line)
    _, same_weights, same_logs, steps, moved = line.split()
    assert same_weights == "True" and same_logs == "True", line
    assert int(steps) >= 1 and float(moved) > 0, line      # the updates moved the weights


def test_the_capstone_benchmark_runs_tiny_and_records_every_figure(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_capstone
    out = tmp_path / "bench_capstone.json"
    assert bench_capstone.main(["--quick", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert list(record) == ["schema", "lab", "kind", "recipe", "machine", "results"]
    assert record["kind"] == "benchmark" and record["lab"] == "scripts/bench_capstone.py"
    g, r = record["results"]["generation"], record["results"]["rl_step"]
    shape = [record["recipe"]["batch"], record["recipe"]["new_tokens"]]
    assert all(s == shape for s in g["output_shapes"].values())
    assert set(g["tokens_per_s"]) == {"agentrl_sample", "agentrl_lockstep",
                                      "transformers_generate"}
    assert set(g["ratio_to_generate"]) == {"agentrl_sample", "agentrl_lockstep"}
    assert {"sampling_s", "sandbox_s", "update_s", "wall_s", "sandbox_calls"} <= set(r)
    assert "vs generate" in capsys.readouterr().out
