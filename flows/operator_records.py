"""Publish the operator view of a finished decision or batch: run tags and artifacts.

Called after the decision exists, with public fields only (`flows.operators`
builds every value). Publishing is best effort: an API hiccup here must not turn a decision that
was made into a failed run, so a fault is logged by its type name and dropped.
"""

from collections.abc import Iterable

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext

from obelisk_session_evidence.batch.run import BatchReport
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.flows.operators import (
    BATCH_ARTIFACT_KEY,
    BATCH_ITEMS_ARTIFACT_KEY,
    DECISION_ARTIFACT_KEY,
    MAX_ITEM_ROWS,
    batch_item_rows,
    batch_tags,
    decision_table,
    decision_tags,
    merged_tags,
    summary_markdown,
)


def publish_decision_record(decision: ReplanEvidenceDecision, agent_digest: str | None) -> None:
    """Tag the current flow run and attach the decision's table artifact."""
    try:
        add_flow_run_tags(decision_tags(decision, agent_digest))
        create_table_artifact(
            decision_table(decision),
            key=DECISION_ARTIFACT_KEY,
            description="Content-free decision record: codes, counts, versions and digests.",
        )
    except Exception as error:
        get_run_logger().warning("operator record not published: %s", type(error).__name__)


def publish_batch_record(report: BatchReport) -> None:
    """Tag the flow run with the batch's triggers, verdicts and agents; attach the summary and a
    table with one row per item (per-item artifacts would cost ~70 ms each on SQLite)."""
    summary = report.summary
    try:
        add_flow_run_tags(batch_tags(summary, summary.by_agent))
        create_markdown_artifact(
            summary_markdown(summary),
            key=BATCH_ARTIFACT_KEY,
            description="Content-free batch summary: counts, latency and failure reason codes.",
        )
        create_table_artifact(
            batch_item_rows(report.records),
            key=BATCH_ITEMS_ARTIFACT_KEY,
            description=f"One row per item (at most {MAX_ITEM_ROWS}; all are in DIR/records).",
        )
    except Exception as error:
        get_run_logger().warning("batch record not published: %s", type(error).__name__)


def add_flow_run_tags(tags: Iterable[str]) -> None:
    """Add tags to the current flow run, keeping the ones it already has."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    flow_run = context.flow_run
    with get_client(sync_client=True) as client:
        current = client.read_flow_run(flow_run.id).tags
        client.update_flow_run(flow_run.id, tags=merged_tags(current, tags))
