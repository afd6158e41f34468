"""`report.md` and its plots: tables first, the latency figures last (the only part that varies).

Nothing here prints; `render_report` returns the Markdown text and `write_plots` writes PNGs.
The plots need matplotlib (the `qualify` extra); without it the report says so and carries on.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from obelisk_session_evidence.contracts.qualification import TargetCheck, TargetName
from obelisk_session_evidence.contracts.replay import REPLAY_TARGETS
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.qualify.arms import ARMS, ArmName, ArmRun
from obelisk_session_evidence.qualify.calibrate import MAX_FALSE_REPEAT_RATE, SweepPoint
from obelisk_session_evidence.qualify.metrics import STAGES as STAGE_ORDER
from obelisk_session_evidence.qualify.metrics import Detection, context_size, detection, safety, stage_latency
from obelisk_session_evidence.qualify.real import REAL_TARGETS, RealSetResult
from obelisk_session_evidence.qualify.replay_arm import ReplayArmResult
from obelisk_session_evidence.qualify.synthetic import QualificationCase

ARM_TITLES: Final[dict[ArmName, str]] = {
    "current_context": "1 current context (LoopX exact ids)",
    "admitted_retrieval": "2 admitted retrieval (this pipeline)",
    "full_history": "3 full same-scope history (cost ceiling)",
}
TARGETS: Final = {
    "precision": 0.95,
    "recall": 0.90,
    "false_repeat_rate": MAX_FALSE_REPEAT_RATE,
    "tokens_p95": 2000,
    "real_precision": REAL_TARGETS["precision"],
    "real_recall": REAL_TARGETS["recall"],
    "real_traps": 1.0,
    "replay_alarms_right": REPLAY_TARGETS["alarms_right"],
    "replay_dead_ends_caught": REPLAY_TARGETS["dead_ends_caught"],
}
TARGET_BOUNDS: Final[dict[TargetName, tuple[str, Literal[">=", "<="]]]] = {
    "precision": ("precision on repeated routes", ">="),
    "recall": ("recall on repeated routes", ">="),
    "false_repeat_rate": ("false-repeat rate", "<="),
    "tokens_p95": ("p95 private context (tokens)", "<="),
    "real_precision": ("real set: precision on repeated routes", ">="),
    "real_recall": ("real set: recall on repeated routes", ">="),
    "real_traps": ("real set: share of traps right", ">="),
    "replay_alarms_right": ("real outcomes: alarms right", ">="),
    "replay_dead_ends_caught": ("real outcomes: dead ends caught", ">="),
}
"""Each target's label and direction; the bounds are `TARGETS`."""


def target_checks(
    result: Detection, tokens_p95: float, real: RealSetResult | None = None, replay: ReplayArmResult | None = None
) -> list[TargetCheck]:
    """Every target with arm 2's figure (held-back split; the real set's when it ran; the real
    corpus's replay when it ran) and whether it is met. With the replay, its targets judge and the
    synthetic arms' are coverage (`judge=False`)."""
    figures: dict[TargetName, float] = {
        "precision": result.precision,
        "recall": result.recall,
        "false_repeat_rate": result.false_repeat_rate,
        "tokens_p95": tokens_p95,
    }
    if real is not None:
        right, traps = real.traps
        figures |= {
            "real_precision": real.detection.precision,
            "real_recall": real.detection.recall,
            "real_traps": right / traps if traps else 1.0,
        }
    total = replay.report.total if replay is not None else None
    if total is not None:  # no judged alarm or no dead end is a figure of 0: nothing was shown right
        figures |= {
            "replay_alarms_right": total.verdict.alarms_right or 0.0,
            "replay_dead_ends_caught": total.verdict.dead_ends_caught_rate or 0.0,
        }
    checks = []
    for name, (label, comparison) in TARGET_BOUNDS.items():
        if name not in figures:
            continue
        target, figure = float(TARGETS[name]), float(figures[name])
        met = figure >= target if comparison == ">=" else figure <= target
        judge = total is None or name.startswith("replay_")
        checks.append(
            TargetCheck(
                name=name, label=label, comparison=comparison, target=target, figure=figure, met=met, judge=judge
            )
        )
    if total is not None:
        naive = total.naive.alarms_right or 0.0
        figure = total.verdict.alarms_right or 0.0
        checks.append(
            TargetCheck(
                name="replay_alarms_right_over_naive",
                label="real outcomes: alarms right above the naive rule's",
                comparison=">",
                target=naive,
                figure=figure,
                met=figure > naive,
            )
        )
    return checks


def shown_figure(check: TargetCheck) -> str:
    """A figure as the report prints it: tokens whole, rates to three places."""
    return f"{check.figure:.0f}" if check.name == "tokens_p95" else f"{check.figure:.3f}"


