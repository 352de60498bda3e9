"""Provision the Qwen/Qwen3-0.6B tokenizer as an offline Hugging Face cache entry.

The book loads the real Qwen3 tokenizer the way a reader with a downloaded
cache would::

    HF_HUB_OFFLINE=1 python -c 'from transformers import AutoTokenizer;
                                AutoTokenizer.from_pretrained("Qwen/Qwen3-0.6B")'

No machine of this project reaches the Hugging Face hub, so this script
rebuilds the files of that cache entry from public pieces and checks each of
them, byte for byte, against the SHA-256 published for upstream revision
``REVISION``:

* the BPE ranks ``qwen.tiktoken`` come from the Apache-2.0 PyPI package
  ``dashscope==2.0.2`` (fetched with ``pip download --no-deps`` into a
  temporary folder and read out of the wheel; nothing is installed);
* ``tokenizer.json`` is built with the ``tokenizers`` library (byte-level BPE,
  Qwen2 split regex, NFC, the 26 added tokens 151643-151668); ``vocab.json``
  and ``merges.txt`` are the same BPE in the older two-file form;
* ``tokenizer_config.json`` carries the upstream Qwen3 chat template, kept
  verbatim in ``scripts/tokenizer_data/qwen3_chat_template.jinja``;
* ``config.json`` (transformers 5 wants it beside the tokenizer) and
  ``generation_config.json`` are written from the values in
  ``scripts/tokenizer_data/qwen3_0.6b_spec.json``.

The result is the layout huggingface_hub itself writes::

    <hub>/models--Qwen--Qwen3-0.6B/blobs/<blob name>
    <hub>/models--Qwen--Qwen3-0.6B/snapshots/<REVISION>/<file> -> ../../blobs/<blob name>
    <hub>/models--Qwen--Qwen3-0.6B/refs/main                    (contains REVISION)

where a blob is named by its SHA-256 for Git-LFS files (here tokenizer.json)
and by its Git blob SHA-1 for the small files kept in plain Git.

<hub> is ``--cache-dir`` if given, else ``$HF_HUB_CACHE``, else
``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub`` (the rules of huggingface_hub).

An existing cache is never overwritten. If the snapshot already holds the
files and they match the pins, the script says so and exits 0 without
writing. Files that are missing are added (they are exactly the bytes a hub
download would give). Anything that differs -- another revision in
``refs/main``, a snapshot file or blob with other bytes -- makes the script
refuse and explain, leaving the cache untouched.

Usage (from the repository root)::

    .venv/bin/python scripts/setup_tokenizer.py            # provision (idempotent, ~10 s first time)
    .venv/bin/python scripts/setup_tokenizer.py --check    # only verify; writes nothing
    .venv/bin/python scripts/setup_tokenizer.py --cache-dir /tmp/hub
    .venv/bin/python scripts/setup_tokenizer.py --ranks path/to/qwen.tiktoken   # no PyPI access

Exit codes: 0 ready; 1 a built or downloaded file does not match its pin;
2 refused because an existing cache differs; 3 ``--check`` found the entry
missing or incomplete; 4 the ranks could not be obtained.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO_ID = "Qwen/Qwen3-0.6B"
MODEL_FOLDER = "models--Qwen--Qwen3-0.6B"
# Upstream commit of Qwen/Qwen3-0.6B whose files the pins below describe.
REVISION = "c1899de289a04d12100db370d81485cdf75e47ca"

RANKS_PACKAGE = "dashscope"
RANKS_VERSION = "2.0.2"
RANKS_MEMBER = "dashscope/resources/qwen.tiktoken"
RANKS_SHA256 = "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"
RANKS_COUNT = 151643

DATA_DIR = Path(__file__).resolve().parent / "tokenizer_data"
SPEC_FILE = DATA_DIR / "qwen3_0.6b_spec.json"
TEMPLATE_FILE = DATA_DIR / "qwen3_chat_template.jinja"
TEMPLATE_SHA256 = "a55ee1b1660128b7098723e0abcd92caa0788061051c62d51cbe87d9cf1974d8"


@dataclass(frozen=True)
class Pin:
    """What upstream publishes about one file of the snapshot."""

    size: int
    sha256: str
    git_sha1: str
    lfs: bool  # stored with Git LFS upstream: its cache blob is named by SHA-256

    @property
    def blob_name(self) -> str:
        return self.sha256 if self.lfs else self.git_sha1


# Cheap files first, so a wrong pin fails before anything is downloaded.
PINS: dict[str, Pin] = {
    "config.json": Pin(
        726,
        "660db3b73d788119c04535e48cf9be5f55bc3100841a718637ae695b442f27dd",
        "f5c3703b78ae2a478ae15b247e9f855e0ce2107b",
        False,
    ),
    "generation_config.json": Pin(
        239,
        "2325da0f15bb848e018c5ae071b7943332e9f871d6b60e2ed22ca97d4cb993d2",
        "20a8a9156fc8c3f25295ca067f61fdf120d517c5",
        False,
    ),
    "tokenizer_config.json": Pin(
        9732,
        "d5d09f07b48c3086c508b30d1c9114bd1189145b74e982a265350c923acd8101",
        "417d038a63fa3de29cfde265caedae14d1a58d92",
        False,
    ),
    "merges.txt": Pin(
        1671853,
        "8831e4f1a044471340f7c0a83d7bd71306a5b867e95fd870f74d0c5308a904d5",
        "31349551d90c7606f325fe0f11bbb8bd5fa0d7c7",
        False,
    ),
    "vocab.json": Pin(
        2776833,
        "ca10d7e9fb3ed18575dd1e277a2579c16d108e32f27439684afa0e10b1440910",
        "4783fe10ac3adce15ac8f358ef5462739852c569",
        False,
    ),
    "tokenizer.json": Pin(
        11422654,
        "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
        "cd71f61a15a522601badb3dc960d800d9cb3766c",  # Git blob of the LFS pointer file
        True,
    ),
}
RANKS_FILES = ("merges.txt", "vocab.json", "tokenizer.json")

EXIT_OK, EXIT_PIN, EXIT_REFUSED, EXIT_INCOMPLETE, EXIT_RANKS = 0, 1, 2, 3, 4


class PinMismatch(Exception):
    """A file we produced or downloaded is not the upstream one."""


class RefuseCache(Exception):
    """An existing cache entry differs from what we would write."""


class RanksUnavailable(Exception):
    """The ranks file could not be obtained."""


# ---------------------------------------------------------------- hashing


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_sha1(data: bytes) -> str:
    """The name Git (and the hub cache, for non-LFS files) gives these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def verify(name: str, data: bytes) -> None:
    """Raise PinMismatch unless `data` is byte-identical to upstream `name`."""
    pin = PINS[name]
    actual = sha256_hex(data)
    if actual != pin.sha256 or len(data) != pin.size:
        raise PinMismatch(
            f"{name}: built file does not match upstream {REPO_ID}@{REVISION[:8]}\n"
            f"  expected sha256 {pin.sha256} ({pin.size} bytes)\n"
            f"  got      sha256 {actual} ({len(data)} bytes)"
        )


