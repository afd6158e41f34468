"""Batch reprocessing of stalled work items: the private manifest, one record per item, the summary.

The manifest stays in the private spool (it names the output folder). Records and the summary are
public outputs: digests, codes, counts and timings only, never situation text or snippets.
"""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from obelisk_session_evidence.contracts.base import ContractModel, Digest, EvidenceType, Freshness, OpaqueId, Trigger
from obelisk_session_evidence.contracts.config import AbsolutePath, ProviderKind
from obelisk_session_evidence.contracts.decision import Verdict
from obelisk_session_evidence.contracts.outcomes import OutcomeId
from obelisk_session_evidence.contracts.reason_codes import AdmissionCode, BatchItemCode, RetrievalCode

Count = Annotated[int, Field(ge=0)]
AgentDigest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]
"""The first 8 hex of sha256(agent_id): enough to group runs, too short to be an identity."""
InputLine = Annotated[int, Field(ge=1)]
"""1-based line of an item in the batch input (a folder's files read in name order as one stream)."""
StageName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]{0,31}$")]
InvalidField = Annotated[str, StringConstraints(max_length=400)]


BatchName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
"""A batch's name for operators: its input's file or folder name, cut to safe characters."""


class InvalidItem(ContractModel):
    """An item refused when it was read: never spooled, recorded as `invalid_input`."""

    problems: Annotated[list[InvalidField], Field(max_length=5)]
    """What was invalid, `<field path>: <what is wrong>` (no values)."""
    situation_id: OpaqueId | None = None
    """Its situation id, when it carries a well-formed one."""


class BatchManifest(ContractModel):
    """`reprocess_stalled_manifest_v0`: what one batch decides. Private: it names the output folder."""

    schema_version: Literal["reprocess_stalled_manifest_v0"] = "reprocess_stalled_manifest_v0"
    """This document's schema id."""
    item_refs: Annotated[list[Digest], Field(min_length=1)]
    """Spool digests of the items, in input order, each once."""
    item_lines: Annotated[list[InputLine], Field(min_length=1)]
    """Each item's first line in the input, in `item_refs` order."""
    input_count: Count
    """Items read from the input, duplicates included."""
    out_dir: AbsolutePath
    """Where decisions, records and the summary are written."""
    provider_kind: ProviderKind | None = None
    """The provider override for every item, when given."""
    name: BatchName | None = None
    """The batch's name (its input's file or folder name), for flow run names."""
    invalid: dict[Digest, InvalidItem] = {}
    """Items refused when read (a subset of `item_refs`, by digest): their bytes were never spooled."""

    @model_validator(mode="after")
    def _one_line_per_item(self) -> "BatchManifest":
        if len(self.item_lines) != len(self.item_refs):
            raise ValueError("item_lines must give one line per item_ref")
        return self

    def line_of(self) -> dict[str, int]:
        """Item digest -> its input line."""
        return dict(zip(self.item_refs, self.item_lines, strict=True))


class BatchItemRecord(ContractModel):
    """`reprocess_stalled_item_v0`: what happened to one item, and the key that makes it final."""

    schema_version: Literal["reprocess_stalled_item_v0"] = "reprocess_stalled_item_v0"
    """This document's schema id."""
    item_ref: Digest
    """The item's spool digest."""
    line: InputLine
    """The item's line in the batch input (its first, when it appears more than once)."""
    key: Digest
    """Idempotency key: situation digest, index revision, configuration and version."""
    skippable: bool
    """True when a re-run may skip the item (decided, index revision known, no provider fault)."""
    status: Literal["decided", "failed"]
    """`decided` when a public decision was written; `failed` when the item has none."""
    reason_code: BatchItemCode
    """`decided`, or the failure's reason code (e.g. `invalid_input`, `stage_crashed`)."""
    failed_stage: StageName | None = None
    """The stage that raised, when a stage did."""
    invalid_fields: Annotated[list[InvalidField], Field(max_length=5)] = []
    """For an `invalid_input` item: what was invalid, `<field path>: <what is wrong>` (declared
    fields only, an unknown key named by where it is, never by its text; no values)."""
    situation_id: OpaqueId | None = None
    """The situation's id (public by contract), when the item has a well-formed one, even if
    the rest of the item is invalid."""
    agent_digest: AgentDigest | None = None
    """Short digest of the situation's agent id, for operator tags."""
    trigger: Trigger | None = None
    """The decision's trigger."""
    admission_code: AdmissionCode | None = None
    """The admission reason code."""
    verdict: Verdict | None = None
    """The comparison verdict."""
    outcomes: list[OutcomeId] = []
    """The semantic delta's outcomes."""
    retrieval_code: RetrievalCode | None = None
    """`retrieved`, `not_admitted`, or the provider fault that was failed open."""
    result_count: Count = 0
    """Items in the capped result."""
    evidence_type_counts: dict[EvidenceType, Count] = {}
    """Items per evidence type."""
    freshness: Freshness | None = None
    """Index freshness at lookup time; None when nothing was looked up."""
    truncated: bool = False
    """Whether the result was cut."""
    provider_version: Annotated[str, StringConstraints(max_length=80)] | None = None
    """The provider's version string, when a lookup happened."""
    latency_ms: Annotated[float, Field(ge=0)]
    """Time spent deciding this item (loading, validating and the pipeline)."""


