"""One process budget per sandbox, on both of Chapter 4's paths.

RLIMIT_NPROC counts the processes of a real uid, not of a sandbox. As root, every call of
``run_sandboxed`` and every worker of ``SandboxPool`` runs under a uid that no other live sandbox
holds (claimed from ``SANDBOX_UID_BASE`` with a lock file), so a fork bomb in one call cannot
make a correct neighbour's ``os.fork()`` fail. Without root no uid can be changed: the checks
that need one are skipped, and the sandbox must not claim the protection.
"""

from __future__ import annotations

import concurrent.futures
import os
import time

import pytest

import agentrl as arl

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT, reason="only root can give each sandbox a uid of its own; without it every "
                     "sandbox's processes count against the trainer's user")

TEST = [("clamp(1, 0, 3)", "1")]
# Holds every process its limit allows for about two seconds, then says how many it started.
BOMB = ("def clamp(x, lo, hi):\n  import os, time\n  n = 0\n  try:\n    while True:\n"
        "      if os.fork() == 0:\n        time.sleep(2.5)\n        os._exit(0)\n"
        "      n += 1\n  except OSError:\n    pass\n  time.sleep(1.5)\n  return n\n")
# A correct clamp that forks one child on the way (as a test that starts a subprocess would).
FORKS_ONCE = ("def clamp(x, lo, hi):\n  import os\n  pid = os.fork()\n"
              "  if pid == 0:\n    os._exit(0)\n  os.waitpid(pid, 0)\n"
              "  return max(lo, min(x, hi))\n")


@pytest.fixture(scope="module")
def pool():
    with arl.SandboxPool(workers=2) as p:
        yield p


def test_the_protection_is_reported_exactly_where_it_applies(pool):
    """separate_process_budget on both paths as root, on neither without root."""
    fresh = arl.run_sandboxed(FORKS_ONCE, TEST)
    forked = pool.run(FORKS_ONCE, TEST)
    for res in (fresh, forked):
        assert res.passed == (True,)
        assert ("separate_process_budget" in res.protections) == ROOT
        assert ("drop_privileges" in res.protections) == ROOT


@needs_root
@pytest.mark.parametrize("bomb_path", ["fresh", "prefork"])
def test_a_fork_bomb_beside_concurrent_fresh_neighbours(pool, bomb_path):
    """A fork bomb holds its whole budget while three fresh sandboxes, started together from
    threads, each fork once: every neighbour passes, whichever path runs the bomb."""
    run_bomb = arl.run_sandboxed if bomb_path == "fresh" else pool.run
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        bomb = ex.submit(run_bomb, BOMB, TEST, 4.0)
        time.sleep(1.0)                                   # the bomb has filled its budget
        neighbours = [ex.submit(arl.run_sandboxed, FORKS_ONCE, TEST, 2.0) for _ in range(3)]
        results = [f.result() for f in neighbours]
        bomb = bomb.result()
    assert int(bomb.got[0]) >= arl.SANDBOX_LIMITS["processes"] - 2   # it used its budget
    for res in results:
        assert (res.status, res.got, res.passed) == ("ok", ("1",), (True,)), res


@needs_root
def test_concurrent_fresh_sandboxes_never_share_a_uid():
    """Calls in flight at the same time run under distinct uids of the reserved range."""
    code = "def uid():\n  import os, time\n  time.sleep(0.5)\n  return os.getuid()\n"
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        results = list(ex.map(lambda _: arl.run_sandboxed(code, [("uid()", "")]), range(4)))
    uids = [int(r.got[0]) for r in results]
    assert len(set(uids)) == 4, uids
    assert all(arl.SANDBOX_UID_BASE <= u < arl.SANDBOX_UID_BASE + 1000 for u in uids)


@needs_root
def test_without_a_pid_namespace_nothing_of_the_run_keeps_its_uid(monkeypatch):
    """Without a PID namespace a daemon in its own session leaves the process group; the uid
    goes back to the next sandbox only after every process holding it is gone."""
    base = tuple(p for p in arl.sandbox_setup()[2]
                 if p not in ("net_namespace", "pid_namespace", "private_tmp"))
    monkeypatch.setattr(arl, "sandbox_setup", lambda: ((), True, base))
    code = ("def clamp(x, lo, hi):\n  import os, time\n  pid = os.fork()\n"
            "  if pid == 0:\n    os.setsid()\n    time.sleep(30)\n    os._exit(0)\n"
            "  return pid\n")
    res = arl.run_sandboxed(code, TEST)
    daemon = int(res.got[0])
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{daemon}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            return                                        # gone
        if fields["State"].split()[0] == "Z" or \
                int(fields["Uid"].split()[0]) < arl.SANDBOX_UID_BASE:
            return                                        # dead, or a recycled pid
        time.sleep(0.05)
    pytest.fail(f"the daemon {daemon} outlived its run")
