"""The labs of book/labs on their one harness (book/labs/harness.py).

Every lab runs once in reduced mode (tiny sizes, a scratch folder, each run once and reused by the
labs that build on it) and its record must load through agentrl.load_record with the lab's kind
and the full recipe; every committed record's recipe must be a recipe of its lab, whose command
line reads back to it. The arms of single labs, the resumed runs and the records Part II quotes
are checked in tests/test_lab_arms.py.
Run: .venv/bin/python -m pytest tests/test_labs.py -q
"""

import dataclasses
import json
import pathlib

import pytest

from lab_runs import PAD2, WARM, run_lab

import agentrl as arl  # noqa: E402
import harness  # noqa: E402


class Scratch:
    """The labs' reduced runs in one scratch folder, each made once, in the order they build on
    each other (an RL run before the fresh evaluation of it, and so on)."""

    def __init__(self, folder):
        self.folder, self.made = folder, {}

    def argv(self, name):
        extra = {
            'gym_v2_warm_start': lambda: ['--hint-share', '1', '--pad-lines', '2', '--sweep',
                                          'hint'],
            'gym_v2_rl': lambda: ['--warm', WARM, '--train-on', 'mixed', '--fresh-padding', '2',
                                  '--lr', '3e-4'],
            'gym_v2_rl_fresh': lambda: ['--runs', self.stem('gym_v2_rl')],
            'gym_v2_cheating': lambda: ['--runs', self.stem('gym_v2_rl')],
            'gym_v2_failures': lambda: ['--fresh', self.stem('gym_v2_rl_fresh')],
            'gym_v2_checks': lambda: ['--fresh', self.stem('gym_v2_rl_fresh')],
            'gym_v2_copying': lambda: ['--warm', PAD2, '--policies', PAD2, self.stem('gym_v2_rl')],
            'gym_v2_edit_parts': lambda: ['--warm', PAD2, '--policies', self.stem('gym_v2_rl'),
                                          '--temperatures', '1', '0.5'],
        }.get(name, list)()
        return ['--reduced', '--results', str(self.folder), '--state',
                str(self.folder / 'runs'), *extra]

    def stem(self, name):
        if name not in self.made:
            self.made[name] = run_lab(name, self.argv(name)).stem
        return self.made[name]


@pytest.fixture(scope='module')
def scratch(tmp_path_factory):
    return Scratch(tmp_path_factory.mktemp('labs'))


@pytest.mark.parametrize('name', harness.LABS)
def test_every_lab_runs_reduced_and_writes_its_record(scratch, name):
    stem = scratch.stem(name)
    lab = harness.lab(name)
    record = arl.load_record(stem, scratch.folder)
    assert record.kind == lab.kind and record.lab == f'book/labs/{name}.py'
    assert stem == harness.run_name(lab, harness.recipe_of(record))
    assert set(record.recipe) == {f.name for f in dataclasses.fields(lab.recipe)}
    assert set(record.machine) == {'cpu', 'cpu_capability', 'torch', 'threads'}
    raw = (scratch.folder / f'{stem}.json').read_text()
    assert list(json.loads(raw)) == ['schema', 'lab', 'kind', 'recipe', 'machine', 'results']
    assert raw == json.dumps(json.loads(raw), indent=1) + '\n'       # the committed layout
    if record.kind in ('warm_start', 'run'):
        arl.load_checkpoint(record.checkpoint)
    assert not list(scratch.folder.glob('*.tmp')) and not list(scratch.folder.glob('.*.tmp'))
    assert not (scratch.folder / 'runs' / stem).exists()     # a finished run keeps no state


def test_a_later_lab_pairs_its_policy_with_the_standard_control(scratch):
    """against_standard replays the standard evaluation's tasks and episode seeds: the reduced
    RL policy gets a paired difference per split, and the warm start itself exactly zero."""
    import gym_v2_standard_fresh as standard
    stem = scratch.stem('gym_v2_standard_fresh')
    context = harness.Context(standard.LAB, results=scratch.folder, reduced=True)
    policies = {'warm': arl.load_checkpoint(context.load(WARM).checkpoint),
                'rl': arl.load_checkpoint(context.load(scratch.stem('gym_v2_rl')).checkpoint)}
    out = standard.against_standard(policies, context, stem)
    record = arl.load_record(stem, scratch.folder)
    for split in ('rl_groups', 'heldout'):
        assert out['warm'][split]['t1']['per_task'] == record.control(split)['t1']['per_task']
        assert out['warm'][split]['minus_warm_t1'] == (0.0, 0.0)
        assert len(out['rl'][split]['t1']['per_task']) == len(record.task_ids(split))


