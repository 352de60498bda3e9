"""Chapter 14: length buckets, packing, the packed forward pass, gradient accumulation, LoRA.

Every saved function is checked against an independent computation made here: buckets and
packings against their definitions written as loops, packed log-probabilities against each
trajectory run through TinyAgent on its own, micro-batch loss shares against the batch loss
written out sequence by sequence, accumulated gradients against the gradient of that loss
computed in one piece, and LoRA adapters against the base model, W x + (alpha / r) B A x
written out, a parameter count by hand and the one-at-a-time rollout. Trajectories are
synthetic (random tokens and action masks of chosen lengths); the model is a small random
TinyAgent.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
import torch

import agentrl as arl
from lab_results import load_lab

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def one_thread():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def trajectories(lengths, seed=0, vocab=101):
    """Random episodes: ids [T], an action mask with a few action spans, logp zeros."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for i, n in enumerate(lengths):
        ids = torch.randint(3, vocab, (n,), generator=gen)
        mask = (torch.rand(n, generator=gen) < 0.4).float()
        mask[0] = 0.0                                       # the first token is never predicted
        mask[-1] = 1.0                                      # every episode has a policy token
        out.append(arl.Trajectory(ids, mask, torch.zeros(n - 1), float(i % 2), [], "", True))
    return out


def tiny_agent(seed=0):
    return arl.TinyAgent(vocab_size=101, d_model=32, n_layers=2, n_heads=4, seed=seed).eval()


# ---- length_buckets -------------------------------------------------------------------------

@pytest.mark.parametrize("max_tokens", [1, 50, 200, 10_000])
def test_length_buckets_partition_and_budget(max_tokens):
    rng = random.Random(max_tokens)
    lengths = [rng.randint(5, 60) for _ in range(40)]
    buckets = arl.length_buckets(lengths, max_tokens)
    flat = [i for b in buckets for i in b]
    assert sorted(flat) == list(range(len(lengths)))                    # every index once
    assert [lengths[i] for i in flat] == sorted(lengths)                # in length order
    for b in buckets:
        padded = len(b) * max(lengths[i] for i in b)
        assert padded <= max_tokens or len(b) == 1                      # over budget only alone
    for first, second in zip(buckets, buckets[1:]):                     # greedy: the next one
        assert (len(first) + 1) * lengths[second[0]] > max_tokens       # would not have fitted


def test_length_buckets_edge_cases():
    assert arl.length_buckets([], 100) == []
    assert arl.length_buckets([500], 100) == [[0]]
    assert arl.length_buckets([3, 3, 3], 9) == [[0, 1, 2]]              # exactly at the budget
    assert arl.length_buckets([3, 3, 3, 3], 9) == [[0, 1, 2], [3]]


def test_length_buckets_is_trajectory_logprobs_grouping():
    """trajectory_logprobs with the same budget gives the same numbers as scoring each bucket."""
    model = tiny_agent()
    trajs = trajectories([7, 30, 12, 30, 25, 9, 18], seed=1)
    with torch.no_grad():
        logp, mask = arl.trajectory_logprobs(model, trajs, max_tokens=64)
        for bucket in arl.length_buckets([len(t.ids) for t in trajs], 64):
            ids, am, _, _ = arl.collate_trajectories([trajs[b] for b in bucket])
            lp, _ = arl.token_logprobs(model(ids)[0], ids, am)
            for j, b in enumerate(bucket):
                assert torch.equal(lp[j], logp[b, :lp.shape[1]])


# ---- pack_trajectories ----------------------------------------------------------------------

def test_pack_places_every_token_once():
    lengths = [40, 13, 27, 40, 8, 31, 19, 5]
    trajs = trajectories(lengths, seed=2)
    packed = arl.pack_trajectories(trajs, 64)
    R, L = packed.ids.shape
    assert L <= 64
    owner = torch.full((R, L), -1, dtype=torch.long)
    for b, (t, (r, s)) in enumerate(zip(trajs, packed.place)):
        n = lengths[b]
        assert s + n <= L
        assert (owner[r, s:s + n] == -1).all()                          # no overlap
        owner[r, s:s + n] = b
        assert torch.equal(packed.ids[r, s:s + n], t.ids)
        assert torch.equal(packed.pos[r, s:s + n], torch.arange(n))     # positions restart
        assert torch.equal(packed.action_mask[r, s:s + n], t.action_mask)
    assert torch.equal(owner, packed.seg)                               # -1 exactly at padding
    assert (packed.ids[packed.seg < 0] == 0).all()
    assert int((packed.seg >= 0).sum()) == sum(lengths)


