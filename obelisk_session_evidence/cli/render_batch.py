"""Text rendering of a batch summary for people (codes and numbers only)."""

from rich.console import Console
from rich.table import Table

from obelisk_session_evidence.contracts.batch import BatchSummary


def render_batch_summary(summary: BatchSummary, console: Console) -> None:
    """The batch's counts, latency and failures as one table."""
    table = Table(title=f"reprocess-stalled · {summary.manifest_ref[:19]}…", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row(
        "items",
        f"{summary.items} ({summary.input_count} read): {summary.decided} decided, "
        f"{summary.failed} failed, {summary.missing} missing",
    )
    table.add_row(
        "this run",
        f"{summary.processed_this_run} processed, {summary.skipped_this_run} skipped"
        + (f", {summary.items_per_second} items/s" if summary.items_per_second else ""),
    )
    if summary.latency:
        latency = summary.latency
        table.add_row(
            "latency", f"p50 {latency.p50_ms:.1f} ms, p95 {latency.p95_ms:.1f} ms, max {latency.max_ms:.1f} ms"
        )
    for title, counts in (
        ("trigger", summary.by_trigger),
        ("admission", summary.by_admission),
        ("verdict", summary.by_verdict),
        ("outcome", summary.by_outcome),
        ("retrieval", summary.by_retrieval),
        ("index freshness", summary.by_freshness),
        ("failures", summary.failures_by_reason),
        ("provider faults", summary.provider_faults_by_reason),
    ):
        table.add_row(title, ", ".join(f"{code} {n}" for code, n in counts.items()) or "none")
    console.print(table)
