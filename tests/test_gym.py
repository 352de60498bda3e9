"""The BugFix gym of Chapter 4: tasks, sandbox, call grammar, environment, expert.

These tests import the generated package (``scripts/build_library.py``). Checks that need
isolation the machine may not offer (network and PID namespaces, dropping root privileges)
are skipped when ``sandbox_setup()`` reports that the protection is not available.
"""

from __future__ import annotations

import concurrent.futures
import glob
import os
import random
import re
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


@pytest.fixture(scope="module")
def pool():
    with arl.SandboxPool(workers=2) as p:
        yield p


@pytest.fixture(params=["fresh", "prefork"])
def sandbox(request, pool):
    """Each containment test runs through both paths: a fresh process, and a pre-forked worker."""
    return arl.run_sandboxed if request.param == "fresh" else pool.run


@pytest.fixture
def run_body(sandbox):
    def run(body: str, timeout: float = 2.0) -> arl.SandboxResult:
        return sandbox(clamp_with(body), [("clamp(1, 0, 3)", "1")], timeout=timeout)
    return run


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


# ---------------------------------------------------------------- the expert answers the state

def plan_expert(task, history):
    """expert_policy as first written, following a plan by turn number: the oracle that the
    state-based expert must match, action for action, on its own episodes."""
    plan = ('read', 'test', 'edit ' + task.fix, 'submit')
    return f'<call> {plan[min(len(history), len(plan) - 1)]} </call>'


def actions(env, task, policy):
    return [a for a, _ in arl.run_episode(env, task, policy)[2]]


def play(env, task, calls):
    """The history after the given calls (each written as the text inside <call> ... </call>)."""
    env.reset(task)
    return [(f"<call> {c} </call>", env.step(f"<call> {c} </call>")[0]) for c in calls]


def test_the_state_expert_acts_as_the_plan_did_on_every_task(tasks, cache, pool):
    def both(task):
        env = arl.BugFixEnv(cache=cache, sandbox=pool.run)
        return actions(env, task, plan_expert), actions(env, task, arl.expert_policy)

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        pairs = list(ex.map(both, tasks))
    assert len(pairs) == len(tasks) == 319
    assert all(old == new for old, new in pairs)


def test_the_state_expert_acts_as_the_plan_did_on_variant_tasks(pool):
    """A sample of Section 4.8's tasks, in the hinted environment the labs demonstrate in, and
    under a turn limit that cuts the episode short."""
    rng = random.Random(0)
    rows = [r for t in rng.sample(arl.VARIANT_TEMPLATES, 12) for v in (0, 9)
            for r in arl.variant_rows(t, 0, v)]
    sample = [arl.VariantTask(id=i, split="train", **r)
              for i, r in enumerate(rng.sample(rows, 60))]
    cache = {}
    for task in sample:
        for env in (arl.HintedBugFixEnv(hint=True, cache=cache, sandbox=pool.run),
                    arl.BugFixEnv(max_turns=3, cache=cache, sandbox=pool.run)):
            assert actions(env, task, arl.expert_policy) == actions(env, task, plan_expert), task


def test_after_an_edit_that_did_not_apply_the_expert_makes_the_fix(tasks, pool):
    task, env = tasks[0], arl.BugFixEnv(cache={}, sandbox=pool.run)
    history = play(env, task, ["read", "test", "edit sub 4 hi|lo"])
    assert history[-1][1] == "error: 'hi' not on line 4"
    assert plan_expert(task, history) == "<call> submit </call>"          # the plan's mistake
    assert arl.expert_policy(task, history) == "<call> edit sub 2 hi|lo </call>"
    env.reset(task)
    malformed = [(a, env.step(a)[0]) for a in ("<call> read </call>", "edit sub 2 hi|lo")]
    assert malformed[-1][1].startswith("error: no <call>")
    assert arl.expert_policy(task, malformed) == "<call> test </call>"   # nothing changed