def test_pack_first_fit_decreasing():
    """Explicit first-fit decreasing: rows 40+13+8 (61), 40+19+5 (64), 31+27 (58)."""
    lengths = [40, 13, 27, 40, 8, 31, 19, 5]
    packed = arl.pack_trajectories(trajectories(lengths, seed=2), 64)
    rows = {}
    for b, (r, _) in enumerate(packed.place):
        rows.setdefault(r, []).append(lengths[b])
    assert sorted(sorted(v, reverse=True) for v in rows.values()) == [[31, 27], [40, 13, 8], [40, 19, 5]]


def test_pack_rejects_too_long():
    with pytest.raises(ValueError):
        arl.pack_trajectories(trajectories([10, 70]), 64)


def test_pack_single_and_exact_fit():
    packed = arl.pack_trajectories(trajectories([32, 32]), 64)
    assert tuple(packed.ids.shape) == (1, 64) and (packed.seg >= 0).all()
    packed = arl.pack_trajectories(trajectories([17]), 64)
    assert tuple(packed.ids.shape) == (1, 17)


# ---- packed_forward / packed_logprobs -------------------------------------------------------

@pytest.mark.parametrize("row_tokens", [64, 128, 400])
def test_packed_logprobs_equal_one_sequence_at_a_time(row_tokens):
    model = tiny_agent(seed=3)
    trajs = trajectories([40, 13, 27, 40, 8, 31, 19, 5, 64], seed=4)
    with torch.no_grad():
        logp, mask = arl.packed_logprobs(model, trajs, row_tokens)
        T = max(len(t.ids) for t in trajs)
        assert tuple(logp.shape) == (len(trajs), T - 1) == tuple(mask.shape)
        for b, t in enumerate(trajs):
            n = len(t.ids)
            ref, ref_mask = arl.token_logprobs(model(t.ids[None])[0], t.ids[None], t.action_mask[None])
            assert torch.equal(mask[b, :n - 1], ref_mask[0])
            assert (mask[b, n - 1:] == 0).all() and (logp[b, n - 1:] == 0).all()
            assert (logp[b, :n - 1] - ref[0]).abs().max() < 1e-5


def test_packed_forward_ignores_the_neighbours():
    """Changing one sequence's tokens leaves the logits of the others in the row unchanged."""
    model = tiny_agent(seed=5)
    trajs = trajectories([20, 20, 20], seed=6)
    packed = arl.pack_trajectories(trajs, 64)
    with torch.no_grad():
        before = arl.packed_forward(model, packed.ids, packed.pos, packed.seg)
        ids = packed.ids.clone()
        ids[packed.seg == 1] = 5
        after = arl.packed_forward(model, ids, packed.pos, packed.seg)
    keep = (packed.seg == 0) | (packed.seg == 2)
    assert (before[keep] - after[keep]).abs().max() < 1e-5
    assert (before[packed.seg == 1] - after[packed.seg == 1]).abs().max() > 1e-3


def test_packed_logprobs_gradient_equals_padded():
    trajs = trajectories([30, 12, 25, 7], seed=7)
    grads = []
    for score in (lambda m: arl.packed_logprobs(m, trajs, 64),
                  lambda m: arl.token_logprobs(m(ids)[0], ids, am)):
        ids, am, _, _ = arl.collate_trajectories(trajs)
        model = tiny_agent(seed=8)
        logp, mask = score(model)
        (logp * mask).sum().backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    assert ((grads[0] - grads[1]).norm() / grads[1].norm()) < 1e-5


# ---- aggregate_terms / accumulate_gradients -------------------------------------------------