# ---------------------------------------------------------------- locations


def default_hub_cache(env: dict[str, str] | None = None) -> Path:
    """The hub cache folder huggingface_hub would use under `env`."""
    env = os.environ if env is None else env
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(var):
            return Path(os.path.expandvars(env[var])).expanduser()
    if env.get("HF_HOME"):
        return Path(os.path.expandvars(env["HF_HOME"])).expanduser() / "hub"
    base = env.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(os.path.expandvars(base)).expanduser() / "huggingface" / "hub"


def snapshot_dir(model_dir: Path) -> Path:
    return model_dir / "snapshots" / REVISION


# ---------------------------------------------------------------- inputs


def load_spec() -> dict:
    return json.loads(SPEC_FILE.read_text(encoding="utf-8"))


def load_chat_template() -> str:
    """The upstream template; the data file carries one extra final newline."""
    text = TEMPLATE_FILE.read_bytes().decode("utf-8").replace("\r\n", "\n")
    text = text[:-1] if text.endswith("\n") else text
    actual = sha256_hex(text.encode("utf-8"))
    if actual != TEMPLATE_SHA256:
        raise PinMismatch(
            f"{TEMPLATE_FILE.name}: chat template differs from upstream\n"
            f"  expected sha256 {TEMPLATE_SHA256}\n  got      sha256 {actual}"
        )
    return text


