"""BugFix v2: a task distribution whose held-out split asks for reading, not recall.

The chapter-4 gym has 42 templates and most (function, line, kind) groups hold one task, so a
policy can memorise function -> fix and its held-out split is unsolvable by construction
(DESIGN.md, section 9). This module builds a distribution on top of the saved gym:

  surface variation  every task is a *variant* of a template: the function name, parameters
                     and locals are renamed consistently to fresh names of 1-3 characters
                     (never attributes, strings, builtins or keywords), and integer constants
                     of 2 or more may be shifted; expected values are recomputed from the
                     variant's own reference, so a fix cannot be recalled from names;
  more templates     the 42 saved templates plus EXTRA_TEMPLATES;
  splits             train    train (template, line, kind) groups, TRAIN_VARIANTS variants each
                     rename   the same groups under variants never trained on
                     heldout  groups never trained on (unseen line/kind placement in a seen
                              template), under unseen variants
                     stretch  templates never trained on (STRETCH_FUNCS), unseen variants
  recovery           `recovery_policy`: the expert first makes a non-applying edit (its
                     reference patch on a line that does not hold the text), reads the error,
                     then makes the right edit;
  line hint          `HintedBugFixEnv(hint=True)`: a failing `test` also names the line of the
                     bug with its current text (an oracle localiser, like an issue that names
                     the faulty line), to measure how much localisation is the obstacle.

Every task is validated with the saved gym's `validate_task` on the sandbox. Run this file to
print the split sizes and a sample task (about 12 minutes on a shared 2-core machine, nearly
all of it sandboxed validation):
    nice -n 5 .venv/bin/python book/labs/gym_v2.py
"""

import ast
import builtins
import io
import keyword
import random
import tokenize
from dataclasses import dataclass

import agentrl as arl

EXTRA_TEMPLATES = (
    ('ii', '', ('3, 5', '5, 3', '2, 2'), '''
def max2(a, b):
  if a > b: return a
  return b
'''),
    ('L', '', ('[1, -2, 3]', '[]', '[-1]'), '''
def sum_pos(xs):
  t = 0
  for x in xs:
    if x > 0: t += x
  return t
'''),
    ('Li', '', ('[1, 5, 2], 2', '[], 0', '[3], 3'), '''
def count_gt(xs, k):
  n = 0
  for x in xs:
    if x > k: n += 1
  return n
'''),
    ('N', '', ('[3, 1, 2]', '[5]', '[1, 4, 4]'), '''
def argmax(xs):
  k = 0
  for i in range(1, len(xs)):
    if xs[i] > xs[k]: k = i
  return k
'''),
    ('n', '', ('4', '0', '1'), '''
def sum_sq(n):
  s = 0
  for i in range(1, n + 1):
    s += i * i
  return s
'''),
    ('L', '', ('[1, 2, 3]', '[]', '[4]'), '''
def prod(xs):
  p = 1
  for x in xs:
    p *= x
  return p
'''),
    ('i', '', ('-3', '4', '0'), '''
def absv(x):
  if x < 0: return -x
  return x
'''),
    ('Li', '', ('[1, 2, 3], 2', '[], 1', '[4, 4], 4'), '''
def find(xs, v):
  for i in range(len(xs)):
    if xs[i] == v: return i
  return -1
'''),
    ('L', '', ('[1, 2, 3, 4]', '[]', '[5]'), '''
def odd_cnt(xs):
  n = 0
  for x in xs:
    if x % 2 == 1: n += 1
  return n
'''),
    ('iii', '', ('1, 2, 3', '3, 2, 1', '2, 3, 1'), '''
def max3(a, b, c):
  m = a
  if b > m: m = b
  if c > m: m = c
  return m
'''),
    ('n', '', ('5', '0', '1', '2'), '''
def fib(n):
  a, b = 0, 1
  for _ in range(n):
    a, b = b, a + b
  return a
'''),
    ('P', '', ('12', '7', '1'), '''
def n_div(n):
  c = 0
  for d in range(1, n + 1):
    if n % d == 0: c += 1
  return c
'''),
    ('P', '', ('7', '9', '2', '1'), '''
def is_prime(n):
  if n < 2: return False
  for d in range(2, n):
    if n % d == 0: return False
  return True
'''),
    ('L', '', ('[1, 3, 2]', '[]', '[2, 2]'), '''
def n_rises(xs):
  n = 0
  for i in range(1, len(xs)):
    if xs[i] > xs[i - 1]: n += 1
  return n
'''),
    ('Ln', '', ('[1, 2, 3], 2', '[], 3', '[5], 0'), '''
def take(xs, k):
  out = []
  for i in range(min(k, len(xs))):
    out.append(xs[i])
  return out
'''),
    ('s', '', ("'a b'", "''", "'aa'"), '''
def n_space(s):
  n = 0
  for ch in s:
    if ch == ' ': n += 1
  return n
'''),
    ('sc', '', ("'abab', 'b'", "'', 'a'", "'b', 'a'"), '''
def first_ch(s, c):
  for i in range(len(s)):
    if s[i] == c: return i
  return -1
'''),
    ('n', '', ('5', '0', '3'), '''
def tri(n):
  return n * (n + 1) // 2
'''),
    ('ii', '', ('7, 3', '3, 7', '4, 4'), '''
def sub_pos(a, b):
  if a - b > 0: return a - b
  return 0
'''),
    ('h', '', ('30', '5', '12', '10', '20'), '''
def bucket(x):
  if x < 10: return 0
  if x < 20: return 1
  return 2
'''),
    ('L', '', ('[3, -1, 2]', '[]', '[-2]'), '''
def clip0(xs):
  out = []
  for x in xs:
    if x < 0: out.append(0)
    else: out.append(x)
  return out
'''),
    ('in', '', ('3, 4', '-2, 0', '5, 1'), '''
def rep_add(x, k):
  t = 0
  for _ in range(k):
    t += x
  return t
'''),
    ('LL', 'len(a) == len(b)', ('[1, 2], [2, 1]', '[], []', '[3], [3]'), '''
def n_less(a, b):
  n = 0
  for i in range(len(a)):
    if a[i] < b[i]: n += 1
  return n
'''),
    ('Y', '', ('1999', '2000', '2050', '2001'), '''
def century(y):
  return (y + 99) // 100
'''),
    ('ii', '', ('2, 3', '-1, 4', '5, 5'), '''
def avg2(a, b):
  return (a + b) // 2
'''),
    ('L', '', ('[1, 2, 3]', '[]', '[-1]'), '''
def double(xs):
  out = []
  for x in xs:
    out.append(2 * x)
  return out
'''),
)
TEMPLATES = arl.TEMPLATES + EXTRA_TEMPLATES
STRETCH_FUNCS = arl.NOVEL_FUNCS + ('fib', 'is_prime', 'take', 'century', 'n_less')
TRAIN_VARIANTS = 8        # variants of each template whose train-group tasks are trained on
HELDOUT_FRACTION = 0.2    # share of the seen templates' (line, kind) groups held out
_TAKEN = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


