"""The values that move between stages, in pipeline order. Private ones stay in memory."""

from typing import Annotated, Literal

from pydantic import Field

from obelisk_session_evidence.contracts.base import ContractModel, Trigger
from obelisk_session_evidence.contracts.decision import Comparison, SemanticDelta
from obelisk_session_evidence.contracts.evidence import (
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    VerdictBasis,
)
from obelisk_session_evidence.contracts.prior_calls import MAX_PRIOR_CALLS, PriorToolCall
from obelisk_session_evidence.contracts.reason_codes import DenialCode, GapCode, ProviderFaultCode
from obelisk_session_evidence.contracts.revision_checks import RevisionCheck


class GapAssessment(ContractModel):
    """classify-gap: which history gaps the situation shows."""

    triggers: list[Trigger]
    """Every trigger that applies, in RFC order; empty when none does."""
    reason_code: GapCode
    """`gap_classified`, or why no trigger applies."""


class Admitted(ContractModel):
    """admit: a lookup is allowed, with its bounded request."""

    status: Literal["admitted"] = "admitted"
    """Tags the variant."""
    reason_code: Literal["admitted"] = "admitted"
    """Always `admitted`."""
    trigger: Trigger
    """The admitted trigger."""
    request: HistoricalEvidenceRequest
    """The bounded request."""
    token_budget: Annotated[int, Field(ge=1)]
    """Token budget of the private result."""


class NotAdmitted(ContractModel):
    """admit: no lookup, and why."""

    status: Literal["not_admitted"] = "not_admitted"
    """Tags the variant."""
    reason_code: DenialCode
    """The denial reason."""
    trigger: Trigger | None
    """The first classified trigger, if any."""


Admission = Annotated[Admitted | NotAdmitted, Field(discriminator="status")]
"""What admit decides: `Admitted` or `NotAdmitted`."""


class Retrieved(ContractModel):
    """retrieve: the provider's in-scope answer."""

    status: Literal["retrieved"] = "retrieved"
    """Tags the variant."""
    reason_code: Literal["retrieved"] = "retrieved"
    """Always `retrieved`."""
    result: HistoricalEvidenceResult
    """The (uncapped) result."""
    prior_calls: Annotated[list[PriorToolCall], Field(max_length=MAX_PRIOR_CALLS)] = []
    """The provider's structured prior calls (private; for compare-route only)."""
    revision_checks: Annotated[list[RevisionCheck], Field(max_length=MAX_PRIOR_CALLS)] = []
    """Where git places the revisions those calls recorded (private; for compare-route and the
    receipt's counts)."""


class RetrievalFailed(ContractModel):
    """retrieve: the provider failed; a typed empty result (freshness `unknown`), fail-open."""

    status: Literal["failed"] = "failed"
    """Tags the variant."""
    reason_code: ProviderFaultCode
    """The provider's failure code."""
    result: HistoricalEvidenceResult
    """The typed empty result: no items, freshness `unknown`, so absence is never 'no history'."""


class NotRetrieved(ContractModel):
    """retrieve: nothing was asked, because nothing was admitted."""

    status: Literal["not_admitted"] = "not_admitted"
    """Tags the variant."""
    reason_code: Literal["not_admitted"] = "not_admitted"
    """Always `not_admitted`."""


Retrieval = Annotated[Retrieved | RetrievalFailed | NotRetrieved, Field(discriminator="status")]
"""What retrieve got: `Retrieved`, `RetrievalFailed` or `NotRetrieved`."""


class CappedEvidence(ContractModel):
    """cap-by-tokens: the private result bounded for a prompt."""

    result: HistoricalEvidenceResult | None
    """The capped result; None when not admitted."""
    prior_calls: Annotated[list[PriorToolCall], Field(max_length=MAX_PRIOR_CALLS)] = []
    """The structured prior calls, uncapped by tokens: they never reach a prompt."""
    revision_checks: Annotated[list[RevisionCheck], Field(max_length=MAX_PRIOR_CALLS)] = []
    """Where git places the revisions those calls recorded (never reach a prompt either)."""
    token_count: Annotated[int, Field(ge=0)]
    """Tokens in the capped items, exact when `token_count_exact`; otherwise their UTF-8 byte
    length, an upper bound (a token is at least one byte), and the cap needed no tokenizer."""
    token_count_exact: bool = True


class RouteComparison(ContractModel):
    """compare-route: the novelty comparison and the legal Replan outcome."""

    comparison: Comparison
    """Scores and verdict (numbers and codes only)."""
    semantic_delta: SemanticDelta
    """LoopX's delta after history removed any repeated claim."""
    verdict_basis: VerdictBasis | None = None
    """What the verdict rests on and what worked after it, by opaque ref (private: the pipeline
    puts it in the Turn's private result; the receipt counts it); None when it rests on no item."""
