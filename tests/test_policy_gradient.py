"""Chapter 6: the REINFORCE loss, its gradient, the episode helpers and the labs' results.

These tests import the generated package (``scripts/build_library.py``). The statistical test
uses a fixed seed and a tolerance of several standard errors, so it is deterministic and far
from its threshold. The lab tests read the committed records under ``book/labs/results``
through ``agentrl.load_record``; a missing record fails its test. The variant gym's padding and
weighted imitation loss (Section 6.6) are checked against the labs' code they replaced, copied
here as the oracle.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import pytest
import torch

import agentrl as arl
from lab_results import load_lab



# ---- reinforce_loss against explicit loops --------------------------------------------------

def reference_loss(logp, mask, returns, aggregation):
    """The three aggregations written as plain Python loops over episodes and tokens."""
    B, T = logp.shape
    per_episode, counts, total, n_tokens = [], [], 0.0, 0
    for b in range(B):
        s, n = 0.0, 0
        for t in range(T):
            if mask[b][t] > 0:
                w = returns[b][t] if returns.dim() == 2 else returns[b]
                s += float(w) * float(logp[b][t])
                n += 1
        per_episode.append(s)
        counts.append(n)
        total += s
        n_tokens += n
    if aggregation == "seq-mean-token-sum":
        return -sum(per_episode) / B
    if aggregation == "token-mean":
        return -total / max(n_tokens, 1)
    return -sum(s / max(n, 1) for s, n in zip(per_episode, counts)) / B


@pytest.mark.parametrize("aggregation", arl.AGGREGATIONS)
@pytest.mark.parametrize("per_token", [False, True])
def test_reinforce_loss_matches_loops(aggregation, per_token):
    gen = torch.Generator().manual_seed(0)
    logp = -torch.rand(5, 9, generator=gen) * 3                   # [B, T-1]
    mask = (torch.rand(5, 9, generator=gen) > 0.4).float()
    mask[3] = 0.0                                                  # an episode with no policy token
    returns = torch.randn(5, 9, generator=gen) if per_token else torch.randn(5, generator=gen)
    got = arl.reinforce_loss(logp, mask, returns, aggregation).item()
    assert got == pytest.approx(reference_loss(logp, mask, returns, aggregation), abs=1e-5)


def test_reinforce_loss_hand_values():
    logp = torch.tensor([[-1.0, -2.0, -0.5], [-3.0, -1.0, -9.0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    returns = torch.tensor([1.0, 0.5])
    values = [arl.reinforce_loss(logp, mask, returns, a).item() for a in arl.AGGREGATIONS]
    assert values == pytest.approx([2.75, 1.1, (3.5 / 3 + 2.0 / 2) / 2])


def test_reinforce_loss_rejects_unknown_aggregation():
    with pytest.raises(ValueError, match="unknown aggregation"):
        arl.reinforce_loss(torch.zeros(1, 2), torch.ones(1, 2), torch.ones(1), "mean")


# ---- masks ---------------------------------------------------------------------------------

def test_masked_positions_do_not_matter():
    gen = torch.Generator().manual_seed(1)
    logp = -torch.rand(4, 7, generator=gen)
    mask = (torch.rand(4, 7, generator=gen) > 0.5).float()
    returns = torch.tensor([1.0, 0.0, 2.0, -1.0])
    base = arl.reinforce_loss(logp, mask, returns)
    for fill in (-1e4, float("-inf"), float("nan")):
        other = arl.reinforce_loss(logp.masked_fill(mask == 0, fill), mask, returns)
        assert other.item() == pytest.approx(base.item(), abs=1e-6)


def test_masked_positions_get_no_gradient_and_no_nan():
    logp = torch.tensor([[-1.0, float("-inf"), -2.0]], requires_grad=True)
    mask = torch.tensor([[1.0, 0.0, 1.0]])
    arl.reinforce_loss(logp, mask, torch.tensor([2.0])).backward()
    assert torch.isfinite(logp.grad).all()
    assert logp.grad.tolist() == [[-2.0, 0.0, -2.0]]


def test_returns_are_constants():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    returns = torch.tensor([3.0], requires_grad=True)
    arl.reinforce_loss(logp, torch.ones(1, 2), returns).backward()
    assert returns.grad is None
    assert logp.grad.tolist() == [[-3.0, -3.0]]


def test_zero_rewards_give_exactly_zero_gradient():
    model = arl.TinyAgent(vocab_size=101, d_model=32, n_layers=1, n_heads=2, seed=0)
    ids = torch.randint(5, 101, (3, 12), generator=torch.Generator().manual_seed(0))
    action_mask = torch.ones(3, 12)
    logp, mask = arl.token_logprobs(model(ids)[0], ids, action_mask)
    arl.reinforce_loss(logp, mask, torch.zeros(3)).backward()
    assert all(bool((p.grad == 0).all()) for p in model.parameters())


# ---- the gradient against an exact gradient ------------------------------------------------

V, T = 3, 3   # a bigram policy over 3 tokens, sequences of 3 tokens: 27 sequences


def bigram_logp(theta, ys):
    prev = torch.cat([torch.full_like(ys[:, :1], V), ys[:, :-1]], dim=1)
    return torch.log_softmax(theta[prev], -1).gather(-1, ys[..., None]).squeeze(-1)


def reward(ys):
    """1 for each token equal to its predecessor, plus 0.5 if the sequence ends in token 2."""
    same = (ys[:, 1:] == ys[:, :-1]).float().sum(-1)
    return same + 0.5 * (ys[:, -1] == 2).float()


def test_reinforce_gradient_matches_exact_gradient():
    theta = 0.7 * torch.randn(V + 1, V, generator=torch.Generator().manual_seed(3))
    ys_all = torch.tensor(list(itertools.product(range(V), repeat=T)))
    th = theta.clone().requires_grad_()
    J = (bigram_logp(th, ys_all).sum(-1).exp() * reward(ys_all)).sum()
    exact, = torch.autograd.grad(J, th)

    n, chunks = 40_000, 40
    gen = torch.Generator().manual_seed(0)
    estimates = []
    for _ in range(chunks):                                   # batch means give the error bar
        ys = torch.zeros(n // chunks, T, dtype=torch.long)
        prev = torch.full((n // chunks,), V)
        for t in range(T):
            ys[:, t] = torch.multinomial(theta[prev].softmax(-1), 1, generator=gen)[:, 0]
            prev = ys[:, t]
        th = theta.clone().requires_grad_()
        loss = arl.reinforce_loss(bigram_logp(th, ys), torch.ones_like(ys), reward(ys))
        g, = torch.autograd.grad(-loss, th)
        estimates.append(g.flatten())
    est = torch.stack(estimates)                              # [chunks, 12]
    mean, se = est.mean(0), est.std(0) / math.sqrt(chunks)
    z = (mean - exact.flatten()) / se.clamp_min(1e-8)
    assert z.abs().max() < 5.0, z
    assert (mean - exact.flatten()).norm() < 0.1 * exact.norm()


def test_reward_to_go_is_unbiased_exactly():
    """Per-token returns (reward to go) have the same expectation as the total return."""
    theta = 0.7 * torch.randn(V + 1, V, generator=torch.Generator().manual_seed(4))
    ys_all = torch.tensor(list(itertools.product(range(V), repeat=T)))
    r = torch.cat([torch.zeros(len(ys_all), 1), (ys_all[:, 1:] == ys_all[:, :-1]).float()], 1)
    togo = r.flip(-1).cumsum(-1).flip(-1)
    p = bigram_logp(theta, ys_all).sum(-1).exp().detach()
    grads = []
    for returns in (r.sum(-1), togo):
        th = theta.clone().requires_grad_()
        logp = bigram_logp(th, ys_all)
        # weight each sequence's loss by its exact probability: an exact expectation
        per_seq = -torch.stack([arl.reinforce_loss(logp[i:i + 1], torch.ones(1, T), returns[i:i + 1])
                                for i in range(len(ys_all))])
        g, = torch.autograd.grad((p * per_seq).sum(), th)
        grads.append(g)
    assert torch.allclose(grads[0], grads[1], atol=1e-6)


# ---- episode helpers on the gym -------------------------------------------------------------

def test_collect_episodes_and_solve_rate_are_reproducible():
    tok = arl.CharTokenizer()
    tasks = [t for t in arl.make_tasks(seed=0) if t.split == "train"][:2]
    model = arl.TinyAgent(vocab_size=tok.vocab_size, seed=0)
    env = arl.BugFixEnv(cache={})
    a = arl.collect_episodes(model, env, tasks, tok, seed=5, max_turns=1, max_action_tokens=8)
    b = arl.collect_episodes(model, env, tasks, tok, seed=5, max_turns=1, max_action_tokens=8)
    assert [e.ids.tolist() for e in a] == [e.ids.tolist() for e in b]
    assert all(e.reward == 0.0 for e in a)
    res = arl.solve_rate(model, env, tasks, tok, samples=1, seed=5)
    assert res.rate == 0.0 and res.stderr == 0.0 and res.per_task.shape == (2,)


# ---- the variant gym's warm starts: padding and the weighted loss (Section 6.6) -------------
# The labs' code these saves replaced (book/labs/gym_v2.py and gym_v2_warm_start.py), copied
# unchanged as the oracle: the saves must give the same outputs on the same inputs.

def lab_pad_blank_lines(task, most, seed=0):
    rng = random.Random(f'{seed}:pad:{task.template}:{task.variant}:{task.line}:{task.kind}')
    code = task.code.splitlines(keepends=True)
    solution = task.solution.splitlines(keepends=True)
    assert len(code) == len(solution), task.id     # a 'sub' fix changes one line in place
    line = task.line
    for _ in range(rng.randint(0, most)):
        at = rng.randint(2, len(code))              # the new blank line becomes line `at`
        code.insert(at - 1, '\n')
        solution.insert(at - 1, '\n')
        line += at <= line
    op, _, body = task.fix.split(' ', 2)
    return dataclasses.replace(task, code=''.join(code), solution=''.join(solution), line=line,
                               fix=f'{op} {line} {body}')


def lab_edit_parts(action, tok):
    opening, close = '<call> edit ', ' </call>'
    if not action.startswith(opening):
        pieces = [('calls', action)]
    else:
        assert action.endswith(close), action
        op, line, patch = action[len(opening):-len(close)].split(' ', 2)
        old, bar, new = patch.partition('|')
        assert bar and line.isdigit(), action
        pieces = [('calls', f'{opening}{op} '), ('line', line), ('calls', ' '), ('old', old),
                  ('new', bar + new), ('calls', close)]
    return [name for name, text in pieces for _ in tok.encode(text)]


def lab_part_weights(copy_weight=1, overrides=()):
    weights = {'line': copy_weight, 'old': copy_weight, 'new': 1}
    weights.update(overrides)
    return weights


def lab_weight_the_copy(ids, mask, tokenizer, weights):
    out = list(mask)
    if all(w == 1 for w in weights.values()):
        return out
    for start, end in reversed(arl.action_spans(torch.tensor(mask, dtype=torch.float))):
        action = tokenizer.decode(ids[start:end])
        if action.startswith('<call> edit '):
            for i, name in zip(range(start, end), lab_edit_parts(action, tokenizer)):
                out[i] = weights.get(name, 1)
            break
    return out


@pytest.fixture(scope="module")
def variant_tasks():
    return arl.make_variant_tasks(validate=False)


def some_tasks(tasks, n=12):
    """n tasks of different templates, splits and variants, the same every run."""
    return random.Random(6).sample(tasks, n)


def test_pad_blank_lines_equals_the_labs_padding(variant_tasks):
    for most, seed in ((6, 0), (2, 0), (6, 1)):
        for task in variant_tasks[::7]:
            assert arl.pad_blank_lines(task, most, seed) == lab_pad_blank_lines(task, most, seed)


def test_padding_moves_the_line_and_the_fix_together(variant_tasks):
    moved = 0
    for task in variant_tasks[::5]:
        padded = arl.pad_blank_lines(task, 6)
        code, new_code = task.code.splitlines(), padded.code.splitlines()
        assert 0 <= len(new_code) - len(code) <= 6
        assert new_code[0] == code[0]                                     # never above the def
        assert [x for x in new_code if x.strip()] == [x for x in code if x.strip()]
        assert [x for x in padded.solution.splitlines() if x.strip()] == [
            x for x in task.solution.splitlines() if x.strip()]
        assert new_code[padded.line - 1] == code[task.line - 1]          # the bug's line moved
        assert padded.solution.splitlines()[padded.line - 1] == task.solution.splitlines()[task.line - 1]
        op, line, body = padded.fix.split(' ', 2)
        assert int(line) == padded.line and f'{op} {task.line} {body}' == task.fix
        assert (padded.id, padded.template, padded.variant, padded.kind, padded.split,
                padded.visible, padded.hidden) == (task.id, task.template, task.variant, task.kind,
                                                   task.split, task.visible, task.hidden)
        assert arl.pad_blank_lines(task, 6) == padded                      # seeded
        moved += padded.line != task.line
    assert moved > len(variant_tasks[::5]) // 3                           # most lines do move


def test_padding_with_most_zero_is_the_identity(variant_tasks):
    tasks = some_tasks(variant_tasks)
    assert all(arl.pad_blank_lines(t, 0) == t for t in tasks)
    same = arl.pad_tasks(tasks, 0, env=None)                              # no sandbox needed
    assert same == tasks and same is not tasks


def test_padded_tasks_stay_valid(variant_tasks):
    tasks = some_tasks(variant_tasks)
    env = arl.BugFixEnv(cache={})
    padded = arl.pad_tasks(tasks, 6, env)                                  # raises if one fails
    assert [t.id for t in padded] == [t.id for t in tasks]
    assert all(arl.validate_task(t, run=env.run) == (True, 'ok') for t in padded)
    assert padded == [lab_pad_blank_lines(t, 6) for t in tasks]


def test_pad_tasks_raises_on_a_task_the_padding_broke(variant_tasks):
    task = some_tasks(variant_tasks, 1)[0]
    broken = dataclasses.replace(task, hidden=())                          # no test catches it
    with pytest.raises(ValueError, match=f'padded task {task.id} .*hidden tests miss the bug'):
        arl.pad_tasks([broken], 6, arl.BugFixEnv(cache={}))


def expert_episodes(tasks, tok):
    """(ids, loss mask) of expert and recovery episodes, with and without the line hint, on the
    tasks padded and as they are, cut after the last action as the warm-start lab cuts them."""
    plain, hinted = arl.BugFixEnv(cache={}), arl.HintedBugFixEnv(hint=True, cache={})
    tasks = [arl.pad_blank_lines(t, 6) for t in tasks[:len(tasks) // 2]] + tasks[len(tasks) // 2:]
    out = []
    for task, (env, policy) in zip(tasks, itertools.cycle(
            [(plain, arl.expert_policy), (plain, arl.recovery_policy),
             (hinted, arl.expert_policy), (hinted, arl.recovery_policy)])):
        traj = arl.teacher_rollout(env, task, tok, policy)
        assert traj.reward == 1.0
        mask = [int(v) for v in traj.action_mask.tolist()]
        end = max(i for i, v in enumerate(mask) if v) + 1
        out.append((traj.ids[:end].tolist(), mask[:end]))
    return out


def test_edit_parts_names_every_token_of_an_action():
    tok = arl.CharTokenizer()
    action = '<call> edit sub 12 x + 1|x - 1 </call>'
    parts = arl.edit_parts(action, tok)
    assert len(parts) == len(tok.encode(action)) and set(parts) == set(arl.EDIT_PART_NAMES)
    by_part = {name: tok.decode([i for i, p in zip(tok.encode(action), parts) if p == name])
               for name in arl.EDIT_PARTS}
    assert by_part == {'line': '12', 'old': 'x + 1', 'new': '|x - 1'}
    assert set(arl.edit_parts('<call> read </call>', tok)) == {'calls'}
    assert arl.EDIT_PARTS == tuple(p for p in arl.EDIT_PART_NAMES if p != 'calls')
    assert arl.edit_parts(action, tok) == lab_edit_parts(action, tok)


def test_part_weights_by_hand():
    assert arl.part_weights() == {'line': 1, 'old': 1, 'new': 1}
    assert arl.part_weights(4) == {'line': 4, 'old': 4, 'new': 1}
    assert arl.part_weights(4, {'old': 10, 'new': 4}.items()) == {'line': 4, 'old': 10, 'new': 4}


def test_weighted_mask_weights_only_the_last_edit(variant_tasks):
    tok = arl.CharTokenizer()
    weights = arl.part_weights(4, (('new', 3),))
    for ids, mask in expert_episodes(some_tasks(variant_tasks, 8), tok):
        out = arl.weighted_action_mask(ids, mask, tok, weights)
        assert len(out) == len(mask)
        edits = [(a, b) for a, b in arl.action_spans(torch.tensor(mask, dtype=torch.float))
                 if tok.decode(ids[a:b]).startswith('<call> edit ')]
        start, end = edits[-1]
        parts = arl.edit_parts(tok.decode(ids[start:end]), tok)
        for i, (m, w) in enumerate(zip(mask, out)):
            if start <= i < end:
                assert w == {'calls': 1, **weights}[parts[i - start]]
            else:
                assert w == m                    # observations 0, other actions (the mistake) 1
        assert arl.weighted_action_mask(ids, mask, tok, arl.part_weights()) == mask


def test_weighted_mask_equals_the_labs_on_expert_episodes(variant_tasks):
    tok = arl.CharTokenizer()
    episodes = expert_episodes(some_tasks(variant_tasks, 8), tok)
    for args in ((), (4,), (10,), (4, {'old': 10, 'new': 4}.items())):
        weights = arl.part_weights(*args)
        assert weights == lab_part_weights(*args)
        for ids, mask in episodes:
            assert (arl.weighted_action_mask(ids, mask, tok, weights)
                    == lab_weight_the_copy(ids, mask, tok, weights))


# ---- evaluation: learning or sharpening (Section 6.8) ---------------------------------------

def pass_at_k_by_enumeration(n, c, k):
    """Share of the k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_matches_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert arl.pass_at_k(n, c, k) == pytest.approx(pass_at_k_by_enumeration(n, c, k),
                                                           abs=1e-12)


