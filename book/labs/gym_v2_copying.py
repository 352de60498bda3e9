"""Does a policy copy the bug's line number from the hint, or work it out from the function?

gym_v2_failures.py found that a third of the warm start's first edits on unseen placements name
another line than the one the hint names, and suggested recall as the cause: the policy writes the
line on which it was taught a fix for that function. This lab asks, token by token, whether the
line number in the edit comes from the hint at all. Each evaluation task of a warm start's
record (one per group of held-out, stretch, rename and train) is padded as
`gym_v2_warm_start.py --pad-lines K` pads it; the expert's episode is played with the line hint
(read, test, then the edit), and at the token that starts the edit's line number the policy's
next-token distribution is read off (teacher forcing, one forward pass per task, exact):

  hinted    the probability of the padded line's digit: the number the hint and the listing show
  unpadded  the probability of the unpadded line's digit: where the bug sits in every unpadded
            instance of the function, which no observation of this episode shows

Only tasks whose padding moved the bug's line and whose two line numbers are single digits
count. A policy that copies the hint puts its mass on `hinted`; one that places the bug by the
function's shape (a recalled placement, or lines counted without the blank ones), on `unpadded`.

Run from the repository root (single-threaded, seconds per policy):
    PYTHONPATH=. nice -n 5 .venv/bin/python book/labs/gym_v2_copying.py \
        --warm hint_recovery_3000_pad2 --policies hint_recovery_3000 hint_recovery_3000_pad2 \
        --tag pad2
(--policies takes warm-start tags, results/gym_v2_TAG.pt, and RL tags, rl:TAG for
gym_v2_rl_TAG.pt in results/ or $TMPDIR.) Results: results/gym_v2_copying_TAG.json.
"""

import argparse
import pathlib
import sys
import time

import torch

import agentrl as arl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gym_v2  # noqa: E402
from gym_v2_rl_fresh import add_policy_arguments, load_named_policy, warm_start_tasks  # noqa: E402
from gym_v2_warm_start import write_record  # noqa: E402

SPLITS = ('heldout', 'stretch', 'rename', 'train')


def line_digit_position(ids, action_mask, tok):
    """Index in ids of the first digit of the first edit's line number (the token after the
    policy's `edit sub `)."""
    pattern = tok.encode('edit sub ')
    ids = ids.tolist()
    for i in range(len(ids) - len(pattern)):
        if ids[i:i + len(pattern)] == pattern and action_mask[i]:
            return i + len(pattern)
    raise ValueError('the episode has no edit')


def hinted_or_unpadded(model, env, pairs, tok):
    """pairs of (unpadded task, padded task) -> per task (P(hinted digit), P(unpadded digit))."""
    out = []
    for plain, padded in pairs:
        traj = arl.teacher_rollout(env, padded, tok, arl.expert_policy)
        at = line_digit_position(traj.ids, traj.action_mask, tok)
        with torch.no_grad():
            logits = model(traj.ids[None, :at])[0][0, -1]
        probs = torch.softmax(logits, -1)
        out.append((probs[tok.encode(str(padded.line))[0]].item(),
                    probs[tok.encode(str(plain.line))[0]].item()))
    return out


def moved(task, padded):
    """The padding moved the bug's line, and both line numbers are one character."""
    return padded.line != task.line and padded.line < 10


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_policy_arguments(parser)
    parser.add_argument('--tag', required=True)
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    start = time.time()
    warm, tasks, cache, play = warm_start_tasks(args.warm)
    pad = warm.get('pad_lines', 0)
    if not pad:
        raise SystemExit(f'{args.warm} was not trained on padded tasks: nothing moved')
    by_id = {t.id: t for t in tasks}
    pairs = {s: [(by_id[i], play[i]) for i in warm['eval_task_ids'][s]
                 if moved(by_id[i], play[i])] for s in SPLITS}
    print('tasks whose line moved:', {s: len(v) for s, v in pairs.items()}, flush=True)
    tok = arl.CharTokenizer()
    env = gym_v2.HintedBugFixEnv(hint=True, cache=cache)
    result = {}
    for name in args.policies:
        model = load_named_policy(name)
        result[name] = {}
        for split, split_pairs in pairs.items():
            probs = hinted_or_unpadded(model, env, split_pairs, tok)
            n = len(probs)
            row = {'tasks': n, 'hinted': sum(p for p, _ in probs) / n,
                   'unpadded': sum(q for _, q in probs) / n,
                   'hinted_more_likely': sum(p > q for p, q in probs) / n, 'per_task': probs}
            result[name][split] = row
            print(f'{name:32s} {split:8s} ({n:2d} tasks): P(hinted digit) {row["hinted"]:.3f},'
                  f' P(unpadded digit) {row["unpadded"]:.3f}, hinted more likely on'
                  f' {row["hinted_more_likely"]:.2f} of tasks', flush=True)
    write_record(f'gym_v2_copying_{args.tag}', {
        'lab': 'book/labs/gym_v2_copying.py', 'tag': args.tag, 'warm': args.warm,
        'pad_lines': pad, 'policies': args.policies,
        'task_ids': {s: [p.id for _, p in v] for s, v in pairs.items()}, 'result': result,
        'torch_version': torch.__version__, 'threads': torch.get_num_threads()}, start)


if __name__ == '__main__':
    main()
