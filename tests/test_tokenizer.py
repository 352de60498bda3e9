"""Tests for scripts/setup_tokenizer.py, the offline Qwen/Qwen3-0.6B cache entry.

The setup runs once per session into a temporary HF_HOME (it downloads the
dashscope wheel from PyPI, so the first test takes about 10-20 s). The expected
ids of ordinary strings are public values recorded for the upstream Qwen3-0.6B
tokenizer (listed in the sources entry of the tokenizer setup). The setup pins
every file to upstream's SHA-256, so these ids mainly check the loading path.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "setup_tokenizer.py"
MODEL = "Qwen/Qwen3-0.6B"
MODEL_FOLDER = "models--Qwen--Qwen3-0.6B"


def load_setup_module():
    spec = importlib.util.spec_from_file_location("setup_tokenizer", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def clean_env(**extra: str) -> dict[str, str]:
    """The current environment without any Hugging Face settings, plus `extra`."""
    prefixes = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(extra)
    return env


def run_setup(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, env=env, timeout=900)


@pytest.fixture(scope="session")
def setup_mod():
    return load_setup_module()


@pytest.fixture(scope="session")
def hf_home(tmp_path_factory) -> Path:
    """A fresh HF_HOME provisioned once by the script, found through HF_HOME."""
    home = tmp_path_factory.mktemp("hf_home")
    proc = run_setup(env=clean_env(HF_HOME=str(home)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return home


@pytest.fixture(scope="session")
def hub(hf_home) -> Path:
    return hf_home / "hub"


@pytest.fixture(scope="session")
def tokenizer(hub):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(MODEL, cache_dir=str(hub),
                                                      local_files_only=True)


# ---------------------------------------------------------------- the cache layout


def test_layout_is_a_hub_cache_entry(hub, setup_mod):
    model_dir = hub / MODEL_FOLDER
    assert (model_dir / "refs" / "main").read_text() == setup_mod.REVISION
    snapshot = model_dir / "snapshots" / setup_mod.REVISION
    assert sorted(p.name for p in snapshot.iterdir()) == sorted(setup_mod.PINS)
    for name, pin in setup_mod.PINS.items():
        link = snapshot / name
        assert link.is_symlink()
        assert os.readlink(link) == f"../../blobs/{pin.blob_name}"
        data = link.read_bytes()
        assert setup_mod.sha256_hex(data) == pin.sha256
        assert len(data) == pin.size
        if not pin.lfs:  # small files: the blob name is the Git blob id
            assert setup_mod.git_blob_sha1(data) == pin.git_sha1


def test_second_run_writes_nothing(hf_home):
    model_dir = hf_home / "hub" / MODEL_FOLDER
    before = {p: p.stat().st_mtime_ns for p in model_dir.rglob("*")}
    proc = run_setup(env=clean_env(HF_HOME=str(hf_home)))
    assert proc.returncode == 0, proc.stderr
    assert "nothing written" in proc.stdout
    assert {p: p.stat().st_mtime_ns for p in model_dir.rglob("*")} == before


def test_check_only_verifies(hf_home, tmp_path):
    assert run_setup("--check", env=clean_env(HF_HOME=str(hf_home))).returncode == 0
    empty = tmp_path / "hub"
    proc = run_setup("--check", "--cache-dir", str(empty), env=clean_env())
    assert proc.returncode == 3
    assert "missing" in proc.stdout
    assert not empty.exists()


def test_hub_cache_follows_huggingface_rules(setup_mod):
    find = setup_mod.default_hub_cache
    assert find({"HF_HUB_CACHE": "/a/hub", "HF_HOME": "/b"}) == Path("/a/hub")
    assert find({"HF_HOME": "/b"}) == Path("/b/hub")
    assert find({"XDG_CACHE_HOME": "/c"}) == Path("/c/huggingface/hub")
    assert find({}) == Path("~/.cache/huggingface/hub").expanduser()


# ---------------------------------------------------------------- loading as a reader


def test_reader_path_with_hf_hub_offline(hf_home):
    """Exactly what a chapter does: no cache_dir, only HF_HOME and HF_HUB_OFFLINE=1."""
    pytest.importorskip("transformers")
    code = (
        "import json\n"
        "from transformers import AutoConfig, AutoTokenizer\n"
        f"tok = AutoTokenizer.from_pretrained({MODEL!r})\n"
        f"cfg = AutoConfig.from_pretrained({MODEL!r})\n"
        "text = tok.apply_chat_template([{'role': 'user', 'content': 'Hello, world!'}],\n"
        "                               tokenize=False, add_generation_prompt=True)\n"
        "print(json.dumps({'ids': tok.encode(text), 'model_type': cfg.model_type}))\n"
    )
    env = clean_env(HF_HOME=str(hf_home), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["model_type"] == "qwen3"
    assert result["ids"] == [151644, 872, 198, 9707, 11, 1879, 0, 151645, 198,
                             151644, 77091, 198]


@pytest.mark.parametrize("token, token_id", [
    ("<|endoftext|>", 151643),
    ("<|im_start|>", 151644),
    ("<|im_end|>", 151645),
    ("<tool_call>", 151657),
    ("</tool_call>", 151658),
    ("<tool_response>", 151665),
    ("<think>", 151667),
    ("</think>", 151668),
])
def test_added_token_ids(tokenizer, token, token_id):
    assert tokenizer.convert_tokens_to_ids(token) == token_id
    assert tokenizer.encode(token) == [token_id]


def test_vocabulary_and_special_roles(tokenizer):
    assert len(tokenizer) == 151669  # 151643 BPE tokens + 26 added
    assert tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.bos_token is None


@pytest.mark.parametrize("text, ids", [
    ("Hello, world!", [9707, 11, 1879, 0]),
    ("The capital of France is", [785, 6722, 315, 9625, 374]),
    ("I am a language model,", [40, 1079, 264, 4128, 1614, 11]),
    ("a   b    ", [64, 256, 293, 257]),
    ("one\r\ntwo\n\nthree\t end", [603, 319, 19789, 271, 27856, 197, 835]),
    ("0 12 345 6789", [15, 220, 16, 17, 220, 18, 19, 20, 220, 21, 22, 23, 24]),
    ("<|im_start|>assistant\n<|im_end|>\n", [151644, 77091, 198, 151645, 198]),
])
def test_known_ids_of_ordinary_text(tokenizer, text, ids):
    assert tokenizer.encode(text) == ids


def test_nfc_normalization(tokenizer):
    # "e" + combining acute accent is normalised to the single code point first.
    assert tokenizer.encode("cafe\u0301") == tokenizer.encode("caf\u00e9")


@pytest.mark.parametrize("text", [
    "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
    "  leading spaces, trailing tabs\t\t\n\n",
    "强化学习 for agents: ε-greedy → π(a|s) 🚀",
    "<call> test </call> then <|im_end|>",
])
def test_decode_inverts_encode(tokenizer, text):
    assert tokenizer.decode(tokenizer.encode(text)) == text


# ---------------------------------------------------------------- the chat template

TWO_TURNS = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "content": "<think>\nAdd them.\n</think>\n\n4."},
    {"role": "user", "content": "And 3+3?"},
]


def test_chat_template_two_turns(tokenizer):
    text = tokenizer.apply_chat_template(TWO_TURNS, tokenize=False, add_generation_prompt=True)
    # The earlier assistant turn loses its reasoning; the prompt ends at the
    # assistant header, where the model will open its own <think> block.
    assert text == (
        "<|im_start|>system\nYou are terse.<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
        "<|im_start|>assistant\n4.<|im_end|>\n"
        "<|im_start|>user\nAnd 3+3?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_chat_template_without_thinking(tokenizer):
    text = tokenizer.apply_chat_template(TWO_TURNS, tokenize=False, add_generation_prompt=True,
                                         enable_thinking=False)
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_chat_template_keeps_reasoning_of_last_turn(tokenizer):
    text = tokenizer.apply_chat_template(TWO_TURNS[:3], tokenize=False)
    assert text.endswith("<|im_start|>assistant\n<think>\nAdd them.\n</think>\n\n4.<|im_end|>\n")


# ---------------------------------------------------------------- refusing and failing


def test_mismatched_pin_fails_before_writing(setup_mod, tmp_path, monkeypatch, capsys):
    real = setup_mod.PINS["config.json"]
    wrong = "0" * 64
    monkeypatch.setitem(setup_mod.PINS, "config.json", dataclasses.replace(real, sha256=wrong))
    hub_dir = tmp_path / "hub"
    assert setup_mod.main(["--cache-dir", str(hub_dir)]) == setup_mod.EXIT_PIN
    err = capsys.readouterr().err
    assert "config.json" in err and wrong in err and real.sha256 in err
    assert not hub_dir.exists()


def test_wrong_ranks_file_fails(setup_mod, tmp_path, capsys):
    fake = tmp_path / "qwen.tiktoken"
    fake.write_bytes(b"IQ== 0\n")
    hub_dir = tmp_path / "hub"
    assert setup_mod.main(["--cache-dir", str(hub_dir), "--ranks", str(fake)]) == 1
    err = capsys.readouterr().err
    assert setup_mod.RANKS_SHA256 in err and setup_mod.sha256_hex(b"IQ== 0\n") in err
    assert not hub_dir.exists()


def foreign_entry(hub_dir: Path, revision: str, files: dict[str, bytes]) -> Path:
    model_dir = hub_dir / MODEL_FOLDER
    snapshot = model_dir / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (model_dir / "refs").mkdir()
    (model_dir / "refs" / "main").write_text(revision)
    for name, data in files.items():
        (snapshot / name).write_bytes(data)
    return model_dir


def test_foreign_snapshot_file_is_refused(setup_mod, tmp_path, capsys):
    other = b'{"chat_template": "a different template"}\n'
    model_dir = foreign_entry(tmp_path / "hub", setup_mod.REVISION,
                              {"tokenizer_config.json": other})
    assert setup_mod.main(["--cache-dir", str(tmp_path / "hub")]) == setup_mod.EXIT_REFUSED
    err = capsys.readouterr().err
    assert "REFUSED" in err and "tokenizer_config.json" in err and "not overwritten" in err
    snapshot = model_dir / "snapshots" / setup_mod.REVISION
    assert [p.name for p in snapshot.iterdir()] == ["tokenizer_config.json"]
    assert (snapshot / "tokenizer_config.json").read_bytes() == other
    assert not (model_dir / "blobs").exists()


def test_other_revision_is_refused(setup_mod, tmp_path, capsys):
    other_rev = "1" * 40
    model_dir = foreign_entry(tmp_path / "hub", other_rev, {"config.json": b"{}"})
    assert setup_mod.main(["--cache-dir", str(tmp_path / "hub")]) == setup_mod.EXIT_REFUSED
    err = capsys.readouterr().err
    assert other_rev in err and setup_mod.REVISION in err
    assert (model_dir / "refs" / "main").read_text() == other_rev
    assert not (model_dir / "snapshots" / setup_mod.REVISION).exists()


def test_partial_entry_is_completed_without_download(setup_mod, hub, tmp_path, monkeypatch):
    copy = tmp_path / "hub"
    shutil.copytree(hub, copy, symlinks=True)
    pin = setup_mod.PINS["generation_config.json"]
    model_dir = copy / MODEL_FOLDER
    (model_dir / "snapshots" / setup_mod.REVISION / "generation_config.json").unlink()
    (model_dir / "blobs" / pin.blob_name).unlink()

    def no_download():
        raise AssertionError("only a small file was missing; nothing should be downloaded")

    monkeypatch.setattr(setup_mod, "download_ranks", no_download)
    assert setup_mod.main(["--cache-dir", str(copy)]) == setup_mod.EXIT_OK
    assert setup_mod.main(["--cache-dir", str(copy), "--check"]) == setup_mod.EXIT_OK
