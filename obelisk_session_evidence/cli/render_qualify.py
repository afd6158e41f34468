"""The text rendering of `qualify` for people; `--format json` prints the summary's fields."""

from rich.console import Console
from rich.table import Table

from obelisk_session_evidence.qualify import QualificationSummary


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
            f"traps {summary.real_traps_right}/{summary.real_traps} "
            f"({'met' if summary.real_targets_met else 'NOT met'}: >= 0.95, >= 0.85, all)",
        )
    table.add_row("targets", "met" if summary.targets_met else "NOT met")
    table.add_row("report", summary.report_path)
    console.print(table)