def test_pass_at_k_matches_binomial_coefficients_at_large_n():
    for n, c, k in ((200, 7, 10), (200, 150, 100), (1000, 3, 500)):
        exact = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert arl.pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("p", [0.05, 0.3, 0.8])
def test_pass_at_k_is_unbiased_and_the_plug_in_is_not(p):
    """Averaged over c ~ Binomial(n, p), exactly: the estimator gives 1 - (1 - p)^k."""
    n, k = 6, 3
    weights = [math.comb(n, c) * p ** c * (1 - p) ** (n - c) for c in range(n + 1)]
    expected = sum(w * arl.pass_at_k(n, c, k) for c, w in enumerate(weights))
    plug_in = sum(w * (1 - (1 - c / n) ** k) for c, w in enumerate(weights))
    assert expected == pytest.approx(1 - (1 - p) ** k, abs=1e-12)
    assert plug_in < 1 - (1 - p) ** k - 1e-3


def test_pass_at_k_rejects_bad_counts():
    for n, c, k in ((4, 5, 1), (4, 2, 0), (4, 2, 5), (4, -1, 1)):
        with pytest.raises(ValueError):
            arl.pass_at_k(n, c, k)


def test_summarise_by_hand():
    rewards = [[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]]
    s = arl.summarise(rewards, ks=(1, 4, 8))
    assert s["per_task"] == [0.5, 0.0, 0.75]
    assert s["pass@1"] == pytest.approx(s["rate"]) == pytest.approx(5 / 12)
    assert s["pass@4"] == pytest.approx(2 / 3)       # tasks 1 and 3 have a success among 4
    assert "pass@8" not in s                         # more than the 4 samples
    assert (s["tasks"], s["samples"]) == (3, 4)
    # per-task rates 0.5, 0, 0.75: sample std sqrt(((1/12)^2 + (5/12)^2 + (4/12)^2) / 2)
    assert s["stderr"] == pytest.approx(math.sqrt((1 + 25 + 16) / 144 / 2) / math.sqrt(3))


