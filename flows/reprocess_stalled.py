"""The `reprocess-stalled` flow: one mapped task per stalled item, the stages as plain calls inside.

Mapping each stage separately costs about ten times more per item (stack notes §4), so an item is
one task run (`decide-stalled-item`) that runs the pipeline directly. The only flow parameter is the
manifest digest; task arguments are digests and the state folder's path (Prefect records only
references to them). A bad item is recorded with its reason code and its task run fails with that
code alone; the batch goes on. The task runner is chosen per run: threads by default, or Dask.
"""

import os
import time
from typing import Any, Literal

from prefect import flow, get_run_logger, task, unmapped
from prefect.settings import (
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    get_current_settings,
    temporary_settings,
)
from prefect.task_runners import ThreadPoolTaskRunner

from contracts.batch import BatchItemRecord, BatchSummary
from contracts.errors import EvidenceError, InvalidInput, PrefectApiNotConfigured, StageFailed
from flows.operator_records import publish_batch_record
from flows.replan_evidence import PRIVATE_TASK_OPTIONS
from obelisk_session_evidence.batch.run import (
    BatchPlan,
    BatchRef,
    BatchReport,
    PlannedItem,
    decide_item,
    plan_batch,
    report_batch,
)
from obelisk_session_evidence.batch.outputs import RunStats
from obelisk_session_evidence.state.paths import StatePaths, state_at

TaskRunnerKind = Literal["thread", "dask"]
DEFAULT_CONCURRENCY = 4


@task(name="plan-batch", task_run_name="plan-batch", **PRIVATE_TASK_OPTIONS)
def plan_batch_task(manifest_ref: str, state_root: str | None) -> BatchPlan:
    """Compute every item's idempotency key and keep the items no earlier run settled."""
    return plan_batch(state_at(state_root), manifest_ref)


@task(name="decide-stalled-item", task_run_name="decide-stalled-item", **PRIVATE_TASK_OPTIONS)
def decide_stalled_item(item: PlannedItem, batch: BatchRef) -> BatchItemRecord:
    """Decide one item with the stages as plain calls; a failed item fails with its code only."""
    try:
        record = decide_item(batch, item)
    except Exception as error:  # noqa: BLE001 - e.g. an OSError naming the output path
        raise StageFailed(f"decide-stalled-item:{type(error).__name__}") from None
    if record.status == "failed":
        raise StageFailed(record.reason_code)
    return record


@task(name="summarize-batch", task_run_name="summarize-batch", **PRIVATE_TASK_OPTIONS)
def summarize_batch_task(manifest_ref: str, state_root: str | None, run: RunStats) -> BatchReport:
    """Counts, latency and failures over the whole manifest; writes summary.json."""
    return report_batch(state_at(state_root), manifest_ref, run=run)


@flow(
    name="reprocess-stalled",
    flow_run_name="reprocess-stalled",
    persist_result=False,
    log_prints=False,
    validate_parameters=True,
    task_runner=ThreadPoolTaskRunner(max_workers=DEFAULT_CONCURRENCY),
)
def reprocess_stalled(manifest_ref: str, state_root: str | None = None) -> BatchSummary:
    """Decide every stalled item of a spooled manifest; the parameters are its digest and the
    state folder (default: the runner's), never content."""
    started = time.perf_counter()
    try:
        plan = plan_batch_task(manifest_ref, state_root)
        futures = decide_stalled_item.map(list(plan.pending), unmapped(plan.batch))
        futures.wait()
        run = RunStats(len(plan.pending), len(plan.skipped), time.perf_counter() - started)
        report = summarize_batch_task(manifest_ref, state_root, run)
    except EvidenceError as error:
        raise StageFailed(error.reason_code) from None
    except Exception as error:  # noqa: BLE001 - never let a raw message reach Prefect's state
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
    return summary


def task_runner_for(
    kind: TaskRunnerKind, *, concurrency: int = DEFAULT_CONCURRENCY, dask_address: str | None = None
) -> Any:
    """Threads in this process, or Dask: an existing cluster at `dask_address`, else a local one."""
    if kind == "thread":
        return ThreadPoolTaskRunner(max_workers=concurrency)
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError:
        raise InvalidInput(
            "--task-runner dask needs the dask extra: pip install 'obelisk-session-evidence[dask]'"
        ) from None
    if dask_address:
        return DaskTaskRunner(address=dask_address)
    # One process per core at most (each imports Prefect, ~2.5 s); the rest of `concurrency` as threads.
    workers = max(1, min(concurrency, os.cpu_count() or 1))
    return DaskTaskRunner(
        cluster_class="distributed.LocalCluster",
        cluster_kwargs={
            "n_workers": workers,
            "threads_per_worker": max(1, concurrency // workers),
            "processes": True,
            "host": "127.0.0.1",
            "dashboard_address": None,
        },
    )


def run_reprocess_stalled_flow(
    manifest_ref: str,
    *,
    paths: StatePaths,
    task_runner: TaskRunnerKind = "thread",
    concurrency: int = DEFAULT_CONCURRENCY,
    dask_address: str | None = None,
) -> BatchSummary:
    """Run the batch flow in this process against the configured API, heartbeat thread off."""
    if get_current_settings().api.url is None:
        raise PrefectApiNotConfigured("set PREFECT_API_URL or start `obelisk-session-evidence ui`")
    runner = task_runner_for(task_runner, concurrency=concurrency, dask_address=dask_address)
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        return reprocess_stalled.with_options(task_runner=runner)(manifest_ref, str(paths.root))
