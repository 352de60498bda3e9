"""The BugFix gym of Chapter 4: tasks, sandbox, call grammar, environment, expert.

These tests import the generated package (``scripts/build_library.py``). Checks that need
isolation the machine may not offer (network and PID namespaces, dropping root privileges)
are skipped when ``sandbox_setup()`` reports that the protection is not available.
"""

from __future__ import annotations

import concurrent.futures
import glob
import os
import socket
import tempfile
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentrl as arl

PROTECTIONS = arl.sandbox_setup()[2]
needs = lambda name: pytest.mark.skipif(  # noqa: E731
    name not in PROTECTIONS, reason=f"sandbox cannot apply {name} on this machine")


def clamp_with(body: str) -> str:
    """A sol.py whose clamp() runs `body` (indented two spaces)."""
    return "def clamp(x, lo, hi):\n" + "".join(f"  {line}\n" for line in body.splitlines())


def run_body(body: str, timeout: float = 2.0) -> arl.SandboxResult:
    return arl.run_sandboxed(clamp_with(body), [("clamp(1, 0, 3)", "1")], timeout=timeout)


@pytest.fixture(scope="module")
def tasks():
    return arl.make_tasks(seed=0)


@pytest.fixture(scope="module")
def cache():
    return {}


# ---------------------------------------------------------------- tasks


def test_task_set_shape(tasks):
    kinds = {t.kind for t in tasks}
    assert len(tasks) >= 200
    assert len(kinds) >= 5 and kinds <= set(arl.BUG_KINDS)
    assert len({t.code for t in tasks}) == len(tasks), "tasks must be distinct"
    assert [t.id for t in tasks] == list(range(len(tasks)))
    assert {t.split for t in tasks} == {"train", "heldout", "novel"}


def test_task_zero_is_the_clamp_bug(tasks):
    t0 = tasks[0]
    assert (t0.func, t0.kind, t0.line, t0.fix, t0.split) == (
        "clamp", "wrong_var", 2, "sub 2 hi|lo", "train")
    assert t0.code.splitlines()[1] == "  if x < lo: return hi"
    assert t0.solution.splitlines()[1] == "  if x < lo: return lo"


def test_generation_is_deterministic(tasks):
    assert arl.make_tasks(seed=0) == tasks
    other = arl.make_tasks(seed=1)
    assert other[0].code == tasks[0].code and other != tasks


def test_splits_do_not_share_groups(tasks):
    groups = {}
    for t in tasks:
        groups.setdefault(t.split, set()).add((t.func, t.line, t.kind))
    assert not groups["train"] & groups["heldout"]
    assert not {g[0] for g in groups["novel"]} & {g[0] for g in groups["train"] | groups["heldout"]}
    assert {g[0] for g in groups["novel"]} == set(arl.NOVEL_FUNCS)


def test_reference_patch_turns_bug_into_solution(tasks):
    for t in tasks:
        call = arl.parse_call(f"<call> edit {t.fix} </call>", n_lines=len(t.code.splitlines()))
        assert not call.error, (t.id, call.error)
        fixed, err = arl.apply_patch(t.code, call.line, call.old, call.new)
        assert not err and fixed == t.solution, t.id


def test_every_task_validated(tasks, cache):
    def run(code, tests):
        if (code, tests) not in cache:
            cache[code, tests] = arl.run_sandboxed(code, tests)
        return cache[code, tests]

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        checks = list(pool.map(lambda t: arl.validate_task(t, run), tasks))
    bad = [(t.id, why) for t, (ok, why) in zip(tasks, checks) if not ok]
    assert not bad


def test_expert_solves_every_task(tasks, cache):
    def solve(task):
        _, reward, history = arl.run_episode(arl.BugFixEnv(cache=cache), task, arl.expert_policy)
        return reward, len(history)

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(solve, tasks))
    assert all(r == 1.0 and n == 4 for r, n in results)


# ---------------------------------------------------------------- sandbox containment


def test_infinite_loop_is_killed_by_the_time_limit():
    start = time.perf_counter()
    res = run_body("while True: pass", timeout=2.0)
    assert res.status == "killed" and not any(res.passed)
    assert time.perf_counter() - start < 10


def test_sleep_is_killed_by_the_wall_clock():
    start = time.perf_counter()
    res = run_body("import time; time.sleep(60)", timeout=1.0)
    assert res.status == "killed"
    assert time.perf_counter() - start < 10


def test_memory_bomb_is_contained():
    assert run_body("return len(bytearray(10 ** 9))").got == ("!MemoryError",)
    assert run_body("return len([0] * 10 ** 9)").got == ("!MemoryError",)


