"""RFC §5: the historical-evidence request, the private result and the public receipt."""

from typing import Annotated, Final, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from obelisk_session_evidence.contracts.base import (
    PROVIDER_ID,
    ContractModel,
    Digest,
    EvidenceType,
    Freshness,
    OpaqueId,
    Trigger,
)
from obelisk_session_evidence.contracts.situation import Revision

MAX_QUERY_TERMS: Final = 24
MAX_QUERY_TERM_CHARS: Final = 256

QueryTerm = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_TERM_CHARS)]
Ref = Annotated[str, StringConstraints(pattern=r"^[a-z]+:[0-9a-f]{16,64}$")]
"""An opaque reference (`session:<hex>`, `message:<hex>`): a digest, never a local path."""


class RequestScope(ContractModel):
    """The one scope a request may read; broadening flags are fixed to false."""

    agent_id: OpaqueId
    """The agent whose own sessions are read."""
    project_id: OpaqueId
    """The LoopX project."""
    repository_id: OpaqueId
    """The repository identity."""
    allow_cross_agent: Literal[False] = False
    """Cross-agent retrieval is not qualified in v0."""
    allow_cross_project: Literal[False] = False
    """Cross-project retrieval is not qualified in v0."""


class RequestLimits(ContractModel):
    """Bounds the provider must respect (already clamped to the hard caps)."""

    max_sessions: Annotated[int, Field(ge=1)]
    """Most sessions to draw items from."""
    max_items: Annotated[int, Field(ge=1)]
    """Most items to return."""
    max_snippet_chars: Annotated[int, Field(ge=1)]
    """Longest snippet, in characters."""
    max_total_chars: Annotated[int, Field(ge=1)]
    """Most snippet characters in total."""


class HistoricalEvidenceRequest(ContractModel):
    """`historical_evidence_request_v0`: one scoped, bounded lookup."""

    schema_version: Literal["historical_evidence_request_v0"] = "historical_evidence_request_v0"
    """This contract's schema id."""
    request_id: OpaqueId
    """Deterministic id of this lookup."""
    situation_id: OpaqueId
    """The situation that asked."""
    trigger: Trigger
    """The admitted trigger."""
    scope: RequestScope
    """The only scope the provider may read."""
    revision: Revision | None = None
    """The current revision, for revision-aware ranking."""
    evidence_types: Annotated[list[EvidenceType], Field(min_length=1, max_length=5)]
    """Evidence types to return."""
    query_terms: Annotated[list[QueryTerm], Field(min_length=1, max_length=MAX_QUERY_TERMS)]
    """Bounded terms from canonical situation fields; matched literally, never as syntax."""
    limits: RequestLimits
    """Bounds on the answer."""


class ScopeApplied(ContractModel):
    """The scope the provider actually enforced."""

    agent_id: OpaqueId
    """The agent whose sessions were read."""
    project_id: OpaqueId
    """The LoopX project."""
    repository_id: OpaqueId
    """The repository identity."""
    cross_agent_used: Literal[False] = False
    """Always false in v0."""


class EvidenceItem(ContractModel):
    """One historical observation: opaque refs, a type, and a bounded snippet."""

    session_ref: Ref
    """Opaque reference to the session."""
    message_ref: Ref | None = None
    """Opaque reference to the message or tool call."""
    evidence_type: EvidenceType
    """What kind of evidence the snippet is."""
    observed_at: AwareDatetime | None = None
    """When the observation was recorded."""
    revision_ref: Annotated[str, StringConstraints(max_length=80)] | None = None
    """The repository revision the session ran at, when known."""
    snippet: str
    """Bounded, redacted excerpt. Private: never logged or published."""


MAX_VERDICT_REFS: Final = 128
"""Most refs a verdict basis names: every step compare-route reads (at most 64 prior calls and
50 capped items)."""
VerdictRefs = Annotated[list[Ref], Field(max_length=MAX_VERDICT_REFS)]


class VerdictBasis(ContractModel):
    """What the route comparison's verdict rests on, by opaque ref. Private like the result."""

    rests_on: VerdictRefs
    """The items (or the structured prior calls behind them) the verdict rests on, best first:
    the prior runs the route repeats, the blocker or hypothesis text it repeats."""
    successors: VerdictRefs = []
    """For a failure verdict, what worked after each failure it rests on, where the history
    shows it: the later call in the same checkout in which the failing program succeeded
    (`comparators/successors.py`); empty when nothing later succeeded."""


