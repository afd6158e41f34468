"""LoopX's exact-id rules as tables; each expected value was recorded from loopx 2.1.1 itself
(`tests/conformance` re-checks the rules against the live LoopX on thousands of cases)."""

from typing import Any

import pytest

from obelisk_session_evidence.comparators.exact_ids import (
    baseline_of,
    delta_with,
    exact_id_delta,
    required_outcomes,
    window_of,
)
from obelisk_session_evidence.comparators.reasons import REASONS
from obelisk_session_evidence.contracts.observations import TypedProgressObservation
from obelisk_session_evidence.contracts.outcomes import DEFAULT_REQUIRED_OUTCOMES, VISION_REQUIRED_OUTCOMES
from obelisk_session_evidence.contracts.situation import Obligation

DEFAULT = list(DEFAULT_REQUIRED_OUTCOMES)
REVIEW = ["fresh_vision_path_outcome", *DEFAULT]
BASELINE = {"result_class": "unchanged", "work_item_id": "todo-1", "surface_id": "s1", "evidence_ids": ["e1"]}


def _obligation(kinds: list[str], **fields: Any) -> Obligation:
    return Obligation.model_validate(
        {
            "obligation_id": "replan-0123456789abcdef",
            "triggers": [{"kind": kind} for kind in kinds],
            **fields,
        }
    )


def _observation(**fields: Any) -> TypedProgressObservation:
    return TypedProgressObservation.model_validate(fields)


@pytest.mark.parametrize(
    ("kinds", "declared", "expected"),
    [
        (["typed_progress_repeat"], None, DEFAULT),
        (["some_future_kind"], None, DEFAULT),
        ([], None, DEFAULT),
        (["vision_acceptance_gap"], None, list(VISION_REQUIRED_OUTCOMES)),
        (["typed_progress_repeat", "required_agent_vision_missing"], None, list(VISION_REQUIRED_OUTCOMES)),
        # Review triggers keep every progress exit and add a fresh vision path in front.
        (["periodic_review_due"], None, REVIEW),
        (["long_todo_chain"], None, REVIEW),
        (["external_progress_review_drift"], None, REVIEW),
        (["goal_acceptance_stale"], None, ["new_runnable_successor", "new_concrete_blocker"]),
        (["goal_acceptance_unbound"], ["new_concrete_blocker"], ["new_concrete_blocker"]),
        (["completed_advancement_without_successor"], ["new_runnable_successor"], ["new_runnable_successor"]),
        # An empty narrowed set narrows nothing; repeats collapse in first-seen order.
        (["typed_progress_repeat"], [], DEFAULT),
        (["vision_acceptance_gap"], [], list(VISION_REQUIRED_OUTCOMES)),
        (
            ["typed_progress_repeat"],
            ["new_surface", "new_concrete_blocker", "new_surface"],
            ["new_surface", "new_concrete_blocker"],
        ),
    ],
)
def test_required_outcomes_follows_loopx(kinds, declared, expected):
    fields = {} if declared is None else {"satisfying_semantic_outcomes": declared}
    assert required_outcomes(_obligation(kinds, **fields)) == expected


@pytest.mark.parametrize(
    ("kinds", "obligation_fields", "observation", "accepted", "outcomes", "reason_code"),
    [
        # Only the changed probe counts; new evidence alone counts for nothing.
        (
            ["typed_progress_repeat"],
            {"progress_baseline": BASELINE},
            {**BASELINE, "result_class": "advanced", "probe_kind": "p2", "evidence_ids": ["e2"]},
            True,
            ["new_probe_family"],
            "semantic_advance",
        ),
        (
            ["typed_progress_repeat"],
            {"progress_baseline": BASELINE},
            {**BASELINE, "result_class": "advanced", "evidence_ids": ["e2"]},
            False,
            [],
            "same_route_new_evidence_only",
        ),
        (
            ["typed_progress_repeat"],
            {"progress_baseline": BASELINE},
            {**BASELINE, "result_class": "advanced", "surface_id": "s2", "evidence_ids": []},
            False,
            [],
            "evidence_required",
        ),
        # A Todo-succession gap is settled by a Todo transition, never by a typed observation.
        (
            ["completed_advancement_without_successor"],
            {"progress_baseline": BASELINE, "satisfying_semantic_outcomes": ["new_runnable_successor"]},
            {"result_class": "advanced", "surface_id": "s2", "evidence_ids": ["e2"]},
            False,
            ["new_surface"],
            "outcomes_not_required",
        ),
        # The baseline's blocker counts whatever its class; a window claim's only when blocked.
        (
            ["typed_progress_repeat"],
            {"progress_baseline": {"result_class": "advanced", "blocker_id": "b1", "evidence_ids": ["e1"]}},
            {"result_class": "blocked", "blocker_id": "b1", "evidence_ids": ["e2"]},
            False,
            [],
            "blocker_repeated",
        ),
        (
            ["typed_progress_repeat"],
            {
                "progress_baseline": BASELINE,
                "progress_window": [{"result_class": "advanced", "blocker_id": "b1", "evidence_ids": ["e1"]}],
            },
            {"result_class": "blocked", "blocker_id": "b1", "evidence_ids": ["e2"]},
            True,
            ["new_concrete_blocker"],
            "semantic_advance",
        ),
        (
            ["typed_progress_repeat"],
            {
                "progress_baseline": BASELINE,
                "progress_window": [{"result_class": "blocked", "blocker_id": "b1", "evidence_ids": ["e1"]}],
            },
            {"result_class": "blocked", "blocker_id": "b1", "evidence_ids": ["e2"]},
            False,
            [],
            "progress_observation_replayed",
        ),
        # Without the agent vision's stop state no-follow-up never stands.
        (
            ["typed_progress_repeat"],
            {"progress_baseline": BASELINE},
            {"result_class": "no_followup", "coverage_scope_id": "c1", "evidence_ids": ["e2"]},
            False,
            [],
            "no_followup_vision_path_inconsistent",
        ),
        (
            ["typed_progress_repeat"],
            {},
            {"result_class": "exploration_exhausted", "coverage_complete": True, "evidence_ids": ["e2"]},
            False,
            [],
            "coverage_scope_required",
        ),
        # Exhaustion on the same scope is new again once coverage becomes complete.
        (
            ["typed_progress_repeat"],
            {
                "progress_baseline": {
                    "result_class": "exploration_exhausted",
                    "coverage_scope_id": "c1",
                    "coverage_complete": False,
                    "evidence_ids": ["e1"],
                }
            },
            {
                "result_class": "exploration_exhausted",
                "coverage_scope_id": "c1",
                "coverage_complete": True,
                "evidence_ids": ["e1"],
            },
            True,
            ["coverage_backed_exploration_exhausted"],
            "semantic_advance",
        ),
    ],
)
def test_exact_id_delta_follows_loopx(kinds, obligation_fields, observation, accepted, outcomes, reason_code):
    delta = exact_id_delta(_obligation(kinds, **obligation_fields), _observation(**observation))
    assert (delta.accepted, delta.outcomes, delta.reason_code) == (accepted, outcomes, reason_code)
    assert delta.satisfying_outcomes == [o for o in outcomes if o in delta.required_any_of and accepted]