def batch_loss(terms, masks, aggregation):
    """The batch loss written out sequence by sequence: terms and masks are lists of 1-D tensors."""
    if aggregation == "token-mean":
        return sum((t * m).sum() for t, m in zip(terms, masks)) / sum(m.sum() for m in masks)
    if aggregation == "seq-mean-token-sum":
        return sum((t * m).sum() for t, m in zip(terms, masks)) / len(terms)
    return sum((t * m).sum() / m.sum() for t, m in zip(terms, masks)) / len(terms)


@pytest.mark.parametrize("aggregation", arl.AGGREGATIONS)
def test_aggregate_terms_shares_sum_to_the_batch_loss(aggregation):
    gen = torch.Generator().manual_seed(9)
    B, T = 11, 15
    terms = torch.randn(B, T, generator=gen)
    mask = (torch.rand(B, T, generator=gen) < 0.5).float()
    mask[:, 0] = 1.0
    n_tokens = int(mask.sum())
    shares = [arl.aggregate_terms(terms[i:j], mask[i:j], aggregation, B, n_tokens)
              for i, j in ((0, 3), (3, 4), (4, 11))]
    expected = batch_loss(list(terms), list(mask), aggregation)
    assert abs(sum(shares) - expected) < 1e-5
    # the whole batch as one micro-batch is the batch loss too, and the same as reinforce_loss
    whole = arl.aggregate_terms(terms, mask, aggregation, B, n_tokens)
    assert abs(whole - expected) < 1e-5
    assert abs(whole - arl.reinforce_loss(-terms, mask, torch.ones(B), aggregation)) < 1e-5


def test_aggregate_terms_edge_cases():
    terms, mask = torch.ones(2, 3), torch.zeros(2, 3)
    assert arl.aggregate_terms(terms, mask, "token-mean", 2, 0) == 0       # no tokens: no NaN
    assert arl.aggregate_terms(terms, mask, "seq-mean-token-mean", 2, 0) == 0
    with pytest.raises(ValueError):
        arl.aggregate_terms(terms, mask, "token-sum", 2, 1)


@pytest.mark.parametrize("aggregation", arl.AGGREGATIONS)
@pytest.mark.parametrize("max_tokens", [40, 150, 100_000])
def test_accumulated_gradient_equals_the_whole_batch(aggregation, max_tokens):
    trajs = trajectories([30, 12, 25, 7, 40, 18, 9, 33], seed=10)
    advantages = torch.linspace(-1.0, 1.0, len(trajs))

    def terms(logp, mask, index):
        return -advantages[index, None] * logp

    model = tiny_agent(seed=11)
    loss = arl.accumulate_gradients(model, trajs, terms, aggregation, max_tokens)
    got = torch.cat([p.grad.flatten() for p in model.parameters()])

    ref_model = tiny_agent(seed=11)                  # the same loss, one sequence at a time
    per_terms, per_masks = [], []
    for b, t in enumerate(trajs):
        logp, mask = arl.token_logprobs(ref_model(t.ids[None])[0], t.ids[None], t.action_mask[None])
        per_terms.append(-advantages[b] * logp[0])
        per_masks.append(mask[0])
    expected = batch_loss(per_terms, per_masks, aggregation)
    expected.backward()
    want = torch.cat([p.grad.flatten() for p in ref_model.parameters()])
    assert abs(loss - expected.item()) < 1e-5
    assert ((got - want).norm() / want.norm()) < 1e-5


def test_mean_of_micro_batch_means_is_not_the_batch_gradient():
    """The classic accumulation differs when micro-batches hold different token counts."""
    trajs = trajectories([30, 12, 25, 7, 40, 18, 9, 33], seed=10)
    advantages = torch.linspace(-1.0, 1.0, len(trajs))
    model = tiny_agent(seed=11)
    parts = arl.length_buckets([len(t.ids) for t in trajs], 60)
    assert len(parts) > 1
    for index in parts:
        ids, am, _, _ = arl.collate_trajectories([trajs[b] for b in index])
        logp, mask = arl.token_logprobs(model(ids)[0], ids, am)
        local = arl.aggregate_terms(-advantages[index, None] * logp, mask, "token-mean",
                                    len(index), int(mask.sum()))
        (local / len(parts)).backward()
    wrong = torch.cat([p.grad.flatten() for p in model.parameters()])
    right_model = tiny_agent(seed=11)
    arl.accumulate_gradients(right_model, trajs, lambda lp, m, i: -advantages[i, None] * lp,
                             "token-mean", 60)
    right = torch.cat([p.grad.flatten() for p in right_model.parameters()])
    assert ((wrong - right).norm() / right.norm()) > 1e-2


