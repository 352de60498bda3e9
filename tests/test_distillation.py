"""Chapter 16's saves: distill_kl, distill_advantages and onpolicy_distill_step, topk_reverse_kl,
dagger_examples.

Run: .venv/bin/python -m pytest tests/test_distillation.py -q
"""

import math

import pytest
import torch

import agentrl as arl


def logits(seed, shape=(2, 5, 11)):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64) * 2


def test_distill_kl_is_the_exact_kl_in_either_direction():
    s, t = logits(0), logits(1)
    mask = torch.ones(2, 4)
    mask[1, 3] = 0
    logq = torch.log_softmax(s[:, :-1], -1)
    logp = torch.log_softmax(t[:, :-1], -1)
    forward = (logp.exp() * (logp - logq)).sum(-1)
    reverse = (logq.exp() * (logq - logp)).sum(-1)
    for direction, kl in (('forward', forward), ('reverse', reverse)):
        want = (kl * mask).sum() / mask.sum()
        assert abs(arl.distill_kl(s, t, mask, direction).item() - want.item()) < 1e-5
    assert arl.distill_kl(s, s, mask).item() == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError):
        arl.distill_kl(s, t, mask, 'sideways')


def test_the_advantage_is_minus_the_log_ratio_and_its_expected_step_descends_the_reverse_kl():
    """At one state, E_{y~q}[A(y) grad log q(y)] = -grad KL(q || p): the sign is the KL's."""
    logp_s = torch.tensor([[-1.0, -2.0, 0.0]])
    logp_t = torch.tensor([[-0.5, -3.0, -9.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    adv = arl.distill_advantages(logp_s, logp_t, mask)
    assert adv.tolist() == [[0.5, -1.0, 0.0]]          # teacher likes token 1 more: positive
    z = logits(2, (11,)).requires_grad_()
    p = torch.log_softmax(logits(3, (11,)), -1)
    logq = torch.log_softmax(z, -1)
    kl = (logq.exp() * (logq - p)).sum()
    (grad_kl,) = torch.autograd.grad(kl, z, retain_graph=True)
    a = arl.distill_advantages(logq[None].detach(), p[None], torch.ones(1, 11))[0]
    expected = sum(logq[v].exp().item() * a[v].item()
                   * torch.autograd.grad(logq[v], z, retain_graph=True)[0] for v in range(11))
    assert torch.allclose(expected, -grad_kl, atol=1e-10)


def test_k1_and_k3_are_unbiased_for_the_exact_kl_and_k3_is_never_negative():
    logq = torch.log_softmax(logits(4, (7, 11)), -1)
    logp = torch.log_softmax(logits(5, (7, 11)), -1)
    exact = (logq.exp() * (logq - logp)).sum(-1)
    k1, _, k3 = arl.kl_estimators(logq, logp)        # every token as if sampled from q
    assert torch.allclose((logq.exp() * k1).sum(-1), exact, atol=1e-10)
    assert torch.allclose((logq.exp() * k3).sum(-1), exact, atol=1e-10)
    assert (k3 >= 0).all() and (k1 < 0).any()


def test_topk_reverse_kl_fails_by_moving_mass_out_and_the_tail_bucket_repairs_it():
    teacher = logits(6, (11,))
    student = teacher.clone()
    full = arl.topk_reverse_kl(student, teacher, 11)
    assert full.item() == pytest.approx(0.0, abs=1e-9)
    # a student whose top 2 hold the teacher's top-2 probabilities divided by e, the rest spread
    p = torch.tensor([0.5, 0.3] + [0.2 / 9] * 9, dtype=torch.float64)
    q = torch.cat([p[:2] / math.e, torch.full((9,), (1 - p[:2].sum().item() / math.e) / 9,
                                              dtype=torch.float64)])
    truncated = arl.topk_reverse_kl(q.log(), p.log(), 2).item()
    exact = (q * (q.log() - p.log())).sum().item()
    assert truncated == pytest.approx(-0.8 / math.e)  # below the perfect student's 0
    assert truncated < 0 < exact
    bucketed = arl.topk_reverse_kl(q.log(), p.log(), 2, tail=True).item()
    assert 0 < bucketed <= exact + 1e-12              # a divergence, and a lower bound
    # optimising the truncated loss drives the top-k mass down; with the tail it does not
    for tail, falls in ((False, True), (True, False)):
        z = teacher.clone().float().requires_grad_()
        opt = torch.optim.Adam([z], lr=0.05)
        for _ in range(200):
            loss = arl.topk_reverse_kl(z, teacher.float(), 3, tail=tail)
            opt.zero_grad()
            loss.backward()
            opt.step()
        mass = torch.softmax(z.detach().double(), -1).topk(3).values.sum().item()
        start = torch.softmax(teacher, -1).topk(3).values.sum().item()
        assert (mass < start - 0.1) == falls


def test_dagger_labels_are_the_experts_actions_on_the_students_own_states():
    tok = arl.CharTokenizer()
    env = arl.BugFixEnv(cache={})
    task = next(t for t in arl.make_tasks(seed=0) if arl.wrong_line_patch(t))
    episode = arl.teacher_rollout(env, task, tok, arl.recovery_policy)   # a mistake, then recovery
    examples = arl.dagger_examples(episode, task, tok)
    assert len(examples) == len(episode.turns)
    spans = arl.action_spans(episode.action_mask)
    for i, ((ids, mask), (start, _)) in enumerate(zip(examples, spans)):
        assert ids[:start] == episode.ids[:start].tolist()            # the student's context
        label = [v for v, m in zip(ids, mask) if m]
        assert tok.decode(label) == arl.expert_policy(task, episode.turns[:i])
        assert mask == [0] * start + [1] * len(label)
    wrong = next(i for i, (a, obs) in enumerate(episode.turns) if obs.startswith('error'))
    label = tok.decode([v for v, m in zip(*examples[wrong]) if m])
    assert label != episode.turns[wrong][0]                # the mistake is never a target
    after = tok.decode([v for v, m in zip(*examples[wrong + 1]) if m])
    assert after.startswith('<call> edit ')                # the recovery label, for free
    assert math.isfinite(len(after))