def _sandbox_processes() -> int:
    """Processes whose command line holds the sandbox's program."""
    count = 0
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as f:
                if b"result.json" in f.read():
                    count += 1
        except OSError:
            pass
    return count


def test_fork_bomb_is_contained_and_cleaned_up():
    before = _sandbox_processes()
    res = run_body("import os\nwhile True: os.fork()")
    assert res.got == ("!BlockingIOError",)
    res = run_body("import os, time\nfor _ in range(5):\n  if os.fork() == 0: time.sleep(60)\n"
                   "return 1")
    assert res.got == ("1",)
    time.sleep(0.5)
    assert _sandbox_processes() <= before, "forked children survived the run"


def test_big_file_is_capped_and_workdir_removed(tmp_path, monkeypatch):
    # A private temporary root: other processes on the machine may run sandboxes too.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert run_body("open('big.txt', 'w').write('x' * 10 ** 7)").got == ("!OSError",)
    assert glob.glob(os.path.join(tmp_path, "bugfix-*")) == []


def test_task_dir_holds_only_the_solution():
    assert run_body("import os; return sorted(os.listdir('.'))").got == ("['sol.py']",)


@needs("drop_privileges")
def test_writing_outside_the_task_dir_is_refused(tmp_path):
    target = tmp_path / "pwned.txt"
    res = run_body(f"open({str(target)!r}, 'w').write('x')")
    # refused (PermissionError), or invisible behind the sandbox's private /tmp
    assert res.got[0] in ("!PermissionError", "!FileNotFoundError")
    assert not target.exists()
    assert run_body("open('/etc/bugfix_was_here', 'w')").got == ("!PermissionError",)


@needs("private_tmp")
def test_writes_to_tmp_are_contained():
    name = f"bugfix-leak-{os.getpid()}"
    res = run_body(f"open('/tmp/{name}', 'w').write('x'); return 1")
    assert res.got == ("1",)
    assert not os.path.exists(os.path.join("/tmp", name))


def test_secret_environment_variable_is_not_inherited(monkeypatch):
    monkeypatch.setenv("SECRET", "hunter2")
    assert run_body("import os; return os.environ.get('SECRET')").got == ("None",)
    assert run_body("import os; return 'hunter2' in str(os.environ)").got == ("False",)


@pytest.mark.skipif(not ({"drop_privileges", "pid_namespace"} & set(PROTECTIONS)),
                    reason="neither dropped privileges nor a PID namespace")
def test_secret_cannot_be_read_through_proc(monkeypatch):
    monkeypatch.setenv("SECRET", "hunter2")
    body = ("import os\nfound = 0\nfor p in os.listdir('/proc'):\n"
            "  try:\n    found += b'hunter2' in open('/proc/%s/environ' % p, 'rb').read()\n"
            "  except Exception:\n    pass\nreturn found")
    assert run_body(body).got == ("0",)


@needs("net_namespace")
def test_network_connect_fails():
    with socket.socket() as server:                 # a listener on the parent's loopback
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        body = (f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                "return 'connected'")
        assert run_body(body).got[0].startswith("!")
        body = ("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\n"
                "return 'connected'")
        assert run_body(body).got[0].startswith("!")