@pytest.mark.parametrize("rewards", [[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0], [0.0] * 7 + [1.0]])
def test_fast_grpo_step_matches_one_epoch_of_grpo_step(rewards):
    """One optimiser step per batch: buckets and logp_old = logp.detach() give grpo_step's update."""
    episodes = trajectories([9, 17, 12, 30, 21, 9, 14, 26], seed=3)
    for e, r in zip(episodes, rewards):
        e.reward = r
    groups = [episodes[:4], episodes[4:]]
    slow, fast = tiny_agent(), tiny_agent()
    arl.grpo_step(slow, torch.optim.Adam(slow.parameters(), lr=1e-2), groups)
    advantages = arl.group_advantages(torch.tensor([rewards[:4], rewards[4:]])).flatten()
    loss, norm = arl.fast_grpo_step(fast, torch.optim.Adam(fast.parameters(), lr=1e-2),
                                    episodes, advantages)
    moved = max((a - b).abs().max().item() for a, b in
                zip(slow.parameters(), tiny_agent().parameters()))
    gap = max((a - b).abs().max().item() for a, b in zip(slow.parameters(), fast.parameters()))
    assert moved > 1e-3 and gap < 1e-5
    assert isinstance(loss, float) and norm > 0


# ---- LoRA: LoRALinear, add_lora, merge_lora -------------------------------------------------

def adapted_agent(rank, seed=0, moved=True):
    """A tiny TinyAgent with LoRA adapters; moved=True gives every B random values (as if
    trained)."""
    model = tiny_agent(seed)
    trainable = arl.add_lora(model, rank)
    if moved:
        gen = torch.Generator().manual_seed(seed + 100)
        with torch.no_grad():
            for block in model.blocks:
                for name in ("qkv", "proj", "up", "down"):
                    getattr(block, name).B.normal_(std=0.05, generator=gen)
    return model, trainable


def test_lora_at_init_computes_the_base_model_exactly():
    ids = torch.randint(3, 101, (3, 23), generator=torch.Generator().manual_seed(1))
    base_logits = tiny_agent()(ids)[0]
    model, _ = adapted_agent(4, moved=False)
    assert torch.equal(model(ids)[0], base_logits)


@pytest.mark.parametrize("rank", [1, 4, 16])
def test_lora_trainable_count_by_hand(rank):
    model, trainable = adapted_agent(rank, moved=False)
    d, hidden = 32, 4 * 32                                 # tiny_agent: d_model 32, mlp_mult 4
    per_block = (d + 3 * d) + (d + d) + (d + hidden) + (hidden + d)   # in + out of each linear
    assert sum(p.numel() for p in trainable) == 2 * rank * per_block    # two blocks
    assert {id(p) for p in model.parameters() if p.requires_grad} == {id(p) for p in trainable}
    a, b = model.blocks[0].up.A, model.blocks[0].up.B
    assert a.shape == (rank, d) and b.shape == (hidden, rank) and not b.any()


def test_lora_forward_is_w_x_plus_scaled_b_a_x():
    base = torch.nn.Linear(6, 5, bias=False)
    layer = arl.LoRALinear(base, 2, alpha=3.0, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        layer.B.normal_(generator=torch.Generator().manual_seed(1))
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(2))
    by_hand = x @ base.weight.T + (3.0 / 2) * (x @ layer.A.T) @ layer.B.T
    assert torch.allclose(layer(x), by_hand, atol=1e-6)
    assert layer.A.abs().max() <= 1 / 6 ** 0.5