@dataclass(frozen=True)
class VariantTask(arl.Task):
    """A gym Task plus where it came from; `func` is the variant's (renamed) function name."""
    template: str = ''    # the template's own function name, e.g. 'clamp'
    variant: int = 0      # which renaming/constant draw of the template


def _name_tokens(src):
    """NAME tokens of src that are not attributes: (token, is_attribute)."""
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    for i, tok in enumerate(toks):
        if tok.type == tokenize.NAME:
            prev = toks[i - 1].string if i else ''
            yield tok, prev == '.'


def renamable(src):
    """The names a consistent renaming may change: the function, its parameters, its locals."""
    fn = ast.parse(src).body[0]
    stored = {n.id for n in ast.walk(fn)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return [fn.name] + sorted(({a.arg for a in fn.args.args} | stored) - {'_'})


def fresh_names(count, avoid, rng):
    """`count` distinct new identifiers of 1-3 characters, none in `avoid` or Python's own."""
    first, rest = 'abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopqrstuvwxyz0123456789'
    names = []
    while len(names) < count:
        n = rng.choice((1, 2, 2, 3))
        name = rng.choice(first) + ''.join(rng.choice(rest) for _ in range(n - 1))
        if name not in _TAKEN and name not in avoid and name not in names:
            names.append(name)
    return names


def rewrite(src, mapping, shift):
    """src with NAME tokens renamed by mapping (attributes untouched) and integer literals
    replaced by shift(value); both are token edits, so strings and comments are safe."""
    edits = []
    for tok, is_attr in _name_tokens(src):
        if not is_attr and tok.string in mapping:
            edits.append((tok.start, tok.end, mapping[tok.string]))
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.NUMBER:
            new = str(shift(int(tok.string)))
            if new != tok.string:
                edits.append((tok.start, tok.end, new))
    lines = src.splitlines(keepends=True)
    for (row, c0), (_, c1), new in sorted(edits, reverse=True):
        lines[row - 1] = lines[row - 1][:c0] + new + lines[row - 1][c1:]
    return ''.join(lines)


def make_variant(src, rng, vary_constants=True):
    """One variant of a template source -> (variant source, {old name: new name})."""
    old = renamable(src)
    others = {tok.string for tok, _ in _name_tokens(src)} - set(old)
    mapping = dict(zip(old, fresh_names(len(old), others, rng)))
    draws = {}

    def shift(v):
        if not vary_constants or v < 2:        # 0 and 1 carry structure (range starts, signs)
            return v
        return draws.setdefault(v, max(2, v + rng.choice((-1, 0, 1, 2))))

    return rewrite(src, mapping, shift), mapping


def _cases(spec, pre, hand, params, rng, n_hidden):
    """Hand-picked cases plus random ones meeting the precondition (written in the template's
    own parameter names, so it is evaluated with those)."""
    cases = list(hand)
    for _ in range(500):
        if len(cases) == n_hidden:
            break
        vals = [arl._arg_value(ch, rng) for ch in spec]
        arg = ', '.join(map(repr, vals))
        if arg not in cases and (not pre or eval(pre, dict(zip(params, vals)))):
            cases.append(arg)
    return cases


def variant_rows(template, seed, variant, n_hidden=12, vary_constants=True):
    """Every bug of one variant that some hidden test sees, as dicts of Task fields.

    Mirrors the saved make_tasks for one template source; the tests are drawn per variant."""
    spec, pre, hand, src = template
    src = src.lstrip('\n')
    name = template_name(template)
    params = [a.arg for a in ast.parse(src).body[0].args.args]
    rng = random.Random(f'{seed}:{name}:{variant}')
    code_src, mapping = make_variant(src, rng, vary_constants)
    cases = _cases(spec, pre, hand, params, rng, n_hidden)
    args = [ast.literal_eval(f'({a},)') for a in cases]
    calls = [f'{mapping[name]}({a})' for a in cases]
    reference = arl._load_function(code_src)
    want = [arl._call_outcome(reference, a) for a in args]
    lines = code_src.splitlines()
    toks = list(tokenize.generate_tokens(io.StringIO(code_src).readline))
    seen, rows = set(), []
    for kind, row, c0, c1, new in arl.bug_mutations(code_src):
        bad_line = lines[row - 1][:c0] + new + lines[row - 1][c1:]
        code = '\n'.join(lines[:row - 1] + [bad_line] + lines[row:]) + '\n'
        if code in seen:
            continue
        seen.add(code)
        got = [arl._call_outcome(arl._load_function(code), a) for a in args]
        fails = [g != w for g, w in zip(got, want)]
        if not any(fails):
            continue
        keep = [fails.index(True)] + [j for j, f in enumerate(fails) if not f][:2]
        rows.append(dict(
            func=mapping[name], kind=kind, line=row, code=code, solution=code_src,
            fix=arl._fix_patch(bad_line, row, c0, new, lines[row - 1][c0:c1], toks),
            visible=tuple((calls[j], want[j]) for j in sorted(keep)),
            hidden=tuple(zip(calls, want)), template=name, variant=variant))
    return rows


def template_name(template):
    """The function name a template's reference source defines, e.g. 'clamp'."""
    src = template[3].lstrip('\n')
    return src[4:src.index('(')]


def group_key(row):
    """The (template, line, kind) group of a task's fields (a dict row of variant_rows)."""
    return row['template'], row['line'], row['kind']


def task_group(task):
    """The (template, line, kind) group of a VariantTask: its bug placement."""
    return task.template, task.line, task.kind


def make_v2_tasks(seed=0, train_variants=TRAIN_VARIANTS, eval_variants=2, vary_constants=True,
                  validate=True, env=None):
    """Tasks of every split -> list of VariantTask (ids in order; `split` in train, rename,
    heldout, stretch). Variants 0..train_variants-1 are trained on; the next eval_variants
    are used only for evaluation. Every task is checked with the saved `validate_task` on
    the sandbox (through env.run, so its cache can be shared with episodes)."""
    by_template = {template_name(template): [variant_rows(template, seed, v,
                                                           vary_constants=vary_constants)
                                              for v in range(train_variants + eval_variants)]
                   for template in TEMPLATES}
    seen_groups = sorted({group_key(r) for name, variants in by_template.items()
                          if name not in STRETCH_FUNCS for rows in variants for r in rows})
    held = set(random.Random(seed + 1).sample(seen_groups,
                                              int(len(seen_groups) * HELDOUT_FRACTION)))
    # a group that only an evaluation variant's constants create was never trained on either
    held |= set(seen_groups) - {group_key(r) for name, variants in by_template.items()
                                for rows in variants[:train_variants] for r in rows}
    rows = []
    for name, variants in by_template.items():
        for v, variant in enumerate(variants):
            trained = v < train_variants
            for r in variant:
                if name in STRETCH_FUNCS:
                    split = None if trained else 'stretch'
                elif group_key(r) in held:
                    split = None if trained else 'heldout'
                else:
                    split = 'train' if trained else 'rename'
                if split:
                    rows.append(dict(r, split=split))
    env = env or arl.BugFixEnv(cache={})
    tasks = []
    for r in rows:
        task = VariantTask(id=len(tasks), **r)
        if validate:
            ok, why = arl.validate_task(task, run=env.run)
            if not ok:
                continue
        tasks.append(task)
    return [VariantTask(**dict(t.__dict__, id=i)) for i, t in enumerate(tasks)]


def group_tasks(groups, variants, split, first_id, seed=0, env=None):
    """Validated tasks of the given (template, line, kind) groups under the given variants,
    with ids from first_id (so the ids of make_v2_tasks' list stay as they are).

    make_v2_tasks drops the trained variants of held-out groups; this makes them, e.g. as a
    second training set for RL whose groups the warm start never saw."""
    env = env or arl.BugFixEnv(cache={})
    by_name = {template_name(t): t for t in TEMPLATES}
    tasks = []
    for name in sorted({g[0] for g in groups}):
        for v in variants:
            for r in variant_rows(by_name[name], seed, v):
                if group_key(r) in groups:
                    task = VariantTask(id=first_id + len(tasks), split=split, **r)
                    if arl.validate_task(task, run=env.run)[0]:
                        tasks.append(task)
    return tasks


def one_per_group(tasks, split, n, seed=0):
    """Up to n tasks of a split, at most one per (template, line, kind) group, seeded."""
    pool = [t for t in tasks if t.split == split]
    random.Random(f'{seed}:{split}').shuffle(pool)
    picked, groups = [], set()
    for t in pool:
        key = task_group(t)
        if key not in groups:
            groups.add(key)
            picked.append(t)
    return picked[:n]


def wrong_line_patch(task):
    """A non-applying edit: the reference patch aimed at a line that lacks its <old> text."""
    _, line, body = task.fix.split(' ', 2)
    old = body.partition('|')[0]
    lines = task.code.splitlines()
    others = [i for i in range(2, len(lines) + 1) if i != int(line) and old not in lines[i - 1]]
    if not others:
        return None
    near = min(others, key=lambda i: (abs(i - int(line)), i))
    return f'sub {near} {body}'


def recovery_policy(task, history):
    """Expert that first makes a non-applying edit, reads the error, then fixes and submits."""
    wrong = wrong_line_patch(task)
    plan = ('read', 'test') + ((f'edit {wrong}',) if wrong else ()) + (f'edit {task.fix}', 'submit')
    return f'<call> {plan[min(len(history), len(plan) - 1)]} </call>'


class HintedBugFixEnv(arl.BugFixEnv):
    """BugFixEnv whose failing `test` observation may also name the bug's line and its text."""

    def __init__(self, hint=False, **kwargs):
        super().__init__(**kwargs)
        self.hint = hint

    def step(self, action):
        obs, reward, done, info = super().step(action)
        if self.hint and info.get('tool') == 'test' and not info.get('error') and 'FAIL' in obs:
            line = self.code.splitlines()[self.task.line - 1]
            head, _, tail = obs.rpartition('\n')
            obs = arl._printable(f'{head}\nat line {self.task.line}: {line.strip()}\n{tail}')
        return obs, reward, done, info


def main():
    tasks = make_v2_tasks()
    splits = ('train', 'rename', 'heldout', 'stretch')
    counts = {s: sum(t.split == s for t in tasks) for s in splits}
    groups = {s: len({task_group(t) for t in tasks if t.split == s}) for s in counts}
    print('templates', len(TEMPLATES), 'tasks per split', counts, 'groups per split', groups)
    task = next(t for t in tasks if t.split == 'heldout')
    env = HintedBugFixEnv(hint=True, cache={})
    print(arl.run_episode(env, task, recovery_policy)[0])


if __name__ == '__main__':
    main()
