"""`replay`: every enabled scope's shell calls decided on the history before each, judged by what
each call really did; the naive rule beside the verdict (RFC §10's first measure)."""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import click

from obelisk_session_evidence.cli.common import EXIT_NOT_OK, fail, format_option, reported_errors, text_console
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

if TYPE_CHECKING:
    from obelisk_session_evidence.contracts.config import Enablement, ProviderKind
    from obelisk_session_evidence.contracts.replay import ReplayReport
    from obelisk_session_evidence.replay import PrivateCall
    from obelisk_session_evidence.state.paths import StatePaths


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
@click.option(
    "--prefect",
    is_flag=True,
    help="Run as the Prefect flow `replay-history` (one task per scope, or per part of a large one); "
    "against PREFECT_API_URL, else a temporary local API.",
)
@click.option(
    "--task-runner",
    type=click.Choice(["thread", "dask"]),
    help="The flow's task runner (implies --prefect): thread, in this process; dask, a Dask cluster (extra `dask`).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=2,
    show_default=True,
    help="Flow tasks at once (threads, or Dask workers for a local cluster).",
)
@click.option(
    "--dask-address", metavar="ADDR", help="An existing Dask scheduler (tcp://host:8786); else a local cluster."
)
@click.option(
    "--calls-per-task",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="A scope's timeline calls per flow task: a larger scope is split into parts.",
)
@click.option("--verbose", is_flag=True, help="Also show Prefect's own log lines on stderr.")
@format_option
@stops_on_signals
def replay(
    project_id: str | None,
    agent_id: str | None,
    provider_kind: str | None,
    private_out: Path | None,
    plot: Path | None,
    check: bool,
    prefect: bool,
    task_runner: str | None,
    concurrency: int,
    dask_address: str | None,
    calls_per_task: int,
    verbose: bool,
    output_format: str,
) -> None:
    """Decide every shell call of your enabled history on what came before it, and judge each
    verdict by what the call really did next, beside the naive rule.

    In this process by default; `--prefect` (or `--task-runner`) runs the flow `replay-history`,
    whose parameters and task results carry ids and counts only.

    Example: obelisk-session-evidence replay --project-id P --format json
    """
    from obelisk_session_evidence.cli.render_replay import render_replay
    from obelisk_session_evidence.lifecycle.promotion import record_replay
    from obelisk_session_evidence.replay import check_replayable, scopes_to_replay
    from obelisk_session_evidence.replay.private import private_document
    from obelisk_session_evidence.state.private_files import check_regular_or_absent, write_private

    if dask_address and task_runner != "dask":
        fail(InvalidInput("--dask-address needs --task-runner dask"))
    paths = state_paths()
    kind = cast("ProviderKind | None", provider_kind)
    with reported_errors():
        if private_out is not None:
            check_regular_or_absent(private_out)
        scopes = scopes_to_replay(paths, project_id=project_id, agent_id=agent_id)
        for enablement in scopes:
            check_replayable(enablement, kind)  # before any refresh, or a Prefect API started
        runner = cast('Literal["thread", "dask"]', task_runner or "thread")
        flow = _FlowOptions(runner, concurrency, dask_address, calls_per_task, verbose)
        if prefect or task_runner is not None:
            report, private = _replay_with_prefect(
                paths, project_id, agent_id, kind, flow, keep=private_out is not None
            )
        else:
            report, private = _replay_here(paths, scopes, kind, progress_bar=output_format == "text")
        for scope in report.scopes:  # the promotion gate (RFC §9) reads what was measured
            record_replay(paths, scope, measured_at=report.generated_at)
        if private_out is not None:
            write_private(private_out, private_document(private))
        if plot is not None:
            from obelisk_session_evidence.replay.plot import plot_replay

            plot_replay(report, plot)
    if output_format == "json":
        click.echo(report.model_dump_json())
    else:
        render_replay(report, text_console())
    if check and not report.targets_met:
        raise SystemExit(EXIT_NOT_OK)


@dataclass(frozen=True, slots=True)
class _FlowOptions:
    task_runner: Literal["thread", "dask"]
    concurrency: int
    dask_address: str | None
    calls_per_task: int
    verbose: bool


def _replay_here(
    paths: "StatePaths", scopes: "list[Enablement]", kind: "ProviderKind | None", *, progress_bar: bool
) -> "tuple[ReplayReport, list[PrivateCall]]":
    """Every scope replayed in this process, with a progress bar for people."""
    from obelisk_session_evidence.cli.render_replay import replay_progress
    from obelisk_session_evidence.replay import replay_history, replay_one_scope

    private: list[PrivateCall] = []
    runs = []
    with replay_progress(enabled=progress_bar) as progress:
        for enablement in scopes:
            runs.append(replay_one_scope(paths, enablement, provider_kind=kind, progress=progress, private=private))
    return replay_history(runs), private


def _replay_with_prefect(
    paths: "StatePaths",
    project_id: str | None,
    agent_id: str | None,
    kind: "ProviderKind | None",
    flow: _FlowOptions,
    *,
    keep: bool,
) -> "tuple[ReplayReport, list[PrivateCall]]":
    """The flow `replay-history` against the configured API, else a temporary one; the listed
    calls' text comes back through the private spool (only its digests crossed into Prefect)."""
    from obelisk_session_evidence.cli.prefect_api import api_for_this_run
    from obelisk_session_evidence.flows.hardening import apply_console_verbosity, apply_prefect_environment

    apply_prefect_environment(paths)
    apply_console_verbosity(verbose=flow.verbose)
    from obelisk_session_evidence.flows.replay_history import run_replay_flow
    from obelisk_session_evidence.flows.reprocess_stalled import probe_dask_address
    from obelisk_session_evidence.replay.private import take_spooled_listing

    if flow.dask_address:
        probe_dask_address(flow.dask_address)  # before paying for a temporary API
    with api_for_this_run():
        replayed = run_replay_flow(
            paths=paths,
            project_id=project_id,
            agent_id=agent_id,
            provider_kind=kind,
            task_runner=flow.task_runner,
            concurrency=flow.concurrency,
            dask_address=flow.dask_address,
            calls_per_task=flow.calls_per_task,
            keep_private=keep,
        )
    return replayed.report, take_spooled_listing(paths, replayed.private_refs, replayed.report)
