"""Write book/labs/README.md: the labs' experiments, each with its question, finding and records.

    python scripts/labs_index.py           # regenerate the index
    python scripts/labs_index.py --check   # exit 1 if the committed index is stale, a record of
                                           # book/labs/records.toml belongs to no experiment (or
                                           # to two), or an experiment names a record that is not
                                           # there

The questions and findings are written here, once; each record's command and readers come from
book/labs/records.toml (scripts/records_manifest.py), so the index cannot drift from the records.
A finding names the test that checks it against the records.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ext.generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "book" / "labs" / "records.toml"
INDEX = ROOT / "book" / "labs" / "README.md"


def seeds(stem: str, n: int = 3) -> list[str]:
    """A run and its second and third training seeds (the labs' `_s1`, `_s2` suffixes)."""
    return [stem] + [f"{stem}_s{i}" for i in range(1, n)]


def arm(tag: str, n: int = 3) -> list[str]:
    """An RL arm of gym_v2_rl: its seeds' runs and their fresh evaluation."""
    return seeds(f"gym_v2_rl_{tag}", n) + [f"gym_v2_rl_fresh_{tag}"]


@dataclass
class Experiment:
    title: str
    question: str
    finding: str
    records: list[str]


SANITY_FINDING = (
    "Yes: on every seed the fresh-seed accuracy on the 11 tasks rises from the warm start's by "
    "about twice the smallest detectable change, more than half of the climb within the first "
    "ten updates; the entropy falls, the KL to the warm start stays small, its k3 estimate runs "
    "below the exact value, and RLOO's baseline explains none of the reward's variance "
    "(Section 18.5; `tests/test_lab_arms.py::test_the_sanity_check_records_say_what_section_18_5_"
    "says`).")
COIN_FINDING = (
    "No: paid only at a submit that runs, the coin rewards submitting, and every seed learned to "
    "submit without editing; the hidden tests' verdict on the training episodes fell from about "
    "0.44 to under 0.1, and on fresh instances the arm ends far below both the sharpening "
    "control and the binary arm on both halves, by more than 2.5 standard errors (Section 11.5; "
    "`tests/test_rewards.py::test_a_coin_paid_at_submit_teaches_submitting_without_editing`).")
RECIPE = "hg_mixed_pad6_copy4_fresh8"  # the weight-4 warm start, mixed batches, fresh padding
# The arms run on the harness are named from their recipe: the warm start, then the options.
HARNESS_RECIPE = "hint_recovery_6000_pad6_copy4_mixed_fresh8"
# The large-k lab's record, listed once it is committed (gym_v2_large_k.py makes it).

EXPERIMENTS = [
    Experiment(
        "The cost of one RL step, slow path against fast",
        "How much CPU time do one GRPO step's sampling and update, and one sandboxed `test` "
        "call, take the plain way (one episode at a time, a fresh sandbox process, a padded "
        "update) against the fast way (one KV cache for all episodes, a sandbox pool, length "
        "buckets), on the same tasks and seeds, and do both give the same episodes?",
        "Both ways give the same episodes, and the fast way is several times cheaper; the "
        "timings belong to the CPU that ran them, so Sections 5.7 and 14.1 print them as "
        "recorded (`tests/test_efficiency.py`).",
        ["bench_rollouts"]),
    Experiment(
        "The saved gym's warm start",
        "Does supervised training on the scripted expert give TinyAgent a policy whose reward "
        "is not always 0, so that a policy gradient exists?",
        "It solves part of the `train` split at temperature 1 and almost none of `heldout` "
        "(Section 6.6; `tests/test_policy_gradient.py::test_warm_start_results_have_expected_"
        "keys`). Every method lab on the saved gym starts from it.",
        ["warm_start"]),
    Experiment(
        "Each method on the saved gym, several seeds",
        "With one budget for all (64 RL tasks, 100 updates of 8 episodes, the same seeds and "
        "evaluation), what do REINFORCE, REINFORCE on grouped batches, RLOO, PPO (with and "
        "without the value loss in the trunk), GRPO and a KL penalty do to the solve rate?",
        "REINFORCE raises the RL tasks' solve rate on every seed; the group baseline lowers it "
        "against grouped REINFORCE by more than two standard errors; PPO as first written "
        "lowers it, and keeping the value loss out of the trunk is the ablation that tests why; "
        "no method solves a held-out task of the saved gym. "
        "Checked by `tests/test_advantages.py::test_chapter_claims_about_the_labs`, "
        "`tests/test_ppo.py::test_ppo_lab_claims_of_the_chapter`, "
        "`tests/test_grpo.py::test_grpo_lab_claims_of_the_chapter` and "
        "`tests/test_kl_entropy.py::test_lab_claims_of_the_chapter`.",
        ["reinforce_seeds", "grouped_reinforce_seeds", "rloo_seeds", "ppo_seeds",
         "ppo_detached_value_seeds", "grpo_seeds", "kl_seeds"]),
    Experiment(
        "A warm start for the variant gym (BugFix-v2)",
        "On the variant gym of Section 4.8 (renamed functions, shifted constants, placements "
        "split into train and held-out), can imitation with the line hint and recovery "
        "demonstrations give a warm start that solves some held-out placements?",
        "Yes, and most of what it solves rests on the hint (Section 4.8's Evidence). Every "
        "BugFix-v2 RL arm below starts from this warm start or from one of the later ones.",
        ["gym_v2_hint_recovery_3000"]),
    Experiment(
        "RL methods on placements no demonstration showed",
        "Trained with RL on half of the held-out placements (100 updates of 64 episodes, three "
        "seeds), does each method beat the sharpening control (the warm start at its best "
        "temperature) on fresh instances of those placements, and on the placements RL never "
        "practised?",
        "Every method beats the control on fresh instances of the placements RL practised; on "
        "the unseen placements none does (Sections 6.8-10.7 and Appendix C; "
        "`tests/test_advantages.py::test_the_300_update_runs_support_section_7_7` and the "
        "chapters' lab tests).",
        arm("hg_reinforce_lr3e-4") + arm("hg_rloo_lr3e-4") + arm("hg_grpo_lr3e-4")
        + arm("hg_positive_lr3e-4") + arm("hg_ppo_lr3e-4") + arm("hg_ppo1x1_lr3e-4", 1)
        + arm("hg_rloo_kl0.1_lr3e-4") + seeds("gym_v2_rl_hg_rloo_kl1_lr3e-4", 1)),
    Experiment(
        "LoRA against full fine-tuning",
        "With the RLOO recipe above, how much of the gain on RL's placements does LoRA keep at "
        "ranks 1, 4 and 16 and three learning rates?",
        "Section 14.6 reads how far each arm moved the policy and its solve rates; one seed "
        "per arm, so a difference between arms is a measurement of that seed, not a property "
        "of LoRA.",
        ["gym_v2_rl_hg_lora_r1_lr1e-3", "gym_v2_rl_hg_lora_r4_lr3e-4",
         "gym_v2_rl_hg_lora_r4_lr1e-3", "gym_v2_rl_hg_lora_r4_lr3e-3",
         "gym_v2_rl_hg_lora_r16_lr1e-3"]),
    Experiment(
        "Longer training and mixed batches",
        "Does training three or six times longer, or mixing the warm start's own placements "
        "into RL's batches, carry the gain to the unseen placements?",
        "The mixing, not the length, lifts the unseen placements at 300 updates, to the level of "
        "the sharpening control and not above it; at 600 updates the mixed arm gains more on "
        "RL's placements and gives the unseen gain back. The first edits of the fresh episodes "
        "say why (`gym_v2_failures`). Checked by "
        "`tests/test_advantages.py::test_the_300_update_runs_support_section_7_7`, "
        "`::test_twice_the_updates_spend_the_mixed_runs_unseen_gain` and "
        "`::test_the_first_edits_say_why_the_unseen_placements_do_not_gain`.",
        arm("hg_rloo_lr3e-4_u300") + arm("hg_mixed_rloo_lr3e-4") + arm("hg_mixed_rloo_lr3e-4_u300")
        + arm("hg_mixed_rloo_lr3e-4_u600")
        + ["gym_v2_failures_hg_rloo_lr3e-4_u300", "gym_v2_failures_hg_mixed_rloo_lr3e-4_u600"]),
    Experiment(
        "A KL penalty to the warm start",
        "Does a KL leash to the warm start (coefficient 0.1 or 1) keep what the warm start "
        "solves on the unseen placements while RL learns its own?",
        "At 300 updates KL 0.1 costs nothing on RL's placements and recovers part of RLOO's "
        "loss on the unseen ones, still below the warm start and below mixed batches there; on "
        "top of mixed batches it adds nothing there; from the weight-4 warm start it stays "
        "level with its control on the unseen placements (Section 10.7; "
        "`tests/test_kl_entropy.py::test_the_300_update_penalty_supports_section_10_7`, "
        "`::test_the_penalty_adds_nothing_to_mixed_batches_at_300_updates` and "
        "`::test_the_leash_from_the_copying_warm_start_stays_level_on_unseen_placements`).",
        arm("hg_rloo_kl0.1_lr3e-4_u300") + arm("hg_mixed_rloo_kl0.1_lr3e-4_u300")
        + arm(f"{RECIPE}_rloo_kl0.1_lr3e-4_u300")),
    Experiment(
        "More placements to practise",
        "Does adding the stretch templates' 45 placements to RL's tasks make what RL learns "
        "carry to placements it never practised?",
        "No: from the book's warm start both halves fall against the mixed arm; from the "
        "weight-4 warm start the arm stays within two standard errors of RLOO without them "
        "(`tests/test_advantages.py::test_the_stretch_placements_do_not_carry_over`, "
        "`::test_more_placements_from_the_copying_warm_start_do_not_carry_to_unseen_ones`).",
        arm("hg_mixed_stretch_rloo_lr3e-4_u300")
        + ["gym_v2_failures_hg_mixed_stretch_rloo_lr3e-4_u300"]
        + arm("hg_mixed_stretch_pad6_copy4_fresh8_rloo_lr3e-4_u300")),
    Experiment(
        "Padded tasks: does the edit's line come from the hint?",
        "When blank lines move the bug, does the policy copy the hinted line number or recall "
        "the unpadded one, and does RL on padded tasks (one padding per task, a fresh padding "
        "per group, or only draws that move the bug) change that?",
        "The book's warm start recalls the unpadded digit; warm starts trained on padded tasks "
        "copy more, the longer one most; RL from them stays within two standard errors of the "
        "control on the unseen placements; a fresh padding per group helps a little and "
        "drawing only moved bugs does not. The expert path loses most of its "
        "probability on the `<old>` text (`gym_v2_edit_parts`). Checked by "
        "`tests/test_advantages.py::test_the_warm_start_does_not_copy_the_hinted_line_and_rl_"
        "from_padded_tasks_only_sharpens`, "
        "`::test_more_padding_makes_the_copy_likelier_and_rl_from_it_still_only_learns_its_"
        "placements`, `::test_a_fresh_padding_per_group_helps_a_little_and_paying_only_the_copy_"
        "does_not` and `::test_the_edit_parts_multiply_back_to_the_recorded_expert_path`.",
        ["gym_v2_hint_recovery_3000_pad2", "gym_v2_hint_recovery_3000_pad2_d128",
         "gym_v2_hint_recovery_3000_pad6", "gym_v2_hint_recovery_6000_pad6",
         "gym_v2_copying_pad2", "gym_v2_copying_pad6",
         "gym_v2_edit_parts_unpadded", "gym_v2_edit_parts_pad6"]
        + arm("hg_mixed_pad2_rloo_lr3e-4_u300") + arm("hg_mixed_pad6_rloo_lr3e-4_u300")
        + arm("hg_mixed_pad6_fresh8_rloo_lr3e-4_u300")
        + arm("hg_mixed_pad6_moved8_rloo_lr3e-4_u300")),
    Experiment(
        "Weighting the copied tokens in the imitation loss",
        "If the warm start's loss weights the edit's line digits and `<old>` text (4 or 10 "
        "times, or the line, old text and fix separately), does it copy the hinted line, and does "
        "RL from it reach the unseen placements? Does the answer survive a second training seed?",
        "Weight 4 makes the warm start copy the line and beats weight 1 on held-out tasks with "
        "two seeds averaged; RL from it learns its placements and stays level with its control "
        "on the unseen ones, from either seed; the copy itself varies from seed to seed. Checked "
        "by `tests/test_advantages.py::test_weighting_the_copied_tokens_makes_the_warm_start_copy_"
        "the_line`, `::test_weight_4_beats_weight_1_with_the_seeds_matched_and_averaged`, "
        "`::test_rl_from_the_weighted_warm_start_stays_level_with_its_control_on_unseen_"
        "placements` and `::test_rl_from_the_second_seed_of_weight_4_learns_its_placements_and_"
        "not_the_unseen`.",
        ["gym_v2_hint_recovery_6000_pad6_copy4", "gym_v2_hint_recovery_6000_pad6_copy10",
         "gym_v2_hint_recovery_6000_pad6_line4_old10",
         "gym_v2_hint_recovery_6000_pad6_line4_old10_new4",
         "gym_v2_hint_recovery_6000_pad6_t1", "gym_v2_hint_recovery_6000_pad6_copy4_t1",
         "gym_v2_hint_recovery_6000_pad6_line4_old10_t1",
         "gym_v2_hint_recovery_6000_pad6_line4_old10_new4_t1",
         "gym_v2_copying_pad6_copy", "gym_v2_copying_pad6_copy_train_seed",
         "gym_v2_edit_parts_pad6_copy", "gym_v2_edit_parts_pad6_copy_train_seed"]
        + arm(f"{RECIPE}_rloo_lr3e-4_u300") + arm("hg_mixed_pad6_l4o10_fresh8_rloo_lr3e-4_u300")
        + arm("hg_mixed_pad6_copy4_t1_fresh8_rloo_lr3e-4_u300")),
    Experiment(
        "Methods from the weight-4 warm start",
        "From the warm start that copies the line, do GRPO, positive-only updates and PPO with "
        "one step per batch do better than RLOO on the unseen placements?",
        "None beats its control on the unseen placements; PPO with one step per batch gains less than "
        "RLOO on RL's placements (Appendix C.3; "
        "`tests/test_grpo.py::test_group_methods_from_the_copying_warm_start_stay_level_on_"
        "unseen_placements`, `tests/test_ppo.py::test_one_step_ppo_from_the_copying_warm_start_"
        "gains_less_than_rloo`).",
        arm(f"{RECIPE}_grpo_lr3e-4_u300") + arm(f"{RECIPE}_positive_lr3e-4_u300")
        + arm(f"{RECIPE}_ppo1x1_lr3e-4_u300")),
    Experiment(
        "A reward for an edit that applies",
        "Does a bonus for a first edit that applies on the bug's line (0.2, 0.5, 1.0, or 0.5 "
        "paid only at the bug's text) teach the unseen placements the fix?",
        "It buys the copy, not the transfer: the first edits that apply rise, the wrong changes "
        "rise with them, and the solve rate on the unseen placements stays level with RLOO's "
        "(`tests/test_advantages.py::test_a_bonus_for_an_edit_that_applies_buys_the_copy_not_the_"
        "transfer`, `::test_the_bonus_moves_the_first_edits_it_pays_for`).",
        [stem for bonus in ("bonus0.2", "bonus0.5", "bonus1.0", "bonusatbug0.5")
         for stem in arm(f"{RECIPE}_rloo_{bonus}_lr3e-4_u300")
         + [f"gym_v2_failures_{RECIPE}_rloo_{bonus}_lr3e-4_u300"]]),
    Experiment(
        "Checking the edit, and retrying",
        "If the demonstrations sometimes test the edit before submitting (and sometimes retry "
        "after a wrong edit), does RL learn to check and retry on unseen placements, and does "
        "that solve them?",
        "RL learns to check and retry there, a behaviour learned on other placements, but the "
        "retries almost never solve and the solve rate stays level with the control "
        "(`tests/test_advantages.py::test_rl_learns_to_check_its_edit_on_unseen_placements_but_"
        "its_retries_do_not_solve`, `::test_rl_from_retry_demonstrations_retries_more_on_unseen_"
        "placements_without_solving_more`).",
        ["gym_v2_hint_recovery_6000_pad6_copy4_check5",
         "gym_v2_hint_recovery_6000_pad6_copy4_check25",
         "gym_v2_hint_recovery_6000_pad6_copy4_check5_retry5",
         "gym_v2_hint_recovery_6000_pad6_copy4_check5_retry5_masked"]
        + [stem for tag in ("check5", "check25", "check5_retry5m")
           for stem in arm(f"hg_mixed_pad6_copy4_{tag}_fresh8_rloo_lr3e-4_u300")
           + [f"gym_v2_checks_hg_mixed_pad6_copy4_{tag}_fresh8_rloo_lr3e-4_u300"]]),
    Experiment(
        "More episodes, and dynamic sampling",
        "At the same budget of episodes, and at three times it (57,600 per seed), does DAPO's "
        "dynamic sampling (refilling until every group has mixed rewards) or simply more "
        "updates reach the unseen placements?",
        "At the same budget dynamic sampling learns what RLOO learns in under a third of the "
        "steps; at three times the budget both stay level with the control on the unseen "
        "placements and with each other (Appendix C.7; "
        "`tests/test_advantages.py::test_dynamic_sampling_at_the_same_budget_learns_what_rloo_"
        "learns`, `::test_at_three_times_the_episodes_dynamic_sampling_and_rloo_end_level`).",
        arm(f"{RECIPE}_rloo_lr3e-4_refill8_e19200") + arm(f"{RECIPE}_rloo_lr3e-4_refill8_e57600")
        + arm(f"{RECIPE}_rloo_lr3e-4_u900")),
    Experiment(
        "A policy four times larger",
        "Does a TinyAgent with d_model 128 (four times the parameters) imitate better, and does "
        "RL from it reach the unseen placements?",
        "It is level with d_model 64 at imitation, and RL from it learns its placements and not "
        "the unseen ones (`tests/test_advantages.py::test_a_policy_four_times_larger_learns_its_"
        "placements_and_not_the_unseen`).",
        ["gym_v2_hint_recovery_6000_pad6_copy4_d128_lr2.5e-3"]
        + arm("hg_mixed_pad6_copy4_d128_fresh8_rloo_lr3e-4_u300")),
    Experiment(
        "The standard fresh evaluation",
        "The copy-weight warm start on eight fresh variants of every held-out placement, at "
        "every control temperature, recorded once: what difference between two arms can a "
        "later lab resolve when it pairs its policy, task by task and on the same episode "
        "seeds, with this recorded control?",
        "Paired by task it resolves a difference of 0.05 on exactly these placements; for the "
        "recipe on placements like them it does not, and more variants cannot help, because "
        "the error by placement has a floor set by the few placements the templates hold "
        "(Section A.8 prints both; `tests/test_labs.py::test_a_later_lab_pairs_its_policy_with_the_"
        "standard_control` checks the pairing).",
        ["gym_v2_standard_fresh"]),
    Experiment(
        "RL against sharpening at large k",
        "Does RLOO's gain at k = 1 on the placements it practised come with a loss of reach at "
        "large k, the pattern Yue et al. (arXiv 2504.13837) report for RL on language models? "
        "The RL policy whose weights are kept, its warm start at T=1 and the sharpening control "
        "(the warm start at its best temperature in the run's own fresh evaluation) each play 20 "
        "fresh tasks per half (one per placement, variant 18) 256 times, on common sampling "
        "seeds. Primary comparison, named before the run: RL minus the control in pass@256, "
        "paired by task, on RL's placements. The smallest effect it detects (appendix A's "
        "`min_detectable_effect`, 5% two-sided, power 0.8), predicted from the per-task pass@8 "
        "differences of the run's two-variant fresh evaluation: 0.23 on RL's placements, 0.21 "
        "on the unseen ones (0.25 and 0.24 with the two halves as two comparisons); Section "
        "17.5 prints it.",
        "No: RL minus the control in pass@256 is positive on both halves and within two "
        "standard errors, so nothing at large k is a finding; against the warm start at T=1, RL "
        "ends level on its placements and below it on the unseen ones, a comparison not named "
        "before the run (Section 17.5 prints both; "
        "`tests/test_labs.py::test_the_large_k_lab_pairs_pass_at_k_by_task` checks the pairing "
        "on a reduced run).",
        ["gym_v2_large_k"]),
    Experiment(
        "The visible tests as the reward",
        "Trained with RLOO on the visible tests alone (a proxy whose gold reward, the hidden "
        "tests, the log keeps beside it), from the copy-weight warm start with mixed batches for "
        "300 updates, does the policy open a gap between proxy and gold, and does it end "
        "different from the binary reward on the hidden tests? Primary comparison, named before "
        "the run: the proxy arm minus the binary arm in the fresh solve rate at T = 1 on RL's "
        "placements, paired by task, three seeds each; the smallest effect the standard fresh "
        "evaluation detects there is about 0.035 (Appendix A.8).",
        "No gap and no difference: proxy and gold stay within 0.01 of each other in every "
        "50-update window of every seed, and the two arms end level on both halves (Section "
        "11.3; `tests/test_rewards.py::test_training_on_the_visible_tests_keeps_proxy_and_gold_"
        "together`).",
        seeds(f"gym_v2_rl_{HARNESS_RECIPE}_rewardvisible_lr3e-4_u300")
        + [f"gym_v2_rl_fresh_rl_{HARNESS_RECIPE}_rewardvisible_lr3e-4_u300+2"]),
    Experiment(
        "The cheating rate before and after RL on the proxy",
        "On impossible versions of a fresh instance of every held-out placement (ImpossibleBench's "
        "one-off and conflicting mutations, `agentrl.impossible`), where any pass is a cheat, "
        "how often do the warm start and the three policies trained on the visible tests pass? "
        "Eight episodes per task at T = 1, common episode seeds.",
        "Never: no pass on either split of either half, before or after RL, a rate below 0.004 "
        "at 95% after (Section 11.4; `tests/test_rewards.py::test_no_policy_passes_an_impossible_"
        "task`).",
        ["gym_v2_cheating"]),
    Experiment(
        "A coin flip as the reward",
        "Trained with RLOO on a reward that pays a coin flip (probability 0.5) at every submit "
        "that runs, whatever the code does, in the binary-reward arm's recipe with only the "
        "reward changed, does the policy end where the binary reward ends? Primary comparison, "
        "named before the run: the coin-flip arm minus the binary arm in the fresh solve rate at "
        "T = 1 on RL's placements, paired by task, three seeds each; the smallest effect the "
        "standard fresh evaluation detects there is about 0.035 (Appendix A.8).",
        COIN_FINDING,
        seeds(f"gym_v2_rl_{HARNESS_RECIPE}_rewardrandom_lr3e-4_u300")
        + [f"gym_v2_rl_fresh_rl_{HARNESS_RECIPE}_rewardrandom_lr3e-4_u300+2"]),
    Experiment(
        "Turn-level credit against the Monte Carlo truth",
        "With the gym's deterministic observations, the value of every state a group of the "
        "copy-weight warm start's episodes visited can be estimated by sampling continuations; "
        "how well do trajectory-level RLOO credit and GiGPO-style anchor-state credit "
        "correlate with the true advantage of each turn, and with a second, independent "
        "estimate of the truth? No policy is trained.",
        "On nine tasks all three credits (RLOO, GiGPO, GiGPO's step level alone) correlate "
        "moderately with the truth, with overlapping intervals; the two truth estimates agree "
        "better with each other than any method does with them (Section 12.4; "
        "`tests/test_multi_turn.py::test_the_turn_credit_record_scores_as_the_chapter_prints`).",
        ["gym_v2_turn_credit"]),
    Experiment(
        "The sanity check on the gym (Qi et al., 2510.26788)",
        "Trained on only the `train` tasks the weight-4 warm start solved 20-80% of the time in "
        "its evaluation (11 tasks, every one in every update, 4 episodes each), does RLOO at the "
        "book's learning rate drive the training accuracy on those same tasks high in 40 "
        "updates? Primary comparison: the solve rate at T = 1 after training minus the warm "
        "start's, paired by task on 16 episodes per task at fresh episode seeds (not those the "
        "tasks were chosen on), three training seeds; the runs also log the dashboard of "
        "Section 18.1 (entropy, exact and k3 KL to the warm start, the variance the baseline "
        "explains). Smallest detectable change: about 0.14 (Appendix A's "
        "`min_detectable_effect` at the binomial standard error of 11 tasks x 16 episodes per "
        "arm at the warm start's recorded rates); the per-update training accuracy, 44 "
        "episodes an update, is logged beside it.",
        SANITY_FINDING,
        seeds("gym_v2_rl_hint_recovery_6000_pad6_copy4_perfectible_dash_lr3e-4_u40")),
    Experiment(
        "The sanity check with PPO, and its value head (Chapter 18)",
        "The sanity check's recipe with PPO in place of RLOO (two epochs of two minibatches per "
        "batch, a value head on the shared trunk), three training seeds. Primary comparison: the "
        "solve rate at T = 1 on the 11 sometimes-solved `train` tasks after 40 updates minus the "
        "warm start's, paired by task on 16 episodes per task at fresh episode seeds; smallest "
        "detectable change about 0.14, as for RLOO's check. The value head's explained variance "
        "(first ten updates against the last ten) is read beside it.",
        "Yes: on every seed the accuracy rises by more than one and a half times the smallest "
        "detectable change. The value head's explained variance stays near zero throughout: it "
        "learns the reward's level, not which episode succeeds, while its loss falls; the KL to "
        "the warm start is about ten times RLOO's and the entropy barely moves (Section 18.5; "
        "`tests/test_lab_arms.py::test_the_ppo_sanity_check_records_say_what_section_18_5_says`).",
        seeds("gym_v2_rl_hint_recovery_6000_pad6_copy4_perfectible_ppo_dash_lr3e-4_u40")),
    Experiment(
        "The capstone's three seeds: what each stage bought",
        "One recipe (`book/labs/capstone.py`: imitation with recovery demonstrations, two rounds "
        "of rejection sampling, 150 RLOO updates), three seeds, every stage's policy evaluated on "
        "fresh variants 20-21 of the practised placements, the unseen placements and the unseen "
        "functions at the same episode seeds. Primary comparison: the final policy minus the "
        "sharpening control on the practised placements, paired by task, the seeds averaged and "
        "the error clustered by placement; each stage's gain over the one before beside it.",
        "On the practised placements every stage's mean gain is positive, but of the nine "
        "comparisons only rejection sampling's gain over imitation survives the Bonferroni "
        "correction: RL's gain after it and the final policy's lead over the control (about two "
        "clustered standard errors) are not findings; on the unseen placements every comparison is "
        "level; on the unseen functions the stage gains sit just above zero, far below the "
        "corrected threshold, and the final policy is level with the control (Section 19.3).",
        ["capstone", "capstone_s1", "capstone_s2"]),
    Experiment(
        "The capstone's cost: TinyAgent's samplers against `generate`, and one RL update",
        "At TinyAgent's shape, are the book's samplers faster than `transformers`' generate on a "
        "Llama configuration of the same width, depth, heads and vocabulary (greedy, KV cache "
        "on, interleaved rounds), and where does one RL update of the capstone's recipe spend "
        "its time?",
        "Both samplers are only slightly ahead of generate; inside an RL update sampling takes "
        "most of the time, the update most of the rest and the sandbox little (Section 19.6).",
        ["bench_capstone"]),
    Experiment(
        "The capstone's reduced recipe, reproduced from `agentrl` alone",
        "Do Chapter 19's cells, which call only `agentrl`, run the same pipeline as "
        "`book/labs/capstone.py`? The lab's reduced recipe (a two-layer model, 20 imitation steps, "
        "one rejection-sampling round, two RL updates, two placements per evaluation split) is "
        "run by both, seed 0, and every stage's log and per-task rates are compared.",
        "Yes: the same fresh tasks, the same rejection-sampling and RL logs and the same per-task "
        "rates of every stage on every split and temperature, and the imitation loss within "
        "1e-6. At this size no policy solves a fresh task: the record checks the wiring, not "
        "learning (Section 19.2, whose cell asserts the match).",
        ["capstone_d_model32-n_layers2-n_heads2_sft20_train24_rs1_rst4_rss2_rssteps4_u2_tasks4_"
         "g2_max-turns-4_evaln2_samples2_controlT-0.5-1"]),
]


@dataclass
class Proposed:
    """An arm whose lab code exists and whose runs have not been made: its one primary
    comparison, the smallest effect the standard fresh evaluation detects for it, and the
    commands that make its records."""
    title: str
    comparison: str
    detectable: str
    commands: list[str]


GIGPO = f"gym_v2_rl_{HARNESS_RECIPE}_gigpo_lr3e-4_u300"
PROGRESS = f"gym_v2_rl_{HARNESS_RECIPE}_progress_lr3e-4_u300"
PROPOSED = [
    Proposed(
        "The capstone's random-reward control (Chapter 19)",
        "The capstone's RL stage paid by a coin instead of the hidden tests, the same three seeds "
        "(`--reward random` reuses each seed's imitation and rejection-sampling stages): the real "
        "reward's final policy minus the coin's on fresh instances of the practised placements, "
        "paired by task, the seeds averaged and the error clustered by placement (Section 19.4). "
        "It is a control only if the coin is paid on every episode, whatever the episode did: "
        "Section 11.5 found that a coin paid at a submit that runs teaches submitting without "
        "editing, so `agentrl.RewardEnv`'s 'random' reward must first pay at the end of every "
        "episode, submit or not.",
        "The capstone's two fresh variants per placement resolve about 0.09 by placement (the "
        "ledger's clustered standard errors on the practised placements are about 0.02-0.03); a "
        "smaller difference is reported as level.",
        [f".venv/bin/python book/labs/capstone.py --reward random{seed}"
         for seed in ("", " --seed 1", " --seed 2")]
        + [".venv/bin/python book/labs/capstone.py ledger capstone capstone_s1 capstone_s2 "
           "--random capstone_rewardrandom capstone_s1_rewardrandom capstone_s2_rewardrandom"]),
    Proposed(
        "GiGPO against RLOO at equal episodes (Chapter 12)",
        "The solve rate at T = 1 on fresh instances of RL's placements after 300 updates (19,200 "
        "episodes sampled by the policy, as RLOO's arm), three seeds of GiGPO against the three "
        f"seeds of `{RECIPE}_rloo_lr3e-4_u300`, paired by task on the same episode seeds; the "
        "unseen placements and the sharpening control are reported beside it.",
        "Paired by task on these placements the standard fresh evaluation resolves about 0.035 "
        "(Appendix A.8); a claim about placements like them needs about 0.09 (by placement). "
        "A smaller difference is reported as level.",
        [f".venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_6000_pad6_copy4 "
         f"--train-on mixed --fresh-padding 8 --method gigpo --lr 3e-4 --updates 300{seed}"
         for seed in ("", " --seed 1", " --seed 2")]
        + [".venv/bin/python book/labs/gym_v2_rl_fresh.py --runs "
           + " ".join(seeds(GIGPO))]),
    Proposed(
        "Progress as the turn credit, a process reward, against RLOO (Chapter 20)",
        "The solve rate at T = 1 on fresh instances of RL's placements after 300 updates of the "
        "same 64 episodes sampled by the policy, three seeds of `--method progress` (each turn "
        "weighted by its Monte Carlo progress under the policy being trained, 4 continuations "
        f"per visited state) against the three seeds of `{RECIPE}_rloo_lr3e-4_u300`, paired by "
        "task on the same episode seeds; the unseen placements, the sharpening control and the "
        "continuations each update spent (logged per update) are reported beside it, so that a "
        "gain is read against what the truth cost to sample.",
        "Paired by task on these placements the standard fresh evaluation resolves about 0.035 "
        "(Appendix A.8); a claim about placements like them needs about 0.09 (by placement). "
        "A smaller difference is reported as level.",
        [f".venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_6000_pad6_copy4 "
         f"--train-on mixed --fresh-padding 8 --method progress --lr 3e-4 --updates 300{seed}"
         for seed in ("", " --seed 1", " --seed 2")]
        + [".venv/bin/python book/labs/gym_v2_rl_fresh.py --runs "
           + " ".join(seeds(PROGRESS))]),
    Proposed(
        "Partial credit as the reward (Chapter 11)",
        "The reward `partial` (the fraction of hidden tests passed), paid by `agentrl.RewardEnv` "
        "from the copy-weight warm start with mixed batches and RLOO for 300 updates: its fresh "
        "solve rate at T = 1 minus the binary reward's "
        f"(`gym_v2_rl_fresh_{RECIPE}_rloo_lr3e-4_u300`), paired by task on fresh instances of "
        "RL's placements, three seeds; the unseen placements and the sharpening control are "
        "reported beside it.",
        "Paired by task on these placements the standard fresh evaluation resolves about 0.035 "
        "(Appendix A.8); a claim about placements like them needs about 0.09 (by placement). "
        "A smaller difference is reported as level.",
        [f".venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_6000_pad6_copy4 "
         f"--train-on mixed --fresh-padding 8 --method rloo --lr 3e-4 --updates 300 --reward "
         f"partial{seed}" for seed in ("", " --seed 1", " --seed 2")]
        + [".venv/bin/python book/labs/gym_v2_rl_fresh.py --runs <the three runs>"]),
    Proposed(
        "Rejection sampling against its random-selection control, and DPO (Chapter 15)",
        "Online rejection sampling (`--method positive`, whose three seeds exist) against its "
        "control at equal kept episodes (`--method random_kept`: as many episodes kept as "
        "succeeded, drawn whatever their reward): the fresh solve rate at T = 1 on RL's "
        "placements, paired by task, three seeds each. DPO on one (best, worst) pair per mixed "
        "group (`--method dpo`) is reported beside it against the same arm.",
        "Paired by task on these placements the standard fresh evaluation resolves about 0.035 "
        "(Appendix A.8; Section 15.2 prints the sizes); a claim about placements like them needs "
        "about 0.09 (by placement). A smaller difference is reported as level.",
        [f".venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_6000_pad6_copy4 "
         f"--train-on mixed --fresh-padding 8 --method {method} --lr 3e-4 --updates 300{seed}"
         for method in ("random_kept", "dpo") for seed in ("", " --seed 1", " --seed 2")]
        + [".venv/bin/python book/labs/gym_v2_rl_fresh.py --runs <the three runs of one method>"]),
    Proposed(
        "Recovery demonstrations with the mistake masked (Chapter 15)",
        "The weight-4 warm start's recipe with its recovery demonstrations' non-applying edit "
        "left out of the loss (`--mask-recovery-mistake`) against the same recipe with the edit "
        "in the loss (seeds 0 and 1 exist as `gym_v2_hint_recovery_6000_pad6_copy4` and `_t1`) "
        "and without recovery demonstrations (`--recovery-share 0`): the fresh solve rate at "
        "T = 1 on the held-out placements, paired by task, three training seeds each.",
        "Paired by task the standard fresh evaluation resolves about 0.035 on these placements "
        "(Appendix A.8); a claim about placements like them needs about 0.09 (by placement).",
        [f".venv/bin/python book/labs/gym_v2_warm_start.py --hint-share 1 --steps 6000 "
         f"--pad-lines 6 --copy-weight 4 --sweep hint {variant} --train-seed {seed}"
         for variant in ("--mask-recovery-mistake", "--recovery-share 0") for seed in (0, 1, 2)]),
    Proposed(
        "On-policy distillation and DAgger against RLOO at equal student episodes (Chapter 16)",
        "The solve rate at T = 1 on fresh instances of RL's placements after 100 updates of 64 "
        "episodes sampled by the student (6,400), three seeds of on-policy distillation "
        "(`--method onpolicy_distill`) from the RLOO policy `gym_v2_rl_hg_rloo_lr3e-4` as the "
        "teacher against the three seeds of RLOO from the same warm start "
        "(`gym_v2_rl_hg_rloo_lr3e-4`, `_s1`, `_s2`; fresh record "
        "`gym_v2_rl_fresh_hg_rloo_lr3e-4`), paired by task on the same episode seeds. The unseen "
        "placements (does distillation carry where RL did not?), DAgger from the scripted expert "
        "(`--method dagger`, the same student episodes) and the sharpening control are reported "
        "beside it, with the FLOPs per student episode of Section 16.7.",
        "Paired by task on these placements the standard fresh evaluation resolves about 0.035 "
        "(Appendix A.8); a claim about placements like them needs about 0.09 (by placement). "
        "A smaller difference is reported as level.",
        [f".venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_3000 "
         f"--train-on heldout-groups --method {method} --lr 3e-4 --updates 100{seed}"
         for method in ("onpolicy_distill --teacher gym_v2_rl_hg_rloo_lr3e-4", "dagger")
         for seed in ("", " --seed 1", " --seed 2")]
        + [".venv/bin/python book/labs/gym_v2_rl_fresh.py --runs <the three runs of one method>"]),
    Proposed(
        "The distilled student's reach at large k (Chapters 16, 17 and 20)",
        "The large-k protocol of `gym_v2_large_k` (20 fresh tasks per half, variant 18, 256 "
        "samples each, the same episode seeds) run on the on-policy distilled student of seed 0 "
        "(the Chapter 16 arm above): its pass@256 minus that of its teacher, the RLOO policy "
        "`gym_v2_rl_hg_rloo_lr3e-4` of the committed record `gym_v2_large_k`, paired by task on "
        "RL's placements, with the unseen placements, the warm start at T = 1 and the sharpening "
        "control beside it. Does distillation keep the reach its teacher has, or narrow it "
        "further?",
        "About 0.23 of the tasks on RL's placements with 20 tasks (Section 17.5's MDE for "
        "pass@256 differences, from the spread of pass@8 differences in the run's own fresh "
        "evaluation); a smaller gap is reported as level.",
        [".venv/bin/python book/labs/gym_v2_rl.py --warm gym_v2_hint_recovery_3000 "
         "--train-on heldout-groups --method onpolicy_distill --teacher gym_v2_rl_hg_rloo_lr3e-4 "
         "--lr 3e-4 --updates 100",
         ".venv/bin/python book/labs/gym_v2_large_k.py --runs <the on-policy distillation run "
         "of seed 0>"]),
]

PREAMBLE = """\
# The labs: an index of experiments

Written by `scripts/labs_index.py` from `book/labs/records.toml`; never by hand.

A lab is a script in this folder that imports the book's saved code from `agentrl`, runs one
experiment that is too long for a chapter cell, and writes a record to `results/<stem>.json`
(with the policy's weights beside it as `<stem>.pt` when a later run starts from it). A chapter
reads a record with `agentrl.load_record('<stem>')`; `book/labs/records.toml`
(`scripts/records_manifest.py`) lists every record with the exact command that makes it and what
reads it. The tests in `tests/` check each chapter claim against the records.

| lab | what it measures |
|---|---|
| `warm_start.py` | the saved gym's warm start by imitation of the scripted expert |
| `*_seeds.py` | one method of Chapters 6-10 on the saved gym, several seeds, one budget |
| `gym_v2.py` | the variant gym's tasks under the labs' names, and blank-line padding |
| `gym_v2_warm_start.py` | a warm start by imitation on the variant gym, with the hint and without |
| `gym_v2_rl.py` | RL from a warm start on placements no demonstration showed |
| `gym_v2_rl_fresh.py` | RL policies and their warm start on fresh instances nobody tuned on |
| `gym_v2_standard_fresh.py` | the warm start's control on eight fresh variants per placement, recorded once for later labs to pair against |
| `gym_v2_failures.py` | what the first edit of those fresh episodes did |
| `gym_v2_copying.py` | whether the edit's line digit comes from the hint (padded tasks) |
| `gym_v2_edit_parts.py` | the expert path split into the edit's line, old text and fix |
| `gym_v2_checks.py` | whether a policy tests its edit, and edits again when the check fails |
| `gym_v2_turn_credit.py` | the Monte Carlo value of every state a group visited, to score turn-level credit (no training) |
| `gym_v2_large_k.py` | pass@k up to k = 256 of an RL policy, its warm start and the sharpening control, paired by task |

`evaluate.py` holds the evaluation the BugFix-v2 labs share (Section 6.8's saves): the solve
rate at temperature 1 with 8 samples per task and its standard error over tasks, greedy, pass@k,
the expert path's probability, and the **sharpening control**, the warm start at its best
temperature, which a trained policy must beat, paired by task on the same sampling seeds. The
held-out placements are split in two halves: RL practises one (`rl_groups`), never sees the
other (`heldout`); a fresh evaluation draws new instances of both that no run was tuned on.

Each experiment below gives the question it asks, its finding where one is established (with the
test that checks it), what reads its records, and each record's command.
"""


def load_manifest(path: Path = MANIFEST) -> dict[str, dict]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def readers(entries: list[dict]) -> list[str]:
    """The chapter sections, figures and tests that read any of the records (not other records)."""
    found = {r for e in entries for r in e["read_by"] if not r.startswith("record ")}
    return sorted(found)


def render(manifest: dict[str, dict], experiments: list[Experiment] = EXPERIMENTS) -> str:
    parts = [PREAMBLE]
    for number, exp in enumerate(experiments, 1):
        entries = [manifest[s] for s in exp.records if s in manifest]
        read = ", ".join(f"`{r}`" for r in readers(entries)) or "other records only"
        parts.append(f"\n## {number}. {exp.title}\n\n"
                     f"**Question.** {exp.question}\n\n"
                     f"**Finding.** {exp.finding}\n\n"
                     f"**Read by.** {read}\n\n"
                     f"**Records and commands** ({len(exp.records)}):\n\n```sh\n")
        for stem in exp.records:
            entry = manifest.get(stem)
            command = entry["command"] if entry else "(no such record)"
            parts.append(f"# {stem}\n{command}\n")
        parts.append("```\n")
    parts.append("\n## Arms proposed, not yet run\n")
    for arm_ in PROPOSED:
        parts.append(f"\n### {arm_.title}\n\n"
                     f"**Primary comparison.** {arm_.comparison}\n\n"
                     f"**Smallest detectable effect.** {arm_.detectable}\n\n"
                     "**Commands:**\n\n```sh\n" + "\n".join(arm_.commands) + "\n```\n")
    return "".join(parts)


def problems(manifest: dict[str, dict], experiments: list[Experiment] = EXPERIMENTS) -> list[str]:
    """Records in no experiment or in two, and names of records that do not exist."""
    seen: dict[str, str] = {}
    found = []
    for exp in experiments:
        for stem in exp.records:
            if stem not in manifest:
                found.append(f"{exp.title!r} names {stem!r}, which records.toml does not list")
            elif stem in seen:
                found.append(f"{stem!r} is in {seen[stem]!r} and in {exp.title!r}")
            seen.setdefault(stem, exp.title)
    found += [f"{stem!r} belongs to no experiment" for stem in manifest if stem not in seen]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if the index is stale or does not cover every record once")
    args = parser.parse_args(argv)
    manifest = load_manifest()
    text = render(manifest)
    found = problems(manifest)
    for line in found:
        print(f"error: {line}", file=sys.stderr)
    current = write_or_check(INDEX, text, args.check, "python scripts/labs_index.py")
    if not args.check:
        print(f"wrote {INDEX.relative_to(ROOT)} ({len(EXPERIMENTS)} experiments, "
              f"{len(manifest)} records)")
    return 1 if found or not current else 0


if __name__ == "__main__":
    sys.exit(main())
