"""The variant task generator of Chapter 4, Section 4.8: renaming, per-variant tests, splits,
recovery demonstrations and the line hint. Each test is fast: none generates all 3,521 tasks
except through the module-scoped fixture, which skips validation (about 4 s)."""

from __future__ import annotations

import builtins
import keyword
import random

import pytest

import agentrl as arl


@pytest.fixture(scope="module")
def variant_tasks():
    return arl.make_variant_tasks(validate=False)


def first_task(template=arl.TEMPLATES[0], variant=0):
    return arl.VariantTask(id=0, split="train", **arl.variant_rows(template, 0, variant)[0])


def test_rewrite_renames_consistently_and_leaves_attributes_strings_and_builtins():
    src = ("def f(xs, c):\n  out = []\n  for x in xs:\n    if x == c: out.append('x')\n"
           "  return len(out)\n")
    assert arl.renamable(src) == ["f", "c", "out", "x", "xs"]        # no len, append, 'x'
    new = arl.rewrite(src, {"f": "g", "xs": "q", "c": "k", "out": "o", "x": "z",
                            "append": "BAD"}, lambda v: v)
    assert new == ("def g(q, k):\n  o = []\n  for z in q:\n    if z == k: o.append('x')\n"
                   "  return len(o)\n")


def test_rewrite_shifts_integer_literals_only():
    src = "def f(n):\n  return n % 15 == 1 and 'n15' != 2\n"
    assert arl.rewrite(src, {}, lambda v: v + 10) == (
        "def f(n):\n  return n % 25 == 11 and 'n15' != 12\n")


def test_renamable_is_the_function_its_parameters_and_locals_but_not_underscore():
    power = arl.MORE_TEMPLATES[9][3].lstrip("\n")           # def power(b, e): ... for _ in
    assert arl.template_name(arl.MORE_TEMPLATES[9]) == "power"
    assert arl.renamable(power) == ["power", "b", "e", "p"]


def test_fresh_names_are_short_distinct_and_never_python_names():
    avoid = {"a", "b"}
    names = arl.fresh_names(400, avoid, random.Random(0))
    assert len(set(names)) == 400 and not set(names) & avoid
    assert all(1 <= len(n) <= 3 and n.isidentifier() for n in names)
    assert not any(keyword.iskeyword(n) or keyword.issoftkeyword(n) for n in names)
    assert not set(names) & set(dir(builtins))


def test_every_variant_of_every_template_renames_every_owned_name():
    for template in arl.VARIANT_TEMPLATES:
        src = template[3].lstrip("\n")
        new, mapping = arl.make_variant(src, random.Random(src))
        assert set(mapping) == set(arl.renamable(src)), src
        assert arl.renamable(new) == [mapping[n] for n in arl.renamable(src)[:1]] + sorted(
            mapping[n] for n in arl.renamable(src)[1:])
        compile(new, "<variant>", "exec")


def test_a_variants_reference_passes_its_own_hidden_tests_and_differs_from_the_template():
    rows = arl.variant_rows(arl.TEMPLATES[0], seed=0, variant=1)
    assert rows and all(r["template"] == "clamp" and r["variant"] == 1 for r in rows)
    own = {rows[0]["func"]: arl._load_function(rows[0]["solution"])}
    for call, want in rows[0]["hidden"]:
        assert arl._call_outcome(eval, (call, own)) == want
    assert "clamp" not in rows[0]["solution"] and " lo" not in rows[0]["solution"]
    assert rows[0]["hidden"] != arl.make_tasks()[0].hidden


def test_template_rows_without_vary_are_make_tasks_rows():
    rows = arl.template_rows(arl.TEMPLATES[0], random.Random("0:clamp"))
    task0 = arl.make_tasks()[0]
    assert any(r["code"] == task0.code and r["hidden"] == task0.hidden for r in rows)


def test_a_template_that_does_not_parse_gets_a_clear_error():
    broken = ("i", "", ("1",), "\ndef bad(x):\n  return x +\n")
    with pytest.raises(ValueError, match=r"'def bad\(x\):' does not parse: .*line 2"):
        arl.variant_rows(broken, seed=0, variant=0)