def test_only_the_adapters_get_gradients():
    model, trainable = adapted_agent(2)
    ids = torch.randint(3, 101, (2, 15), generator=torch.Generator().manual_seed(3))
    model(ids)[0].logsumexp(-1).mean().backward()
    adapters = {id(p) for p in trainable}
    for name, p in model.named_parameters():
        if id(p) in adapters:
            assert p.grad is not None and p.grad.abs().sum() > 0, name
        else:
            assert p.grad is None, name


def test_merge_gives_plain_linears_with_the_adapted_function():
    model, _ = adapted_agent(4)
    ids = torch.randint(3, 101, (3, 19), generator=torch.Generator().manual_seed(4))
    adapted = model(ids)[0].detach()
    up = model.blocks[1].up
    expected = up.base.weight + (up.alpha / up.rank) * up.B @ up.A           # [out, in]
    arl.merge_lora(model)
    assert all(type(getattr(b, n)) is torch.nn.Linear
               for b in model.blocks for n in ("qkv", "proj", "up", "down"))
    assert torch.allclose(model.blocks[1].up.weight, expected.detach(), atol=1e-7)
    assert torch.allclose(model(ids)[0], adapted, atol=1e-5)
    assert all(p.requires_grad for p in model.parameters())
    assert model.head.weight is model.embed.weight                          # still tied


def test_rollout_batch_with_an_adapted_model_equals_rollout():
    tok = arl.CharTokenizer()
    train = [t for t in arl.make_tasks(seed=0) if t.split == "train"]
    env = arl.BugFixEnv(cache={})
    model = arl.TinyAgent(vocab_size=tok.vocab_size, seed=0).eval()
    arl.add_lora(model, 4)
    with torch.no_grad():                                   # move B so the adapters matter
        for block in model.blocks:
            block.qkv.B.normal_(std=0.05, generator=torch.Generator().manual_seed(5))
    tasks = train[:4]
    seeds = [random.Random(i).randrange(2 ** 31) for i in range(4)]
    one = [arl.rollout(model, env, t, tok, seed=s, max_turns=2) for t, s in zip(tasks, seeds)]
    batched = arl.rollout_batch(model, env, tasks, tok, seeds, max_turns=2)
    for a, b in zip(one, batched):
        assert torch.equal(a.ids, b.ids) and torch.equal(a.action_mask, b.action_mask)
        assert (a.text, a.reward) == (b.text, b.reward)
        assert (a.logp - b.logp).abs().max().item() < 1e-5


# ---- the benchmark's record (Sections 5.7 and 14.1 read it) --------------------------------

def test_bench_rollouts_writes_the_record_the_chapters_read(tmp_path):
    """scripts/bench_rollouts.py --out writes a schema-1 'benchmark' record, atomically (no
    temporary file left), in the committed record's layout: its settings as the recipe, the
    machine, and the three measurements as the results."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_rollouts
    committed = load_lab("bench_rollouts")
    res = {**committed.results, "config": committed.recipe}      # what run() returns
    out = tmp_path / "bench_rollouts.json"
    bench_rollouts.write_record(out, res)
    assert list(tmp_path.iterdir()) == [out]
    written = json.loads(out.read_text())
    assert list(written) == ["schema", "lab", "kind", "recipe", "machine", "results"]
    assert list(written["recipe"]) == list(committed.recipe)
    assert list(written["results"]) == ["sampling", "update", "sandbox"]
    assert set(written["machine"]) == {"cpu", "cpu_capability", "torch", "threads"}
    assert written["machine"]["torch"] == torch.__version__
    record = arl.load_record("bench_rollouts", tmp_path)
    assert (record.lab, record.kind) == (committed.lab, committed.kind) == (
        "scripts/bench_rollouts.py", "benchmark")
    assert (record.recipe, record.results) == (committed.recipe, committed.results)
    res["kernels"] = {"sampling_s": 1.0}                           # --kernels adds its figures
    bench_rollouts.write_record(out, res)
    assert arl.load_record("bench_rollouts", tmp_path).results["kernels"] == {"sampling_s": 1.0}
