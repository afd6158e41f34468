"""`replan_recall_verdict_v0`: the verdict item's content in a LoopX recall. Codes, ids, counts.

LoopX's context-provider protocols carry items only (`resource_ref`, `summary`, `content`,
`score`), so the decision travels as one item ahead of the history items, its `content` this
document. It is the one item that is not history: never a snippet, never query text; like the
receipt it is content-free, and it names the receipt by digest.
"""

from typing import Annotated, Literal

from pydantic import Field

from obelisk_session_evidence.contracts.base import ContractModel, Digest, Fingerprint, Freshness, OpaqueId, Trigger
from obelisk_session_evidence.contracts.decision import Verdict
from obelisk_session_evidence.contracts.evidence import VerdictRefs
from obelisk_session_evidence.contracts.outcomes import OutcomeId
from obelisk_session_evidence.contracts.reason_codes import DeltaReasonCode, HistoryRuleCode

Count = Annotated[int, Field(ge=0)]


class RecallVerdict(ContractModel):
    """The decision on the proposed step, as the leading item of a LoopX recall carries it."""

    schema_version: Literal["replan_recall_verdict_v0"] = "replan_recall_verdict_v0"
    """This contract's schema id."""
    verdict: Verdict
    """The route comparison's verdict against this agent's earlier sessions."""
    trigger: Trigger | None
    """The trigger that admitted the lookup (`resume_or_handoff_gap` for `prepare-evidence`
    without an open obligation, whose route is the scope's recent unresolved failures)."""
    obligation_id: OpaqueId
    """The obligation the semantic delta is bound to (a lookup id when LoopX holds none)."""
    observation_fingerprint: Fingerprint
    """LoopX's fingerprint of the proposed observation."""
    accepted: bool
    """Our semantic delta: True when a required outcome survives history."""
    outcomes: list[OutcomeId]
    """The outcomes the proposed observation earns after history removed any."""
    satisfying_outcomes: list[OutcomeId]
    """`outcomes` that settle the obligation."""
    reason_code: DeltaReasonCode | None
    """Why the delta is what it is."""
    loopx_accepted: bool
    """What LoopX's own exact-id rules accept for the same step (`comparators/exact_ids.py`,
    held equal to LoopX by the conformance suite)."""
    divergence_code: HistoryRuleCode | None
    """Null when `accepted == loopx_accepted`; otherwise the history rule that removed the
    outcome LoopX would accept."""
    receipt_digest: Digest
    """`sha256:` digest of the canonical JSON of the lookup's `historical_evidence_receipt_v0`."""
    request_id: OpaqueId
    """The receipt's request id."""
    index_freshness: Freshness
    """Index freshness at lookup time."""
    retrieved_items: Count
    """Items in the capped result (the receipt's `result_count`)."""
    matched_items: Count
    """How many retrieved items matched the proposed route."""
    history_items: Count
    """How many history items follow this one in the same answer."""
    invoking_turn_excluded: Count
    """Records of the invoking host session left out (from the invocation onward)."""
    invoking_turn_undated: Count
    """Of those, how many were left out because they carry no time."""
    rests_on: VerdictRefs = []
    """Opaque refs of the items (or the prior calls behind them) the verdict rests on, best
    first (the private result's `verdict_basis`): a history item that follows has the same
    `resource_ref`; one left out of the answer is named all the same."""
    successors: VerdictRefs = []
    """Opaque refs of what worked after the failures the verdict rests on (their grounded
    successors, the private result's `verdict_basis`); empty when nothing later succeeded."""