LATENCY_FLOOR_MS: Final = 0.001
"""The latency plot's log axis starts here; a faster stage is drawn at it (its label says the value)."""
PLOTS: Final = ("precision_recall_threshold.png", "context_size.png", "latency.png")


@dataclass(frozen=True, slots=True)
class ReportInputs:
    """Everything the report shows."""

    seed: int
    backend: str
    cases: tuple[QualificationCase, ...]
    runs: dict[ArmName, tuple[ArmRun, ...]]
    """Per arm, one run per case in `cases` order, decided with `chosen` thresholds."""
    defaults: RouteThresholds
    chosen: RouteThresholds
    sweep: tuple[SweepPoint, ...]
    plots_written: bool


def render_report(inputs: ReportInputs) -> str:
    """The whole report as Markdown."""
    cases = inputs.cases
    held = [i for i, case in enumerate(cases) if case.split == "test"]
    train = [i for i, case in enumerate(cases) if case.split == "train"]
    lines = [
        "# Stage 0 qualification: obelisk-session-evidence",
        "",
        f"- Seed {inputs.seed}; history backend `{inputs.backend}`; {len(cases)} cases "
        f"({sum(not c.hand_written for c in cases)} generated, {sum(c.hand_written for c in cases)} hand-written).",
        f"- Training split {len(train)} cases (thresholds calibrated here only); held-back split {len(held)} "
        "cases (every number below is from it unless marked). Hand-written cases are all held back.",
        "- A case is a repeated route when its labelled verdict is `repeats_prior_failure` or "
        "`repeats_prior_attempt`; precision and recall are over that label.",
        "",
        "## Targets (arm 2, held-back split)",
        "",
        *_targets_table(inputs, held),
        "",
        "## Thresholds",
        "",
        "Calibrated on the training split only (arm 2): each threshold in turn, the others held, takes the "
        "value with the best F1 averaged with its neighbours, among values where it and its more lenient "
        f"neighbour keep the false-repeat rate at most {MAX_FALSE_REPEAT_RATE:.0%}; ties go to the stricter value.",
        "",
        "| threshold | runs decided with | chosen |",
        "|---|---:|---:|",
        *[
            f"| `{name}` | {value} | {getattr(inputs.chosen, name)} |"
            for name, value in inputs.defaults.report().items()
        ],
        "",
        "## Repeated-route detection per arm",
        "",
        *_detection_table(inputs, held, "held-back"),
        "",
        *_detection_table(inputs, train, "training (for reference)"),
        "",
        "## Paraphrased repeats (the gap LoopX's exact ids leave)",
        "",
        *_paraphrase_table(inputs, held),
        "",
        "## Verdicts per family (held-back, correct / cases)",
        "",
        *_family_table(inputs, held),
        "",
        "## Private context per admitted query (all splits)",
        "",
        *_context_table(inputs),
        "",
        "## Freshness and scope (all splits)",
        "",
        *_safety_table(inputs),
        "",
        "## Arm 2 misses on the held-back split",
        "",
        *_misses(inputs, held),
        "",
        "## Plots",
        "",
        *(
            [f"![{name}]({name})" for name in PLOTS]
            if inputs.plots_written
            else ["Plots skipped: matplotlib is not installed (install the `qualify` extra)."]
        ),
        "",
        "## Latency per stage (ms, all cases; varies between runs)",
        "",
        *_latency_table(inputs),
        "",
    ]
    return "\n".join(lines)


def _subset(runs: Sequence[ArmRun], indexes: Sequence[int]) -> list[ArmRun]:
    return [runs[i] for i in indexes]


def _targets_table(inputs: ReportInputs, held: list[int]) -> list[str]:
    cases = [inputs.cases[i] for i in held]
    result = detection(cases, _subset(inputs.runs["admitted_retrieval"], held))
    tokens_p95 = context_size(inputs.runs["admitted_retrieval"]).tokens_p95
    table = ["| measure | target | arm 2 | met |", "|---|---|---:|---|"]
    for check in target_checks(result, tokens_p95):
        target = f"{check.comparison} {TARGETS[check.name]}"
        table.append(f"| {check.label} | {target} | {shown_figure(check)} | {'yes' if check.met else 'NO'} |")
    return table


