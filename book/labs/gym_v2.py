"""BugFix v2: the variant task distribution of Chapter 4, Section 4.8, under the labs' names.

The generator is saved book code (`agentrl`): consistent renaming to fresh 1-3 character names,
shifted constants, tests drawn per variant, the 26 EXTRA_TEMPLATES, the train / rename /
heldout / stretch splits by (template, line, kind) group and by variant, recovery
demonstrations and the line hint (see the section and book/labs/GYM_V2.md). This module keeps
the names the lab scripts and their recorded results use: `make_v2_tasks` is
`arl.make_variant_tasks` and `TEMPLATES` is `arl.VARIANT_TEMPLATES`.

Run this file to print the split sizes and a hinted recovery episode. With validation through a
fresh process per sandbox call it takes about 12 minutes on a shared 2-core machine:
    nice -n 5 .venv/bin/python book/labs/gym_v2.py
"""

import agentrl as arl
from agentrl import (  # noqa: F401  (re-exported for the lab scripts)
    EXTRA_TEMPLATES, HELDOUT_FRACTION, STRETCH_FUNCS, TRAIN_VARIANTS, HintedBugFixEnv,
    VariantTask, fresh_names, group_key, group_tasks, make_variant, one_per_group,
    recovery_policy, renamable, rewrite, task_group, template_name, variant_rows,
    wrong_line_patch,
)

TEMPLATES = arl.VARIANT_TEMPLATES
make_v2_tasks = arl.make_variant_tasks


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
