"""compare-route: LoopX's exact-id rules first, then history may only remove a claimed outcome.

Rules, in the order their reason codes win:
1. Every proposed command repeats a prior call (its latest comparable run) and one of them a
   failure whose cause no later change touched: the claimed route outcomes (new surface,
   hypothesis, probe, runnable successor) are removed, `route_repeats_prior_failure`. When a later
   change touched the cause of every repeated failure, the route re-runs the same probe on the
   same surface to see whether that change fixed it: only `new_surface` and `new_probe_family`
   are removed (the change may be a new hypothesis or a runnable successor),
   `route_repeats_failure_after_change`, verdict `repeats_prior_failure_changed_since`; when each
   repeated failure ran at a commit that is not an ancestor of the situation's revision (nor of its
   merge base), the same removals, `route_repeats_failure_at_other_revision`. Repeats of calls
   that ended well: `route_repeats_prior_attempt`.
2. A blocked observation whose blocker text history already holds loses a claimed
   `new_concrete_blocker`: `blocker_already_evidenced`.
3. With a hypothesis-history gap, a proposed hypothesis whose text an earlier session already
   holds loses a claimed `new_hypothesis`: `hypothesis_already_tried`.
The verdict names the first rule that fires, whether or not the observation claimed the outcome
it would remove (an `unchanged` result claims nothing, yet may still repeat a dead end).
History is the provider's structured prior calls when it gives them (full commands, exit
codes, cwd, output), else the capped snippets read back (`comparators.history`). The decision
counts, never shows, the commands compared in part (`truncated_commands`) and those the shell
grammar could not read (`token_fallback_commands`).
A hit is evidence however stale the index is. Without a hit, only a fresh index lets the verdict
say `novel`; otherwise it is `novelty_unverified`. Either way the delta is LoopX's own: absence
of history never adds, keeps or explains an outcome.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from obelisk_session_evidence.comparators.exact_ids import delta_with, exact_id_delta
from obelisk_session_evidence.contracts.decision import Comparison, SemanticDelta, Verdict
from obelisk_session_evidence.contracts.evidence import EvidenceItem, VerdictBasis
from obelisk_session_evidence.contracts.outcomes import ROUTE_OUTCOMES, OutcomeId
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.reason_codes import ComparisonDimension, DeltaReasonCode
from obelisk_session_evidence.contracts.revision_checks import RevisionCheck
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.stage_values import CappedEvidence, GapAssessment, RouteComparison
from obelisk_session_evidence.contracts.thresholds import RouteThresholds

SAME_PROBE_OUTCOMES: Final[frozenset[OutcomeId]] = frozenset({"new_surface", "new_probe_family"})
"""What a re-run of a failed route after a change to its cause cannot claim: it is the same probe
on the same surface (whether the change fixed it is what it finds out)."""

if TYPE_CHECKING:
    from obelisk_session_evidence.comparators.history import PriorStep
    from obelisk_session_evidence.comparators.route_match import RouteMatch


def compare_route(
    situation: ReplanSituation,
    gap: GapAssessment,
    capped: CappedEvidence,
    *,
    thresholds: RouteThresholds,
) -> RouteComparison:
    """Score the route's novelty against history and emit one legal Replan delta."""
    proposed = situation.proposed
    claimed = exact_id_delta(situation.obligation, proposed.observation)
    if capped.result is None:
        return RouteComparison(
            comparison=Comparison(verdict="not_compared", thresholds=thresholds.report()),
            semantic_delta=claimed,
        )
    match, steps = _match_history(
        situation, capped.result.items, capped.prior_calls, thresholds, capped.revision_checks
    )
    removals = _removals(situation, gap, match)
    verdict: Verdict
    if removals:
        verdict = removals[0][2]
    elif capped.result.freshness == "fresh":
        verdict = "novel"
    else:
        verdict = "novelty_unverified"
    return RouteComparison(
        comparison=Comparison(
            verdict=verdict,
            scores=_novelty_scores(match, situation, gap, removals),
            thresholds=thresholds.report(),
            matched_items=len(frozenset().union(*(items for _, _, _, items in removals))),
            truncated_commands=match.truncated,
            token_fallback_commands=match.token_fallbacks,
        ),
        semantic_delta=_narrowed(situation, claimed, removals),
        verdict_basis=_verdict_basis(removals, match, steps),
    )


