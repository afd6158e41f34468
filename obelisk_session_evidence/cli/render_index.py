"""Text renderings of `index refresh` and `index status` for people; JSON renderings are the contracts."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from obelisk_session_evidence.contracts.index_status import IndexStatus, RefreshReport


@contextmanager
def refresh_progress(console: Console) -> Iterator[Callable[[int, int], None]]:
    """A progress bar over session files; yields the callback `refresh_index` takes."""
    columns = (
        TextColumn("indexing sessions"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("refresh", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance


def render_refresh_report(report: RefreshReport, console: Console) -> None:
    """What one refresh did: files by outcome, rows written, the resulting freshness and revision."""
    table = Table(title="Native index refresh", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row(
        "files",
        f"{report.files_seen} seen: {report.files_added} added, {report.files_appended} appended, "
        f"{report.files_reread} re-read, {report.files_unchanged} unchanged, "
        f"{report.files_deleted} deleted, {report.files_failed} failed",
    )
    table.add_row(
        "rows written",
        f"{report.messages_written} messages, {report.tool_calls_written} tool calls, "
        f"{report.summaries_written} summaries ({report.skipped_records} records skipped)",
    )
    table.add_row("read", f"{report.bytes_read / 1e6:.1f} MB in {report.seconds:.2f} s")
    if report.parser_workers:
        table.add_row("parsed ahead", f"{report.files_parsed_ahead} files by {report.parser_workers} workers")
    table.add_row("roots", f"{report.roots} ({report.unreadable_roots} unreadable)")
    table.add_row("freshness", report.freshness)
    table.add_row("index revision", report.index_revision)
    console.print(table)


def render_index_status(status: IndexStatus, console: Console) -> None:
    """Counts, freshness, revision and size, then one line per root."""
    if not status.exists:
        console.print("no native index yet: run `obelisk-session-evidence index refresh`.")
        return
    table = Table(title="Native index", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row("freshness", status.freshness)
    table.add_row("index revision", status.index_revision)
    table.add_row(
        "contents",
        f"{status.files} files, {status.sessions} sessions, {status.messages} messages, "
        f"{status.tool_calls} tool calls ({status.failed_tool_calls} failed), {status.summaries} summaries",
    )
    table.add_row(
        "evidence types", ", ".join(f"{kind} {n}" for kind, n in status.evidence_type_counts.items()) or "none"
    )
    table.add_row("files that failed to parse", str(status.failures))
    table.add_row("records skipped", str(status.skipped_records))
    table.add_row("size on disk", f"{status.size_bytes / 1e6:.1f} MB")
    table.add_row("last refresh", status.last_refresh_at.isoformat() if status.last_refresh_at else "never")
    console.print(table)
    if status.roots:
        roots = Table(title="Roots")
        for column in ("source", "path", "state", "files", "failed"):
            roots.add_column(column)
        for root in status.roots:
            roots.add_row(root.source, root.path, root.state, str(root.files), str(root.failed_files))
        console.print(roots)
