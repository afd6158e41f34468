"""The text rendering of `qualify` for people; `--format json` prints the summary's fields."""

from rich.console import Console
from rich.table import Table

from obelisk_session_evidence.contracts.qualification import QualificationSummary
from obelisk_session_evidence.qualify.report import shown_figure


def render_qualification(summary: QualificationSummary, console: Console) -> None:
    """Arm 2's headline on the held-back split, the chosen thresholds, and where the report is."""
    table = Table(title="Stage 0 qualification (arm 2, held-back split)", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row("cases", f"{summary.cases} ({summary.held_back} held back)")
    table.add_row("precision / recall / F1", f"{summary.precision:.3f} / {summary.recall:.3f} / {summary.f1:.3f}")
    table.add_row("false-repeat rate", f"{summary.false_repeat_rate:.3f}")
    table.add_row("p95 private context", f"{summary.tokens_p95:.0f} tokens")
    table.add_row("thresholds", ", ".join(f"{name}={value}" for name, value in summary.thresholds.items()))
    if summary.real_cases:
        table.add_row(
            "real set (hand-labelled)",
            f"{summary.real_cases} cases: precision {summary.real_precision:.3f}, recall {summary.real_recall:.3f}, "
            f"traps {summary.real_traps_right}/{summary.real_traps}",
        )
    if summary.replay_calls:
        table.add_row(
            "real outcomes (replay, arm 2)",
            f"{summary.replay_calls} calls: alarms right {_rate(summary.replay_alarms_right)} (naive rule "
            f"{_rate(summary.replay_naive_alarms_right)}), dead ends caught {_rate(summary.replay_dead_ends_caught)}, "
            f"repeated dead-end rate {_rate(summary.replay_dead_end_rate)}",
        )
        table.add_row(
            "real outcomes (arm 1, own session)",
            f"alarms right {_rate(summary.replay_within_session_alarms_right)}, dead ends caught "
            f"{_rate(summary.replay_within_session_dead_ends_caught)}",
        )
        table.add_row(
            "context (arm 2 / arm 3)",
            f"p95 {summary.replay_private_tokens_p95} tokens, truncated {_rate(summary.replay_truncation_rate)} / "
            f"full history p95 {summary.replay_full_history_tokens_p95} tokens",
        )
    judging = [check for check in summary.targets if check.judge]
    missed = [check for check in judging if not check.met]
    table.add_row("targets", "all met" if not missed else f"{len(missed)} of {len(judging)} NOT met")
    for check in missed:
        table.add_row("missed", f"{check.label}: {shown_figure(check)}, target {check.comparison} {check.target:g}")
    coverage = [check for check in summary.targets if not check.judge and not check.met]
    for check in coverage:
        table.add_row("coverage", f"{check.label}: {shown_figure(check)}, target {check.comparison} {check.target:g}")
    table.add_row("report", summary.report_path)
    console.print(table)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
