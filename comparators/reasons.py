"""Fixed, content-free sentences for every reason code a semantic delta can carry."""

from typing import Final

from obelisk_session_evidence.contracts.reason_codes import DeltaReasonCode

REASONS: Final[dict[DeltaReasonCode, str]] = {
    "semantic_advance": "The observation's ids show a semantic advance over the baseline.",
    "unchanged_never_advances": "An unchanged result never yields a Replan outcome.",
    "evidence_required": "A Replan outcome needs evidence ids.",
    "same_route_new_evidence_only": "Same surface, hypothesis and probe with only new evidence.",
    "blocker_id_required": "A blocked result needs a blocker id.",
    "blocker_repeated": "The blocker repeats the baseline's blocker.",
    "coverage_scope_required": "A terminal result needs a coverage scope id.",
    "terminal_coverage_repeated": "The terminal coverage repeats the baseline's.",
    "coverage_incomplete": "Exhaustion needs coverage_complete true.",
    "no_followup_vision_path_inconsistent": (
        "Coverage-backed no-follow-up needs the agent vision's no_followup state and stop path."
    ),
    "progress_observation_replayed": (
        "The claim or blocker was already recorded in the obligation's baseline or window."
    ),
    "progress_identity_without_new_evidence": (
        "Under external review a new surface, hypothesis or probe needs evidence ids absent "
        "from the baseline and window."
    ),
    "outcomes_not_required": "The observation's outcomes do not satisfy this obligation.",
    "acceptance_hold_widened": (
        "An acceptance-hold obligation accepts only a successor or a blocker; LoopX rejects it."
    ),
    "route_repeats_prior_failure": "The proposed route repeats a command that failed in an earlier session.",
    "route_repeats_failure_after_change": (
        "The proposed route re-runs a command that failed before, after a change to what made it fail: the same"
        " probe on the same surface."
    ),
    "route_repeats_failure_at_other_revision": (
        "The proposed route re-runs a command that failed at a commit that is not an ancestor of the current"
        " revision: the same probe on the same surface, on other code."
    ),
    "route_repeats_prior_attempt": "The proposed route repeats a command already run in an earlier session.",
    "blocker_already_evidenced": "The claimed blocker is already evidenced in an earlier session.",
    "hypothesis_already_tried": "The proposed hypothesis was already tried in an earlier session.",
}


def reason_for(reason_code: DeltaReasonCode) -> str:
    """The fixed sentence for `reason_code`."""
    return REASONS[reason_code]
