"""compare-route: LoopX's exact-id rules, then history may remove a claimed route outcome."""

from comparators.exact_ids import delta_with, exact_id_delta
from comparators.route_match import command_match
from contracts.decision import Comparison
from contracts.outcomes import ROUTE_OUTCOMES
from contracts.situation import ReplanSituation
from contracts.stage_values import CappedEvidence, RouteComparison
from contracts.thresholds import RouteThresholds


def compare_route(
    situation: ReplanSituation, capped: CappedEvidence, *, thresholds: RouteThresholds
) -> RouteComparison:
    """Score the route's novelty against history and emit one legal Replan delta."""
    proposed = situation.proposed
    claimed = exact_id_delta(situation.obligation, proposed.observation)
    threshold_report = {"command_repeat": thresholds.command_repeat}
    if capped.result is None:
        return RouteComparison(
            comparison=Comparison(verdict="not_compared", thresholds=threshold_report),
            semantic_delta=claimed,
        )
    match = command_match(
        proposed.route.commands, capped.result.items, threshold=thresholds.command_repeat
    )
    novelty = 100 - max(match.failure_similarity, match.attempt_similarity)
    if match.failure_matches:
        verdict, reason_code = "repeats_prior_failure", "route_repeats_prior_failure"
    elif match.attempt_matches:
        verdict, reason_code = "repeats_prior_attempt", "route_repeats_prior_attempt"
    else:
        verdict = "novel" if capped.result.freshness == "fresh" else "novelty_unverified"
        reason_code = None
    delta = claimed
    if reason_code is not None:
        kept = [outcome for outcome in claimed.outcomes if outcome not in ROUTE_OUTCOMES]
        if kept != claimed.outcomes:
            delta = delta_with(situation.obligation, proposed.observation, kept, reason_code)
    return RouteComparison(
        comparison=Comparison(
            verdict=verdict,
            scores={"command": novelty, "combined": novelty},
            thresholds=threshold_report,
            matched_items=match.failure_matches + match.attempt_matches,
        ),
        semantic_delta=delta,
    )