def _detection_table(inputs: ReportInputs, indexes: list[int], label: str) -> list[str]:
    cases = [inputs.cases[i] for i in indexes]
    table = [
        f"Split: {label}, {len(cases)} cases, {sum(c.repeated_route for c in cases)} repeated routes.",
        "",
        "| arm | precision | recall | F1 | false-repeat | false-novelty | verdict right | outcomes right |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for arm in ARMS:
        r = detection(cases, _subset(inputs.runs[arm], indexes))
        table.append(
            f"| {ARM_TITLES[arm]} | {r.precision:.3f} | {r.recall:.3f} | {r.f1:.3f} | {r.false_repeat_rate:.3f} "
            f"| {r.false_novelty_rate:.3f} | {r.verdict_correct}/{r.cases} | {r.outcomes_correct}/{r.cases} |"
        )
    return table


def _paraphrase_table(inputs: ReportInputs, held: list[int]) -> list[str]:
    groups = {
        "exact repeats": [i for i in held if inputs.cases[i].repeated_route and not inputs.cases[i].paraphrased],
        "paraphrased repeats": [i for i in held if inputs.cases[i].repeated_route and inputs.cases[i].paraphrased],
    }
    table = [
        "| repeats | cases | " + " | ".join(f"arm {n} recall" for n in (1, 2, 3)) + " |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, indexes in groups.items():
        cases = [inputs.cases[i] for i in indexes]
        recalls = [detection(cases, _subset(inputs.runs[arm], indexes)).recall for arm in ARMS]
        table.append(f"| {name} | {len(cases)} | " + " | ".join(f"{r:.3f}" for r in recalls) + " |")
    return table


def _family_table(inputs: ReportInputs, held: list[int]) -> list[str]:
    families: dict[str, list[int]] = {}
    for i in held:
        family = "hand-written" if inputs.cases[i].hand_written else inputs.cases[i].family
        families.setdefault(family, []).append(i)
    table = ["| family | expected verdicts | arm 1 | arm 2 | arm 3 |", "|---|---|---:|---:|---:|"]
    for family in sorted(families):
        indexes = families[family]
        expected = ", ".join(sorted({inputs.cases[i].expected_verdict for i in indexes}))
        right = [sum(inputs.runs[arm][i].verdict == inputs.cases[i].expected_verdict for i in indexes) for arm in ARMS]
        table.append(f"| {family} | {expected} | " + " | ".join(f"{n}/{len(indexes)}" for n in right) + " |")
    return table


def _context_table(inputs: ReportInputs) -> list[str]:
    table = [
        "| arm | lookups | tokens p50 | p95 | max | chars p50 | p95 | max | truncated |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for arm in ARMS:
        c = context_size(inputs.runs[arm])
        table.append(
            f"| {ARM_TITLES[arm]} | {c.queries} | {c.tokens_p50:.0f} | {c.tokens_p95:.0f} | {c.tokens_max:.0f} "
            f"| {c.chars_p50:.0f} | {c.chars_p95:.0f} | {c.chars_max:.0f} | {c.truncation_rate:.1%} |"
        )
    return table


def _safety_table(inputs: ReportInputs) -> list[str]:
    table = [
        "| arm | freshness right | scope rejections (expected) | unexpected rejections"
        " | `novel` on a non-fresh index |",
        "|---|---:|---:|---:|---:|",
    ]
    for arm in ARMS:
        s = safety(inputs.cases, inputs.runs[arm])
        table.append(
            f"| {ARM_TITLES[arm]} | {s.freshness_correct}/{s.freshness_checked} "
            f"| {s.scope_rejections}/{s.scope_rejections_expected} | {s.unexpected_scope_rejections} "
            f"| {s.novel_on_unfresh_index} |"
        )
    return table


def _misses(inputs: ReportInputs, held: list[int]) -> list[str]:
    rows = []
    for i in held:
        case, run = inputs.cases[i], inputs.runs["admitted_retrieval"][i]
        if run.verdict != case.expected_verdict or tuple(run.outcomes) != tuple(case.expected_outcomes):
            rows.append(
                f"| `{case.case_id}` | {case.expected_verdict} {list(case.expected_outcomes)} "
                f"| {run.verdict} {list(run.outcomes)} |"
            )
    if not rows:
        return ["None."]
    return ["| case | expected | arm 2 |", "|---|---|---|", *rows]


def _latency_table(inputs: ReportInputs) -> list[str]:
    table = ["| arm | stage | p50 | p95 |", "|---|---|---:|---:|"]
    for arm in ARMS:
        for stage, (p50, p95) in stage_latency(inputs.runs[arm]).items():
            table.append(f"| {arm} | {stage} | {p50:.3f} | {p95:.3f} |")
    return table


def write_plots(out_dir: Path, inputs: ReportInputs) -> bool:
    """Write the three PNGs; False when matplotlib is missing. Every bar carries its value, every
    target is a labelled line, and each title states the figure the plot is about."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    metadata = {"Software": None}
    held = [i for i, case in enumerate(inputs.cases) if case.split == "test"]
    arm2 = detection([inputs.cases[i] for i in held], _subset(inputs.runs["admitted_retrieval"], held))

    figure, axes = plt.subplots(1, 3, figsize=(14, 4.6), sharey=True)
    target_lines = (
        ("precision", "C0", "precision target"),
        ("recall", "C1", "recall target"),
        ("false_repeat_rate", "C2", "false-repeat target"),
    )
    for axis, name in zip(axes, ("command_repeat", "hypothesis_repeat", "blocker_repeat"), strict=False):
        points = [p for p in inputs.sweep if p.threshold == name]
        values = [p.value for p in points]
        axis.plot(values, [p.precision for p in points], marker="o", color="C0", label="precision")
        axis.plot(values, [p.recall for p in points], marker="s", color="C1", label="recall")
        axis.plot(values, [p.false_repeat_rate for p in points], marker="^", color="C2", label="false-repeat rate")
        for target, color, label in target_lines:
            axis.axhline(TARGETS[target], color=color, linestyle=":", linewidth=1, label=f"{label} {TARGETS[target]}")
        axis.axvline(getattr(inputs.chosen, name), color="grey", linestyle="--", label="chosen")
        axis.set_title(f"{name} (chosen {getattr(inputs.chosen, name)})", fontsize=10)
        axis.set_xlabel("threshold")
        axis.set_ylim(-0.04, 1.06)  # a rate of exactly 0 or 1 stays in view, not on the frame
    axes[0].set_ylabel("held-back split, arm 2")
    axes[0].legend(loc="center left", fontsize=7)
    figure.suptitle(
        f"Arm 2 at the chosen thresholds: precision {arm2.precision:.3f}, recall {arm2.recall:.3f}, "
        f"false-repeat rate {arm2.false_repeat_rate:.3f}"
    )
    figure.tight_layout()
    figure.savefig(out_dir / PLOTS[0], metadata=metadata)
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(8, 4.6))
    series = [[run.context_tokens or 0 for run in inputs.runs[arm]] for arm in ARMS]
    p95s = [context_size(inputs.runs[arm]).tokens_p95 for arm in ARMS]
    axis.boxplot(series, showfliers=True)
    axis.set_xticks([1, 2, 3], [ARM_TITLES[arm].split(" (")[0] for arm in ARMS])
    axis.axhline(
        TARGETS["tokens_p95"],
        color="C3",
        linestyle="--",
        label=f"arm 2's target: p95 <= {TARGETS['tokens_p95']} tokens (arms 1 and 3 are baselines, not judged)",
    )
    axis.scatter([1, 2, 3], p95s, marker="D", color="C3", zorder=3, label="p95 per arm")
    for position, p95 in enumerate(p95s, start=1):
        axis.annotate(
            f"p95 {p95:,.0f}", (position, p95), xytext=(8, 0), textcoords="offset points", va="center", fontsize=8
        )
    axis.set_ylabel("private context per query (tokens)")
    axis.set_title(f"Arm 2 private context p95: {p95s[1]:,.0f} tokens (target <= {TARGETS['tokens_p95']:,})")
    axis.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    figure.savefig(out_dir / PLOTS[1], metadata=metadata)
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(10, 4.8))
    history_arms: tuple[ArmName, ...] = ("admitted_retrieval", "full_history")
    latencies = {arm: stage_latency(inputs.runs[arm]) for arm in history_arms}
    stages = [stage for stage in STAGE_ORDER if any(stage in latency for latency in latencies.values())]
    width = 0.4
    for offset, (arm, latency) in zip((-width / 2, width / 2), latencies.items(), strict=False):
        bars = axis.bar(
            [k + offset for k in range(len(stages))],
            [max(latency[stage][1], LATENCY_FLOOR_MS) if stage in latency else 0.0 for stage in stages],
            width,
            label=f"{ARM_TITLES[arm].split(' (')[0]}: p95 per stage",
        )
        axis.bar_label(
            bars, labels=[f"{latency[s][1]:.3g}" if s in latency else "" for s in stages], fontsize=7, padding=2
        )
        for k, stage in enumerate(stages):
            if stage not in latency:  # no bar to label: say why
                axis.text(k + offset, LATENCY_FLOOR_MS * 1.3, "not run", ha="center", fontsize=7, rotation=90)
    axis.set_xticks(range(len(stages)), stages, rotation=20)
    total = sum(p95 for _, p95 in latencies["admitted_retrieval"].values())
    tallest = max((p95 for latency in latencies.values() for _, p95 in latency.values()), default=1.0)
    # No target line: the report judges no stage time (a whole decision's p95 is judged by the
    # benchmarks, in a warm process, not by these cold, per-stage timings).
    axis.set_yscale("log")
    axis.set_ylim(LATENCY_FLOOR_MS, max(tallest, LATENCY_FLOOR_MS) * 6)  # room for the tallest bar's label
    axis.set_ylabel("ms, p95 over cases (log scale)")
    axis.set_title(f"Per-stage latency p95 (not a judged target); arm 2's stages sum to {total:.1f} ms")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out_dir / PLOTS[2], metadata=metadata)
    plt.close(figure)
    return True
