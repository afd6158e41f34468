import pytest

from obelisk_session_evidence.stages.classify_gap import classify_gap
from tests.stages.helpers import situation_model

NO_COVERAGE_GAP = {
    "hypotheses_exhausted": False,
    "prior_session_coverage": "unknown",
    "work_identified": False,
    "decision_evidence_missing": False,
}


@pytest.mark.parametrize(
    ("kwargs", "triggers", "reason_code"),
    [
        ({"repeated": True, "coverage": NO_COVERAGE_GAP}, ["replan_repetition"], "gap_classified"),
        (
            {"repeated": False, "coverage": {**NO_COVERAGE_GAP, "hypotheses_exhausted": True}},
            ["hypothesis_history_gap"],
            "gap_classified",
        ),
        (
            {
                "repeated": False,
                "coverage": {**NO_COVERAGE_GAP, "work_identified": True, "decision_evidence_missing": True},
            },
            ["resume_or_handoff_gap"],
            "gap_classified",
        ),
        (
            {"repeated": False, "operator_requested": True, "coverage": NO_COVERAGE_GAP},
            ["operator_requested_history"],
            "gap_classified",
        ),
        (
            {
                "repeated": True,
                "operator_requested": True,
                "coverage": {**NO_COVERAGE_GAP, "hypotheses_exhausted": True},
            },
            ["replan_repetition", "hypothesis_history_gap", "operator_requested_history"],
            "gap_classified",
        ),
        ({"repeated": False, "coverage": NO_COVERAGE_GAP}, [], "no_history_gap"),
        (
            {
                "repeated": False,
                "coverage": {**NO_COVERAGE_GAP, "hypotheses_exhausted": True, "prior_session_coverage": "known"},
            },
            [],
            "prior_session_coverage_known",
        ),
        (
            {"repeated": False, "coverage": {**NO_COVERAGE_GAP, "decision_evidence_missing": True}},
            [],
            "work_not_identified",
        ),
    ],
)
def test_classify_gap_table(kwargs, triggers, reason_code):
    gap = classify_gap(situation_model(**kwargs))
    assert (gap.triggers, gap.reason_code) == (triggers, reason_code)


def _observed(result_class: str, day: int, **ids) -> dict:
    from fixtures.situations import observation

    return {**observation(result_class, **ids), "generated_at": f"2026-11-{day:02d}T10:00:00Z"}


@pytest.mark.parametrize(
    ("recent", "repeats"),
    [
        ([_observed("unchanged", 1), _observed("unchanged", 2)], True),
        ([_observed("blocked", 1, blocker_id="b1"), _observed("blocked", 2, blocker_id="b1")], True),
        ([_observed("unchanged", 1), _observed("unchanged", 2, probe_kind="probe-other")], False),
        ([_observed("advanced", 1), _observed("advanced", 2)], False),
        ([_observed("unchanged", 2), _observed("advanced", 3), _observed("unchanged", 1)], False),
        ([_observed("unchanged", 3), _observed("advanced", 1), _observed("unchanged", 2)], True),
        ([_observed("unchanged", 1)], False),
    ],
)
def test_classify_gap_repetition_from_newest_two_observations(recent, repeats):
    gap = classify_gap(situation_model(repeated=False, recent_observations=recent, coverage=NO_COVERAGE_GAP))
    assert ("replan_repetition" in gap.triggers) is repeats
