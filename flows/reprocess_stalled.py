"""The `reprocess-stalled` flow: one mapped task per stalled item, the stages as plain calls inside.

Mapping each stage separately costs about ten times more per item (stack notes §4), so an item is
one task run (`decide-stalled-item`, run name `item-<line>/<situation id>`) that runs the pipeline
directly. The only flow parameter is the manifest digest; task arguments are digests and the state
folder's path (Prefect records only references to them). A bad item is recorded with its reason
code and its task run ends Failed with its line and that code alone; the batch goes on, and ends
Failed with the counts when any item failed. The task runner is chosen per run: threads by
default, or Dask.
"""

import os
import socket
import time
from pathlib import Path
from typing import Any, Literal, cast

from prefect import State, flow, get_run_logger, task, unmapped
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run, task_run
from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
from prefect.states import Failed
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from obelisk_session_evidence.batch.manifest import load_manifest
from obelisk_session_evidence.batch.outputs import RunStats, read_summary
from obelisk_session_evidence.batch.plan import BatchPlan, BatchRef, PlannedItem, plan_batch
from obelisk_session_evidence.batch.run import BatchReport, decide_item, report_batch
from obelisk_session_evidence.contracts.batch import BatchItemRecord, BatchSummary
from obelisk_session_evidence.contracts.errors import DaskUnreachable, EvidenceError, InvalidInput, StageFailed
from obelisk_session_evidence.flows.operator_records import publish_batch_record
from obelisk_session_evidence.flows.operators import batch_failure_message, batch_run_name, item_failure_message
from obelisk_session_evidence.flows.replan_evidence import PRIVATE_TASK_OPTIONS
from obelisk_session_evidence.flows.temporary_api import expect_records
from obelisk_session_evidence.state.paths import StatePaths, state_at, state_reference

TaskRunnerKind = Literal["thread", "dask"]
DEFAULT_CONCURRENCY = 4
DEFAULT_DASK_PORT = 8786
DASK_CONNECT_TIMEOUT_S = 5.0
"""An unreachable scheduler fails within this (and a reachable one answers in milliseconds)."""


@task(name="plan-batch", task_run_name="plan-batch", **PRIVATE_TASK_OPTIONS)
def plan_batch_task(manifest_ref: str, state_root: str) -> BatchPlan:
    """Compute every item's idempotency key and keep the items no earlier run settled."""
    return plan_batch(StatePaths(Path(state_root)), manifest_ref)


def _item_run_name() -> str:
    """`item-<line>/<situation id>`, from the task's own (content-free) planned item."""
    item = task_run.parameters["item"]
    return item.run_name if isinstance(item, PlannedItem) else "item"


@task(name="decide-stalled-item", task_run_name=_item_run_name, **PRIVATE_TASK_OPTIONS)
def decide_stalled_item(item: PlannedItem, batch: BatchRef) -> BatchItemRecord | State:
    """Decide one item with the stages as plain calls. A failed item's run ends Failed with its
    line and reason code as the message: no exception, so no traceback reaches Prefect."""
    try:
        record = decide_item(batch, item)
    except Exception as error:
        return Failed(message=f"item at line {item.line} failed: decide-stalled-item:{type(error).__name__}")
    if record.status == "failed":
        return Failed(message=item_failure_message(record))
    return record


@task(name="summarize-batch", task_run_name="summarize-batch", **PRIVATE_TASK_OPTIONS)
def summarize_batch_task(manifest_ref: str, state_root: str, run: RunStats) -> BatchReport:
    """Counts, latency and failures over the whole manifest; writes summary.json."""
    return report_batch(StatePaths(Path(state_root)), manifest_ref, run=run)


def _batch_run_name() -> str:
    """The manifest's name and item count with its digest (the digest alone when it cannot be read)."""
    manifest_ref = str(flow_run.parameters.get("manifest_ref", ""))
    try:
        manifest = load_manifest(state_at(flow_run.parameters.get("state_ref")), manifest_ref)
    except (EvidenceError, OSError):  # a missing or altered manifest: the flow itself says so
        return batch_run_name(manifest_ref)
    return batch_run_name(manifest_ref, name=manifest.name, items=len(manifest.item_refs))


_Runner = TaskRunner[PrefectFuture[Any]]
"""What a flow takes as its task runner (Prefect's own runners are cast to it, as Prefect does)."""


