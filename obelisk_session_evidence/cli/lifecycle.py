"""`enable`, `status`, `disable`: explicit, scoped, default-off, never destructive (RFC §8)."""

from pathlib import Path
from typing import Any

import click

from obelisk_session_evidence.cli.common import (
    EXIT_NOT_OK,
    format_option,
    reported_errors,
    text_console,
)
from obelisk_session_evidence.cli.render_lifecycle import (
    render_disable,
    render_enable,
    render_status,
)
from obelisk_session_evidence.contracts.base import TRIGGERS
from obelisk_session_evidence.contracts.config import MAX_HISTORY_WINDOW_DAYS
from obelisk_session_evidence.contracts.sources import SOURCE_KINDS
from obelisk_session_evidence.lifecycle.enablement import EnableRequest
from obelisk_session_evidence.lifecycle.enablement import disable as disable_scope
from obelisk_session_evidence.lifecycle.enablement import enable as enable_scope
from obelisk_session_evidence.lifecycle.enablement import status as scope_status
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

_PATH = click.Path(path_type=Path)
_NOT_QUALIFIED = "Not supported in v0: always rejected with scope_broadening_not_qualified."


@click.command()
@click.option(
    "--surface",
    required=True,
    type=click.Choice(["replan-history"]),
    help="The surface to enable (v0 serves replan-history only).",
)
@click.option(
    "--agent-id",
    "agent_ids",
    required=True,
    multiple=True,
    metavar="ID",
    help="The one agent whose own sessions may be read.",
)
@click.option("--project-id", "project_ids", required=True, multiple=True, metavar="ID", help="The one LoopX project.")
@click.option(
    "--repository-id", "repository_ids", required=True, multiple=True, metavar="ID", help="The one repository identity."
)
@click.option(
    "--repo-root",
    "repo_roots",
    multiple=True,
    type=_PATH,
    metavar="PATH",
    help="A checkout of the repository (must exist; not / or the home folder). At least"
    " one --repo-root or --historical-repo-root is required. Repeatable.",
)
@click.option(
    "--historical-repo-root",
    "historical_repo_roots",
    multiple=True,
    type=_PATH,
    metavar="PATH",
    help="A former worktree that no longer exists. Repeatable.",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Choice(SOURCE_KINDS),
    help="A session source bound to this agent (default: those whose session folder exists, else all). Repeatable.",
)
@click.option(
    "--source-root",
    "source_roots",
    multiple=True,
    metavar="SOURCE=PATH",
    help="A non-default session folder for one source (must exist). Repeatable.",
)
@click.option(
    "--provider",
    type=click.Choice(["native", "obelisk"]),
    default="native",
    show_default=True,
    help="The backend that answers lookups.",
)
@click.option("--obelisk-bin", type=_PATH, metavar="PATH", help="The Obelisk binary, when it is not on PATH.")
@click.option(
    "--obelisk-home",
    type=_PATH,
    metavar="PATH",
    help="With --provider obelisk: the folder holding Obelisk's index (obelisk.sqlite). Default:"
    " $OBELISK_HOME, else ~/.obelisk. Never built or deleted here: `obelisk --build` builds it.",
)
@click.option(
    "--trigger",
    "triggers",
    multiple=True,
    type=click.Choice(TRIGGERS),
    help="Admit only these RFC §4 triggers (default: Stage 1, operator_requested_history only). Repeatable.",
)
@click.option(
    "--history-window-days",
    type=click.IntRange(1, MAX_HISTORY_WINDOW_DAYS),
    metavar="N",
    help="Leave history older than N days out of lookups (native provider; default: no window,"
    " see docs/history-window.md).",
)
@click.option("--allow-cross-agent", is_flag=True, help=_NOT_QUALIFIED)
@click.option("--allow-cross-project", is_flag=True, help=_NOT_QUALIFIED)
@click.option("--foreign-archive", "foreign_archives", multiple=True, type=_PATH, metavar="PATH", help=_NOT_QUALIFIED)
@format_option
@stops_on_signals
def enable(output_format: str, **options: Any) -> None:  # click gives each option its declared type
    """Enable history lookups for one agent, project and repository (idempotent).

    Example: obelisk-session-evidence enable --surface replan-history --agent-id codex-main
    --project-id loopx --repository-id loopx-core --repo-root ~/src/loopx
    """
    with reported_errors():
        outcome = enable_scope(EnableRequest(**options), paths=state_paths())
    if output_format == "json":
        click.echo(outcome.model_dump_json())
    else:
        render_enable(outcome, text_console(markup=False, highlight=False))


@click.command()
@click.option("--project-id", required=True, metavar="ID", help="The LoopX project.")
@click.option("--agent-id", metavar="ID", help="One agent of the project (default: all).")
@format_option
@stops_on_signals
def status(project_id: str, agent_id: str | None, output_format: str) -> None:
    """Show configuration, provider, index freshness and the allowed and denied scope.

    Exits 0 when enabled and healthy, 2 otherwise; the reason code says why.

    Example: obelisk-session-evidence status --project-id loopx --format json
    """
    with reported_errors():
        report = scope_status(project_id, agent_id=agent_id, paths=state_paths())
    if output_format == "json":
        click.echo(report.model_dump_json())
    else:
        render_status(report, text_console(markup=False, highlight=False))
    if not report.healthy:
        raise SystemExit(EXIT_NOT_OK)


@click.command()
@click.option("--project-id", required=True, metavar="ID", help="The LoopX project.")
@click.option("--agent-id", metavar="ID", help="One agent of the project (default: all).")
@format_option
@stops_on_signals
def disable(project_id: str, agent_id: str | None, output_format: str) -> None:
    """Stop admission for a project (or one agent); the index and session files stay as they are.

    Deleting the native index is a separate, explicit `index drop --yes`.

    Example: obelisk-session-evidence disable --project-id loopx --agent-id codex-main
    """
    with reported_errors():
        outcome = disable_scope(project_id, agent_id=agent_id, paths=state_paths())
    if output_format == "json":
        click.echo(outcome.model_dump_json())
    else:
        render_disable(outcome, text_console(markup=False, highlight=False))
