"""`batch`: reprocess stalled work items through the Prefect flow `reprocess-stalled` (against the
configured API or a temporary local one), or directly with `--no-prefect`."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from obelisk_session_evidence.batch.manifest import load_manifest, read_stalled_lines, spool_batch
from obelisk_session_evidence.batch.outputs import RecordProgress, claim_out_dir
from obelisk_session_evidence.batch.plan import plan_batch
from obelisk_session_evidence.batch.run import run_batch_directly
from obelisk_session_evidence.cli.common import (
    EXIT_NOT_OK,
    fail,
    format_option,
    reported_errors,
    text_console,
)
from obelisk_session_evidence.cli.prefect_api import api_for_this_run
from obelisk_session_evidence.cli.render_batch import render_batch_summary
from obelisk_session_evidence.contracts.batch import BatchSpooled, BatchSummary
from obelisk_session_evidence.contracts.config import ProviderKind
from obelisk_session_evidence.contracts.errors import InvalidInput
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

if TYPE_CHECKING:
    from obelisk_session_evidence.flows.reprocess_stalled import TaskRunnerKind


@click.command()
@click.option(
    "--in",
    "source",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="A JSONL file, or a folder of .json/.jsonl files, of replan_situation_v0 items.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for one decision per item, the item records and summary.json.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Items decided at once (threads, or Dask workers for a local cluster).",
)
@click.option(
    "--task-runner",
    type=click.Choice(["thread", "dask"]),
    default="thread",
    show_default=True,
    help="thread: in this process; dask: a Dask cluster (extra `dask`).",
)
@click.option(
    "--dask-address",
    metavar="ADDR",
    help="An existing Dask scheduler (tcp://host:8786); else a local cluster is started.",
)
@click.option(
    "--provider",
    "provider_kind",
    type=click.Choice(["native", "obelisk"]),
    help="Override the enabled provider for every item.",
)
@click.option(
    "--no-prefect",
    is_flag=True,
    help="Run the same pipeline in this process without Prefect (same outputs, no runs in the UI).",
)
@click.option("--verbose", is_flag=True, help="Also show Prefect's own log lines on stderr.")
@click.option(
    "--spool-only", is_flag=True, help="Only spool the items and print the manifest digest (to run a deployment)."
)
@format_option
@stops_on_signals
def batch(
    source: Path,
    out_dir: Path,
    concurrency: int,
    task_runner: "TaskRunnerKind",
    dask_address: str | None,
    provider_kind: ProviderKind | None,
    no_prefect: bool,
    verbose: bool,
    spool_only: bool,
    output_format: str,
) -> None:
    """Decide every stalled work item in a batch; re-running skips what is already decided.

    Items go to the private spool; the flow `reprocess-stalled` gets only the manifest digest.
    With PREFECT_API_URL set it runs against that API; without it, against a temporary local API
    on the database `ui` serves, so the runs show up there later. Exit 0 when every item has a
    decision, 2 when any failed (its reason code is in the summary; the flow run ends Failed).

    Example: obelisk-session-evidence batch --in stalled.jsonl --out decisions/ --format json
    """
    if dask_address and task_runner != "dask":
        fail(InvalidInput("--dask-address needs --task-runner dask"))
    if no_prefect and task_runner != "thread":
        fail(InvalidInput("--no-prefect runs in this process: --task-runner dask needs Prefect"))
    with reported_errors():
        paths = state_paths()
        numbered = read_stalled_lines(source)
        manifest_ref = spool_batch(
            paths,
            [raw for _, raw in numbered],
            out_dir=out_dir,
            provider_kind=provider_kind,
            lines=[line for line, _ in numbered],
            name=source.resolve().name,
        )
        if spool_only:
            _print_spooled(paths, manifest_ref, output_format)
            return
        with claim_out_dir(paths, out_dir):  # and reclaim what a killed batch left there
            if no_prefect:
                with _progress_bar(paths, manifest_ref):
                    summary = run_batch_directly(paths, manifest_ref, concurrency=concurrency)
            else:
                summary = _run_flow(paths, manifest_ref, task_runner, concurrency, dask_address, verbose)
    if output_format == "json":
        click.echo(summary.model_dump_json())
    else:
        render_batch_summary(summary, text_console())
    if summary.failed or summary.missing:
        raise SystemExit(EXIT_NOT_OK)


def _print_spooled(paths: StatePaths, manifest_ref: str, output_format: str) -> None:
    """The manifest digest alone for scripts (`REF=$(... --spool-only)`), or the JSON document."""
    if output_format != "json":
        click.echo(manifest_ref)
        return
    manifest = load_manifest(paths, manifest_ref)
    spooled = BatchSpooled(manifest_ref=manifest_ref, items=len(manifest.item_refs), input_count=manifest.input_count)
    click.echo(spooled.model_dump_json())


def _run_flow(
    paths: StatePaths,
    manifest_ref: str,
    task_runner: "TaskRunnerKind",
    concurrency: int,
    dask_address: str | None,
    verbose: bool,
) -> BatchSummary:
    """The flow against the configured API, else against a temporary one started (and announced
    once on stderr) for this run."""
    from obelisk_session_evidence.flows.hardening import apply_console_verbosity, apply_prefect_environment

    apply_prefect_environment(paths)
    apply_console_verbosity(verbose=verbose)
    from obelisk_session_evidence.flows.reprocess_stalled import probe_dask_address, run_reprocess_stalled_flow

    if dask_address:
        probe_dask_address(dask_address)  # before paying for a temporary API
    with api_for_this_run(), _progress_bar(paths, manifest_ref):
        return run_reprocess_stalled_flow(
            manifest_ref,
            paths=paths,
            task_runner=task_runner,
            concurrency=concurrency,
            dask_address=dask_address,
        )


class _RateColumn(ProgressColumn):
    """Items per second over the recent updates."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:.1f} items/s" if task.speed else "– items/s")


@contextmanager
def _progress_bar(paths: StatePaths, manifest_ref: str) -> Iterator[None]:
    """A bar on stderr for people (hidden when stderr is not a terminal): items done, failed,
    rate and ETA, fed by the records as they appear."""
    pending = [item.item_ref for item in plan_batch(paths, manifest_ref).pending]
    out_dir = Path(load_manifest(paths, manifest_ref).out_dir)
    console = Console(stderr=True)
    follower = RecordProgress(out_dir, pending, since=time.time())
    done = threading.Event()
    progress = Progress(
        TextColumn("reprocess-stalled"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        _RateColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )

    def update(task_id: TaskID) -> None:
        completed, failed = follower.poll()
        progress.update(task_id, completed=completed, failed=failed)

    def follow(task_id: TaskID) -> None:
        while not done.wait(0.25):
            update(task_id)

    with progress:
        task_id = progress.add_task("items", total=len(pending), failed=0)
        thread = threading.Thread(target=follow, args=(task_id,), daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            update(task_id)