def test_mean_se_and_paired_by_hand():
    assert arl.mean_se([2.0, 4.0]) == (pytest.approx(3.0), pytest.approx(1.0))
    mean, se = arl.mean_se([5.0])
    assert mean == 5.0 and math.isnan(se)
    # differences 0.5, 0, -0.5: mean 0, sample std 0.5, SE 0.5 / sqrt(3)
    mean, se = arl.paired([1.0, 0.5, 0.0], [0.5, 0.5, 0.5])
    assert (mean, se) == (pytest.approx(0.0), pytest.approx(0.5 / math.sqrt(3)))
    with pytest.raises(ValueError):
        arl.paired([1.0], [1.0, 0.0])


def test_pairing_removes_the_shared_task_spread():
    easy_hard = [0.9, 0.1, 0.8, 0.2]
    shifted = [v + 0.05 for v in easy_hard]
    assert arl.paired(shifted, easy_hard) == (pytest.approx(0.05), pytest.approx(0.0, abs=1e-12))
    assert arl.mean_se(shifted)[1] > 0.1


def test_episode_seeds_are_fixed_and_distinct():
    seeds = {(i, j): arl.episode_seed(7, i, j) for i in range(20) for j in range(8)}
    assert len(set(seeds.values())) == len(seeds)
    assert all(arl.episode_seed(7, i, j) == s for (i, j), s in seeds.items())
    assert arl.episode_seed(8, 0, 0) != seeds[0, 0]
    assert all(0 <= s < 2 ** 31 for s in seeds.values())


