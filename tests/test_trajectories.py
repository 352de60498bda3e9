"""Chapter 5: token sequences, action masks, aligned log-probabilities, rollouts, templates.

These tests import the generated package (``scripts/build_library.py``). The real-tokenizer
test needs transformers and the offline Qwen/Qwen3-0.6B cache (``scripts/setup_tokenizer.py``)
and is skipped when either is missing; it never touches the network.
"""

from __future__ import annotations

import os

import pytest
import torch

import agentrl as arl

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before any import of transformers below


@pytest.fixture(scope="module")
def model(tok):
    return arl.TinyAgent(vocab_size=tok.vocab_size, seed=0)


# ---- build_action_mask -------------------------------------------------------------------

def test_build_action_mask_hand_built():
    segments = [([1, 7, 8], False), ([3, 9], True), ([6], False), ((4,), True), ([], True)]
    ids, mask = arl.build_action_mask(segments)
    assert ids.dtype == torch.long and mask.dtype == torch.float32
    assert ids.tolist() == [1, 7, 8, 3, 9, 6, 4]
    assert mask.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]


def test_build_action_mask_accepts_tensors_and_empty():
    ids, mask = arl.build_action_mask([(torch.tensor([5, 6]), True)])
    assert ids.tolist() == [5, 6] and mask.tolist() == [1.0, 1.0]
    ids, mask = arl.build_action_mask([])
    assert ids.numel() == 0 and mask.numel() == 0


# ---- token_logprobs ----------------------------------------------------------------------

def reference_logprobs(logits, ids, temperature=1.0):
    """log p(ids[b, i+1] | prefix) by an explicit loop over rows and positions."""
    B, T, _ = logits.shape
    out = torch.zeros(B, T - 1)
    for b in range(B):
        for i in range(T - 1):
            row = torch.log_softmax(logits[b, i].double() / temperature, dim=-1)
            out[b, i] = row[ids[b, i + 1]].float()
    return out


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_token_logprobs_matches_independent_gather(temperature):
    gen = torch.Generator().manual_seed(0)
    B, T, V = 3, 9, 13
    logits = 3 * torch.randn(B, T, V, generator=gen)
    ids = torch.randint(V, (B, T), generator=gen)
    action_mask = torch.tensor([[0, 0, 1, 1, 0, 1, 1, 1, 0],
                                [0, 1, 1, 1, 1, 1, 1, 1, 1],
                                [0, 0, 0, 0, 0, 0, 0, 0, 1]], dtype=torch.float32)
    logp, mask = arl.token_logprobs(logits, ids, action_mask, temperature=temperature)
    ref = reference_logprobs(logits, ids, temperature)
    assert logp.shape == mask.shape == (B, T - 1)
    assert torch.equal(mask, action_mask[:, 1:])               # the mask shifts with logp
    assert torch.allclose(logp, ref * mask, atol=1e-5)
    assert bool((logp[mask == 0] == 0).all())
    full, ones = arl.token_logprobs(logits, ids, temperature=temperature)
    assert bool((ones == 1).all()) and torch.allclose(full, ref, atol=1e-5)


def test_token_logprobs_matches_model_cross_entropy(tok, model):
    ids = torch.tensor([tok.encode("task: fix clamp\n<call> read </call>", bos=True)])
    with torch.no_grad():
        logits, _ = model(ids)
        ce = -torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:], reduction="none")
        ch3 = arl.sequence_logprobs(model, ids)[0]
    logp, _ = arl.token_logprobs(logits, ids)
    assert torch.allclose(logp[0], ce, atol=1e-5)
    assert torch.allclose(logp[0], ch3, atol=1e-5)


# ---- rollouts and teacher trajectories --------------------------------------------------

def test_rollout_is_reproducible_and_consistent(tok, tasks, model, cache):
    env = arl.BugFixEnv(cache=cache)
    a = arl.rollout(model, env, tasks[0], tok, seed=3, max_turns=3)
    b = arl.rollout(model, env, tasks[0], tok, seed=3, max_turns=3)
    c = arl.rollout(model, env, tasks[0], tok, seed=4, max_turns=3)
    assert torch.equal(a.ids, b.ids) and torch.equal(a.logp, b.logp)
    assert torch.equal(a.action_mask, b.action_mask) and a.turns == b.turns
    assert not torch.equal(a.ids, c.ids)
    T = len(a.ids)
    assert a.action_mask.shape == (T,) and a.logp.shape == (T - 1,)
    assert len(a.turns) == 3 and not a.done and a.reward == 0.0
    assert a.ids[0].item() == tok.bos_id
    # recorded sampler log-probs equal a fresh forward pass on the policy tokens
    with torch.no_grad():
        logits, _ = model(a.ids[None])
    logp, m = arl.token_logprobs(logits, a.ids[None], a.action_mask[None])
    assert bool((a.logp[m[0] == 0] == 0).all())
    assert (logp[0] - a.logp).abs().max().item() < 1e-5
    # every action span is what the environment received, decoded from the sampled ids
    spans = arl.action_spans(a.action_mask)
    assert len(spans) == len(a.turns)
    for (s, e), (action, _) in zip(spans, a.turns):
        assert tok.decode(a.ids[s:e]) == action
    assert tok.decode(a.ids) == a.text


