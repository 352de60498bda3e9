"""Chapter 5, Sections 5.1 and 5.6: who wrote each token of an episode on task 0.

Two episodes of task 0 recorded as ``arl.Trajectory`` records: the scripted expert's
(``arl.teacher_rollout`` with ``arl.expert_policy``) and the untrained TinyAgent's
(``arl.rollout`` with ``arl.TinyAgent(seed=0)``, sampling seed 0), each drawn as a strip of its
tokens in order, coloured by the action mask: the policy's tokens against the environment's.
The expert's segments are labelled with the tool called and what the environment answered.
Lengths and policy-token counts are checked against the outputs the chapter records.
"""

from __future__ import annotations

import agentrl as arl
import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from _common import BLUE, WIDTH_IN, check_against_chapter, recorded_output

NAME = "ch05-token-composition"
CHAPTER = "05-trajectories-and-templates.md"
ENV_COLOUR = "#D9D9D9"
TEXT = {
    "en": {
        "expert": "scripted expert",
        "untrained": "untrained TinyAgent",
        "summary": "T = {T}, {n} policy tokens ({share:.1%})",
        "title": "{who}: {summary}",
        "xlabel": "token position in the episode",
        "policy": "policy tokens (action mask 1)",
        "env": "environment tokens (action mask 0)",
        "obs": {"": "task", "read": "source code", "test": "test report", "edit": "edited\nline",
                "submit": "grade"},
    },
    "zh": {
        "expert": "脚本化专家",
        "untrained": "未训练的 TinyAgent",
        "summary": "T = {T}，策略 token {n} 个（{share:.1%}）",
        "title": "{who}：{summary}",
        "xlabel": "token 在回合中的位置",
        "policy": "策略 token（动作掩码为 1）",
        "env": "环境 token（动作掩码为 0）",
        "obs": {"": "任务", "read": "源代码", "test": "测试报告", "edit": "修改\n后的行",
                "submit": "评分"},
    },
}


def _segments(traj) -> list[tuple[int, int, bool]]:
    """(start, end, is_policy) runs of the action mask."""
    mask = traj.action_mask.tolist()
    runs, start = [], 0
    for t in range(1, len(mask) + 1):
        if t == len(mask) or mask[t] != mask[start]:
            runs.append((start, t, bool(mask[start])))
            start = t
    return runs


def compute() -> dict:
    tok = arl.CharTokenizer()
    task = arl.make_tasks(seed=0)[0]
    cache: dict = {}
    expert = arl.teacher_rollout(arl.BugFixEnv(cache=cache), task, tok, arl.expert_policy)
    model = arl.TinyAgent(vocab_size=tok.vocab_size, seed=0)
    untrained = arl.rollout(model, arl.BugFixEnv(cache=cache), task, tok, seed=0)
    n_expert, n_untrained = int(expert.action_mask.sum()), int(untrained.action_mask.sum())
    check_against_chapter(
        "expert episode on task 0",
        f"T = {len(expert.ids)} tokens, {n_expert} from the policy "
        f"({expert.action_mask.mean():.1%})",
        recorded_output(CHAPTER, "ids, mask = build_action_mask(segments)").splitlines()[0])
    check_against_chapter(
        "untrained episode on task 0",
        f"reward {untrained.reward}, done {untrained.done}, {len(untrained.turns)} turns, "
        f"T = {len(untrained.ids)}, policy tokens {n_untrained}",
        recorded_output(CHAPTER, "traj = rollout(model, env, t0, tok, seed=0)").splitlines()[0])
    tools = [action.split()[1] if action.startswith("<call> ") else "?" for action, _ in expert.turns]
    return {
        "rows": [
            {"key": "expert", "T": len(expert.ids), "policy": n_expert,
             "segments": _segments(expert), "tools": tools},
            {"key": "untrained", "T": len(untrained.ids), "policy": n_untrained,
             "segments": _segments(untrained), "tools": None},
        ],
    }


def _strip(ax, y, row, height):
    for start, end, policy in row["segments"]:
        ax.barh(y, end - start, left=start, height=height, color=BLUE if policy else ENV_COLOUR,
                edgecolor="white", linewidth=0.5)


def draw(data: dict, text: dict):
    """Top: the expert's episode, stretched to the full width and labelled segment by segment.
    Bottom: both episodes to the same scale."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(WIDTH_IN, 3.3),
                                      gridspec_kw={"height_ratios": [1.15, 1.0], "hspace": 0.6})
    expert, untrained = data["rows"]
    height = 0.5

    _strip(top, 0, expert, height)
    tools, last_tool = iter(expert["tools"]), ""
    for start, end, policy in expert["segments"]:
        middle = (start + end) / 2
        if policy:
            last_tool = next(tools)
            top.text(middle, height / 2 + 0.08, last_tool, ha="center", va="bottom", fontsize=7.5,
                     color=BLUE, fontfamily="DejaVu Sans Mono")
        else:
            top.text(middle, 0, text["obs"].get(last_tool, ""), ha="center", va="center",
                     fontsize=7.5, color="#333333")
    top.set_xlim(0, expert["T"])
    top.set_ylim(-0.4, 0.75)
    top.set_yticks([])
    summary = text["summary"].format(T=expert["T"], n=expert["policy"],
                                     share=expert["policy"] / expert["T"])
    top.set_title(text["title"].format(who=text["expert"], summary=summary), loc="left",
                  fontsize=8.5)

    longest = max(expert["T"], untrained["T"])
    for y, row in zip((1, 0), (expert, untrained)):
        _strip(bottom, y, row, 0.6)
        bottom.text(row["T"] + 8, y, text["summary"].format(T=row["T"], n=row["policy"],
                                                            share=row["policy"] / row["T"]),
                    ha="left", va="center", fontsize=7.5)
    bottom.set_yticks([1, 0], [text["expert"], text["untrained"]])
    bottom.set_ylim(-0.5, 1.5)
    bottom.set_xlim(0, longest * 1.55)
    bottom.set_xticks(list(range(0, longest + 1, 100)))
    bottom.set_xlabel(text["xlabel"])

    for ax in (top, bottom):
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        ax.grid(axis="y", visible=False)
    top.legend(handles=[Patch(color=BLUE, label=text["policy"]),
                        Patch(color=ENV_COLOUR, label=text["env"])],
               loc="lower left", bbox_to_anchor=(0.0, 1.25), ncol=2, borderaxespad=0.0)
    return fig