def _match_history(
    situation: ReplanSituation,
    items: Sequence[EvidenceItem],
    prior_calls: Sequence[PriorToolCall],
    thresholds: RouteThresholds,
    revision_checks: Sequence[RevisionCheck] = (),
) -> "tuple[RouteMatch, Sequence[PriorStep]]":
    """The proposed route against the prior calls, else the capped snippets read back (and those steps)."""
    # The shell grammar and rapidfuzz load here, not at import: a run without history (not
    # admitted, or a failed lookup) never pays their ~11 ms.
    from obelisk_session_evidence.comparators.history import call_repository_roots, prior_steps, prior_steps_from_calls
    from obelisk_session_evidence.comparators.route_match import route_match

    if prior_calls:
        steps, roots = prior_steps_from_calls(prior_calls, items), call_repository_roots(prior_calls)
    else:
        steps, roots = prior_steps(items), ()
    route = situation.proposed.route
    if steps:
        from obelisk_session_evidence.providers.redaction.redaction import redact

        # History arrives redacted (stages/retrieve.py): the proposed commands are read the same
        # way, so a repeated command holding a secret still reads as the same command.
        route = route.model_copy(update={"commands": [redact(command) for command in route.commands]})
    match = route_match(
        route,
        steps,
        thresholds=thresholds,
        revision=situation.revision,
        roots=roots,
        revision_checks=revision_checks,
    )
    return match, steps


_Removal = tuple[DeltaReasonCode, frozenset[OutcomeId], Verdict, frozenset[int]]


def _removals(situation: ReplanSituation, gap: GapAssessment, match: "RouteMatch") -> list[_Removal]:
    """The rules that fire, in reason-code order: (code, outcomes removed, verdict, items)."""
    removals: list[_Removal] = []
    if match.repeats_failure:
        removals.append(("route_repeats_prior_failure", ROUTE_OUTCOMES, "repeats_prior_failure", match.command_items))
    elif match.repeats_failure_changed_since:
        removals.append(
            (
                _changed_since_code(match),
                SAME_PROBE_OUTCOMES,
                "repeats_prior_failure_changed_since",
                match.command_items,
            )
        )
    elif match.repeats_attempt:
        removals.append(("route_repeats_prior_attempt", ROUTE_OUTCOMES, "repeats_prior_attempt", match.command_items))
    if situation.proposed.observation.result_class == "blocked" and match.blocker_items:
        removals.append(
            (
                "blocker_already_evidenced",
                frozenset({"new_concrete_blocker"}),
                "repeats_prior_failure",
                match.blocker_items,
            )
        )
    if match.hypothesis_items and "hypothesis_history_gap" in gap.triggers:
        removals.append(
            (
                "hypothesis_already_tried",
                frozenset({"new_hypothesis"}),
                "repeats_prior_attempt",
                match.hypothesis_items,
            )
        )
    return removals


def _verdict_basis(removals: list[_Removal], match: "RouteMatch", steps: "Sequence[PriorStep]") -> VerdictBasis | None:
    """The refs of the items the verdict's rule rests on, and of the successors of the failures
    among them (only a command failure rule has any); None when it rests on none."""
    if not removals:
        return None
    refs = {step.index: step.ref for step in steps}

    def named(ranks: frozenset[int]) -> list[str]:
        return [ref for rank in sorted(ranks) if (ref := refs.get(rank)) is not None]

    rests_on = named(removals[0][3])
    return VerdictBasis(rests_on=rests_on, successors=named(match.successor_items)) if rests_on else None


def _changed_since_code(match: "RouteMatch") -> DeltaReasonCode:
    """Why a repeated failure may no longer stand: a change to its cause, or other code (it ran at
    a commit off the situation's revision line)."""
    if match.repeats_failure_off_line:
        return "route_repeats_failure_at_other_revision"
    return "route_repeats_failure_after_change"


def _narrowed(situation: ReplanSituation, claimed: SemanticDelta, removals: list[_Removal]) -> SemanticDelta:
    """The claimed delta without removed outcomes; the first rule that removed one names it."""
    kept = list(claimed.outcomes)
    reason_code: DeltaReasonCode | None = None
    for code, outcomes, _, _ in removals:
        if any(outcome in outcomes for outcome in kept):
            kept = [outcome for outcome in kept if outcome not in outcomes]
            reason_code = reason_code or code
    if reason_code is None:
        return claimed
    return delta_with(situation.obligation, situation.proposed.observation, kept, reason_code)


def _novelty_scores(
    match: "RouteMatch", situation: ReplanSituation, gap: GapAssessment, removals: list[_Removal]
) -> dict[ComparisonDimension, int]:
    """Novelty (100 − similarity) per stated dimension, and `combined` over the judged ones.

    `combined` is the novelty of the least novel dimension the rules judge: commands, the
    blocker of a blocked observation, and the hypothesis under a hypothesis-history gap. Files
    are reported but never decide on their own (a route may well revisit a file).
    """
    similarities: dict[ComparisonDimension, int | None] = {
        "command": match.command_similarity,
        "file": match.file_similarity,
        "hypothesis": match.hypothesis_similarity,
        "blocker": match.blocker_similarity,
    }
    scores = {name: 100 - value for name, value in similarities.items() if value is not None}
    judged: list[ComparisonDimension] = ["command"]
    if situation.proposed.observation.result_class == "blocked":
        judged.append("blocker")
    if "hypothesis_history_gap" in gap.triggers:
        judged.append("hypothesis")
    considered = [scores[name] for name in judged if name in scores]
    if considered:
        scores["combined"] = min(considered)
    elif removals:
        scores["combined"] = 0
    return scores