class HistoricalEvidenceResult(ContractModel):
    """`historical_evidence_result_v0`: private, consumed only inside the admitted Turn."""

    schema_version: Literal["historical_evidence_result_v0"] = "historical_evidence_result_v0"
    """This contract's schema id."""
    request_id: OpaqueId
    """The request this answers."""
    provider_id: Literal["obelisk-session-evidence"] = PROVIDER_ID
    """Fixed for every backend."""
    provider_version: Annotated[str, StringConstraints(min_length=1, max_length=80)]
    """Package version and backend, e.g. `0.1.0 native-index/1`."""
    index_revision: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    """Changes whenever the index content changes; `unknown` when not known."""
    scope_applied: ScopeApplied
    """The scope actually enforced."""
    freshness: Freshness
    """How current the index is; absence from a non-fresh index is never 'no history'."""
    items: list[EvidenceItem] = []
    """Ranked items, best first."""
    truncated: bool
    """True when anything was cut (items dropped or snippets shortened)."""
    omitted_count: Annotated[int, Field(ge=0)]
    """How many items were dropped."""
    verdict_basis: VerdictBasis | None = None
    """What the route comparison's verdict rests on and what worked after it (compare-route
    fills it in the Turn's private result); None from a provider, and when it rests on no item."""


class PriorCallRevisions(ContractModel):
    """The lookup's prior tool calls by where git placed the revision each recorded (docs/revisions.md).

    Counts only: never a revision or a path. A call whose revision is unchecked or unrecorded is
    compared as if it ran at the current revision; these counts make that visible."""

    ancestor: Annotated[int, Field(ge=0)]
    """Calls at a commit on the situation's revision line (an ancestor of it or of its merge base)."""
    not_ancestor: Annotated[int, Field(ge=0)]
    """Calls at a commit on neither: their failures never count as current failures."""
    unchecked: Annotated[int, Field(ge=0)]
    """Calls whose recorded revision git could not place (no live repository, no situation
    revision, an unknown commit, a timeout)."""
    unrecorded: Annotated[int, Field(ge=0)]
    """Calls whose session recorded no revision (Claude Code sessions record none)."""

    def describe(self) -> str:
        """The counts in words, for people (`run`'s text, the flow run's table)."""
        return (
            f"ancestor {self.ancestor}, not ancestor {self.not_ancestor}, "
            f"unchecked {self.unchecked}, unrecorded {self.unrecorded}"
        )


class HistoricalEvidenceReceipt(ContractModel):
    """`historical_evidence_receipt_v0`: public proof that a scoped lookup happened."""

    schema_version: Literal["historical_evidence_receipt_v0"] = "historical_evidence_receipt_v0"
    """This contract's schema id."""
    request_id: OpaqueId
    """The request the receipt is for."""
    provider_id: Literal["obelisk-session-evidence"] = PROVIDER_ID
    """Fixed for every backend."""
    provider_version: Annotated[str, StringConstraints(min_length=1, max_length=80)]
    """Package version and backend."""
    index_revision_digest: Digest
    """Digest of the index revision."""
    scope_digest: Digest
    """Digest of the scope applied."""
    query_digest: Digest
    """Salted digest of the query terms."""
    result_digest: Digest
    """Salted digest of the capped items."""
    result_count: Annotated[int, Field(ge=0)]
    """Items in the capped result."""
    evidence_type_counts: dict[EvidenceType, Annotated[int, Field(ge=0)]]
    """Items per evidence type."""
    freshness: Freshness
    """Index freshness at lookup time."""
    truncated: bool
    """Whether the result was cut."""
    omitted_count: Annotated[int, Field(ge=0)]
    """How many items were dropped."""
    prior_call_revisions: PriorCallRevisions | None = None
    """The structured prior calls compared, by where git placed their revisions; None in a receipt
    written before it was counted."""
    verdict_items: Annotated[int, Field(ge=0)] | None = None
    """How many items (or prior calls) the verdict rests on (the private result names them);
    None in a receipt written before it was counted."""
    successor_items: Annotated[int, Field(ge=0)] | None = None
    """How many grounded successors the private result names (what worked after a failure the
    verdict rests on); None in a receipt written before it was counted."""
    grants_new_action_authority: Literal[False] = False
    """A receipt never authorises anything."""
    external_writes_performed: Literal[False] = False
    """The lookup wrote nothing outside the owner's state."""
    raw_content_captured: Literal[False] = False
    """No raw content is in the receipt."""

    def describe_verdict_basis(self) -> str:
        """What the verdict rests on, in counts, for people (`run`'s text, the flow run's table)."""
        if self.verdict_items is None:
            return "not counted"
        return f"rests on {self.verdict_items} items, {self.successor_items or 0} successors"