@needs("private_tmp")
def test_never_mounts_in_the_parents_mount_namespace():
    """Claim private_tmp without a mount namespace: the child must refuse, not mount.

    Run inside a throwaway mount namespace, so that even a broken check cannot hide the
    machine's real /tmp."""
    import subprocess
    import sys
    script = (
        "import agentrl as arl\n"
        "prot = arl.sandbox_setup()[2]\n"
        "arl.sandbox_setup = lambda: (('unshare', '--net'), False, prot)\n"
        "res = arl.run_sandboxed('def f():\\n  return 1\\n', [('f()', '1')])\n"
        "import os\n"
        "print(res.status, os.path.ismount('/tmp'))\n")
    wrapper = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        wrapper[1:1] = ["--user", "--map-root-user"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(arl.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run(wrapper + [sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.split() == ["killed", str(os.path.ismount("/tmp"))], out.stderr


def test_exit_and_always_equal_do_not_pass():
    assert run_body("import sys; sys.exit(0)").got == ("!SystemExit",)
    res = run_body("return type('E', (), {'__eq__': lambda a, b: True})()")
    assert res.passed == (False,) and "0x?" in res.got[0]      # address masked


def test_syntax_error_is_reported_deterministically():
    res = arl.run_sandboxed("def clamp(x, lo, hi):\n  return x +\n", [("clamp(1, 0, 3)", "1")])
    assert (res.status, res.detail) == ("load_error", "SyntaxError line 2")


# ---------------------------------------------------------------- grammar and environment


def test_editing_the_tests_is_refused(tasks):
    t0 = tasks[0]
    env = arl.BugFixEnv()
    env.reset(t0)
    for action in ["<call> edit test_sol.py sub 1 assert|pass </call>",
                   "<call> edit tests sub 1 a|b </call>"]:
        obs, reward, done, info = env.step(action)
        assert obs.startswith("error: ") and reward == 0.0 and not done and info["error"]
    assert env.code == t0.code
    # the code itself rewrites a test file: it changes nothing about grading
    env.step("<call> edit sub 1 hi)|hi, _=open('test_sol.py', 'w').close()) </call>")
    assert "test_sol.py" in env.code
    obs, reward, done, _ = env.step("<call> submit </call>")
    assert done and reward == 0.0


@pytest.mark.parametrize("op", [
    "sub 2 if x < lo: return hi|import sys; sys.exit(0)",
    "sub 2 return hi|return type('E', (), {'__eq__': lambda a, b: True})()",
    "sub 2 if x < lo: return hi|if x == -1: return 0",
    "sub 1 hi)|hi, _=open('test_sol.py', 'w').close())",
])
def test_reward_hacks_earn_nothing(tasks, op):
    env = arl.BugFixEnv()
    env.reset(tasks[0])
    obs, _, _, _ = env.step(f"<call> edit {op} </call>")
    assert not obs.startswith("error")
    _, reward, done, _ = env.step("<call> submit </call>")
    assert done and reward == 0.0


@pytest.mark.parametrize("text, message", [
    ("read", "no <call>"),
    ("hi <call> read </call>", "text before <call>"),
    ("<call> read", "missing </call>"),
    ("<call> read </call> more", "text after </call>"),
    ("<call> run </call>", "unknown tool 'run'"),
    ("<call> </call>", "empty call"),
    ("<call> read 1 </call>", "read takes no argument"),
    ("<call> edit </call>", "edit needs a patch"),
    ("<call> edit del 1 </call>", "unknown patch op 'del'"),
    ("<call> edit sub x a|b </call>", "line must be a number"),
    ("<call> edit sub 9 a|b </call>", "line 9 out of range 1-4"),
    ("<call> edit sub 2 ab </call>", "patch needs <old>|<new>"),
    ("<call> edit sub 2 |b </call>", "<old> is empty"),
    ("<call> test </call><call> read </call>", "text after </call>"),
    ("<call> edit sub 2 a\nb|c </call>", "one line of printable ASCII"),
])
def test_parse_errors_are_precise(text, message):
    call = arl.parse_call(text, n_lines=4)
    assert call.tool == "" and message in call.error


def test_valid_calls_parse():
    assert arl.parse_call("  <call> read </call>\n").tool == "read"
    call = arl.parse_call("<call> edit sub 2 x < lo|x > lo </call>", n_lines=4)
    assert (call.tool, call.line, call.old, call.new) == ("edit", 2, "x < lo", "x > lo")
    assert arl.parse_call("<call> edit sub 3 n - 1| </call>").new == ""


def test_turn_limit_and_episode_end(tasks):
    env = arl.BugFixEnv(max_turns=3)
    env.reset(tasks[0])
    for turn in range(1, 4):
        obs, reward, done, info = env.step("not a call")
        assert info["turn"] == turn and reward == 0.0
    assert done and obs.endswith("out of turns")
    assert env.step("<call> read </call>")[0] == "error: episode is over"


def test_episodes_are_deterministic(tasks):
    texts = {arl.run_episode(arl.BugFixEnv(cache=c), tasks[0], arl.expert_policy)[0]
             for c in (None, {}, None)}
    assert len(texts) == 1


PIECES = ["<call>", "</call>", " ", "read", "test", "edit", "submit", "sub", "2", "9", "0",
          "hi", "lo", "x", "|", "\n", "\t", "\x00", "\u00e9", "if", ":", "return", "'", "(", ")"]
grammar_text = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.text(), grammar_text, st.binary(), st.none(), st.integers()))
def test_parse_call_never_raises(text):
    call = arl.parse_call(text, n_lines=4)
    assert isinstance(call, arl.ToolCall)
    assert bool(call.error) != bool(call.tool)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(st.one_of(st.text(max_size=40), grammar_text), min_size=1, max_size=10))
def test_env_step_never_raises(tasks, cache, actions):
    env = arl.BugFixEnv(max_turns=6, cache=cache)
    obs = env.reset(tasks[0])
    for action in actions:
        obs, reward, done, info = env.step(action)
        assert isinstance(obs, str) and reward in (0.0, 1.0)
        assert all(ch == "\n" or " " <= ch <= "~" for ch in obs)
        if done:
            break