@pytest.mark.parametrize("temperature", [1.0, 0.5, 0.0])
def test_sample_rewards_plays_the_episodes_rollout_plays(temperature):
    """Episode (i, j) is arl.rollout with seed episode_seed(seed, i, j); greedy plays one."""
    torch.manual_seed(0)
    tok = arl.CharTokenizer()
    env = arl.BugFixEnv(cache={})
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=5).eval()
    tasks = arl.make_tasks()[:3]
    rewards, played = arl.sample_rewards(model, env, tasks, tok, 2, temperature, seed=7,
                                         max_turns=2)
    samples = 1 if temperature == 0 else 2
    assert [len(r) for r in rewards] == [samples] * 3 and len(played) == 3 * samples
    for n, (task, episode) in enumerate(played):
        i, j = divmod(n, samples)
        alone = arl.rollout(model, env, tasks[i], tok, temperature=temperature, max_turns=2,
                            seed=arl.episode_seed(7, i, j))
        assert task is tasks[i]
        assert torch.equal(episode.ids, alone.ids) and episode.text == alone.text
        assert rewards[i][j] == alone.reward


def test_sharpening_control_and_versus_control_by_hand():
    control = {"heldout": {"t1": {"rate": 0.2, "per_task": [0.0, 0.4]},
                           "t0.5": {"rate": 0.3, "per_task": [0.2, 0.4]},
                           "greedy": {"rate": 0.9, "per_task": [1.0, 0.8]}}}
    assert arl.sharpening_control(control) == ("t0.5", [0.2, 0.4])     # greedy not a candidate
    control["heldout"]["t0.5"]["rate"] = 0.2
    assert arl.sharpening_control(control)[0] == "t1"                   # ties go to T=1
    control["heldout"]["t0.5"]["rate"] = 0.3
    trained = {"heldout": {"t1": {"rate": 0.5, "per_task": [0.6, 0.4]}}}
    versus = arl.versus_control(trained, control)
    assert versus["control_temperature"] == "t0.5"
    assert versus["difference"] == pytest.approx(0.2)                  # differences 0.4, 0.0
    assert versus["stderr"] == pytest.approx(0.2)                      # std 0.2828 / sqrt(2)


