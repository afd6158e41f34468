"""Text renderings of the lifecycle outcomes for people; JSON renderings are the contracts."""

from rich.console import Console
from rich.table import Table

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.lifecycle import (
    AllowedScope,
    DisableOutcome,
    EnableOutcome,
    IndexDropOutcome,
    IndexHealth,
    LifecycleStatus,
    ProviderHealth,
)

_NEXT_STEPS = {
    "not_enabled": "obelisk-session-evidence enable --surface replan-history --agent-id A --project-id P"
    " --repository-id R --repo-root PATH",
    "index_absent": "obelisk-session-evidence index refresh (it reads the enabled scopes' session folders;"
    " or let the first lookup build it)",
    "index_not_refreshed": "obelisk-session-evidence index refresh (it reads the enabled scopes' session folders)",
    "index_incomplete": (
        "obelisk-session-evidence index status: a session folder was unreadable or a file failed to parse"
    ),
    "provider_unavailable": "install Obelisk, or re-run enable with --obelisk-bin PATH",
}
"""What to do about the most common reasons a scope is not healthy."""


def render_enable(outcome: EnableOutcome, console: Console) -> None:
    """The recorded enablement and the provider's health now."""
    table = Table(title=f"Enabled ({outcome.change})", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    _enablement_rows(table, outcome.enablement)
    table.add_row("provider", _provider_line(outcome.provider))
    console.print(table)
    if outcome.provider.state != "available":
        console.print(
            "The enablement is recorded; until the provider is available, lookups return a typed empty result."
        )
    for skipped in outcome.skipped_sources:
        console.print(f"skipped {skipped.source}: no session folder at {skipped.folder}", soft_wrap=True)
    found = outcome.enablement.sources_found
    unused = [source for source in outcome.enablement.sources if found is not None and source not in found]
    if unused:
        console.print(
            f"not used until their session folder exists: {', '.join(unused)} (nothing there to read yet)",
            soft_wrap=True,
        )


def render_status(report: LifecycleStatus, console: Console) -> None:
    """One table per matching scope, then what stays denied."""
    verdict = "healthy" if report.healthy else f"not healthy ({report.reason_code})"
    console.print(
        f"{report.provider_id} {report.version} · project {report.project_id}"
        f"{f' · agent {report.agent_id}' if report.agent_id else ''}: {verdict}",
        soft_wrap=True,
    )
    if report.config_state == "config_invalid":
        console.print(f"configuration invalid: {report.config_detail}", soft_wrap=True)
    elif not report.scopes:
        console.print("not enabled: admission is off for this scope.", soft_wrap=True)
    for scope in report.scopes:
        table = Table(title=f"{_scope_line(scope.allowed_scope)} · {scope.reason_code}", show_header=False)
        table.add_column("field", style="bold")
        table.add_column("value")
        _enablement_rows(table, scope.enablement)
        table.add_row("denied triggers", ", ".join(scope.denied_triggers) or "none")
        table.add_row("provider", _provider_line(scope.provider))
        table.add_row("index", _index_line(scope.index))
        if scope.index.location:
            table.add_row("index file", scope.index.location)
        if scope.index.detail:
            table.add_row("index next", scope.index.detail)
        console.print(table)
    causes = [cause for scope in report.scopes for cause in _incomplete_causes(scope.index)]
    details = [s.index.detail for s in report.scopes if s.reason_code == report.reason_code and s.index.detail]
    if report.reason_code == "index_incomplete" and causes:
        for cause in causes:
            console.print(f"next: {cause}", soft_wrap=True)
    elif details:
        console.print(f"next: {details[0]}", soft_wrap=True)
    elif report.reason_code in _NEXT_STEPS:
        console.print(f"next: {_NEXT_STEPS[report.reason_code]}", soft_wrap=True)
    console.print(
        f"spool: {report.spooled_situations} situation(s) held, each kept {report.spool_retention_hours} h",
        soft_wrap=True,
    )
    denied = ", ".join(d.scope.replace("_", "-") for d in report.denied_scopes)
    console.print(f"denied in v0: {denied} (scope_broadening_not_qualified)", soft_wrap=True)


def _incomplete_causes(index: IndexHealth) -> list[str]:
    """What makes the index incomplete for a scope, folder by folder, and what to do about it."""
    causes = []
    for root in index.incomplete_roots:
        if root.state == "missing":
            causes.append(
                f"the {root.source} session folder {root.path} is missing, and the index keeps what it"
                " held: restore or remount it; or, if it is gone for good, run `enable` again without"
                " --source, which binds only the folders that exist"
            )
        elif root.state == "unreadable":
            causes.append(f"the {root.source} session folder {root.path} cannot be listed: check its permissions")
        if root.failed_files:
            causes.append(
                f"{root.failed_files} file(s) under {root.path} failed to parse: `obelisk-session-evidence"
                " index status` lists the failures; a later refresh retries them"
            )
    return causes


def render_disable(outcome: DisableOutcome, console: Console) -> None:
    """Which scopes stopped; a reminder that nothing else was deleted."""
    if not outcome.removed:
        console.print(f"not enabled: nothing to disable for project {outcome.project_id}.", soft_wrap=True)
    for scope in outcome.removed:
        console.print(f"disabled {_scope_line(scope)}", soft_wrap=True)
    console.print(
        f"{outcome.remaining_enablements} other enablement(s) remain. The index and session files"
        " were not touched; `index drop --yes` deletes the native index.",
        soft_wrap=True,
    )


def render_index_drop(outcome: IndexDropOutcome, console: Console) -> None:
    """How much of the native index folder was removed."""
    if outcome.reason_code == "index_absent":
        console.print("no native index to drop.")
    else:
        console.print(
            f"dropped the native index: {outcome.removed_files} file(s), {outcome.removed_bytes} bytes."
            " Session files and Obelisk data were not touched."
        )


def _enablement_rows(table: Table, enablement: Enablement) -> None:
    historical = set(enablement.historical_repo_roots)
    roots = [f"{root} (historical)" if root in historical else root for root in enablement.repo_roots]
    source_roots = [f"{source}={root}" for source, root in enablement.source_roots.items()]
    table.add_row("scope", _scope_line_of(enablement))
    table.add_row("surface", enablement.surface)
    table.add_row("repo roots", "\n".join(roots) or "none")
    table.add_row("sources", ", ".join(enablement.sources))
    table.add_row("source roots", "\n".join(source_roots) or "defaults")
    table.add_row("triggers", f"{', '.join(enablement.triggers)} ({_GRANTS[enablement.trigger_grant]})")
    days = enablement.history_window_days
    table.add_row("history window", "all history" if days is None else f"the last {days} days")
    table.add_row("last replay", _replay_line(enablement))
    table.add_row("backend", enablement.provider + (f" ({enablement.obelisk_bin})" if enablement.obelisk_bin else ""))
    if enablement.obelisk_home:
        table.add_row("obelisk home", enablement.obelisk_home)
    table.add_row("enabled at", enablement.enabled_at.isoformat())


_GRANTS = {
    "operator": "named by the operator: admitted without qualification",
    "stage_1": "Stage 1: automatic triggers wait for a replay that meets its targets",
    "replay_qualified": "admitted by a replay of this scope's history",
}


def _replay_line(enablement: Enablement) -> str:
    replay = enablement.replay
    if replay is None:
        return "never (obelisk-session-evidence replay --project-id ...)"

    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    return (
        f"{replay.measured_at.isoformat()}: {replay.calls} calls, {replay.dead_ends} dead ends; alarms right "
        f"{shown(replay.alarms_right)} (naive {shown(replay.naive_alarms_right)}), dead ends caught "
        f"{shown(replay.dead_ends_caught)}; targets {'met' if replay.targets_met else 'not met'}"
    )


def _scope_line(scope: AllowedScope) -> str:
    return f"agent {scope.agent_id} · project {scope.project_id} · repository {scope.repository_id}"


def _scope_line_of(enablement: Enablement) -> str:
    return f"agent {enablement.agent_id} · project {enablement.project_id} · repository {enablement.repository_id}"


def _provider_line(provider: ProviderHealth) -> str:
    version = f" {provider.provider_version}" if provider.provider_version else ""
    return f"{provider.kind}{version}: {provider.state} ({provider.reason_code})"


def _index_line(index: IndexHealth) -> str:
    revision = f", revision {index.index_revision}" if index.index_revision else ""
    counts = ", ".join(f"{name} {count}" for name, count in index.counts.items())
    return f"{index.freshness}{revision}{f'; {counts}' if counts else ''} ({index.reason_code})"
