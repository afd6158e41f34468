"""Reprocess stalled work items in bulk: spool them, plan what is left, decide each, summarise.

No Prefect here. `flows/reprocess_stalled.py` maps `decide_item` over `plan_batch`'s pending items;
the benchmark and the tests call the same functions directly.

The output folder holds only public, content-free files (`batch.outputs` has the layout).

Idempotency: an item is skipped when its record says `decided` under the same key and is
`skippable`. The key is known before the pipeline runs: the situation digest, the index revision
read up front from the configured provider (`index_revision`), the configuration file's digest, the
package version and the provider override. An unknown index revision is never skipped, nor is a
decision whose provider failed (it failed open and may answer next time), nor a failed item.
Records are written after their decision, each by an atomic rename, so a batch killed half-way
leaves every item either fully recorded or absent, and a re-run completes the rest.
"""

import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.batch.manifest import load_manifest
from obelisk_session_evidence.batch.outputs import (
    SETTLED_RETRIEVALS,
    RunStats,
    decision_path,
    read_record,
    read_records,
    record_path,
    summary_of,
    summary_path,
)
from obelisk_session_evidence.compose import backend_for, decide, provider_factory_for, tokenizer_cache
from obelisk_session_evidence.contracts.batch import BatchItemRecord, BatchManifest, BatchSummary
from obelisk_session_evidence.contracts.config import AdmissionPolicy, Enablement, ProviderKind
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.digests import agent_digest, canonical_digest
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput, StageFailed
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, load_contract
from obelisk_session_evidence.contracts.reason_codes import BatchItemCode
from obelisk_session_evidence.contracts.situation import ReplanSituation, public_situation_id
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.providers.version import PACKAGE_VERSION
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.salt import digest_salt
from obelisk_session_evidence.state.spool import read_spooled
from obelisk_session_evidence.tokenizer import load_ranks

NO_LOOKUP: Final = "no-lookup"
"""The revision of an item no enablement matches: no index is read, so none can change it."""
UNKNOWN_REVISION: Final = "unknown"
INVALID_ITEM: Final = "invalid-item"


@dataclass(frozen=True, slots=True)
class BatchRef:
    """What every per-item task receives: where the state is and which manifest (no content)."""

    state_root: str
    manifest_ref: str
    config_digest: str

    @property
    def paths(self) -> StatePaths:
        return StatePaths(Path(self.state_root))


@dataclass(frozen=True, slots=True)
class PlannedItem:
    """One item still to decide, with the idempotency key computed before it runs."""

    item_ref: str
    key: str
    index_revision_digest: str
    revision_known: bool
    line: int
    """The item's line in the batch input."""
    situation_id: str | None
    """The situation's id when the item has a well-formed one (public by contract)."""

    @property
    def run_name(self) -> str:
        """The item's content-free task-run name: `item-<line>/<situation id>`."""
        return f"item-{self.line}/{self.situation_id}" if self.situation_id else f"item-{self.line}"


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """The manifest split into what is left to decide and what an earlier run already decided."""

    batch: BatchRef
    pending: tuple[PlannedItem, ...]
    skipped: tuple[str, ...]


def config_digest(paths: StatePaths) -> str:
    """Digest of the configuration file's bytes (`absent` when there is none)."""
    try:
        return "sha256:" + hashlib.sha256(paths.config_file.read_bytes()).hexdigest()
    except FileNotFoundError:
        return canonical_digest("config-absent")


def index_revision(factory: ProviderFactory, enablement: Enablement, kind: ProviderKind) -> str | None:
    """The index revision the provider for this enablement would answer from; None when unknown
    (any fault, or a backend that knows it only per lookup, as Obelisk)."""
    try:
        revision = factory(enablement, kind).index_revision()
    except Exception:
        return None
    if not isinstance(revision, str) or not revision or revision == UNKNOWN_REVISION:
        return None
    return revision


def item_key(item_ref: str, index_revision_digest: str, *, config: str, provider_kind: str | None) -> str:
    """The idempotency key of one item: what its decision depends on besides code."""
    return canonical_digest(
        {
            "item": item_ref,
            "index_revision": index_revision_digest,
            "config": config,
            "provider_kind": provider_kind,
            "version": PACKAGE_VERSION,
        }
    )


