"""What operators see in the Prefect UI: run tags, the decision table and the batch summary.

Everything here is built from public fields only (codes, counts, digests, versions), so it may go
into Prefect's database. No Prefect import: `flows/operator_records.py` publishes these values.
"""

from collections.abc import Iterable
from typing import Final

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.batch import BatchItemRecord, BatchSummary
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision

MAX_AGENT_TAGS: Final = 8
"""A batch tags at most this many agent digests; more collapse into `agent:many`."""
DECISION_ARTIFACT_KEY: Final = "replan-evidence-decision"
BATCH_ARTIFACT_KEY: Final = "reprocess-stalled-summary"
BATCH_ITEMS_ARTIFACT_KEY: Final = "reprocess-stalled-items"
MAX_ITEM_ROWS: Final = 1000
"""The batch's item table stops here; every item's record is in the output folder anyway."""


SHORT_DIGEST_HEX: Final = 12


def short_digest(digest: str) -> str:
    """The first hex digits of a `sha256:` digest: enough to tell runs apart in a list."""
    return digest.removeprefix("sha256:")[:SHORT_DIGEST_HEX]


def decision_run_name(situation_id: str | None) -> str:
    """`replan-evidence/<situation id>` (public by contract); `replan-evidence/invalid` when the
    spooled situation has no well-formed id."""
    return f"replan-evidence/{situation_id or 'invalid'}"


def batch_run_name(manifest_ref: str, *, name: str | None = None, items: int | None = None) -> str:
    """`reprocess-stalled/<batch name>/<N> items/<manifest short digest>` (name and count when
    known: the manifest's name is its input's file name, cut to safe characters)."""
    parts = [name] if name else []
    parts += [f"{items} item{'' if items == 1 else 's'}"] if items is not None else []
    return "/".join(["reprocess-stalled", *parts, short_digest(manifest_ref)])


def item_failure_message(record: BatchItemRecord) -> str:
    """A failed item's task state message: where it is and its reason code, nothing else."""
    stage = f" at {record.failed_stage}" if record.failed_stage else ""
    invalid = f" ({'; '.join(record.invalid_fields)})" if record.invalid_fields else ""
    return f"item at line {record.line} failed{stage}: {record.reason_code}{invalid}"


def batch_failure_message(summary: BatchSummary) -> str:
    """The batch's Failed state message: counts and reason codes only."""
    reasons = ", ".join(f"{code} {n}" for code, n in summary.failures_by_reason.items())
    parts = [f"{summary.failed} of {summary.items} items failed" + (f" ({reasons})" if reasons else "")]
    if summary.missing:
        parts.append(f"{summary.missing} not recorded")
    parts.append(f"{summary.decided} decided")
    return "; ".join(parts)


def decision_tags(decision: ReplanEvidenceDecision, agent_digest: str | None) -> list[str]:
    """`trigger:<t>`, `verdict:<v>` and `agent:<8 hex>` for one decision's flow run."""
    return [
        f"trigger:{decision.trigger or 'none'}",
        f"verdict:{decision.comparison.verdict}",
        f"agent:{agent_digest or 'none'}",
    ]


def batch_tags(summary: BatchSummary, agent_digests: Iterable[str]) -> list[str]:
    """The triggers, verdicts and agents a batch covered, as tags (agents capped)."""
    agents = sorted(set(agent_digests))
    agent_tags = [f"agent:{a}" for a in agents] if len(agents) <= MAX_AGENT_TAGS else ["agent:many"]
    return (
        ["batch"]
        + [f"trigger:{trigger}" for trigger in summary.by_trigger]
        + [f"verdict:{verdict}" for verdict in summary.by_verdict]
        + agent_tags
    )


def merged_tags(existing: Iterable[str], added: Iterable[str]) -> list[str]:
    """Existing tags first (a deployment's), then the new ones, each once."""
    return list(dict.fromkeys([*existing, *added]))


