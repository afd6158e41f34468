"""`replan_evidence_decision_v0`: the public output. Numbers and codes only, never text."""

from typing import Annotated, Literal

from pydantic import Field

from obelisk_session_evidence.contracts.base import ContractModel, Fingerprint, OpaqueId, Trigger
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceReceipt
from obelisk_session_evidence.contracts.outcomes import OutcomeId
from obelisk_session_evidence.contracts.reason_codes import (
    AdmissionCode,
    ComparisonDimension,
    DeltaReasonCode,
    RetrievalCode,
    ThresholdName,
)

Verdict = Literal[
    "novel",
    "repeats_prior_failure",
    "repeats_prior_failure_changed_since",
    "repeats_prior_attempt",
    "novelty_unverified",
    "not_compared",
]
ReasonCode = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Score = Annotated[int, Field(ge=0, le=100)]


class AdmissionOutcome(ContractModel):
    """Whether retrieval was admitted, and the stable code saying why."""

    admitted: bool
    """True when a lookup was allowed."""
    reason_code: AdmissionCode
    """`admitted`, or the denial reason."""


class RetrievalOutcome(ContractModel):
    """Whether the provider answered; a fault is a typed code, never an exception."""

    performed: bool
    """True when the provider was asked."""
    reason_code: RetrievalCode
    """`retrieved`, `not_admitted`, or the provider's failure code."""


class Comparison(ContractModel):
    """How novel the proposed route is against the retrieved history."""

    verdict: Verdict
    """The comparison's verdict."""
    scores: dict[ComparisonDimension, Score] = {}
    """Novelty per dimension, 0 (a repeat) to 100 (nothing alike), and `combined`."""
    thresholds: dict[ThresholdName, Score] = {}
    """The thresholds the verdict used."""
    matched_items: Annotated[int, Field(ge=0)] = 0
    """How many historical items matched the route."""
    truncated_commands: Annotated[int, Field(ge=0)] = 0
    """How many commands (proposed or prior) were compared only in part: cut at their length
    bound or past the comparator's work bounds. 0 when every command was compared whole."""
    token_fallback_commands: Annotated[int, Field(ge=0)] = 0
    """How many commands the shell grammar could not read, so were compared by shell words."""


class SemanticDelta(ContractModel):
    """LoopX's `replan_semantic_delta_v0`; outcomes are only LoopX's legal ids."""

    accepted: bool
    """True when `satisfying_outcomes` is non-empty."""
    outcomes: list[OutcomeId]
    """Outcomes the proposed observation earns, after history removed any."""
    satisfying_outcomes: list[OutcomeId]
    """`outcomes` ∩ `required_any_of`, in `outcomes` order."""
    required_any_of: list[OutcomeId]
    """What would settle the obligation."""
    obligation_id: OpaqueId
    """The obligation this delta is bound to."""
    observation_fingerprint: Fingerprint
    """LoopX's fingerprint of the proposed observation."""
    reason: str
    """A fixed sentence chosen by `reason_code`; never derived from content."""
    reason_code: DeltaReasonCode | None = None
    """Stable code for the reason."""


class ReplanEvidenceDecision(ContractModel):
    """The public decision LoopX's Replan cold path receives."""

    schema_version: Literal["replan_evidence_decision_v0"] = "replan_evidence_decision_v0"
    """This contract's schema id."""
    situation_id: OpaqueId
    """The situation decided."""
    obligation_id: OpaqueId
    """The obligation the decision is bound to."""
    trigger: Trigger | None
    """The admitted trigger, else the first classified one, else null."""
    admission: AdmissionOutcome
    """Whether retrieval was admitted."""
    retrieval: RetrievalOutcome
    """Whether the provider answered."""
    comparison: Comparison
    """The novelty comparison."""
    semantic_delta: SemanticDelta
    """The legal Replan outcome."""
    receipt: HistoricalEvidenceReceipt | None
    """Public receipt of the lookup; null when not admitted."""