def test_the_large_k_lab_pairs_pass_at_k_by_task(scratch):
    """gym_v2_large_k keeps each task's successes: the pass@k of every k follows from them,
    the paired gaps are per-task pass@k differences, and the record reads as a fresh one."""
    import gym_v2_large_k as large_k
    record = arl.load_record(scratch.stem('gym_v2_large_k'), scratch.folder)
    assert record.runs == ['gym_v2_rl_hg_rloo_lr3e-4']
    for split in ('rl_groups', 'heldout'):
        versus = record.versus(split)
        best = versus['control_temperature']
        rl, control = record.trained(split)[0]['t1'], record.control(split)[best]
        assert len(rl['successes']) == len(record.task_ids(split)) == versus['tasks']
        for k in record.recipe['ks']:
            per_task = large_k.per_task_pass(rl, k)
            assert abs(sum(per_task) / len(per_task) - rl[f'pass@{k}']) < 1e-12
            assert versus['pass@k'][str(k)]['rl minus control'] == list(arl.paired(
                per_task, large_k.per_task_pass(control, k)))


COMMITTED = sorted(p.stem for p in harness.RESULTS.glob('*.json')
                   if json.loads(p.read_text())['lab'].startswith('book/labs/'))


@pytest.mark.parametrize('stem', COMMITTED)
def test_every_committed_record_is_a_recipe_of_its_lab(stem):
    """Each committed record's recipe builds its lab's recipe (fields it predates take the
    values the lab then had), and the command line harness.command gives reads back to it."""
    record = arl.load_record(stem, harness.RESULTS)
    lab = harness.lab(pathlib.Path(record.lab).stem)
    recipe = harness.recipe_of(record)
    assert isinstance(recipe, lab.recipe)
    command = harness.command(record)
    assert command.split()[:2] == [harness.PYTHON, record.lab]
    again = harness.recipe_from_args(lab, harness.parser_for(lab).parse_args(command.split()[2:]))
    for f in dataclasses.fields(recipe):
        if f.metadata['in_name']:           # the others follow from the records it reads
            assert getattr(again, f.name) == getattr(recipe, f.name), f.name


def test_a_run_name_is_the_lab_and_what_differs_from_the_defaults():
    lab = harness.lab('gym_v2_rl')
    recipe = lab.recipe(warm=WARM, train_on='mixed', fresh_padding=8, method='grpo', lr=3e-4,
                        updates=300, seed=1, hint=True, pad_lines=6)
    assert harness.run_name(lab, recipe) == \
        'gym_v2_rl_hint_recovery_6000_pad6_copy4_mixed_fresh8_grpo_lr3e-4_u300_s1'
    assert harness.run_name(lab, lab.recipe()) == 'gym_v2_rl'
    fresh = harness.lab('gym_v2_rl_fresh')
    runs = ('gym_v2_rl_a', 'gym_v2_rl_a_s1', 'gym_v2_rl_a_s2')
    assert harness.run_name(fresh, fresh.recipe(runs=runs)) == 'gym_v2_rl_fresh_rl_a+2'
    assert harness.run_name(fresh, fresh.recipe(runs=runs[:1] + ('gym_v2_rl_b',))).startswith(
        'gym_v2_rl_fresh_rl_a+1-')
    kl = harness.lab('kl_seeds')
    assert harness.run_name(kl, kl.recipe(arms={'none': 0.0, 'kl': 0.5}, seeds=(0,))) == \
        'kl_seeds_seeds0_arms-kl0.5'


