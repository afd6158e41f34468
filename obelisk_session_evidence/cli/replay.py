"""`replay`: every enabled scope's shell calls decided on the history before each, judged by what
each call really did; the naive rule beside the verdict (RFC §10's first measure)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from obelisk_session_evidence.cli.common import EXIT_NOT_OK, format_option, reported_errors, text_console
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

if TYPE_CHECKING:
    from obelisk_session_evidence.contracts.config import ProviderKind
    from obelisk_session_evidence.replay import PrivateCall


@click.command()
@click.option("--project-id", help="Replay only this project's enabled scopes.")
@click.option("--agent-id", help="Replay only this agent's enabled scopes.")
@click.option(
    "--provider",
    "provider_kind",
    type=click.Choice(["native", "obelisk"]),
    help="The backend that answers (default: each scope's own); the Obelisk adapter cannot answer as of a call.",
)
@click.option(
    "--private-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Owner-only file (0600) with the text of every listed false alarm and missed dead end.",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A PNG of each scope's figures beside the naive rule's, with the targets drawn.",
)
@click.option("--check", is_flag=True, help="Exit 2 when the figures miss their targets (for CI).")
@format_option
@stops_on_signals
def replay(
    project_id: str | None,
    agent_id: str | None,
    provider_kind: str | None,
    private_out: Path | None,
    plot: Path | None,
    check: bool,
    output_format: str,
) -> None:
    """Decide every shell call of your enabled history on what came before it, and judge each
    verdict by what the call really did next, beside the naive rule.

    Example: obelisk-session-evidence replay --project-id P --format json
    """
    from obelisk_session_evidence.cli.render_replay import render_replay, replay_progress
    from obelisk_session_evidence.lifecycle.promotion import record_replay
    from obelisk_session_evidence.replay import PrivateCall, replay_history, replay_one_scope, scopes_to_replay
    from obelisk_session_evidence.state.private_files import check_regular_or_absent, write_private

    paths = state_paths()
    private: list[PrivateCall] | None = [] if private_out is not None else None
    with reported_errors():
        if private_out is not None:
            check_regular_or_absent(private_out)
        scopes = scopes_to_replay(paths, project_id=project_id, agent_id=agent_id)
        runs = []
        with replay_progress(enabled=output_format == "text") as progress:
            for enablement in scopes:
                runs.append(
                    replay_one_scope(
                        paths,
                        enablement,
                        provider_kind=cast("ProviderKind | None", provider_kind),
                        progress=progress,
                        private=private,
                    )
                )
        report = replay_history(runs)
        for run in runs:  # the promotion gate (RFC §9) reads what was measured
            record_replay(paths, run.report, measured_at=report.generated_at)
        if private_out is not None and private is not None:
            write_private(private_out, _private_document(private))
        if plot is not None:
            from obelisk_session_evidence.replay.plot import plot_replay

            plot_replay(report, plot)
    if output_format == "json":
        click.echo(report.model_dump_json())
    else:
        render_replay(report, text_console())
    if check and not report.targets_met:
        raise SystemExit(EXIT_NOT_OK)


def _private_document(calls: "list[PrivateCall]") -> bytes:
    """The owner's listing: each listed call's reference with its command and cwd."""
    return json.dumps(
        [{**call.ref.model_dump(mode="json"), "command": call.command, "cwd": call.cwd} for call in calls], indent=1
    ).encode("utf-8")
