"""The values that move between stages, in pipeline order. Private ones stay in memory."""

from typing import Annotated

from pydantic import Field

from contracts.base import ContractModel, Trigger
from contracts.decision import Comparison, ReasonCode, SemanticDelta
from contracts.evidence import HistoricalEvidenceRequest, HistoricalEvidenceResult
from contracts.prior_calls import MAX_PRIOR_CALLS, PriorToolCall


class GapAssessment(ContractModel):
    """classify-gap: which history gaps the situation shows."""

    triggers: list[Trigger]
    """Every trigger that applies, in RFC order; empty when none does."""
    reason_code: ReasonCode
    """`gap_classified`, or why no trigger applies."""


class Admission(ContractModel):
    """admit: whether a lookup is allowed, and the request if it is."""

    admitted: bool
    """True when retrieval may run."""
    reason_code: ReasonCode
    """`admitted`, or the denial reason."""
    trigger: Trigger | None
    """The admitted trigger (else the first classified one)."""
    request: HistoricalEvidenceRequest | None
    """The bounded request; None when not admitted."""
    token_budget: Annotated[int, Field(ge=1)]
    """Token budget of the private result."""


class Retrieval(ContractModel):
    """retrieve: the provider's answer, or a typed empty result with the failure code."""

    result: HistoricalEvidenceResult | None
    """The (uncapped) result; None when not admitted."""
    prior_calls: Annotated[list[PriorToolCall], Field(max_length=MAX_PRIOR_CALLS)] = []
    """The provider's structured prior calls (private; for compare-route only)."""
    reason_code: ReasonCode
    """`retrieved`, `not_admitted`, or the provider's failure code."""


class CappedEvidence(ContractModel):
    """cap-by-tokens: the private result bounded for a prompt."""

    result: HistoricalEvidenceResult | None
    """The capped result; None when not admitted."""
    prior_calls: Annotated[list[PriorToolCall], Field(max_length=MAX_PRIOR_CALLS)] = []
    """The structured prior calls, uncapped by tokens: they never reach a prompt."""
    token_count: Annotated[int, Field(ge=0)]
    """Tokens in the capped items."""


class RouteComparison(ContractModel):
    """compare-route: the novelty comparison and the legal Replan outcome."""

    comparison: Comparison
    """Scores and verdict (numbers and codes only)."""
    semantic_delta: SemanticDelta
    """LoopX's delta after history removed any repeated claim."""
