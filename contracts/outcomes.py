"""LoopX's legal Replan outcome ids and the default required sets (reference note §1)."""

from typing import Final, Literal

OutcomeId = Literal[
    "new_surface",
    "new_hypothesis",
    "new_probe_family",
    "new_runnable_successor",
    "new_concrete_blocker",
    "coverage_backed_exploration_exhausted",
    "coverage_backed_no_followup",
    "fresh_vision_path_outcome",
]
DEFAULT_REQUIRED_OUTCOMES: Final[tuple[OutcomeId, ...]] = (
    "new_surface",
    "new_hypothesis",
    "new_probe_family",
    "new_runnable_successor",
    "coverage_backed_exploration_exhausted",
    "new_concrete_blocker",
    "coverage_backed_no_followup",
)
VISION_REQUIRED_OUTCOMES: Final[tuple[OutcomeId, ...]] = (
    "fresh_vision_path_outcome",
    "new_runnable_successor",
    "new_concrete_blocker",
    "coverage_backed_exploration_exhausted",
    "coverage_backed_no_followup",
)
VISION_TRIGGER_KINDS: Final = frozenset(
    {
        "vision_acceptance_gap",
        "vision_checkpoint_missing",
        "vision_outcome_checkpoint_required",
        "vision_successor_required",
        "required_agent_vision_missing",
    }
)
REPEAT_TRIGGER_KINDS: Final = frozenset({"typed_progress_repeat", "repeated_action_loop"})
"""Obligation triggers that are themselves an explicit repeated-route signal."""
ROUTE_OUTCOMES: Final[frozenset[OutcomeId]] = frozenset(
    {"new_surface", "new_hypothesis", "new_probe_family", "new_runnable_successor"}
)
"""Outcomes that claim a new route; a route that repeats history loses them."""