def download_ranks() -> bytes:
    """Fetch the pinned wheel with pip (no install) and read the ranks out of it."""
    requirement = f"{RANKS_PACKAGE}=={RANKS_VERSION}"
    with tempfile.TemporaryDirectory(prefix="qwen-ranks-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", requirement, "-d", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            raise RanksUnavailable(
                f"pip could not download {requirement}:\n{proc.stderr.strip()}\n"
                "Pass --ranks FILE to use a local copy of qwen.tiktoken instead."
            )
        with zipfile.ZipFile(wheels[0]) as wheel:
            return wheel.read(RANKS_MEMBER)


def read_ranks(ranks_path: Path | None) -> bytes:
    """The bytes of qwen.tiktoken, from `ranks_path` or PyPI, checked against the pin."""
    data = ranks_path.read_bytes() if ranks_path else download_ranks()
    actual = sha256_hex(data)
    if actual != RANKS_SHA256:
        origin = ranks_path or f"{RANKS_PACKAGE}=={RANKS_VERSION}:{RANKS_MEMBER}"
        raise PinMismatch(
            f"qwen.tiktoken from {origin} is not the pinned ranks file\n"
            f"  expected sha256 {RANKS_SHA256}\n  got      sha256 {actual}"
        )
    return data


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """qwen.tiktoken holds one `<base64 token bytes> <rank>` pair per line."""
    ranks = {}
    for line in data.splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    if len(ranks) != RANKS_COUNT or sorted(ranks.values()) != list(range(RANKS_COUNT)):
        raise PinMismatch(f"qwen.tiktoken: expected ranks 0..{RANKS_COUNT - 1}")
    return ranks


# ---------------------------------------------------------------- BPE from ranks


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level alphabet: printable bytes map to themselves, the
    other 68 to the code points from 256 upward, so every byte is a visible char."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in kept}
    shifted = (b for b in range(256) if b not in table)
    for offset, b in enumerate(shifted):
        table[b] = chr(256 + offset)
    return table


def last_merge(token: bytes, rank: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """The pair whose merge creates `token`: run BPE on its bytes with only the
    tokens ranked before it, which stops with exactly two parts."""
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best_rank, best_i = rank, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1], rank)
            if r < best_rank:
                best_rank, best_i = r, i
        if best_i < 0:
            raise PinMismatch(f"qwen.tiktoken: token of rank {rank} has no merge path")
        parts[best_i:best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts[0], parts[1]


def vocab_and_merges(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level vocab (token string -> id) and merges in rank order."""
    alphabet = byte_to_unicode()

    def show(b: bytes) -> str:
        return "".join(alphabet[x] for x in b)

    vocab, merges = {}, []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        vocab[show(token)] = rank
        if len(token) > 1:
            left, right = last_merge(token, rank, ranks)
            merges.append((show(left), show(right)))
    return vocab, merges


# ---------------------------------------------------------------- file renderers


def render_config(spec: dict) -> bytes:
    return json.dumps(spec["config"], indent=2, sort_keys=True).encode()


def render_generation_config(spec: dict) -> bytes:
    return json.dumps(spec["generation_config"], indent=4, sort_keys=True).encode()


def render_tokenizer_config(spec: dict, template: str) -> bytes:
    first = spec["first_added_id"]
    decoder = {
        str(first + i): {"content": t["content"], "lstrip": False, "normalized": False,
                         "rstrip": False, "single_word": False, "special": t["special"]}
        for i, t in enumerate(spec["added_tokens"])
    }
    fields = dict(spec["tokenizer_config"], added_tokens_decoder=decoder, chat_template=template)
    return (json.dumps(fields, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def render_merges(merges: list[tuple[str, str]]) -> bytes:
    lines = ["#version: 0.2\n"] + [f"{left} {right}\n" for left, right in merges]
    return "".join(lines).encode("utf-8")


def render_vocab(vocab: dict[str, int]) -> bytes:
    return json.dumps(vocab, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def byte_level_decoder():
    """A ByteLevel decoder with all flags false, as upstream stores it.

    The Python constructor takes no options and would serialise the (decoding-
    irrelevant) flags as true, so we set its state from the JSON form instead."""
    from tokenizers import decoders

    decoder = decoders.ByteLevel()
    decoder.__setstate__(json.dumps(
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
         "use_regex": False}).encode())
    return decoder


def render_tokenizer_json(spec: dict, vocab: dict[str, int],
                          merges: list[tuple[str, str]]) -> bytes:
    from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers
    from tokenizers import processors

    bpe = models.BPE(vocab=vocab, merges=merges, dropout=None, unk_token=None,
                     continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False,
                     byte_fallback=False, ignore_merges=False)
    tok = Tokenizer(bpe)
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(spec["split_regex"]), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                              use_regex=False)
    tok.decoder = byte_level_decoder()
    added = [AddedToken(t["content"], single_word=False, lstrip=False, rstrip=False,
                        normalized=False, special=t["special"]) for t in spec["added_tokens"]]
    tok.add_tokens(added)
    if tok.get_vocab_size(with_added_tokens=True) != spec["first_added_id"] + len(added):
        raise PinMismatch("tokenizer.json: added tokens did not get ids 151643-151668")
    return tok.to_str(pretty=True).encode("utf-8")


def build_files(names: list[str], ranks_path: Path | None, log) -> dict[str, bytes]:
    """Produce and verify the requested snapshot files (cheap ones first)."""
    spec = load_spec()
    small = {
        "config.json": lambda: render_config(spec),
        "generation_config.json": lambda: render_generation_config(spec),
        "tokenizer_config.json": lambda: render_tokenizer_config(spec, load_chat_template()),
    }
    files = {}
    for name in [n for n in PINS if n in names and n in small]:
        files[name] = small[name]()
        verify(name, files[name])
    if any(n in RANKS_FILES for n in names):
        log(f"reading BPE ranks from {ranks_path or f'{RANKS_PACKAGE}=={RANKS_VERSION} (PyPI)'}")
        vocab, merges = vocab_and_merges(parse_ranks(read_ranks(ranks_path)))
        big = {
            "merges.txt": lambda: render_merges(merges),
            "vocab.json": lambda: render_vocab(vocab),
            "tokenizer.json": lambda: render_tokenizer_json(spec, vocab, merges),
        }
        for name in [n for n in RANKS_FILES if n in names]:
            files[name] = big[name]()
            verify(name, files[name])
    return files


# ---------------------------------------------------------------- the cache entry


def existing_matches(path: Path, name: str) -> bool:
    """True if `path` holds upstream `name`, False if absent; RefuseCache if other bytes."""
    if not path.exists():
        if path.is_symlink():
            raise RefuseCache(f"{path} is a broken link; leaving the cache as it is.")
        return False
    data = path.read_bytes()
    pin = PINS[name]
    if sha256_hex(data) != pin.sha256:
        raise RefuseCache(
            f"{path} already exists with other bytes than upstream {name}\n"
            f"  expected sha256 {pin.sha256}\n  found    sha256 {sha256_hex(data)}\n"
            "This looks like a different (or damaged) cache; it is not overwritten.\n"
            "Use another --cache-dir / HF_HOME, or remove that entry yourself."
        )
    return True


def missing_files(model_dir: Path) -> list[str]:
    """Pinned files not yet in the snapshot. Raises RefuseCache on any conflict."""
    refs = model_dir / "refs" / "main"
    if refs.exists() and refs.read_text().strip() != REVISION:
        raise RefuseCache(
            f"{refs} points to revision {refs.read_text().strip()!r}, "
            f"not {REVISION}.\nAn existing cache of {REPO_ID} is left untouched; "
            "use another --cache-dir / HF_HOME to provision this revision."
        )
    missing = []
    for name, pin in PINS.items():
        in_snapshot = existing_matches(snapshot_dir(model_dir) / name, name)
        existing_matches(model_dir / "blobs" / pin.blob_name, name)
        if not in_snapshot:
            missing.append(name)
    return missing


def write_blob(blob: Path, data: bytes) -> None:
    """Write atomically: a half-written blob would poison the cache."""
    if blob.exists():
        return  # already verified by missing_files()
    tmp = blob.with_name(f".{blob.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, blob)


def link_file(link: Path, blob: Path, data: bytes) -> None:
    """Relative symlink as huggingface_hub makes; a copy where links are not allowed."""
    try:
        link.symlink_to(Path("..") / ".." / "blobs" / blob.name)
    except FileExistsError:
        pass  # another run made it meanwhile; the next --check verifies it
    except OSError:
        link.write_bytes(data)


def write_entry(model_dir: Path, files: dict[str, bytes]) -> None:
    blobs, snap, refs = model_dir / "blobs", snapshot_dir(model_dir), model_dir / "refs"
    for folder in (blobs, snap, refs):
        folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        blob = blobs / PINS[name].blob_name
        write_blob(blob, data)
        link_file(snap / name, blob, data)
    if not (refs / "main").exists():
        (refs / "main").write_text(REVISION)


# ---------------------------------------------------------------- commands


def check(hub: Path, log) -> int:
    model_dir = hub / MODEL_FOLDER
    missing = missing_files(model_dir)
    if not (model_dir / "refs" / "main").exists():
        missing.append("refs/main")
    if missing:
        log(f"{model_dir}: incomplete, missing {', '.join(missing)}")
        return EXIT_INCOMPLETE
    log(f"{model_dir}: all {len(PINS)} files match upstream {REVISION[:8]}")
    return EXIT_OK


def provision(hub: Path, ranks_path: Path | None, log) -> int:
    start = time.perf_counter()
    model_dir = hub / MODEL_FOLDER
    missing = missing_files(model_dir)
    refs_missing = not (model_dir / "refs" / "main").exists()
    if not missing and not refs_missing:
        log(f"{model_dir}: already provisioned, all files match upstream; nothing written")
        return EXIT_OK
    files = build_files(missing, ranks_path, log)
    write_entry(model_dir, files)
    size = sum(len(d) for d in files.values())
    log(f"{model_dir}: wrote {len(files)} files ({size / 1e6:.1f} MB) for revision "
        f"{REVISION[:8]}, all SHA-256 match upstream ({time.perf_counter() - start:.1f} s)")
    return EXIT_OK


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only verify; write nothing")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="hub cache folder (default: from HF_HUB_CACHE / HF_HOME)")
    parser.add_argument("--ranks", type=Path, default=None,
                        help="local qwen.tiktoken to use instead of downloading dashscope")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    hub = args.cache_dir.expanduser() if args.cache_dir else default_hub_cache()

    def log(message: str) -> None:
        print(f"setup_tokenizer: {message}", flush=True)

    try:
        return check(hub, log) if args.check else provision(hub, args.ranks, log)
    except PinMismatch as err:
        print(f"setup_tokenizer: ERROR: {err}", file=sys.stderr)
        return EXIT_PIN
    except RefuseCache as err:
        print(f"setup_tokenizer: REFUSED: {err}", file=sys.stderr)
        return EXIT_REFUSED
    except RanksUnavailable as err:
        print(f"setup_tokenizer: ERROR: {err}", file=sys.stderr)
        return EXIT_RANKS


if __name__ == "__main__":
    sys.exit(main())