def test_splits_are_disjoint_by_group_and_stretch_templates_never_train(variant_tasks):
    counts = {s: sum(t.split == s for t in variant_tasks)
              for s in ("train", "rename", "heldout", "stretch")}
    assert counts == {"train": 2579, "rename": 647, "heldout": 162, "stretch": 133}
    groups = {s: {arl.task_group(t) for t in variant_tasks if t.split == s} for s in counts}
    assert not groups["heldout"] & groups["train"]
    assert not groups["stretch"] & groups["train"]
    assert {g[0] for g in groups["stretch"]} <= set(arl.STRETCH_FUNCS)
    assert not {g[0] for g in groups["train"]} & set(arl.STRETCH_FUNCS)
    assert {t.variant for t in variant_tasks if t.split == "train"} == set(range(8))
    assert {t.variant for t in variant_tasks if t.split != "train"} == {8, 9}
    assert [t.id for t in variant_tasks] == list(range(len(variant_tasks)))


def test_one_per_group_is_seeded_and_never_repeats_a_group(variant_tasks):
    picked = arl.one_per_group(variant_tasks, "heldout", 100)
    assert len(picked) == 63 and len({arl.task_group(t) for t in picked}) == 63
    assert picked == arl.one_per_group(variant_tasks, "heldout", 100)


def test_recovery_episode_shows_an_error_then_solves():
    text, reward, history = arl.run_episode(arl.BugFixEnv(cache={}), first_task(),
                                            arl.recovery_policy)
    assert reward == 1.0
    assert [obs.startswith("error") for _, obs in history[2:4]] == [True, False]
    assert "not on line" in history[2][1]


def test_wrong_line_patch_is_none_when_every_other_line_holds_the_old_text():
    task = first_task()
    lines = task.code.splitlines()
    old = task.fix.split(" ", 2)[2].partition("|")[0]
    filled = "\n".join([lines[0]] + [f"  {old}" for _ in lines[1:]]) + "\n"
    task = arl.VariantTask(**dict(task.__dict__, code=filled))
    assert arl.wrong_line_patch(task) is None
    assert arl.recovery_policy(task, [("a", "b")] * 2) == f"<call> edit {task.fix} </call>"


def test_the_hint_appears_only_under_a_failing_test():
    task = first_task()
    env = arl.HintedBugFixEnv(hint=True, cache={})
    plain = arl.BugFixEnv(cache=env.cache)
    hint = f"at line {task.line}: {task.code.splitlines()[task.line - 1].strip()}"
    env.reset(task)
    plain.reset(task)
    for action in ("<call> read </call>", "<call> test </call>", "<call> tset </call>",
                   f"<call> edit {task.fix} </call>", "<call> test </call>"):
        got, want = env.step(action)[0], plain.step(action)[0]
        if action == "<call> test </call>" and "FAIL" in want:
            assert got.splitlines() == want.splitlines()[:-1] + [hint, want.splitlines()[-1]]
        else:
            assert got == want, action
    off = arl.HintedBugFixEnv(hint=False, cache=env.cache)
    off.reset(task)
    assert "at line" not in off.step("<call> test </call>")[0]


def test_group_tasks_make_only_the_asked_groups_and_variants_validated():
    """The asked (template, line, kind) groups under the asked variants, ids from first_id,
    each one a task the saved validate_task accepts."""
    env = arl.BugFixEnv(cache={})
    rows = arl.variant_rows(arl.TEMPLATES[0], 0, 0)
    groups = {arl.group_key(rows[0]), arl.group_key(rows[1])}
    tasks = arl.group_tasks(groups, (3, 4), "rl", first_id=100, env=env)
    assert tasks and [t.id for t in tasks] == list(range(100, 100 + len(tasks)))
    assert {(t.template, t.line, t.kind) for t in tasks} <= groups
    assert {t.variant for t in tasks} == {3, 4} and {t.split for t in tasks} == {"rl"}
    assert all(arl.validate_task(t, run=env.run)[0] for t in tasks)