def test_teacher_trajectories_decode_to_episode_text(tok, tasks, cache):
    for task in tasks[:6]:
        traj = arl.teacher_rollout(arl.BugFixEnv(cache=cache), task, tok, arl.expert_policy)
        text, reward, history = arl.run_episode(arl.BugFixEnv(cache=cache), task, arl.expert_policy)
        assert tok.decode(traj.ids) == text == traj.text
        assert traj.reward == reward == 1.0 and traj.done
        assert traj.turns == history
        assert tok.decode(traj.ids[traj.action_mask.bool()]) == "".join(a for a, _ in history)
        assert bool((traj.logp == 0).all()) and traj.logp.shape == (len(traj.ids) - 1,)


def test_collate_trajectories_pads_right(tok, tasks, cache):
    trajs = [arl.teacher_rollout(arl.BugFixEnv(cache=cache), t, tok, arl.expert_policy)
             for t in tasks[:3]]
    ids, action_mask, logp, real = arl.collate_trajectories(trajs)
    T = max(len(t.ids) for t in trajs)
    assert ids.shape == action_mask.shape == real.shape == (3, T) and logp.shape == (3, T - 1)
    for b, t in enumerate(trajs):
        n = len(t.ids)
        assert torch.equal(ids[b, :n], t.ids) and bool((ids[b, n:] == 0).all())
        assert real[b].sum().item() == n and action_mask[b, n:].sum().item() == 0


def test_action_spans():
    mask = torch.tensor([0.0, 1, 1, 0, 0, 1, 0, 1])
    assert arl.action_spans(mask) == [(1, 3), (5, 6), (7, 8)]
    assert arl.action_spans(torch.zeros(4)) == []


# ---- the real Qwen3 tokenizer -----------------------------------------------------------

@pytest.fixture(scope="module")
def qtok():
    transformers = pytest.importorskip("transformers")
    try:
        return transformers.AutoTokenizer.from_pretrained("Qwen/Qwen3-0.6B", local_files_only=True)
    except OSError as error:  # no provisioned cache on this machine
        pytest.skip(f"Qwen/Qwen3-0.6B tokenizer cache not available: {error}")


def test_qwen3_template_tokens_where_expected(qtok):
    im_start, im_end, think, end_think, tool_call, end_tool_call = qtok.convert_tokens_to_ids(
        ["<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"])
    assert (im_start, im_end, think, end_think, tool_call, end_tool_call) == (
        151644, 151645, 151667, 151668, 151657, 151658)
    chat = [{"role": "user", "content": "task: fix clamp"}]
    ids = qtok.apply_chat_template(chat, add_generation_prompt=True, return_dict=False)
    assert ids[:3] == [im_start, 872, 198]                      # <|im_start|>user\n
    assert ids[-3:] == [im_start, 77091, 198]                   # <|im_start|>assistant\n
    assert ids.count(im_end) == 1
    no_think = qtok.apply_chat_template(chat, add_generation_prompt=True, enable_thinking=False,
                                        return_dict=False)
    assert no_think == ids + [think, 271, end_think, 271]      # <think>\n\n</think>\n\n
    tool = {"type": "function", "function": {"name": "read", "description": "Show sol.py.",
            "parameters": {"type": "object", "properties": {}}}}
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "read", "arguments": {}}}]}
    rendered = qtok.apply_chat_template(chat + [call, {"role": "tool", "content": "1 def f():"}],
                                        tools=[tool], return_dict=False)
    header = qtok.encode("<|im_start|>assistant\n")
    start = next(i for i in range(len(rendered)) if rendered[i:i + 3] == header) + 3
    assert rendered[start] == tool_call                          # the reply opens the call
    end = rendered.index(end_tool_call, start)
    assert rendered[end + 1] == im_end                           # and the turn ends after it
    assert qtok.convert_tokens_to_ids("<tool_response>") in rendered[end:]


def test_qwen3_retokenization_drift(qtok):
    split = qtok.encode(" cl", add_special_tokens=False) + qtok.encode("amp", add_special_tokens=False)
    again = qtok.encode(qtok.decode(split), add_special_tokens=False)
    assert again == qtok.encode(" clamp", add_special_tokens=False) and again != split


def test_qwen3_template_drops_earlier_reasoning(qtok):
    turn1 = [{"role": "user", "content": "a"},
             {"role": "assistant", "content": "<think>\nr1\n</think>\n\nx"}]
    turn2 = turn1 + [{"role": "user", "content": "b"},
                     {"role": "assistant", "content": "<think>\nr2\n</think>\n\ny"}]
    r1 = qtok.apply_chat_template(turn1, tokenize=False)
    r2 = qtok.apply_chat_template(turn2, tokenize=False)
    assert "r1" in r1 and "r1" not in r2 and not r2.startswith(r1)
