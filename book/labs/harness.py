"""The harness every lab runs on: a recipe, a method, one record.

A lab is two things. Its **recipe** is a frozen dataclass whose every field has a default and a
`help` (`option(default, help)`): the configuration of one run, nothing else. Its **method** is a
function `run(recipe, context) -> results`, which trains or evaluates and returns what it
measured, as a dict. A lab script declares both and ends with `harness.main(LAB)`, where
`LAB = Lab(__file__, kind, Recipe, run)`. The harness does the rest, the same way for every lab:

  command line  every field is a --flag (underscores as dashes) with its help and type;
                booleans are --flag / --no-flag; a tuple takes several values (--seeds 0 1 2);
                a dict takes KEY=VALUE items that replace those keys of the default; any other
                type is refused when the lab is defined. Besides the recipe: --reduced (tiny
                sizes, Recipe.reduced()), --results DIR (where the record goes; required with
                --reduced, which never writes over the committed results), --state DIR (run
                states, book/labs/runs by default), --resume, --stop-after N, --save-every N
  resolution    Recipe.resolve(context) fills the fields that follow from the records the run
                reads (option(..., in_name=False): the warm start of a fresh evaluation's runs,
                say), refusing a typed value that disagrees; Recipe.check(context) refuses a
                combination the method cannot honour, with a message, before any work. A
                method reads records with context.load(stem): from the folder it writes to
                when the record is there (a reduced run's own), else the committed results
  run name      the lab's name, then one token per field that differs from its default, in the
                order of the fields: `gym_v2_rl --method grpo --lr 3e-4 --seed 1` is the run
                `gym_v2_rl_grpo_lr3e-4_s1`. It is never typed, so one recipe has one name
  record        results/<name>.json, written once, atomically (a temporary file in the same
                folder, then a rename): {"schema": 1, "lab": "book/labs/<file>.py",
                "kind": ..., "recipe": the full recipe (dataclasses.asdict), "machine": the
                CPU, ATen's kernel set, torch's version and threads, "results": ...}, read back
                with `agentrl.load_record(name, folder)`; a lab that trains a policy saves it
                beside it, results/<name>.pt (`context.save_checkpoint`)
  resume        a long method saves its state (weights, optimiser, random generators,
                progress) to book/labs/runs/<name>/ every `--save-every` updates
                (`context.progress`); `--resume` continues from the last one and ends exactly
                where a run without the interruption would have. `--stop-after N` stops after
                update N, its state saved (a run in two halves)

`recipe_of(record)` rebuilds the recipe of a record (Recipe.from_record: fields a record
predates take the values the lab then had), and `command(record)` is the command line that
reruns it (the fields that differ from the defaults, less those resolve() derives).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import json
import os
import pathlib
import re
import shutil
import sys
import time
import typing

import torch

import agentrl as arl
from ext.toolchain import machine

LABS_DIR = pathlib.Path(__file__).resolve().parent
RESULTS = LABS_DIR / 'results'
RUNS = LABS_DIR / 'runs'              # run state and caches; gitignored
CACHE = RUNS / 'cache'
HARNESS_FLAGS = ('reduced', 'results', 'resume', 'stop_after', 'save_every', 'state')
PYTHON = '.venv/bin/python'
# The labs, in the order their records build on each other (tests/test_labs.py runs them so).
LABS = ('warm_start', 'reinforce_seeds', 'rloo_seeds', 'grouped_reinforce_seeds', 'grpo_seeds',
        'ppo_seeds', 'ppo_detached_value_seeds', 'kl_seeds', 'gym_v2_warm_start', 'gym_v2_rl',
        'gym_v2_rl_fresh', 'gym_v2_standard_fresh', 'gym_v2_failures', 'gym_v2_checks',
        'gym_v2_copying', 'gym_v2_edit_parts', 'gym_v2_turn_credit',
        'gym_v2_large_k', 'gym_v2_cheating', 'capstone')


class RecipeError(ValueError):
    """A recipe the method cannot honour; raised by check() before any work."""


class Stopped(Exception):
    """Raised by context.progress at --stop-after, after the state was saved."""


def option(default, help, *, short=None, choices=None, item=None, in_name=True, stem=False):
    """A recipe field: its default, its help, and how it is shown.

    short: its key in the run name (default: the field's name with dashes, then '-'); choices:
    the values the flag accepts; item: the element type of a tuple whose default is empty (or
    the type of a field whose default is None); in_name=False for a field that follows from
    others (resolve() fills it), which the name leaves out; stem: the value names another record
    (shown without its 'gym_v2_' prefix in the name)."""
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=dict(
            help=help, short=short, choices=choices, item=item, in_name=in_name, stem=stem))
    return dataclasses.field(default=default, metadata=dict(
        help=help, short=short, choices=choices, item=item, in_name=in_name, stem=stem))


class Recipe:
    """The base of every recipe dataclass: the hooks the harness calls."""

    LEGACY: typing.ClassVar[dict] = {}   # key an old record has -> the value it implied, or None

    def reduced(self):
        """The recipe at tiny sizes, for --reduced (a check that the lab runs)."""
        return self

    def resolve(self, context):
        """The recipe with the fields that follow from other records filled in."""
        return self

    def check(self, context):
        """Raise RecipeError for a combination the method cannot honour."""

    @classmethod
    def from_record(cls, recipe, results):
        """Field values of a record's recipe; `results` holds what an old record measured but
        did not list in its recipe. The default drops LEGACY keys whose value is the one they
        implied (anything else is an error) and refuses keys that are not fields."""
        values = dict(recipe)
        for key, implied in cls.LEGACY.items():
            if key in values and implied is not None and values[key] != implied:
                raise RecipeError(f'{cls.__name__}: {key}={values[key]!r}, this lab only knows '
                                  f'{implied!r}')
            values.pop(key, None)
        return values


@dataclasses.dataclass
class Lab:
    """One lab: its file, the kind of record it writes, its recipe class and its method."""
    file: str
    kind: str
    recipe: type
    run: typing.Callable

    def __post_init__(self):
        self.file = pathlib.Path(self.file).resolve()
        if self.kind not in arl.RECORD_KINDS:
            raise TypeError(f'{self.name}: kind {self.kind!r} is not one of {sorted(arl.RECORD_KINDS)}')
        for f in dataclasses.fields(self.recipe):
            if f.name in HARNESS_FLAGS:
                raise TypeError(f'{self.name}: a recipe field may not be called {f.name}')
            if not f.metadata.get('help'):
                raise TypeError(f'{self.name}: field {f.name} has no help')
            field_type(f)                          # refuses types the command line cannot take

    @property
    def name(self):
        return self.file.stem

    @property
    def path(self):
        return f'book/labs/{self.file.name}'

    @property
    def doc(self):
        return sys.modules[self.recipe.__module__].__doc__ or self.name


def lab(name):
    """The Lab of book/labs/<name>.py."""
    if str(LABS_DIR) not in sys.path:
        sys.path.insert(0, str(LABS_DIR))
    return importlib.import_module(name).LAB


def field_type(f):
    """(kind, element type) of a field: kind is bool, int, float, str, tuple or dict."""
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    item = f.metadata.get('item')
    if default is None:
        if item is None:
            raise TypeError(f'field {f.name}: a None default needs item=<type>')
        return item, None
    kind = type(default)
    if kind in (bool, int, float, str):
        return kind, None
    if kind is tuple:
        types_ = {type(v) for v in default} or {item or str}
        if len(types_) != 1:
            raise TypeError(f'field {f.name}: a tuple of mixed types cannot be a flag')
        return tuple, types_.pop()
    if kind is dict:
        return dict, None
    raise TypeError(f'field {f.name}: {kind.__name__} cannot be a command-line flag')


def flag(name):
    return '--' + name.replace('_', '-')


def parser_for(lab):
    parser = argparse.ArgumentParser(prog=lab.path, description=lab.doc.strip().splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    group = parser.add_argument_group('recipe')
    for f in dataclasses.fields(lab.recipe):
        kind, item = field_type(f)
        meta = f.metadata
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        kw = dict(dest=f.name, help=meta['help'], default=default)
        if kind is bool:
            kw['action'] = argparse.BooleanOptionalAction
        elif kind is tuple:
            kw.update(nargs='*', type=item)
        elif kind is dict:
            kw.update(nargs='+', metavar='KEY=VALUE', type=str)
        else:
            kw['type'] = kind
        if meta.get('choices'):
            kw['choices'] = meta['choices']
        group.add_argument(flag(f.name), **kw)
    run = parser.add_argument_group('run')
    run.add_argument('--reduced', action='store_true',
                     help='tiny sizes: checks that the lab runs (needs --results)')
    run.add_argument('--results', type=pathlib.Path, default=RESULTS,
                     help='folder to write the record to')
    run.add_argument('--state', type=pathlib.Path, default=RUNS,
                     help='folder of run states (<state>/<name>/)')
    run.add_argument('--resume', action='store_true',
                     help='continue from the last saved state of this run')
    run.add_argument('--stop-after', type=int, default=0, metavar='N',
                     help='stop after update N with the state saved (0: run to the end)')
    run.add_argument('--save-every', type=int, default=25, metavar='N',
                     help='save the run state every N updates')
    return parser


def parse_dict(name, items, default):
    """KEY=VALUE items over a dict default: each value typed as the default's value of KEY."""
    out = dict(default)
    for item in items:
        key, eq, text = item.partition('=')
        if not eq or key not in default:
            raise RecipeError(f'{flag(name)} takes KEY=VALUE with KEY one of '
                              f'{", ".join(default)}, not {item!r}')
        kind = type(default[key])
        if kind is bool:
            if text not in ('true', 'false'):
                raise RecipeError(f'{flag(name)} {key}: true or false, not {text!r}')
            out[key] = text == 'true'
        else:
            try:
                out[key] = kind(text)
            except ValueError:
                raise RecipeError(f'{flag(name)} {key}: a {kind.__name__}, not {text!r}') from None
    return out


def recipe_from_args(lab, args):
    values = {}
    for f in dataclasses.fields(lab.recipe):
        value = getattr(args, f.name)
        kind, _ = field_type(f)
        if kind is tuple:
            value = tuple(value)
        elif kind is dict and isinstance(value, list):
            value = parse_dict(f.name, value, f.default_factory())
        values[f.name] = value
    return lab.recipe(**values)


def number(x):
    """A value as a run name or a command line writes it: a float as short as it can be read
    back (3e-4, 2.5e-3, 0.5, 1), anything else as str()."""
    if isinstance(x, bool) or not isinstance(x, float):
        return str(x)
    plain = f'{x:g}' if float(f'{x:g}') == x else repr(x)
    for digits in range(8):
        mantissa, _, exp = f'{x:.{digits}e}'.partition('e')
        if float(f'{mantissa}e{exp}') == x:
            short = f'{mantissa}e{int(exp)}'
            return short if 0 < abs(x) < 1 and len(short) <= len(plain) else plain
    return repr(x)


def token(f, value, default):
    """One field's part of a run name."""
    meta = f.metadata
    key = meta['short'] if meta.get('short') is not None else f.name.replace('_', '-') + '-'
    if isinstance(value, bool):
        key = key.rstrip('-')
        return key if value else f'no-{key}'
    if isinstance(value, dict):
        text = '-'.join(f'{k}{number(v)}' for k, v in value.items() if default.get(k) != v)
    elif isinstance(value, (tuple, list)):
        text = stems_token(value) if meta.get('stem') else '-'.join(map(number, value))
    elif meta.get('stem'):
        text = short_stem(value)
    else:
        text = number(value)
    return key + text


def short_stem(stem):
    return stem[len('gym_v2_'):] if stem.startswith('gym_v2_') else stem


def stems_token(stems):
    """Several record stems in a run name: the first, and how many more (the seeds of one recipe,
    first_s1 ... first_sN, say no more; other stems add a digest of their names)."""
    first, rest = stems[0], list(stems[1:])
    if not rest:
        return short_stem(first)
    text = f'{short_stem(first)}+{len(rest)}'
    if rest != [f'{first}_s{i}' for i in range(1, len(rest) + 1)]:
        text += '-' + hashlib.sha256(' '.join(rest).encode()).hexdigest()[:6]
    return text


def run_name(lab, recipe):
    """The lab's name and a token for every field that differs from its default, in order."""
    defaults = lab.recipe()
    parts = [lab.name]
    for f in dataclasses.fields(recipe):
        value, default = getattr(recipe, f.name), getattr(defaults, f.name)
        if f.metadata.get('in_name', True) and value != default:
            parts.append(token(f, value, default))
    name = re.sub(r'[^A-Za-z0-9._+=-]', '-', '_'.join(parts))
    if len(name) > 200:
        raise RecipeError(f'the run name is {len(name)} characters long: {name[:80]}...')
    return name


def derive(recipe, values):
    """The recipe with fields that follow from other records set to `values`; a field typed on
    the command line (not at its default) that disagrees is refused."""
    defaults = type(recipe)()
    for key, value in values.items():
        typed = getattr(recipe, key)
        if typed != getattr(defaults, key) and typed != value:
            raise RecipeError(f'{flag(key)} follows from the records this run reads: '
                              f'{value!r}, not {typed!r}')
    return dataclasses.replace(recipe, **values)


def write_atomic(path, write):
    """write(temporary path) then rename it to path: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.name}.{os.getpid()}.tmp')
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_record(folder, name, lab, recipe, results):
    """folder/<name>.json: the one layout of every lab record (see the module docstring)."""
    record = {'schema': arl.RECORD_SCHEMA, 'lab': lab.path, 'kind': lab.kind,
              'recipe': dataclasses.asdict(recipe), 'machine': machine(), 'results': results}
    path = pathlib.Path(folder) / f'{name}.json'
    write_atomic(path, lambda tmp: tmp.write_text(json.dumps(record, indent=1) + '\n'))
    return path


class Context:
    """What a method gets besides its recipe: where to read and write, and the run's state."""

    def __init__(self, lab, name='', results=RESULTS, state=RUNS, reduced=False, resume=False,
                 stop_after=0, save_every=25):
        self.lab, self.name, self.reduced = lab, name, reduced
        self.results = pathlib.Path(results)
        self.state_dir = pathlib.Path(state) / name
        self.resume, self.stop_after, self.save_every = resume, stop_after, save_every
        self.start = time.time()

    def load(self, stem):
        """A record by its stem: from the folder this run writes to if it is there (a reduced
        run reads the reduced records it made), else from the committed results."""
        folder = self.results if (self.results / f'{stem}.json').exists() else RESULTS
        return arl.load_record(stem, folder)

    def save_checkpoint(self, model, config):
        """results/<name>.pt: the policy, as agentrl.load_checkpoint reads it."""
        path = self.results / f'{self.name}.pt'
        write_atomic(path, lambda tmp: torch.save(
            {'state_dict': model.state_dict(), 'model_config': config}, tmp))
        return path

    def saved_state(self, recipe):
        """With --resume, the state the run saved last (a dict), else None."""
        path = self.state_dir / 'state.pt'
        if not self.resume:
            return None
        if not path.exists():
            raise RecipeError(f'--resume: no saved state of {self.name} in {self.state_dir}')
        state = torch.load(path, weights_only=False)
        if state['recipe'] != dataclasses.asdict(recipe):
            raise RecipeError(f'--resume: the state in {self.state_dir} is of another recipe')
        print(f'resumed {self.name} after update {state["update"]}', flush=True)
        return state

    def progress(self, update, state, recipe):
        """After update `update`: save state() every save_every updates, and stop at
        --stop-after (state saved)."""
        stop = update == self.stop_after
        if stop or update % self.save_every == 0:
            data = dict(state(), update=update, recipe=dataclasses.asdict(recipe))
            write_atomic(self.state_dir / 'state.pt', lambda tmp: torch.save(data, tmp))
        if stop:
            raise Stopped(update)

    def finished(self):
        """The run is recorded: its saved state is no longer needed."""
        shutil.rmtree(self.state_dir, ignore_errors=True)


def rng_state(rng=None):
    """The random generators a method draws from (torch's and a random.Random)."""
    return {'torch': torch.get_rng_state(), 'random': rng.getstate() if rng else None}


def set_rng_state(state, rng=None):
    torch.set_rng_state(state['torch'])
    if rng is not None:
        rng.setstate(state['random'])


def with_sandbox_pool(method):
    """method(recipe, context, pool) as a lab's run(recipe, context): a pre-forked SandboxPool
    for the sandbox calls of every episode, closed when the method returns."""
    def run(recipe, context):
        with arl.SandboxPool(workers=1) as pool:
            return method(recipe, context, pool)
    run.__doc__ = method.__doc__
    return run


def deterministic():
    """Every lab runs seeded on one thread: a rerun on the same CPU gives the same numbers."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def prepare(lab, argv=None):
    """Parse a command line -> (the resolved and checked recipe, its context)."""
    parser = parser_for(lab)
    args = parser.parse_args(argv)
    try:
        recipe = recipe_from_args(lab, args)
        if args.reduced:
            if args.results.resolve() == RESULTS:
                raise RecipeError('--reduced would write over the committed results: '
                                  'give --results DIR')
            recipe = recipe.reduced()
        context = Context(lab, results=args.results, state=args.state, reduced=args.reduced,
                          resume=args.resume, stop_after=args.stop_after,
                          save_every=args.save_every)
        recipe = recipe.resolve(context)
        recipe.check(context)
        context.name = run_name(lab, recipe)
        context.state_dir = args.state / context.name
        if args.resume and not (context.state_dir / 'state.pt').exists():
            raise RecipeError(f'--resume: no saved state of {context.name} in {args.state}')
    except RecipeError as e:
        parser.error(str(e))
    return recipe, context


def main(lab, argv=None):
    """Run a lab from the command line and write its record; returns the record's path."""
    recipe, context = prepare(lab, argv)
    deterministic()
    print(f'{lab.name}: run {context.name}', flush=True)
    try:
        results = lab.run(recipe, context)
    except Stopped as stop:
        print(f'stopped after update {stop.args[0]}, state in {context.state_dir}; '
              'continue with --resume', flush=True)
        return None
    path = write_record(context.results, context.name, lab, recipe, results)
    context.finished()
    print('wrote', path, f'({time.time() - context.start:.0f} s in all)', flush=True)
    return path


def build(cls, recipe, results):
    """A recipe dataclass from a record's recipe and results (cls.from_record), lists read from
    JSON turned back into the tuples they were."""
    values = cls.from_record(recipe, results)
    for f in dataclasses.fields(cls):
        if f.name in values and isinstance(values[f.name], list):
            values[f.name] = tuple(values[f.name])
    return cls(**values)


def recipe_of(record):
    """The recipe of a record (an agentrl Record) as its lab's dataclass."""
    return build(lab(pathlib.Path(record.lab).stem).recipe, record.recipe, record.results)


def command(record):
    """The command line that reruns a record's recipe."""
    labo = lab(pathlib.Path(record.lab).stem)
    recipe, defaults = recipe_of(record), labo.recipe()
    words = [PYTHON, labo.path]
    for f in dataclasses.fields(recipe):
        value, default = getattr(recipe, f.name), getattr(defaults, f.name)
        if value == default or not f.metadata.get('in_name', True):   # resolve() derives those
            continue
        kind, _ = field_type(f)
        if kind is bool:
            words.append(flag(f.name) if value else '--no-' + f.name.replace('_', '-'))
        elif kind is tuple:
            words += [flag(f.name), *map(number, value)]
        elif kind is dict:
            words += [flag(f.name), *(f'{k}={str(v).lower() if isinstance(v, bool) else v}'
                                      for k, v in value.items() if default.get(k) != v)]
        else:
            words += [flag(f.name), number(value)]
    if recipe.reduced() == recipe and defaults.reduced() != defaults:
        # a record of the lab's reduced recipe (its smoke test): --reduced also shrinks what the
        # recipe does not name (the lab's task sets), and writes outside the committed results
        words += ['--reduced', '--results', f'/tmp/{labo.name}-reduced']
    return ' '.join(words)
