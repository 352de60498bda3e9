"""What, besides its cells and its library, decides a chapter's printed outputs.

Two things: the versions of the packages that compute (Python, torch, the tokenizer stack,
numpy) and the *numeric path*, the environment variables that make torch and its BLAS pick other
kernels or another thread count. The build puts :func:`fingerprint` into each chapter's
kernelspec, next to the staged library's hash, so an upgraded torch re-executes every chapter
instead of comparing old cached outputs with old recordings.

:data:`NUMERIC_PATHS` are the paths the portability check (``scripts/check_portability.py``)
runs every chapter under. Each differs from the native one (this CPU's best ATen kernels, MKL's
default dispatch) in a way a reader's machine may: a CPU without AVX-512 or AVX2, MKL's
conditional-reproducibility mode, another thread count. A cell whose output changes under one of
them would change on some reader's machine.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
from dataclasses import dataclass

PACKAGES = ("torch", "transformers", "tokenizers", "numpy")
NUMERIC_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def versions() -> dict[str, str]:
    """Python and each of :data:`PACKAGES` (``"absent"`` when not installed)."""
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def fingerprint(environ: dict[str, str] | None = None) -> str:
    """A short hash of :func:`versions` and the numeric path set in ``environ``."""
    environ = os.environ if environ is None else environ
    parts = [f"{k}={v}" for k, v in versions().items()]
    parts += [f"{k}={environ.get(k, '')}" for k in NUMERIC_VARIABLES]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class NumericPath:
    name: str
    variables: dict[str, str]
    threads: int  # torch and OpenMP threads for chapters that do not pin their own
    why: str


NUMERIC_PATHS = (
    NumericPath("portable-kernels", {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
                threads=2, why="no vector extensions, MKL's reproducible mode, two threads"),
    NumericPath("avx2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"},
                threads=1, why="the kernels of a CPU without AVX-512, one thread"),
)


def machine() -> dict:
    """The machine a lab record was made on: {'cpu', 'cpu_capability', 'torch', 'threads'}.

    A lab replays its record bit for bit on the same kind of CPU. On another one (another
    vendor's matmul kernels, another instruction set) the last bits of a logit differ, a sampled
    token eventually flips, and the episodes drift apart after some tens of updates: the record
    then agrees in its statistics, not its digits. So every record names its machine."""
    import torch                                       # the press itself never needs torch

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            cpuinfo = file.read()
    except OSError:                                    # not Linux
        cpuinfo = ""
    names = [line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
             if line.startswith("model name")]
    return {"cpu": names[0] if names else platform.processor() or "unknown",
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch": torch.__version__, "threads": torch.get_num_threads()}