def test_expert_path_probability_is_the_product_of_step_probabilities():
    """One teacher-forced pass per batch gives what walking the episode token by token gives."""
    torch.manual_seed(0)
    tok, env = arl.CharTokenizer(), arl.BugFixEnv(cache={})
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=3).eval()
    tasks = arl.make_tasks()[:3]
    walked = []
    for task in tasks:
        traj = arl.teacher_rollout(env, task, tok, arl.expert_policy)
        total = 0.0
        with torch.no_grad():
            for t in range(1, len(traj.ids)):
                if traj.action_mask[t]:
                    logits, _ = model(traj.ids[None, :t])
                    total += torch.log_softmax(logits[0, -1] / 0.7, -1)[traj.ids[t]].item()
        walked.append(total)
    batched = arl.expert_path_logprob(model, env, tasks, tok, temperature=0.7, batch_size=2)
    assert batched == pytest.approx(walked, abs=1e-4)


# ---- the labs' results ----------------------------------------------------------------------

def test_warm_start_results_have_expected_keys():
    rec = load_lab("warm_start")
    assert isinstance(rec, arl.WarmStartRecord) and rec.lab == "book/labs/warm_start.py"
    assert rec.machine["torch"]
    for key in ("model_config", "seed", "eval_seed", "steps", "batch_size", "lr"):
        assert key in rec.recipe, key
    for key in ("train_t1", "train_greedy", "heldout_t1", "heldout_greedy"):
        m = rec.metrics[key]
        assert 0.0 <= m["rate"] <= 1.0 and m["stderr"] >= 0.0 and m["episodes"] > 0
    assert 0.05 <= rec.metrics["train_t1"]["rate"] <= 0.6   # a start RL can learn from
    model = arl.load_checkpoint(rec.checkpoint)
    assert sum(p.numel() for p in model.parameters()) == rec.results["parameters"]


