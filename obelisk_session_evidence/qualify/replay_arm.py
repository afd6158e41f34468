"""The real arm judged by outcome: `replay` over the project's real corpus, RFC §10's three arms on
identical calls (`qualify`'s judge; the synthetic arms stay as coverage).

The corpus is laid out as agents keep it, one enablement per repository group (`replay_corpus`),
and every shell call is decided on the history strictly before it, as `replay` does, with the
thresholds the product ships. On the same calls:

1. within-session evidence only: the call decided on its own session alone (`AsOf(own_session_only=True)`),
   what LoopX's current context already holds;
2. retrieval admitted: the normal as-of cut, through the whole pipeline (its private context size
   and truncation are what this arm pays);
3. the full history as cost ceiling: the tokens of every in-scope entry before the call, what a
   prompt holding the whole history would pay (no decision: its verdict could only be arm 2's with
   more to read).

Each arm's alarms are judged by what the call really did, beside the naive rule; the figures are
content-free (counts, rates, tokens, milliseconds).
"""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.contracts.replay import REPLAY_TARGETS, ReplayReport, RuleFigures
from obelisk_session_evidence.qualify.native import claim_workdir
from obelisk_session_evidence.qualify.real_cases import RepositoryGroup, repository_groups
from obelisk_session_evidence.qualify.replay_corpus import lay_out_corpus
from obelisk_session_evidence.replay import replay_history, replay_one_scope, targets_met
from obelisk_session_evidence.replay.tally import JudgedCall, arm_rule, percentile
from obelisk_session_evidence.stages.cap_by_tokens import TokenEncoder
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private

MARKER: Final = ".obelisk-qualify-replay-workdir"


@dataclass(frozen=True, slots=True)
class ReplayArmResult:
    """The real corpus replayed: arm 2's report, arm 1's alarms, arm 3's cost, on identical calls."""

    report: ReplayReport
    """Arm 2 (retrieval admitted), per scope and in total, with the naive rule beside it."""
    within_session: RuleFigures
    """Arm 1: the verdict on the call's own session alone, judged over every dead end."""
    private_tokens_p95: int
    """Arm 2: 95th percentile of the capped private context, in tokens."""
    truncation_rate: float | None
    """Arm 2: share of decisions whose private result was cut."""
    full_history_tokens_p50: int
    full_history_tokens_p95: int
    full_history_tokens_max: int
    """Arm 3: tokens of the whole in-scope history before each call."""
    decide_ms_p95: float
    """Arm 2: 95th percentile of one decision's wall time."""
    within_session_decide_ms_p95: float
    """Arm 1: the same for the own-session decision."""
    seconds: float
    """Wall time of the whole replay arm (layout, indexing and deciding)."""

    @property
    def targets_met(self) -> bool:
        """Alarms right and dead ends caught at their targets, alarms right above the naive rule's."""
        return self.report.total is not None and targets_met(self.report.total)


def run_replay_arm(
    *, encoder: TokenEncoder, workdir: Path, groups: dict[str, RepositoryGroup] | None = None
) -> ReplayArmResult:
    """Lay out the real corpus (`groups`: every repository group) under `workdir`, replay every
    group, and measure the three arms."""
    started = time.perf_counter()
    claim_workdir(workdir, marker_name=MARKER, holds="real-corpus replay histories (copies)")
    paths = StatePaths(workdir / "state")
    config = lay_out_corpus(groups if groups is not None else repository_groups(), workdir / "home")
    write_private(paths.config_file, config.model_dump_json().encode())

    def tokens(text: str) -> int:
        return len(encoder.encode_ordinary(text))

    runs = [replay_one_scope(paths, enablement, arms=tokens) for enablement in config.enablements]
    calls: list[JudgedCall] = [call for run in runs for call in run.judged]
    history = [call.history_size or 0 for call in calls]
    return ReplayArmResult(
        report=replay_history(runs),
        within_session=arm_rule(calls, lambda call: bool(call.own_alarm)),
        private_tokens_p95=int(percentile([call.private_tokens for call in calls], 95)),
        truncation_rate=round(sum(call.truncated for call in calls) / len(calls), 4) if calls else None,
        full_history_tokens_p50=int(percentile(history, 50)),
        full_history_tokens_p95=int(percentile(history, 95)),
        full_history_tokens_max=max(history, default=0),
        decide_ms_p95=round(percentile([call.decide_ms for call in calls], 95), 2),
        within_session_decide_ms_p95=round(percentile([call.own_decide_ms or 0.0 for call in calls], 95), 2),
        seconds=round(time.perf_counter() - started, 1),
    )