def test_after_a_wrong_edit_that_applied_the_expert_mends_the_line(tasks, pool):
    task, env = tasks[0], arl.BugFixEnv(cache={}, sandbox=pool.run)
    history = play(env, task, ["read", "test", "edit sub 2 hi|x"])
    assert history[-1][1] == "2   if x < lo: return x"
    action = arl.expert_policy(task, history)
    assert action == "<call> edit sub 2 return x|return lo </call>"
    obs, reward, done, _ = env.step(action)
    assert obs == "2   if x < lo: return lo" and not done
    assert env.step(arl.expert_policy(task, history + [(action, obs)]))[1] == 1.0


def test_the_expert_skips_what_the_state_already_has(tasks):
    task = tasks[0]
    fix = f"<call> edit {task.fix} </call>"
    line = "2   if x < lo: return lo"
    assert arl.expert_policy(task, [("<call> test </call>", "...")]) == "<call> read </call>"
    assert arl.expert_policy(task, [(fix, line)]) == "<call> submit </call>"   # fixed unread
    read, test = ("<call> read </call>", "..."), ("<call> test </call>", "...")
    assert arl.expert_policy(task, [test, read]) == fix
    assert arl.expert_policy(task, [read, test, (fix, line)]) == "<call> submit </call>"


def test_the_expert_finishes_any_episode_a_learner_began(tasks, pool):
    """DAgger asks the expert about states the learner reached: after up to four random learner
    calls (reads, tests, malformed text, edits that apply or not, the fix among them), the
    expert alone solves the task."""
    rng = random.Random(0)
    cache = {}
    for n in range(60):
        task = tasks[rng.randrange(len(tasks))]
        env = arl.BugFixEnv(max_turns=20, cache=cache, sandbox=pool.run)
        env.reset(task)
        history = []
        for _ in range(rng.randint(0, 4)):
            lines = env.code.splitlines()
            row = rng.randrange(2, len(lines) + 1)
            old = rng.choice(re.findall(r"\w+|[^\w\s|]+", lines[row - 1]))
            new = rng.choice(["x", "0", "1", "lo", ""])
            action = rng.choice(["<call> read </call>", "<call> test </call>", "read it",
                                 f"<call> edit {task.fix} </call>",
                                 f"<call> edit sub {row} {old}|{new} </call>",
                                 f"<call> edit sub {row} zzz|x </call>"])
            history.append((action, env.step(action)[0]))
        done, reward = False, 0.0
        while not done:
            action = arl.expert_policy(task, history)
            obs, reward, done, _ = env.step(action)
            history.append((action, obs))
        assert reward == 1.0, (n, task.id, history)


CALL_PIECES = ["edit", "sub", " ", "2", "3", "4", "hi", "lo", "x", "|", "read", "test", ":", "<"]
call_text = st.lists(st.sampled_from(CALL_PIECES), max_size=8).map(
    lambda pieces: "<call> " + "".join(pieces) + " </call>")
