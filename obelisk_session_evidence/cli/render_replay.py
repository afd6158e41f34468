"""The text rendering of `replay` for people: one table per scope and the total, and a progress bar."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from obelisk_session_evidence.contracts.replay import ReplayFigures, ReplayReport, RuleFigures


@contextmanager
def replay_progress(*, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar over replayed calls on stderr (none for machine output)."""
    if not enabled:
        yield None
        return
    columns = (TextColumn("replaying calls"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("replay", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance


def render_replay(report: ReplayReport, console: Console) -> None:
    """Each scope's figures, then the total and whether the targets are met."""
    for scope in report.scopes:
        title = f"{scope.agent_id} / {scope.project_id} / {scope.repository_id} ({scope.freshness})"
        console.print(_figures_table(title, scope.figures))
        console.print(
            f"  {scope.tool_calls} tool calls ({scope.figures.calls} shell calls replayed, "
            f"{sum(scope.other_tool_calls.values())} other, {scope.undated_calls} undated); "
            f"{len(scope.false_alarms)} false alarms and {len(scope.missed_dead_ends)} missed dead ends listed; "
            f"{scope.calls_per_second or 0:.0f} calls/s"
        )
    if report.total is not None and len(report.scopes) > 1:
        console.print(_figures_table("all scopes", report.total))
    targets = ", ".join(f"{name} ≥ {value:g}" for name, value in report.targets.items())
    verdict = "met" if report.targets_met else "NOT met"
    console.print(f"targets ({targets}, alarms right above the naive rule's): {verdict}")


def _figures_table(title: str, found: ReplayFigures) -> Table:
    table = Table(title=title)
    table.add_column("")
    for column in ("alarms", "right", "false", "alarms right", "dead ends caught"):
        table.add_column(column, justify="right")
    rows = [
        ("verdict", found.verdict, found.dead_ends),
        ("naive rule", found.naive, found.dead_ends),
        ("verdict, within session", found.within_session.verdict, found.within_session.dead_ends),
        ("verdict, across sessions", found.across_sessions.verdict, found.across_sessions.dead_ends),
    ]
    for label, rule, dead_ends in rows:
        table.add_row(label, *_rule_cells(rule, dead_ends))
    rate = found.repeated_dead_end_rate
    table.caption = (
        f"{found.calls} calls, {found.outcomes['failed']} failed; {found.dead_ends} dead ends "
        f"(repeated dead-end rate {'-' if rate is None else f'{rate:.3f}'})"
    )
    return table


def _rule_cells(rule: RuleFigures, dead_ends: int) -> tuple[str, ...]:
    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    return (
        str(rule.alarms),
        str(rule.true_alarms),
        str(rule.false_alarms),
        shown(rule.alarms_right),
        f"{rule.dead_ends_caught}/{dead_ends} ({shown(rule.dead_ends_caught_rate)})",
    )