def decision_table(decision: ReplanEvidenceDecision) -> list[dict[str, str]]:
    """One decision as `field`/`value` rows: codes, counts, versions and digests, never text."""
    receipt = decision.receipt
    rows = {
        "situation": decision.situation_id,
        "trigger": decision.trigger or "none",
        "admission code": decision.admission.reason_code,
        "retrieval code": decision.retrieval.reason_code,
        "verdict": decision.comparison.verdict,
        "outcomes": ", ".join(decision.semantic_delta.outcomes) or "none",
        "semantic delta": decision.semantic_delta.reason_code or "none",
        "result count": str(receipt.result_count) if receipt else "0",
        "evidence type counts": _type_counts(receipt.evidence_type_counts) if receipt else "none",
        "freshness": receipt.freshness if receipt else "no lookup",
        "truncation": f"{str(receipt.truncated).lower()} (omitted {receipt.omitted_count})" if receipt else "no lookup",
        "prior call revisions": receipt.prior_call_revisions.describe()
        if receipt and receipt.prior_call_revisions
        else "none",
        "verdict basis": receipt.describe_verdict_basis() if receipt else "no lookup",
        "provider version": receipt.provider_version if receipt else "no lookup",
        "request": receipt.request_id if receipt else "none",
        "index revision digest": receipt.index_revision_digest if receipt else "none",
        "scope digest": receipt.scope_digest if receipt else "none",
        "query digest": receipt.query_digest if receipt else "none",
        "result digest": receipt.result_digest if receipt else "none",
        "observation fingerprint": decision.semantic_delta.observation_fingerprint,
    }
    return [{"field": name, "value": value} for name, value in rows.items()]


def _type_counts(counts: dict[EvidenceType, int]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in counts.items() if n) or "none"


def batch_item_rows(records: Iterable[BatchItemRecord]) -> list[dict[str, str]]:
    """One row per item (the first `MAX_ITEM_ROWS`): the decision table's fields, as columns."""
    rows: list[dict[str, str]] = []
    for record in records:
        if len(rows) == MAX_ITEM_ROWS:
            break
        rows.append(
            {
                "line": str(record.line),
                "item": record.item_ref.removeprefix("sha256:")[:16],
                "status": record.reason_code + (f" ({record.failed_stage})" if record.failed_stage else ""),
                "situation": record.situation_id or "-",
                "trigger": record.trigger or "none",
                "admission code": record.admission_code or "-",
                "verdict": record.verdict or "-",
                "outcomes": ", ".join(record.outcomes) or "none",
                "retrieval code": record.retrieval_code or "-",
                "result count": str(record.result_count),
                "evidence type counts": _type_counts(record.evidence_type_counts),
                "freshness": record.freshness or "no lookup",
                "truncated": str(record.truncated).lower(),
                "provider version": record.provider_version or "-",
                "key": record.key.removeprefix("sha256:")[:16],
                "latency ms": f"{record.latency_ms:.1f}",
            }
        )
    return rows


def summary_markdown(summary: BatchSummary) -> str:
    """The batch summary as markdown: counts, latency and failures by reason code."""
    latency = summary.latency
    lines = [
        "# reprocess-stalled",
        "",
        f"Manifest `{summary.manifest_ref}`",
        "",
        "| items | decided | failed | missing | processed this run | skipped this run |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| {summary.items} | {summary.decided} | {summary.failed} | {summary.missing} "
        f"| {summary.processed_this_run} | {summary.skipped_this_run} |",
        "",
    ]
    if latency is not None:
        rate = f", {summary.items_per_second} items/s" if summary.items_per_second else ""
        lines += [
            f"Latency per item: p50 {latency.p50_ms:.1f} ms, p95 {latency.p95_ms:.1f} ms, "
            f"max {latency.max_ms:.1f} ms{rate}.",
            "",
        ]
    sections: list[tuple[str, Iterable[tuple[str, int]]]] = [
        ("Trigger", summary.by_trigger.items()),
        ("Admission code", summary.by_admission.items()),
        ("Verdict", summary.by_verdict.items()),
        ("Outcome", summary.by_outcome.items()),
        ("Retrieval code", summary.by_retrieval.items()),
        ("Index freshness", summary.by_freshness.items()),
        ("Failure (no decision)", summary.failures_by_reason.items()),
        ("Provider fault (failed open)", summary.provider_faults_by_reason.items()),
    ]
    for title, counts in sections:
        lines += _count_table(title, counts)
    return "\n".join(lines)


def _count_table(title: str, counts: Iterable[tuple[str, int]]) -> list[str]:
    rows = [f"| `{value}` | {count} |" for value, count in counts]
    if not rows:
        return [f"**{title}**: none", ""]
    return [f"| {title} | items |", "| --- | --- |", *rows, ""]