def plan_batch(
    paths: StatePaths,
    manifest_ref: str,
    *,
    provider_factory: ProviderFactory | None = None,
) -> BatchPlan:
    """Compute every item's key up front and keep the ones no earlier run settled."""
    factory = provider_factory_for(paths, provider_factory)
    manifest = load_manifest(paths, manifest_ref)
    config = config_digest(paths)
    policy = load_policy(paths)
    revisions: dict[tuple[Any, ...], str | None] = {}
    pending: list[PlannedItem] = []
    skipped: list[str] = []
    out_dir = Path(manifest.out_dir)
    for item_ref, line in manifest.line_of().items():
        refused = manifest.invalid.get(item_ref)
        raw = None if refused else _spooled_item(paths, item_ref)
        situation = _valid_situation(raw)
        revision = _revision_for(policy, situation, manifest.provider_kind, revisions, factory)
        revision_digest = canonical_digest(revision if revision is not None else UNKNOWN_REVISION)
        key = item_key(item_ref, revision_digest, config=config, provider_kind=manifest.provider_kind)
        if revision is not None and _already_decided(out_dir, item_ref, key):
            skipped.append(item_ref)
        else:
            situation_id = (
                situation.situation_id if situation else refused.situation_id if refused else public_situation_id(raw)
            )
            pending.append(PlannedItem(item_ref, key, revision_digest, revision is not None, line, situation_id))
    _prepare_shared_state(paths)
    batch = BatchRef(str(paths.root), manifest_ref, config)
    return BatchPlan(batch=batch, pending=tuple(pending), skipped=tuple(skipped))


def _spooled_item(paths: StatePaths, item_ref: str) -> bytes | None:
    try:
        return read_spooled(paths, "situations", item_ref, max_bytes=MAX_DOCUMENT_BYTES)
    except InvalidInput:
        return None


def _valid_situation(raw: bytes | None) -> ReplanSituation | None:
    if raw is None:
        return None
    try:
        return load_contract(ReplanSituation, raw)
    except EvidenceError:
        return None


def _revision_for(
    policy: AdmissionPolicy,
    situation: ReplanSituation | None,
    provider_kind: ProviderKind | None,
    cache: dict[tuple[Any, ...], str | None],
    factory: ProviderFactory,
) -> str | None:
    """The item's index revision, read once per scope; invalid items get a fixed marker."""
    if situation is None:
        return INVALID_ITEM
    backend = backend_for(policy, situation, provider_kind)
    if backend is None:
        return NO_LOOKUP
    enablement, kind = backend
    scope = (enablement.scope_key, kind)
    if scope not in cache:
        cache[scope] = index_revision(factory, enablement, kind)
    return cache[scope]


def _already_decided(out_dir: Path, item_ref: str, key: str) -> bool:
    record = read_record(out_dir, item_ref)
    return (
        record is not None
        and record.status == "decided"
        and record.skippable
        and record.key == key
        and decision_path(out_dir, item_ref).exists()
    )


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


def _prepare_shared_state(paths: StatePaths) -> None:
    """Create the digest salt and the tokenizer's rank table before items run concurrently.

    Both are created on first use; concurrent first users would each pay for it (the rank table
    costs about 0.2 s to build), so the plan creates them once, and each process's context checks
    again under a lock.
    """
    digest_salt(paths)
    load_ranks(tokenizer_cache(paths))


def batch_context(batch: BatchRef, provider_factory: ProviderFactory | None = None) -> BatchContext:
    """The context for this batch in this process (a Dask worker builds its own once)."""
    with _CONTEXT_LOCK:
        return _context_for(batch, provider_factory)


@lru_cache(maxsize=8)
def _context_for(batch: BatchRef, provider_factory: ProviderFactory | None) -> BatchContext:
    paths = batch.paths
    _prepare_shared_state(paths)
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
    failure: tuple[BatchItemCode, str | None] | None = None
    problems: tuple[str, ...] = ()
    situation: ReplanSituation | None = None
    decision: ReplanEvidenceDecision | None = None
    refused = context.manifest.invalid.get(item.item_ref)
    try:
        if refused is not None:  # refused when read: never spooled
            raise InvalidInput("; ".join(refused.problems), problems=refused.problems)
        raw = read_spooled(context.paths, "situations", item.item_ref, max_bytes=MAX_DOCUMENT_BYTES)
        situation = load_contract(ReplanSituation, raw)
        decision = decide(
            situation,
            paths=context.paths,
            provider_factory=context.cached_provider,
            provider_kind=context.manifest.provider_kind,
            policy=context.policy,
        ).decision
    except StageFailed as error:
        failure = (error.cause or error.reason_code, error.stage)
    except InvalidInput as error:
        failure, problems = (error.reason_code, None), error.problems or (error.detail,)
    except EvidenceError as error:
        failure = (error.reason_code, None)
    except OSError:
        failure = (InvalidInput.reason_code, None)
    except Exception:
        failure = (StageFailed.reason_code, None)
    latency_ms = round((time.perf_counter() - started) * 1000, 3)
    if decision is None or situation is None:
        record = _failed_record(item, situation, failure or (StageFailed.reason_code, None), problems, latency_ms)
    else:
        write_private(decision_path(context.out_dir, item.item_ref), decision.model_dump_json().encode())
        record = _decided_record(batch, context.manifest, item, situation, decision, latency_ms)
    write_private(record_path(context.out_dir, item.item_ref), record.model_dump_json().encode())
    return record


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
