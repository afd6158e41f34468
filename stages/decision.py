"""decision: assemble the public `replan_evidence_decision_v0` from the stages' values."""

from obelisk_session_evidence.contracts.decision import AdmissionOutcome, ReplanEvidenceDecision, RetrievalOutcome
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceReceipt
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.stage_values import Admission, Retrieval, RouteComparison


def decision(
    situation: ReplanSituation,
    admission: Admission,
    retrieval: Retrieval,
    comparison: RouteComparison,
    receipt: HistoricalEvidenceReceipt | None,
) -> ReplanEvidenceDecision:
    """The public decision: codes, numbers, the legal delta and the receipt; no content."""
    return ReplanEvidenceDecision(
        situation_id=situation.situation_id,
        obligation_id=situation.obligation.obligation_id,
        trigger=admission.trigger,
        admission=AdmissionOutcome(admitted=admission.status == "admitted", reason_code=admission.reason_code),
        retrieval=RetrievalOutcome(performed=retrieval.status != "not_admitted", reason_code=retrieval.reason_code),
        comparison=comparison.comparison,
        semantic_delta=comparison.semantic_delta,
        receipt=receipt,
    )