def test_the_command_line_is_derived_from_the_recipe(capsys):
    """Every field is a flag with its help; booleans take --no-; tuples several values; dicts
    KEY=VALUE over the default; a name cannot be typed; --reduced refuses the committed
    results."""
    lab = harness.lab('gym_v2_warm_start')
    parser = harness.parser_for(lab)
    text = parser.format_help()
    for f in dataclasses.fields(lab.recipe):
        assert harness.flag(f.name) in text
    args = parser.parse_args(['--mask-retry-mistake', '--sweep-splits', 'heldout',
                              '--part-weights', 'old=10', '--model-config', 'd_model=128'])
    recipe = harness.recipe_from_args(lab, args)
    assert recipe.mask_retry_mistake and recipe.sweep_splits == ('heldout',)
    assert recipe.part_weights == {'line': 0, 'old': 10, 'new': 0}
    assert recipe.model_config['d_model'] == 128 and recipe.model_config['n_layers'] == 4
    with pytest.raises(harness.RecipeError, match='KEY one of'):
        harness.parse_dict('part_weights', ['calls=3'], recipe.part_weights)
    for argv in (['--name', 'x'], ['--tag', 'x'], ['--reduced']):
        with pytest.raises(SystemExit):
            harness.prepare(lab, argv)
    assert 'committed results' in capsys.readouterr().err

    @dataclasses.dataclass(frozen=True)
    class Unhelpful(harness.Recipe):
        size: int = dataclasses.field(default=1)

    @dataclasses.dataclass(frozen=True)
    class Listy(harness.Recipe):
        sizes: list = harness.option([1], 'a list')

    for recipe_class in (Unhelpful, Listy):
        with pytest.raises(TypeError):
            harness.Lab(__file__, 'run', recipe_class, lambda recipe, context: {})


def test_the_record_writer_stamps_the_machine_and_leaves_no_temporary_file(tmp_path):
    lab = harness.lab('warm_start')
    path = harness.write_record(tmp_path, 'r', lab, lab.recipe(), {'x': 1})
    record = json.loads(path.read_text())
    assert record['machine']['cpu_capability'] in {'DEFAULT', 'AVX2', 'AVX512', 'ZVECTOR', 'VSX'}
    assert record['machine']['cpu'] and record['machine']['threads'] >= 1
    assert record['recipe'] == dataclasses.asdict(lab.recipe())
    assert list(tmp_path.iterdir()) == [path]


def test_the_capstone_runs_every_stage_and_its_control_arm_reuses_them(scratch):
    """book/labs/capstone.py reduced (its smoke recipe): every stage is trained and evaluated on
    the three fresh splits at the same episode seeds, the ledger's paired differences are in
    the record, and the random-reward arm of the same seed reuses the sft and rs stages (the
    same policies, so the same evaluation) and trains only its RL stage; the optional
    distillation stage distils the RL policy into the rs one and joins the ledger."""
    import capstone
    stem = scratch.stem('capstone')
    record = arl.load_record(stem, scratch.folder)
    res = record.results
    assert res['stages'] == ['sft', 'rs', 'rl']
    for stage in res['stages']:
        assert set(res['metrics'][stage]) == set(capstone.SPLITS)
    assert set(res['metrics']['sft']['practised']) == {'t0.5', 't1'}
    for split in capstone.SPLITS:
        n = len(res['task_ids'][split])
        assert n == len(res['clusters'][split]) == len(
            res['metrics']['rl'][split]['t1']['per_task'])
        assert {'rs - sft', 'rl - rs', 'rl - control'} <= set(res['versus'][split])
    assert len(res['logs']['rl']['log']) == 2
    for stage in ('sft', 'rs'):
        arl.load_checkpoint(scratch.folder / f'{stem}_{stage}.pt')
    arm = run_lab('capstone', scratch.argv('capstone') + ['--reward', 'random'])
    control = arl.load_record(arm.stem, scratch.folder).results
    assert 'rewardrandom' in arm.stem
    assert control['logs']['sft']['reused'] and control['logs']['rs']['reused']
    assert not control['logs']['rl'].get('reused')
    assert control['metrics']['rs'] == res['metrics']['rs']
    distilled = run_lab('capstone', scratch.argv('capstone') + ['--distill-updates', '1'])
    res_d = arl.load_record(distilled.stem, scratch.folder).results
    assert res_d['stages'] == ['sft', 'rs', 'rl', 'distill'] and res_d['logs']['rl']['reused']
    assert res_d['logs']['distill']['student'] == 'rs'
    assert {'distill - rl', 'distill - control'} <= set(res_d['versus']['practised'])
    rows = capstone.ledger([record, record], [arl.load_record(arm.stem, scratch.folder)] * 2)
    assert {name for _, name, *_ in rows} == {'rs - sft', 'rl - rs', 'rl - control',
                                              'rl - random-reward rl'}