class LatencySummary(ContractModel):
    """Per-item latency over the recorded items, nearest-rank percentiles."""

    p50_ms: Annotated[float, Field(ge=0)]
    """Median."""
    p95_ms: Annotated[float, Field(ge=0)]
    """95th percentile."""
    max_ms: Annotated[float, Field(ge=0)]
    """Slowest item."""


class BatchSummary(ContractModel):
    """`reprocess_stalled_summary_v0`: one batch at a glance; the same numbers as the batch artifact."""

    schema_version: Literal["reprocess_stalled_summary_v0"] = "reprocess_stalled_summary_v0"
    """This document's schema id."""
    manifest_ref: Digest
    """The manifest the summary covers."""
    input_count: Count
    """Items read from the input, duplicates included."""
    items: Count
    """Distinct items in the manifest."""
    decided: Count
    """Items with a public decision."""
    failed: Count
    """Items recorded as failed (no decision)."""
    missing: Count
    """Items with no record yet (a run was stopped before reaching them)."""
    processed_this_run: Count
    """Items this run decided or failed."""
    skipped_this_run: Count
    """Items this run skipped as already decided for the same key."""
    by_trigger: dict[str, Count]
    """Decided items per trigger (`none` when no trigger applied)."""
    by_admission: dict[AdmissionCode, Count]
    """Decided items per admission reason code."""
    by_verdict: dict[Verdict, Count]
    """Decided items per verdict."""
    by_outcome: dict[OutcomeId, Count]
    """Outcome ids over all decided items (an item may earn several, or none)."""
    by_retrieval: dict[RetrievalCode, Count]
    """Decided items per retrieval reason code."""
    by_agent: dict[AgentDigest, Count]
    """Recorded items per agent digest (the first 8 hex of sha256(agent_id))."""
    failures_by_reason: dict[BatchItemCode, Count]
    """Failed items per reason code."""
    by_freshness: dict[Freshness, Count] = {}
    """Decided items per index freshness at lookup time (items decided with no lookup are not
    counted): how many verdicts a stale or incomplete index could not vouch for."""
    provider_faults_by_reason: dict[RetrievalCode, Count]
    """Decided items whose provider failed (failed open, typed), per reason code."""
    latency: LatencySummary | None
    """Per-item latency; None when no item is recorded."""
    wall_seconds: Annotated[float, Field(ge=0)] | None = None
    """Wall time of this run, when it ran."""
    items_per_second: Annotated[float, Field(ge=0)] | None = None
    """Items this run processed per wall second."""


class BatchSpooled(ContractModel):
    """`reprocess_stalled_spool_v0`: what `batch --spool-only --format json` prints."""

    schema_version: Literal["reprocess_stalled_spool_v0"] = "reprocess_stalled_spool_v0"
    """This document's schema id."""
    manifest_ref: Digest
    """The manifest digest: the `reprocess-stalled` deployment's `manifest_ref` parameter."""
    items: Count
    """Distinct items spooled."""
    input_count: Count
    """Items read from the input, duplicates included."""
