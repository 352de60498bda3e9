"""Running a lab of book/labs in a test: the labs' folder on the path, the committed warm starts
the reduced runs start from, and harness.main called in this process with torch's global settings
put back (tests/test_labs.py, tests/test_lab_arms.py)."""

import pathlib
import sys

import torch

LABS_DIR = pathlib.Path(__file__).resolve().parent.parent / 'book' / 'labs'
sys.path.insert(0, str(LABS_DIR))

import harness  # noqa: E402

WARM = 'gym_v2_hint_recovery_6000_pad6_copy4'     # committed, with its checkpoint
PAD2 = 'gym_v2_hint_recovery_3000_pad2'


def run_lab(name, argv):
    """harness.main for one lab, in this process, with torch's global settings put back."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        path = harness.main(harness.lab(name), argv)
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)
    return path


def without_seconds(results):
    return {k: v for k, v in results.items() if not k.endswith('seconds')}