def render_replay_section(result: ReplayArmResult) -> list[str]:
    """The report's replay section: the three arms on identical calls, the targets, per scope."""
    total = result.report.total
    lines = [
        "## Real outcomes: the real corpus replayed (the judge; RFC §10's three arms on identical calls)",
        "",
    ]
    if total is None or not total.calls:
        return [*lines, "No shell call to replay in the real corpus.", ""]
    naive, verdict, within = total.naive, total.verdict, result.within_session
    lines += [
        f"- {total.calls} shell calls of {len(result.report.scopes)} repository groups, each decided on the history"
        f" strictly before it; {total.outcomes['failed']} failed. {total.reruns_of_failure} re-ran a command whose"
        f" last run failed; {total.dead_ends} failed again (dead ends): repeated dead-end rate"
        f" {_rate(total.repeated_dead_end_rate)} ({total.within_session.dead_ends} within the session,"
        f" {total.across_sessions.dead_ends} across sessions).",
        "",
        "| arm | alarms | right | false | alarms right | dead ends caught | private context p95 (tokens) |"
        " truncated | decision p95 (ms) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        _arm_row(
            "1 within-session evidence only", within, total.dead_ends, "-", "-", result.within_session_decide_ms_p95
        ),
        _arm_row(
            "2 retrieval admitted (this pipeline)",
            verdict,
            total.dead_ends,
            str(result.private_tokens_p95),
            _rate(result.truncation_rate),
            result.decide_ms_p95,
        ),
        f"| 3 full history (cost ceiling) | - | - | - | - | - | {result.full_history_tokens_p95}"
        f" (p50 {result.full_history_tokens_p50}, max {result.full_history_tokens_max}) | - | - |",
        _arm_row("naive rule (exact re-run of a failed command)", naive, total.dead_ends, "-", "-", None),
        "",
        "| measure | target | arm 2 | naive rule | met |",
        "| --- | --- | --- | --- | --- |",
        f"| alarms right | >= {REPLAY_TARGETS['alarms_right']} and above the naive rule's"
        f" | {_rate(verdict.alarms_right)} | {_rate(naive.alarms_right)} | {_met(_right_enough(verdict, naive))} |",
        f"| dead ends caught | >= {REPLAY_TARGETS['dead_ends_caught']} | {_rate(verdict.dead_ends_caught_rate)}"
        f" | {_rate(naive.dead_ends_caught_rate)} |"
        f" {_met(_at_least(verdict.dead_ends_caught_rate, REPLAY_TARGETS['dead_ends_caught']))} |",
        "",
        "| repository group | calls | dead ends | arm 2 alarms right | arm 2 dead ends caught | naive alarms right |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for scope in result.report.scopes:
        found = scope.figures
        lines.append(
            f"| {scope.project_id} | {found.calls} | {found.dead_ends} | {_rate(found.verdict.alarms_right)}"
            f" | {_rate(found.verdict.dead_ends_caught_rate)} | {_rate(found.naive.alarms_right)} |"
        )
    lines += [
        "",
        "An alarm is right when its call failed again, false when it succeeded (calls that never ran or recorded"
        " nothing are not judged); a dead end is a re-run of a command whose last run failed that failed again."
        " Arm 3's cost is the tokens of every in-scope entry before the call (o200k_base).",
        f"Replay arm wall time: {result.seconds:.0f} s (layout, indexing and two decisions per call).",
        "",
    ]
    return lines


def replay_results_json(result: ReplayArmResult) -> dict[str, Any]:
    """The replay arm's part of `results.json` (no latency: the file stays reproducible)."""
    return {
        "targets": dict(REPLAY_TARGETS),
        "targets_met": result.targets_met,
        "total": result.report.total.model_dump(mode="json", exclude={"decide_ms_p95"})
        if result.report.total
        else None,
        "within_session": result.within_session.model_dump(mode="json"),
        "private_tokens_p95": result.private_tokens_p95,
        "truncation_rate": result.truncation_rate,
        "full_history_tokens": {
            "p50": result.full_history_tokens_p50,
            "p95": result.full_history_tokens_p95,
            "max": result.full_history_tokens_max,
        },
        "scopes": {
            scope.project_id: scope.figures.model_dump(mode="json", exclude={"decide_ms_p95"})
            for scope in result.report.scopes
        },
    }


def _arm_row(
    label: str, rule: RuleFigures, dead_ends: int, tokens: str, truncated: str, decide_ms: float | None
) -> str:
    latency = "-" if decide_ms is None else f"{decide_ms:.1f}"
    return (
        f"| {label} | {rule.alarms} | {rule.true_alarms} | {rule.false_alarms} | {_rate(rule.alarms_right)}"
        f" | {rule.dead_ends_caught}/{dead_ends} ({_rate(rule.dead_ends_caught_rate)}) | {tokens} | {truncated}"
        f" | {latency} |"
    )


def _right_enough(verdict: RuleFigures, naive: RuleFigures) -> bool:
    return _at_least(verdict.alarms_right, REPLAY_TARGETS["alarms_right"]) and (verdict.alarms_right or 0.0) > (
        naive.alarms_right or 0.0
    )


def _at_least(value: float | None, bound: float) -> bool:
    return value is not None and value >= bound


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _met(met: bool) -> str:
    return "yes" if met else "**no**"