def test_reinforce_seeds_results_have_expected_keys():
    rec = load_lab("reinforce_seeds")
    assert rec.kind == "seeds" and rec.lab == "book/labs/reinforce_seeds.py"
    assert rec.machine["torch"]
    for key in ("warm_start", "eval", "rl_tasks", "steps"):
        assert key in rec.recipe, key
    before, runs = rec.results["before"], rec.results["runs"]
    assert len(runs) >= 2
    for run in runs:
        assert {"seed", "steps", "after", "mean_reward_first", "mean_reward_last"} <= set(run)
        for split, m in run["after"].items():
            assert split in before
            assert 0.0 <= m["rate"] <= 1.0 and m["stderr"] >= 0.0
        assert len(run["curve"]) == run["steps"] == rec.recipe["steps"]
        assert run["zero_gradient_steps"] == sum(r == 0.0 for r in run["curve"])


def test_reinforce_seeds_support_the_chapter_claims():
    """Section 6.7's Evidence callout: what the three seeds do and do not show."""
    runs = load_lab("reinforce_seeds").results["runs"]
    assert [run["seed"] for run in runs] == [0, 1, 2]
    for run in runs:
        gain = run["paired_diff"]["rl_t1"]
        assert gain["mean"] > 3 * gain["stderr"]                 # sampled solve rate rose
        greedy = run["paired_diff"]["rl_greedy"]
        assert abs(greedy["mean"]) < 1.5 * greedy["stderr"]      # greedy: no detectable change
        assert run["after"]["heldout_t1"]["rate"] == 0.0         # nothing transferred


