"""Reprocess stalled work items in bulk: spool them, plan what is left (`batch.plan`), decide
each, summarise.

No Prefect here. `flows/reprocess_stalled.py` maps `decide_item` over `plan_batch`'s pending items;
the benchmark and the tests call the same functions directly.

The output folder holds only public, content-free files (`batch.outputs` has the layout).
Records are written after their decision, each by an atomic rename, so a batch killed half-way
leaves every item either fully recorded or absent, and a re-run completes the rest.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from obelisk_session_evidence.batch.manifest import load_manifest
from obelisk_session_evidence.batch.outputs import (
    SETTLED_RETRIEVALS,
    RunStats,
    decision_path,
    read_records,
    record_path,
    summary_of,
    summary_path,
)
from obelisk_session_evidence.batch.plan import (
    UNKNOWN_REVISION,
    BatchRef,
    PlannedItem,
    item_key,
    plan_batch,
    prepare_shared_state,
)
from obelisk_session_evidence.compose import decide, provider_factory_for
from obelisk_session_evidence.contracts.batch import BatchItemRecord, BatchManifest, BatchSummary
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, ProviderKind
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.digests import agent_digest, canonical_digest
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput, StageFailed
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.contracts.reason_codes import BatchItemCode
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import read_spooled


@dataclass(slots=True)
class BatchContext:
    """One batch's settings in one process, and its providers per thread and scope."""

    paths: StatePaths
    manifest: BatchManifest
    provider_factory: ProviderFactory
    policy: AdmissionPolicy
    """Read once: every item is decided under the configuration the plan keyed it with."""
    _local: threading.local = field(default_factory=threading.local)

    @property
    def out_dir(self) -> Path:
        return Path(self.manifest.out_dir)

    def cached_provider(self, enablement: Enablement, kind: ProviderKind) -> EvidenceProvider:
        """The provider for a scope, built once per thread (providers may hold connections that
        are not thread-safe)."""
        cache: dict[tuple[Any, ...], EvidenceProvider] = self._local.__dict__.setdefault("cache", {})
        key = (enablement.scope_key, kind)
        if key not in cache:
            cache[key] = self.provider_factory(enablement, kind)
        return cache[key]


_CONTEXT_LOCK = threading.Lock()


def batch_context(batch: BatchRef, provider_factory: ProviderFactory | None = None) -> BatchContext:
    """The context for this batch in this process (a Dask worker builds its own once)."""
    with _CONTEXT_LOCK:
        return _context_for(batch, provider_factory)


@lru_cache(maxsize=8)
def _context_for(batch: BatchRef, provider_factory: ProviderFactory | None) -> BatchContext:
    paths = batch.paths
    prepare_shared_state(paths)
    return BatchContext(
        paths=paths,
        manifest=load_manifest(paths, batch.manifest_ref),
        provider_factory=provider_factory_for(paths, provider_factory),
        policy=load_policy(paths),
    )


def decide_item(
    batch: BatchRef, item: PlannedItem, *, provider_factory: ProviderFactory | None = None
) -> BatchItemRecord:
    """Decide one spooled item and write its decision and record; a bad item is a failed record."""
    context = batch_context(batch, provider_factory)
    started = time.perf_counter()
    attempt = _attempt(context, item)
    latency_ms = round((time.perf_counter() - started) * 1000, 3)
    if attempt.decision is None or attempt.situation is None:
        record = _failed_record(item, attempt.situation, attempt.failure, attempt.problems, latency_ms)
    else:
        write_private(decision_path(context.out_dir, item.item_ref), attempt.decision.model_dump_json().encode())
        record = _decided_record(batch, context.manifest, item, attempt.situation, attempt.decision, latency_ms)
    write_private(record_path(context.out_dir, item.item_ref), record.model_dump_json().encode())
    return record


@dataclass(slots=True)
class _Attempt:
    """How far one item got: its situation once read, its decision once made, else why not."""

    situation: ReplanSituation | None = None
    decision: ReplanEvidenceDecision | None = None
    failure: tuple[BatchItemCode, str | None] = (StageFailed.reason_code, None)
    """The reason code and the failed stage, when there is no decision."""
    problems: tuple[str, ...] = ()


