"""Tests for the TinyAgent stack saved by chapter 3 (03-language-models-as-policies.md).

Covers the character tokenizer, the transformer's KV cache, per-token log-probabilities,
sampling (seeding, temperature, top-p) and next-token training. Reference values are
computed independently here, not with the function under test.
"""

import math
import string

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import agentrl as arl

torch.use_deterministic_algorithms(True)

ASCII = [c for c in string.printable if c not in '\t\r\x0b\x0c']   # printable ASCII + newline
PIECES = ASCII + ['<call>', '</call>', '<eos>', '<bos>', '<pad>', '<call', 'call>']


@pytest.fixture(autouse=True, scope='module')
def one_thread():
    """A 0.2M-parameter model runs fastest on one thread, and far slower on shared cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope='module')
def model():
    return arl.TinyAgent(vocab_size=101, seed=0).eval()


def random_ids(shape, seed):
    return torch.randint(5, 101, shape, generator=torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------- tokenizer

def test_vocabulary_layout(tok):
    assert tok.vocab_size == 101
    assert tok.itos[:5] == list(arl.SPECIAL_TOKENS)
    assert (tok.pad_id, tok.bos_id, tok.eos_id) == (arl.PAD_ID, arl.BOS_ID, arl.EOS_ID)
    assert len({tok.encode(c)[0] for c in ASCII}) == len(ASCII)
    assert all(len(tok.encode(c)) == 1 for c in ASCII)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ASCII, max_size=200))
def test_round_trip_plain_ascii(text):
    tok = arl.CharTokenizer()
    ids = tok.encode(text, bos=True, eos=True)
    assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id
    assert tok.decode(ids) == text
    assert all(0 <= i < tok.vocab_size for i in ids)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60).map(''.join))
def test_round_trip_with_special_strings(text):
    tok = arl.CharTokenizer()
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    # control tokens never come from text
    assert not {tok.pad_id, tok.bos_id, tok.eos_id} & set(ids)
    # encoding is canonical: re-encoding decoded canonical ids gives the same ids
    assert tok.encode(tok.decode(ids)) == ids


def test_call_brackets_are_single_tokens(tok):
    ids = tok.encode('<call> test </call>')
    assert ids[0] == tok.call_id and ids[-1] == tok.end_call_id
    assert len(ids) == 1 + len(' test ') + 1
    assert tok.encode('<eos>') == [tok.stoi[c] for c in '<eos>']
    assert tok.decode([tok.eos_id], keep_control=True) == '<eos>'
    assert tok.decode([tok.eos_id]) == ''


@pytest.mark.parametrize('text', ['a\tb', 'caf\u00e9', 'x\r\n', '\x00'])
def test_rejects_characters_outside_vocabulary(tok, text):
    with pytest.raises(ValueError, match='not in the vocabulary'):
        tok.encode(text)


def test_pad_batch():
    ids, mask = arl.pad_batch([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]


# ---------------------------------------------------------------- model and cache

def test_default_size_and_shapes(model):
    n = sum(p.numel() for p in model.parameters())
    assert 200_000 <= n <= 300_000
    logits, cache = model(random_ids((2, 9), 0))
    assert logits.shape == (2, 9, 101)
    assert len(cache) == len(model.blocks)
    assert cache[0][0].shape == (2, 4, 9, 16)


def test_seed_determines_initialisation():
    a, b = arl.TinyAgent(seed=3), arl.TinyAgent(seed=3)
    c = arl.TinyAgent(seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embed.weight, c.embed.weight)


@pytest.mark.parametrize('prefill', [1, 7, 20])
def test_kv_cache_equals_uncached_forward(model, prefill):
    ids = random_ids((3, 32), 1)
    with torch.no_grad():
        full, _ = model(ids)
        logits, cache = model(ids[:, :prefill])
        parts = [logits]
        t = prefill
        while t < ids.shape[1]:                       # mixed chunk sizes: 1, 2, 3, 1, 2, 3, ...
            step = 1 + (t % 3)
            logits, cache = model(ids[:, t:t + step], cache)
            parts.append(logits)
            t += step
    cached = torch.cat(parts, dim=1)
    assert cache[0][0].shape[2] == ids.shape[1]
    assert (full - cached).abs().max().item() < 1e-5


def test_causality(model):
    ids = random_ids((1, 20), 2)
    changed = ids.clone()
    changed[0, 12:] = random_ids((1, 8), 3)
    with torch.no_grad():
        a, _ = model(ids)
        b, _ = model(changed)
    assert torch.allclose(a[:, :12], b[:, :12], atol=1e-6)
    assert not torch.allclose(a[:, 12:], b[:, 12:])


# ---------------------------------------------------------------- log-probabilities

def direct_logprobs(model, seq, temperature=1.0):
    """log p(seq[i+1] | seq[:i+1]), one forward pass per prefix."""
    out = []
    with torch.no_grad():
        for i in range(len(seq) - 1):
            logits, _ = model(torch.tensor([seq[:i + 1]]))
            out.append(torch.log_softmax(logits[0, -1] / temperature, -1)[seq[i + 1]].item())
    return torch.tensor(out)


def test_sequence_logprobs_matches_direct_gather(model):
    seqs = [random_ids((15,), 4).tolist(), random_ids((9,), 5).tolist(), random_ids((4,), 6).tolist()]
    ids, mask = arl.pad_batch(seqs)
    with torch.no_grad():
        logp = arl.sequence_logprobs(model, ids, mask)
    assert logp.shape == (3, 14)
    for b, seq in enumerate(seqs):
        n = len(seq)
        assert torch.allclose(logp[b, :n - 1], direct_logprobs(model, seq), atol=1e-5)
        assert torch.all(logp[b, n - 1:] == 0)


@pytest.mark.parametrize('temperature', [0.5, 1.0, 2.0])
def test_sequence_logprobs_temperature(model, temperature):
    seq = random_ids((12,), 7).tolist()
    with torch.no_grad():
        logp = arl.sequence_logprobs(model, torch.tensor([seq]), temperature=temperature)
    assert torch.allclose(logp[0], direct_logprobs(model, seq, temperature), atol=1e-5)


# ---------------------------------------------------------------- sampling

def reference_sampling_logprobs(logits, temperature, top_p):
    """Independent top-p: keep tokens in descending order until the kept mass reaches top_p."""
    probs = torch.softmax(logits.double() / temperature, -1)
    out = torch.full_like(probs, float('-inf'))
    for b in range(probs.shape[0]):
        order = sorted(range(probs.shape[1]), key=lambda j: -probs[b, j].item())
        kept, mass = [], 0.0
        for j in order:
            kept.append(j)
            mass += probs[b, j].item()
            if mass >= top_p:
                break
        for j in kept:
            out[b, j] = math.log(probs[b, j].item() / mass)
    return out


@pytest.mark.parametrize('temperature,top_p', [(1.0, 1.0), (0.7, 1.0), (1.0, 0.9), (1.3, 0.5)])
def test_sampling_logprobs_reference(temperature, top_p):
    logits = torch.randn(4, 101, generator=torch.Generator().manual_seed(8)) * 3
    got = arl.sampling_logprobs(logits, temperature, top_p).double()
    want = reference_sampling_logprobs(logits, temperature, top_p)
    assert torch.equal(torch.isinf(got), torch.isinf(want))
    finite = ~torch.isinf(want)
    assert torch.allclose(got[finite], want[finite], atol=1e-5)


@pytest.mark.parametrize('temperature,top_p', [(1.0, 1.0), (0.7, 1.0), (1.5, 0.8)])
def test_sample_token_frequencies(temperature, top_p):
    logits = torch.tensor([[2.0, 1.0, 0.5, 0.0, -1.0, -3.0]])
    q = arl.sampling_logprobs(logits, temperature, top_p).exp()[0]
    n = 40000
    gen = torch.Generator().manual_seed(9)
    tokens, logq = arl.sample_token(logits.expand(n, 6), temperature, top_p, gen)
    freq = torch.bincount(tokens, minlength=6).double() / n
    se = (q.double() * (1 - q.double()) / n).sqrt()
    assert torch.all((freq - q.double()).abs() <= 5 * se + 1e-12)
    assert torch.allclose(logq, q.log()[tokens], atol=1e-6)


def test_sample_is_reproducible(model):
    prompt = random_ids((4, 6), 10)
    a = arl.sample(model, prompt, 25, seed=11)
    b = arl.sample(model, prompt, 25, generator=torch.Generator().manual_seed(11))
    c = arl.sample(model, prompt, 25, seed=12)
    assert torch.equal(a.ids, b.ids) and torch.equal(a.logp, b.logp) and torch.equal(a.mask, b.mask)
    assert not torch.equal(a.ids, c.ids)


def test_cached_and_uncached_sampling_agree(model):
    prompt = random_ids((3, 5), 13)
    a = arl.sample(model, prompt, 20, temperature=0.8, top_p=0.95, seed=14)
    b = arl.sample(model, prompt, 20, temperature=0.8, top_p=0.95, seed=14, use_cache=False)
    assert torch.equal(a.ids, b.ids)
    assert torch.allclose(a.logp, b.logp, atol=1e-5)


def test_tiny_top_p_is_greedy(model):
    prompt = random_ids((2, 5), 15)
    greedy = arl.sample(model, prompt, 15, temperature=0)
    tiny = arl.sample(model, prompt, 15, top_p=1e-9, seed=16)
    assert torch.equal(greedy.ids, tiny.ids)
    assert torch.all(tiny.logp == 0) and torch.all(greedy.logp == 0)
    # independent greedy decoding with uncached forwards
    ids = prompt.clone()
    with torch.no_grad():
        for _ in range(15):
            logits, _ = model(ids)
            ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(greedy.ids[greedy.mask.bool()], ids[:, 5:][greedy.mask.bool()])


@pytest.mark.parametrize('temperature', [0.5, 1.0, 1.7])
def test_sample_logp_is_the_sampling_distribution(model, temperature):
    """With top_p = 1 the returned logp is log softmax(logits / temperature) of the sampled token."""
    prompt = random_ids((3, 4), 17)
    s = arl.sample(model, prompt, 20, temperature=temperature, seed=18, stop_ids=())
    full = torch.cat([prompt, s.ids], dim=1)
    for b in range(3):
        ref = direct_logprobs(model, full[b].tolist(), temperature)[3:]
        assert torch.allclose(s.logp[b].double(), ref.double(), atol=1e-5)


def test_sample_logp_with_top_p(model):
    prompt = random_ids((2, 4), 19)
    s = arl.sample(model, prompt, 12, temperature=1.0, top_p=0.3, seed=20, stop_ids=())
    full = torch.cat([prompt, s.ids], dim=1)
    with torch.no_grad():
        logits, _ = model(full)
    for t in range(12):
        ref = reference_sampling_logprobs(logits[:, 3 + t], 1.0, 0.3)
        want = ref.gather(-1, s.ids[:, t:t + 1]).squeeze(-1)
        assert torch.all(torch.isfinite(want))               # sampled tokens are in the nucleus
        assert torch.allclose(s.logp[:, t].double(), want, atol=1e-5)


def test_stop_tokens_pad_and_mask(model):
    prompt = random_ids((6, 3), 21)
    everything = tuple(range(101))
    s = arl.sample(model, prompt, 10, seed=22, stop_ids=everything)
    assert s.ids.shape == (6, 1) and torch.all(s.mask == 1)
    common = tuple(range(5, 60))                              # most tokens stop a row
    s = arl.sample(model, prompt, 30, seed=23, stop_ids=common)
    for b in range(6):
        m = s.mask[b]
        n = int(m.sum())
        assert torch.all(m[:n] == 1) and torch.all(m[n:] == 0)
        assert torch.all(s.ids[b, n:] == arl.PAD_ID) and torch.all(s.logp[b, n:] == 0)
        if n < s.ids.shape[1]:
            assert s.ids[b, n - 1].item() in common


# ---------------------------------------------------------------- training

def tool_call_examples(tok):
    calls = ['<call> read </call>', '<call> test </call>', '<call> submit </call>']
    examples = []
    for i, call in enumerate(calls * 4):
        prompt = tok.encode(f'step {i % 3}\n', bos=True)
        action = tok.encode(call, eos=True)
        examples.append((prompt + action, [0] * len(prompt) + [1] * len(action)))
    return examples


def test_next_token_loss_uses_only_masked_targets(tok):
    model = arl.TinyAgent(seed=1)
    ids, _ = arl.pad_batch([tok.encode('ab\ncd', bos=True, eos=True)])
    mask = torch.tensor([[0, 0, 0, 0, 1, 1, 1]], dtype=torch.float)
    with torch.no_grad():
        loss = arl.next_token_loss(model, ids, mask)
        ref = -direct_logprobs(model, ids[0].tolist())[3:].mean()
    assert abs(loss.item() - ref.item()) < 1e-5


def test_training_reduces_loss_and_is_deterministic(tok):
    examples = tool_call_examples(tok)
    a, b = arl.TinyAgent(seed=2), arl.TinyAgent(seed=2)
    losses_a = arl.train_next_token(a, examples, steps=40, lr=5e-3, batch_size=8, seed=3)
    losses_b = arl.train_next_token(b, examples, steps=40, lr=5e-3, batch_size=8, seed=3)
    assert losses_a == losses_b
    assert len(losses_a) == 40
    assert abs(losses_a[0] - math.log(101)) < 0.2
    assert sum(losses_a[-5:]) / 5 < 0.5 * losses_a[0]
    # the trained policy continues each prompt with the demonstrated call
    s = arl.sample(a, torch.tensor([tok.encode('step 1\n', bos=True)]), 30, temperature=0)
    assert tok.decode(s.ids[0]) == '<call> test </call>'


def test_training_accepts_plain_id_lists(tok):
    model = arl.TinyAgent(seed=4)
    seqs = [tok.encode('<call> read </call>', bos=True, eos=True)] * 4
    losses = arl.train_next_token(model, seqs, steps=15, lr=5e-3, batch_size=4, seed=0)
    assert losses[-1] < losses[0]