def test_rl_placements_half_the_heldout_placements_and_placement_halves_cut_by_them(tmp_path):
    def task(i, line, split):
        return arl.VariantTask(id=i, func='f', kind='k', line=line, code='', solution='', fix='',
                               visible=(), hidden=(), split=split, template='t')
    tasks = [task(i, i % 5, 'heldout') for i in range(10)] + [task(10, 7, 'train')]
    placements = arl.rl_placements(tasks)
    assert len(placements) == 2 and placements == arl.rl_placements(tasks, 'rl-groups')
    assert placements <= {('t', line, 'k') for line in range(5)}     # held-out placements only
    halves = arl.placement_halves(tasks, placements)
    assert list(halves) == ["RL's placements", 'unseen placements']
    assert [t.id for t in halves["RL's placements"]] == [
        t.id for t in tasks if arl.task_group(t) in placements]
    assert len(halves["RL's placements"]) + len(halves['unseen placements']) == len(tasks)
    model = arl.TinyAgent(d_model=16, n_layers=1, n_heads=2, seed=3)
    torch.save({'state_dict': model.state_dict(),
                'model_config': dict(d_model=16, n_layers=1, n_heads=2, seed=3)}, tmp_path / 'a.pt')
    loaded = arl.load_checkpoint(tmp_path / 'a.pt')
    ids = torch.tensor([[1, 5, 7]])
    assert not loaded.training and torch.equal(loaded(ids)[0], model(ids)[0])
