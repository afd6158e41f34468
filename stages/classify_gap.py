"""classify-gap: which of the four RFC §4 history gaps a Replan situation shows."""

from obelisk_session_evidence.contracts.base import TRIGGERS, Trigger
from obelisk_session_evidence.contracts.outcomes import REPEAT_TRIGGER_KINDS
from obelisk_session_evidence.contracts.reason_codes import GapCode
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.stage_values import GapAssessment

_REPEATING_RESULTS = frozenset({"unchanged", "blocked"})


def classify_gap(situation: ReplanSituation) -> GapAssessment:
    """Every trigger that applies, in RFC order, or the reason none does."""
    applies: dict[Trigger, bool] = {
        "replan_repetition": _is_repetition(situation),
        "hypothesis_history_gap": situation.coverage.hypotheses_exhausted
        and situation.coverage.prior_session_coverage == "unknown",
        "resume_or_handoff_gap": situation.coverage.work_identified and situation.coverage.decision_evidence_missing,
        "operator_requested_history": situation.operator_request.requested,
    }
    triggers = [trigger for trigger in TRIGGERS if applies[trigger]]
    reason_code: GapCode = "gap_classified" if triggers else _no_gap_reason(situation)
    return GapAssessment(triggers=triggers, reason_code=reason_code)


def _is_repetition(situation: ReplanSituation) -> bool:
    """An explicit repeat trigger, or the two newest observations repeat unchanged/blocked."""
    if any(trigger.kind in REPEAT_TRIGGER_KINDS for trigger in situation.obligation.triggers):
        return True
    newest = sorted(situation.recent_observations, key=lambda o: o.generated_at)[-2:]
    return (
        len(newest) == 2
        and all(o.result_class in _REPEATING_RESULTS for o in newest)
        and newest[0].computed_fingerprint() == newest[1].computed_fingerprint()
    )


def _no_gap_reason(situation: ReplanSituation) -> GapCode:
    """The most specific reason no trigger applies."""
    coverage = situation.coverage
    if coverage.hypotheses_exhausted:
        return "prior_session_coverage_known"
    if coverage.decision_evidence_missing:
        return "work_not_identified"
    return "no_history_gap"