@flow(
    name="reprocess-stalled",
    flow_run_name=_batch_run_name,
    persist_result=False,
    log_prints=False,
    validate_parameters=True,
    task_runner=cast(_Runner, ThreadPoolTaskRunner(max_workers=DEFAULT_CONCURRENCY)),
)
def reprocess_stalled(manifest_ref: str, state_ref: str | None = None) -> BatchSummary | State:
    """Decide every stalled item of a spooled manifest; the parameters are its digest and a
    reference to the state folder (None: the runner's; never its path, `state_reference`), never
    content. Ends Failed, with the counts as its
    message, when any item failed or was not reached."""
    started = time.perf_counter()
    try:
        state_root = str(state_at(state_ref).root)  # task inputs are not stored; flow parameters are
        plan = plan_batch_task(manifest_ref, state_root)
        futures = decide_stalled_item.map(list(plan.pending), unmapped(plan.batch))
        futures.wait()
        run = RunStats(len(plan.pending), len(plan.skipped), time.perf_counter() - started)
        report = summarize_batch_task(manifest_ref, state_root, run)
    except EvidenceError as error:
        raise StageFailed(error.reason_code) from None
    except Exception as error:
        raise StageFailed(type(error).__name__) from None
    summary = report.summary
    get_run_logger().info(
        "batch items=%d decided=%d failed=%d skipped=%d",
        summary.items,
        summary.decided,
        summary.failed,
        summary.skipped_this_run,
    )
    publish_batch_record(report)
    if summary.failed or summary.missing:
        return Failed(message=batch_failure_message(summary))
    return summary


def task_runner_for(
    kind: TaskRunnerKind, *, concurrency: int = DEFAULT_CONCURRENCY, dask_address: str | None = None
) -> _Runner:
    """Threads in this process, or Dask: an existing cluster at `dask_address`, else a local one."""
    if kind == "thread":
        return cast(_Runner, ThreadPoolTaskRunner(max_workers=concurrency))
    try:
        from prefect_dask.task_runners import DaskTaskRunner
    except ImportError:
        raise InvalidInput(
            "--task-runner dask needs the dask extra: pip install 'obelisk-session-evidence[dask]'"
        ) from None
    if dask_address:
        probe_dask_address(dask_address)
        import dask

        # distributed's own default (30 s, retried) made an unreachable address fail after ~35 s.
        dask.config.set({"distributed.comm.timeouts.connect": f"{DASK_CONNECT_TIMEOUT_S}s"})
        return cast(_Runner, DaskTaskRunner(address=dask_address))
    # One process per core at most (each imports Prefect, ~2.5 s); the rest of `concurrency` as threads.
    workers = max(1, min(concurrency, os.cpu_count() or 1))
    return cast(
        _Runner,
        DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": workers,
                "threads_per_worker": max(1, concurrency // workers),
                "processes": True,
                "host": "127.0.0.1",
                "dashboard_address": None,
            },
        ),
    )


def probe_dask_address(address: str, *, timeout: float = DASK_CONNECT_TIMEOUT_S) -> None:
    """Fail fast with `dask_unreachable` when nothing accepts a connection at a tcp:// or tls://
    scheduler address (other transports are left to Dask)."""
    scheme, separator, rest = address.partition("://")
    if not separator:
        scheme, rest = "tcp", address
    if scheme not in ("tcp", "tls"):
        return
    host, _, port = rest.rstrip("/").rpartition(":")
    if not host:
        host, port = rest.rstrip("/"), str(DEFAULT_DASK_PORT)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return
    except ValueError:
        raise InvalidInput(f"--dask-address {address}: not a scheduler address (tcp://HOST:PORT)") from None
    except OSError as error:
        reason = error.strerror or f"no answer within {timeout:.0f} s"
        raise DaskUnreachable(f"no Dask scheduler answers at {address} ({reason})") from None


def run_reprocess_stalled_flow(
    manifest_ref: str,
    *,
    paths: StatePaths,
    task_runner: TaskRunnerKind = "thread",
    concurrency: int = DEFAULT_CONCURRENCY,
    dask_address: str | None = None,
) -> BatchSummary:
    """Run the batch flow in this process against the configured API (or the temporary one the
    caller started), heartbeat thread off; the summary also when items failed."""
    runner = task_runner_for(task_runner, concurrency=concurrency, dask_address=dask_address)
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        state = reprocess_stalled.with_options(task_runner=runner)(
            manifest_ref, state_reference(paths), return_state=True
        )
    outcome = state.result(raise_on_failure=False)
    if isinstance(outcome, BaseException):
        expect_records(state.state_details.flow_run_id, task_runs=None)
        raise outcome  # the flow's own content-free StageFailed
    summary = _summary_of_run(outcome, paths, manifest_ref)
    # plan-batch, one task run per item this run processed, summarize-batch
    expect_records(state.state_details.flow_run_id, task_runs=summary.processed_this_run + 2)
    return summary


def _summary_of_run(outcome: Any, paths: StatePaths, manifest_ref: str) -> BatchSummary:
    """The flow's summary, or (items failed: the run returned a Failed state) the one it wrote."""
    if isinstance(outcome, BatchSummary):
        return outcome
    return read_summary(Path(load_manifest(paths, manifest_ref).out_dir))