WINDOW_CLAIM = {"result_class": "advanced", "work_item_id": "todo-1", "surface_id": "s2", "evidence_ids": ["e9"]}


@pytest.mark.parametrize(
    ("kind", "observation", "accepted", "reason_code"),
    [
        # Only external review refuses a replay of a window claim ...
        ("external_progress_review_drift", WINDOW_CLAIM, False, "progress_observation_replayed"),
        ("typed_progress_repeat", WINDOW_CLAIM, True, "semantic_advance"),
        # ... and the fingerprint covers work_item_id, so the same claim under another Todo is
        # no replay; it fails only because its evidence is not new.
        (
            "external_progress_review_drift",
            {**WINDOW_CLAIM, "work_item_id": "todo-2"},
            False,
            "progress_identity_without_new_evidence",
        ),
        (
            "external_progress_review_drift",
            {**WINDOW_CLAIM, "work_item_id": "todo-2", "evidence_ids": ["e10"]},
            True,
            "semantic_advance",
        ),
    ],
)
def test_exact_id_delta_external_review_refuses_replays(kind, observation, accepted, reason_code):
    obligation = Obligation.model_validate(
        {
            "obligation_id": "replan-0123456789abcdef",
            "triggers": [{"kind": kind, "progress_window": [WINDOW_CLAIM]}],
            "progress_baseline": BASELINE,
        }
    )
    delta = exact_id_delta(obligation, _observation(**observation))
    assert (delta.accepted, delta.reason_code) == (accepted, reason_code)


def test_exact_id_delta_widened_acceptance_hold_is_refused():
    # LoopX raises ValueError("acceptance recovery cannot widen its typed outcomes").
    obligation = _obligation(["goal_acceptance_stale"], satisfying_semantic_outcomes=["new_surface"])
    observation = _observation(result_class="advanced", surface_id="s2", evidence_ids=["e2"])
    delta = exact_id_delta(obligation, observation)
    assert not delta.accepted and delta.outcomes == [] and delta.reason_code == "acceptance_hold_widened"
    assert not delta_with(obligation, observation, ["new_surface"], "semantic_advance").accepted


def test_baseline_of_and_window_of_prefer_the_obligation_then_the_first_trigger_that_has_one():
    decoy = {**BASELINE, "surface_id": "decoy"}
    obligation = Obligation.model_validate(
        {
            "obligation_id": "replan-0123456789abcdef",
            "triggers": [
                {"kind": "no_progress_streak"},
                {"kind": "typed_progress_repeat", "progress_baseline": decoy, "progress_window": []},
                {"kind": "typed_progress_repeat", "progress_window": [WINDOW_CLAIM]},
            ],
            "progress_baseline": BASELINE,
        }
    )
    assert baseline_of(obligation).surface_id == "s1"
    # An empty window on an earlier trigger still counts as that trigger's window.
    assert window_of(obligation) == []


def test_reasons_cover_every_code_exact_id_delta_emits():
    emitted = {
        "semantic_advance",
        "unchanged_never_advances",
        "evidence_required",
        "same_route_new_evidence_only",
        "blocker_id_required",
        "blocker_repeated",
        "coverage_scope_required",
        "terminal_coverage_repeated",
        "coverage_incomplete",
        "no_followup_vision_path_inconsistent",
        "progress_observation_replayed",
        "progress_identity_without_new_evidence",
        "outcomes_not_required",
        "acceptance_hold_widened",
    }
    assert emitted <= set(REASONS)