def _attempt(context: BatchContext, item: PlannedItem) -> _Attempt:
    """Read the spooled item and decide it; every fault becomes the attempt's failure."""
    attempt = _Attempt()
    refused = context.manifest.invalid.get(item.item_ref)
    try:
        if refused is not None:  # refused when read: never spooled
            raise InvalidInput("; ".join(refused.problems), problems=refused.problems)
        raw = read_spooled(context.paths, "situations", item.item_ref, max_bytes=MAX_DOCUMENT_BYTES)
        attempt.situation = load_contract(ReplanSituation, raw)
        attempt.decision = decide(
            attempt.situation,
            paths=context.paths,
            provider_factory=context.cached_provider,
            provider_kind=context.manifest.provider_kind,
            policy=context.policy,
        ).decision
    except StageFailed as error:
        attempt.failure = (error.cause or error.reason_code, error.stage)
    except InvalidInput as error:
        attempt.failure, attempt.problems = (error.reason_code, None), error.problems or (error.detail,)
    except EvidenceError as error:
        attempt.failure = (error.reason_code, None)
    except OSError:
        attempt.failure = (InvalidInput.reason_code, None)
    except Exception:
        attempt.failure = (StageFailed.reason_code, None)
    return attempt


def _failed_record(
    item: PlannedItem,
    situation: ReplanSituation | None,
    failure: tuple[BatchItemCode, str | None],
    problems: tuple[str, ...],
    latency_ms: float,
) -> BatchItemRecord:
    reason_code, stage = failure
    return BatchItemRecord(
        item_ref=item.item_ref,
        line=item.line,
        key=item.key,
        skippable=False,
        status="failed",
        reason_code=reason_code,
        failed_stage=stage,
        invalid_fields=[problem[:400] for problem in problems[:5]],
        situation_id=situation.situation_id if situation else item.situation_id,
        agent_digest=agent_digest(situation.scope.agent_id) if situation else None,
        latency_ms=latency_ms,
    )


def _decided_record(
    batch: BatchRef,
    manifest: BatchManifest,
    item: PlannedItem,
    situation: ReplanSituation,
    decision: ReplanEvidenceDecision,
    latency_ms: float,
) -> BatchItemRecord:
    receipt = decision.receipt
    key, revision_known = item.key, item.revision_known
    if receipt is not None and receipt.index_revision_digest != item.index_revision_digest:
        # The index moved between planning and the lookup: record what the decision really used.
        key = item_key(
            item.item_ref,
            receipt.index_revision_digest,
            config=batch.config_digest,
            provider_kind=manifest.provider_kind,
        )
        revision_known = receipt.index_revision_digest != canonical_digest(UNKNOWN_REVISION)
    settled = decision.retrieval.reason_code in SETTLED_RETRIEVALS
    return BatchItemRecord(
        item_ref=item.item_ref,
        line=item.line,
        key=key,
        skippable=revision_known and settled,
        status="decided",
        reason_code="decided",
        situation_id=decision.situation_id,
        agent_digest=agent_digest(situation.scope.agent_id),
        trigger=decision.trigger,
        admission_code=decision.admission.reason_code,
        verdict=decision.comparison.verdict,
        outcomes=list(decision.semantic_delta.outcomes),
        retrieval_code=decision.retrieval.reason_code,
        result_count=receipt.result_count if receipt else 0,
        evidence_type_counts=dict(receipt.evidence_type_counts) if receipt else {},
        freshness=receipt.freshness if receipt else None,
        truncated=receipt.truncated if receipt else False,
        provider_version=receipt.provider_version if receipt else None,
        latency_ms=latency_ms,
    )


@dataclass(frozen=True, slots=True)
class BatchReport:
    """The summary of a batch and the records it was computed from (public, content-free)."""

    summary: BatchSummary
    records: tuple[BatchItemRecord, ...]


def report_batch(paths: StatePaths, manifest_ref: str, *, run: RunStats | None = None) -> BatchReport:
    """Summarise every item of the manifest (also written to summary.json), with its records."""
    manifest = load_manifest(paths, manifest_ref)
    out_dir = Path(manifest.out_dir)
    records = read_records(out_dir, manifest.item_refs)
    summary = summary_of(manifest_ref, manifest, records, run=run)
    write_private(summary_path(out_dir), summary.model_dump_json(indent=2).encode())
    return BatchReport(summary=summary, records=tuple(records))


def run_batch_directly(
    paths: StatePaths,
    manifest_ref: str,
    *,
    provider_factory: ProviderFactory | None = None,
    stop_after: int | None = None,
    concurrency: int = 1,
) -> BatchSummary:
    """Plan, decide every pending item in this process (`concurrency` threads), and summarise:
    no Prefect, the same outputs as the flow.

    `stop_after` decides only that many items, as a run killed half-way would.
    """
    started = time.perf_counter()
    plan = plan_batch(paths, manifest_ref, provider_factory=provider_factory)
    pending = plan.pending if stop_after is None else plan.pending[:stop_after]
    if concurrency > 1:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(lambda item: decide_item(plan.batch, item, provider_factory=provider_factory), pending))
    else:
        for item in pending:
            decide_item(plan.batch, item, provider_factory=provider_factory)
    stats = RunStats(len(pending), len(plan.skipped), time.perf_counter() - started)
    return report_batch(paths, manifest_ref, run=stats).summary
