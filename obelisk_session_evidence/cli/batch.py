"""`batch`: reprocess stalled work items through the Prefect flow `reprocess-stalled`."""

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from contracts.batch import BatchSummary
from contracts.config import ProviderKind
from contracts.errors import InvalidInput
from obelisk_session_evidence.batch.run import plan_batch
from obelisk_session_evidence.batch.manifest import load_manifest, read_stalled_items, spool_batch
from obelisk_session_evidence.batch.outputs import count_records
from obelisk_session_evidence.cli.common import (
    EXIT_NOT_OK,
    fail,
    format_option,
    reported_errors,
)
from obelisk_session_evidence.cli.render_batch import render_batch_summary
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.stop_signals import stops_on_signals

QUIET_PREFECT_CONSOLE = {
    # People get the progress bar and the summary; the run logs are in the Prefect UI.
    "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "CRITICAL",
}


@click.command()
@click.option("--in", "source", required=True, type=click.Path(exists=True, path_type=Path),
              help="A JSONL file, or a folder of .json/.jsonl files, of replan_situation_v0 items.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for one decision per item, the item records and summary.json.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Items decided at once (threads, or Dask workers for a local cluster).")
@click.option("--task-runner", type=click.Choice(["thread", "dask"]), default="thread",
              show_default=True, help="thread: in this process; dask: a Dask cluster (extra `dask`).")
@click.option("--dask-address", metavar="ADDR",
              help="An existing Dask scheduler (tcp://host:8786); else a local cluster is started.")
@click.option("--provider", "provider_kind", type=click.Choice(["native", "obelisk"]),
              help="Override the enabled provider for every item.")
@click.option("--spool-only", is_flag=True,
              help="Only spool the items and print the manifest digest (to run a deployment).")
@format_option
@stops_on_signals
def batch(
    source: Path,
    out_dir: Path,
    concurrency: int,
    task_runner: str,
    dask_address: str | None,
    provider_kind: ProviderKind | None,
    spool_only: bool,
    output_format: str,
) -> None:
    """Decide every stalled work item in a batch; re-running skips what is already decided.

    Items go to the private spool; the flow's only parameter is the manifest digest. Exit 0 when
    every item has a decision, 2 when any failed (its reason code is in the summary).

    Example: obelisk-session-evidence batch --in stalled.jsonl --out decisions/ --format json
    """
    if dask_address and task_runner != "dask":
        fail(InvalidInput("--dask-address needs --task-runner dask"))
    with reported_errors():
        paths = state_paths()
        manifest_ref = spool_batch(
            paths, read_stalled_items(source), out_dir=out_dir, provider_kind=provider_kind
        )
        if spool_only:
            click.echo(manifest_ref)
            return
        summary = _run_with_progress(paths, manifest_ref, task_runner, concurrency, dask_address)
    if output_format == "json":
        click.echo(summary.model_dump_json())
    else:
        render_batch_summary(summary, Console(highlight=False))
    if summary.failed or summary.missing:
        raise SystemExit(EXIT_NOT_OK)


def _run_with_progress(
    paths: StatePaths,
    manifest_ref: str,
    task_runner: str,
    concurrency: int,
    dask_address: str | None,
) -> BatchSummary:
    from flows.hardening import apply_prefect_environment

    apply_prefect_environment(paths)
    for name, value in QUIET_PREFECT_CONSOLE.items():
        os.environ.setdefault(name, value)
    from flows.reprocess_stalled import run_reprocess_stalled_flow

    pending = plan_batch(paths, manifest_ref).pending
    out_dir = Path(load_manifest(paths, manifest_ref).out_dir)
    with _progress_bar(out_dir, [item.item_ref for item in pending]):
        return run_reprocess_stalled_flow(
            manifest_ref,
            paths=paths,
            task_runner=task_runner,  # type: ignore[arg-type]
            concurrency=concurrency,
            dask_address=dask_address,
        )


@contextmanager
def _progress_bar(out_dir: Path, item_refs: list[str]) -> Iterator[None]:
    """A bar on stderr for people (hidden when stderr is not a terminal), fed by the records."""
    console = Console(stderr=True)
    done = threading.Event()
    since = time.time()
    progress = Progress(
        TextColumn("reprocess-stalled"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )

    def follow(task_id: int) -> None:
        while not done.wait(0.25):
            progress.update(task_id, completed=count_records(out_dir, item_refs, since=since))

    with progress:
        task_id = progress.add_task("items", total=len(item_refs))
        follower = threading.Thread(target=follow, args=(task_id,), daemon=True)
        follower.start()
        try:
            yield
        finally:
            done.set()
            follower.join()
            progress.update(task_id, completed=count_records(out_dir, item_refs, since=since))