turn = st.tuples(st.one_of(st.text(max_size=30), call_text),
                 st.sampled_from(["ok", "error: no", "2 x"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(turn, max_size=6))
def test_the_expert_answers_every_history_with_a_valid_call(tasks, history):
    action = arl.expert_policy(tasks[0], history)
    assert not arl.parse_call(action, n_lines=len(tasks[0].code.splitlines())).error


# ---------------------------------------------------------------- sandbox containment


def test_infinite_loop_is_killed_by_the_time_limit(run_body):
    start = time.perf_counter()
    res = run_body("while True: pass", timeout=2.0)
    assert res.status == "killed" and not any(res.passed)
    assert time.perf_counter() - start < 10


def test_sleep_is_killed_by_the_wall_clock(run_body):
    start = time.perf_counter()
    res = run_body("import time; time.sleep(60)", timeout=1.0)
    assert res.status == "killed"
    assert time.perf_counter() - start < 10


def test_memory_bomb_is_contained(run_body):
    assert run_body("return len(bytearray(10 ** 9))").got == ("!MemoryError",)
    assert run_body("return len([0] * 10 ** 9)").got == ("!MemoryError",)


def _sandbox_processes() -> int:
    """Processes running the sandbox's programs that are ours: descendants of this process, or
    orphans adopted by init (other programs on the machine may run sandboxes too)."""
    parent, marked = {}, set()
    for path in glob.glob("/proc/[0-9]*/stat"):
        pid = int(path.split("/")[2])
        try:
            with open(path) as f:
                parent[pid] = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read()
        except (OSError, IndexError, ValueError):
            continue
        if b"result.json" in line or b"agentrl sandbox worker" in line:
            marked.add(pid)
    me, count = os.getpid(), 0
    for pid in marked:
        seen, p = set(), parent.get(pid)
        orphan = p == 1
        while p not in (None, 0, 1, me) and p not in seen:
            seen.add(p)
            p = parent.get(p)
        count += orphan or p == me
    return count


def test_fork_bomb_is_contained_and_cleaned_up(run_body):
    before = _sandbox_processes()
    res = run_body("import os\nwhile True: os.fork()")
    assert res.got == ("!BlockingIOError",)
    res = run_body("import os, time\nfor _ in range(5):\n  if os.fork() == 0: time.sleep(60)\n"
                   "return 1")
    assert res.got == ("1",)
    time.sleep(0.5)
    assert _sandbox_processes() <= before, "forked children survived the run"


def test_big_file_is_capped_and_workdir_removed(tmp_path, monkeypatch, run_body):
    # A private temporary root: other processes on the machine may run sandboxes too.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert run_body("open('big.txt', 'w').write('x' * 10 ** 7)").got == ("!OSError",)
    assert glob.glob(os.path.join(tmp_path, "bugfix-*")) == []


def test_task_dir_holds_only_the_solution(run_body):
    assert run_body("import os; return sorted(os.listdir('.'))").got == ("['sol.py']",)


@needs("drop_privileges")
def test_writing_outside_the_task_dir_is_refused(tmp_path, run_body):
    target = tmp_path / "pwned.txt"
    res = run_body(f"open({str(target)!r}, 'w').write('x')")
    # refused (PermissionError), or invisible behind the sandbox's private /tmp
    assert res.got[0] in ("!PermissionError", "!FileNotFoundError")
    assert not target.exists()
    assert run_body("open('/etc/bugfix_was_here', 'w')").got == ("!PermissionError",)


@needs("private_tmp")
def test_writes_to_tmp_are_contained(run_body):
    name = f"bugfix-leak-{os.getpid()}"
    res = run_body(f"open('/tmp/{name}', 'w').write('x'); return 1")
    assert res.got == ("1",)
    assert not os.path.exists(os.path.join("/tmp", name))


def test_secret_environment_variable_is_not_inherited(monkeypatch, run_body):
    monkeypatch.setenv("SECRET", "hunter2")
    assert run_body("import os; return os.environ.get('SECRET')").got == ("None",)
    assert run_body("import os; return 'hunter2' in str(os.environ)").got == ("False",)


@pytest.mark.skipif(not ({"drop_privileges", "pid_namespace"} & set(PROTECTIONS)),
                    reason="neither dropped privileges nor a PID namespace")
def test_secret_cannot_be_read_through_proc(monkeypatch, run_body):
    monkeypatch.setenv("SECRET", "hunter2")
    body = ("import os\nfound = 0\nfor p in os.listdir('/proc'):\n"
            "  try:\n    found += b'hunter2' in open('/proc/%s/environ' % p, 'rb').read()\n"
            "  except Exception:\n    pass\nreturn found")
    assert run_body(body).got == ("0",)


@needs("net_namespace")
def test_network_connect_fails(run_body):
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
@pytest.mark.parametrize("call", [
    "res = arl.run_sandboxed('def f():\\n  return 1\\n', [('f()', '1')])\n",
    "with arl.SandboxPool() as p:\n  res = p.run('def f():\\n  return 1\\n', [('f()', '1')])\n",
], ids=["fresh", "prefork"])
def test_never_mounts_in_the_parents_mount_namespace(call):
    """Claim private_tmp without a mount namespace: the child must refuse, not mount.

    Run inside a throwaway mount namespace, so that even a broken check cannot hide the
    machine's real /tmp."""
    import subprocess
    import sys
    script = (
        "import agentrl as arl\n"
        "prot = arl.sandbox_setup()[2]\n"
        "arl.sandbox_setup = lambda: (('unshare', '--net'), False, prot)\n"
        + call +
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


def test_exit_and_always_equal_do_not_pass(run_body):
    assert run_body("import sys; sys.exit(0)").got == ("!SystemExit",)
    res = run_body("return type('E', (), {'__eq__': lambda a, b: True})()")
    assert res.passed == (False,) and "0x?" in res.got[0]      # address masked


def test_syntax_error_is_reported_deterministically(sandbox):
    res = sandbox("def clamp(x, lo, hi):\n  return x +\n", [("clamp(1, 0, 3)", "1")])
    assert (res.status, res.detail) == ("load_error", "SyntaxError line 2")


# ---------------------------------------------------------------- the pre-forked sandbox

HOLD_PROCESSES = ("import os, time\nn = 0\ntry:\n  while True:\n"
                  "    if os.fork() == 0:\n      time.sleep(3)\n      os._exit(0)\n"
                  "    n += 1\nexcept OSError:\n  pass\ntime.sleep(2)\nreturn n")
FORK_THREE = ("import os\nfor _ in range(3):\n  pid = os.fork()\n  if pid == 0: os._exit(0)\n"
              "  os.waitpid(pid, 0)\nreturn 'forked'")


def _neighbour_while_bomb(run_a, run_b):
    """Sandbox A holds every process its limit allows; meanwhile sandbox B forks three."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
        bomb = ex.submit(run_a, clamp_with(HOLD_PROCESSES), [("clamp(1, 0, 3)", "1")], 4.0)
        time.sleep(1.0)
        neighbour = run_b(clamp_with(FORK_THREE), [("clamp(1, 0, 3)", "1")], timeout=2.0)
        return bomb.result(), neighbour


@needs("drop_privileges")
def test_a_fork_bomb_does_not_fail_a_neighbours_tests(pool):
    bomb, neighbour = _neighbour_while_bomb(pool.run, pool.run)
    assert "separate_process_budget" in pool.protections
    assert int(bomb.got[0]) >= arl.SANDBOX_LIMITS["processes"] - 2    # the bomb used its budget
    assert neighbour.got == ("'forked'",)


# Fresh sandboxes keep their budgets apart too, each under a uid of its own:
# tests/test_sandbox_budget.py runs a bomb beside concurrent neighbours on both paths.


def test_nothing_of_one_call_reaches_the_next(pool):
    before = _sandbox_processes()
    leave = ("import os, time\nopen('/tmp/left-behind', 'w').write('x')\n"
             "open('extra.txt', 'w').write('x')\n"
             "if os.fork() == 0:\n  os.setsid()\n  time.sleep(60)\nreturn 1")
    assert pool.run(clamp_with(leave), [("clamp(1, 0, 3)", "1")]).got == ("1",)
    assert _sandbox_processes() == before, "a daemon of the call survived it"
    for _ in range(4):                      # whichever worker answers next
        look = ("import os\nreturn (os.path.exists('/tmp/left-behind'), sorted(os.listdir('.')))")
        assert pool.run(clamp_with(look), [("clamp(1, 0, 3)", "1")]).got == (
            "(False, ['sol.py'])",)


FILL_ANSWER = ("import fcntl, os\nfcntl.fcntl(3, 1031, 1 << 20)\n"     # F_SETPIPE_SZ: 1 MB
               "os.write(3, b'QZXJ' * 262144)\nos._exit(0)")                # a 1 MB answer
COUNT_IN_MEMORY = (
    "import re\nneedle, n = b'QZXJ' * 4, 0\n"
    "for line in open('/proc/self/maps'):\n"
    "  m = re.match(r'([0-9a-f]+)-([0-9a-f]+) r', line)\n"
    "  if not m or '[v' in line:\n    continue\n"
    "  with open('/proc/self/mem', 'rb') as f:\n"
    "    f.seek(int(m[1], 16))\n"
    "    try:\n      n += f.read(int(m[2], 16) - int(m[1], 16)).count(needle)\n"
    "    except OSError:\n      pass\n"
    "return n")


def test_no_bytes_of_an_answer_stay_for_the_next_child(monkeypatch):
    """The worker reuses one answer buffer, and every child is a copy of the worker's memory:
    the buffer must be zeroed before the next fork. The children keep the trainer's uid here
    (a child that drops to another uid may not read its own /proc/self/mem)."""
    prefix, _, prot = arl.sandbox_setup()
    monkeypatch.setattr(arl, "sandbox_setup", lambda: (prefix, False, prot))
    with arl.SandboxPool(workers=1) as one:
        first = one.run(clamp_with(FILL_ANSWER), [("clamp(1, 0, 3)", "1")])
        assert first.status == "killed"                 # raw bytes, not an answer
        found = one.run(clamp_with(COUNT_IN_MEMORY), [("clamp(1, 0, 3)", "0")], timeout=5.0)
    assert found.status == "ok", found
    assert int(found.got[0]) < 10, "the next child found the last call's answer in its memory"


def test_a_dead_worker_is_replaced(tasks):
    t0 = tasks[0]
    with arl.SandboxPool() as pool:
        os.killpg(pool.pids()[0], 9)
        time.sleep(0.2)
        assert pool.run(t0.code, t0.visible).passed == (True, False, True)
        assert pool.replaced == 1


def test_a_hung_worker_is_replaced(tasks):
    t0 = tasks[0]
    with arl.SandboxPool() as pool:
        os.killpg(pool.pids()[0], 19)                    # SIGSTOP: alive but never answers
        start = time.perf_counter()
        assert pool.run(t0.code, t0.visible, timeout=0.5).passed == (True, False, True)
        assert time.perf_counter() - start < 10 and pool.replaced == 1


def test_code_that_kills_its_worker_is_killed_not_retried_forever(tasks):
    with arl.SandboxPool() as pool:
        res = pool.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", [("1", "1")])
        if "separate_process_budget" in pool.protections:   # its own uid: it cannot
            assert res.status == "load_error" and res.detail == "PermissionError"
        else:
            assert res.status == "killed" and pool.replaced == 2


def test_prefork_matches_the_fresh_process_on_tasks(tasks, pool):
    for t in tasks[:40]:
        for tests in (t.visible, t.hidden):
            fresh, fast = arl.run_sandboxed(t.code, tests), pool.run(t.code, tests)
            assert (fresh.status, fresh.detail, fresh.got, fresh.passed) == (
                fast.status, fast.detail, fast.got, fast.passed), t.id


def _wait_for(count, seconds=5.0):
    deadline = time.monotonic() + seconds
    while _sandbox_processes() != count and time.monotonic() < deadline:
        time.sleep(0.05)
    return _sandbox_processes()


def test_workers_end_with_the_context_and_on_exceptions():
    before = _sandbox_processes()
    with arl.SandboxPool(workers=2):
        assert _sandbox_processes() >= before + 2
    assert _wait_for(before) == before
    with pytest.raises(ZeroDivisionError):
        with arl.SandboxPool(workers=2):
            1 / 0
    assert _wait_for(before) == before
    with pytest.raises(RuntimeError):
        pool = arl.SandboxPool()
        pool.close()
        pool.run("x = 1\n", [])


@pytest.mark.parametrize("ending", ["exit", "sigkill"])
def test_no_workers_outlive_their_process(ending):
    """A process that forgets close() (atexit) or is killed outright (workers see EOF)."""
    import subprocess
    import sys
    before = _sandbox_processes()
    script = ("import agentrl as arl, os, sys\npool = arl.SandboxPool(workers=2)\n"
              "print(pool.run('x = 1\\n', [('x', '1')]).status, flush=True)\n"
              + ("os.kill(os.getpid(), 9)\n" if ending == "sigkill" else "sys.exit(0)\n"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(arl.__file__)))
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=root),
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["ok"], out.stderr
    assert _wait_for(before) == before


# ---------------------------------------------------------------- grammar and environment


def test_editing_the_tests_is_refused(tasks, sandbox):
    t0 = tasks[0]
    env = arl.BugFixEnv(sandbox=sandbox)
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
def test_reward_hacks_earn_nothing(tasks, op, sandbox):
    env = arl.BugFixEnv(sandbox=sandbox)
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
