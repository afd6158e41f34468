"""LoopX's exact-id Replan semantics, reproduced without similarity.

A port of what `semantic_delta_from_writeback` (loopx 2.1.1) decides for a typed observation
written back without an agent vision: the novelty owner `progress_delta.ts` (`deltaKinds`,
`newTerminalCoverage`, evidence / replay / blocker facts) and the outcome kernel
`replan_semantics.ts` (`requiredSemanticOutcomes`, `projectReplanSemantics`). The differential
suite in `tests/conformance/` holds this module equal to LoopX on every generated case.

Two LoopX inputs are out of reach here and are handled so that this step never claims more than
LoopX would: the agent vision (a fresh vision path can only *add* `fresh_vision_path_outcome`,
and `coverage_backed_no_followup` stands only with its `no_followup` / `stop` state, so without
it no-follow-up never stands), and a replan context's stride review (absent means `off`).
"""

from typing import Final

from obelisk_session_evidence.comparators.reasons import reason_for
from obelisk_session_evidence.contracts.decision import SemanticDelta
from obelisk_session_evidence.contracts.observations import TypedProgressObservation
from obelisk_session_evidence.contracts.outcomes import (
    DEFAULT_REQUIRED_OUTCOMES,
    VISION_REQUIRED_OUTCOMES,
    VISION_TRIGGER_KINDS,
    OutcomeId,
)
from obelisk_session_evidence.contracts.reason_codes import DeltaReasonCode
from obelisk_session_evidence.contracts.situation import Obligation

ACCEPTANCE_HOLD_TRIGGER_KINDS: Final = frozenset({"goal_acceptance_stale", "goal_acceptance_unbound"})
"""Triggers whose obligation only a successor or a blocker settles (and never widens)."""
ACCEPTANCE_HOLD_OUTCOMES: Final[tuple[OutcomeId, ...]] = (
    "new_runnable_successor",
    "new_concrete_blocker",
)
EXTERNAL_REVIEW_TRIGGER_KINDS: Final = frozenset({"external_progress_review_drift"})
"""Triggers under which renamed ids need new evidence and a replayed claim never counts."""
REVIEW_TRIGGER_KINDS: Final = frozenset({"long_todo_chain", "periodic_review_due", *EXTERNAL_REVIEW_TRIGGER_KINDS})
"""Triggers that also accept a fresh vision path besides every progress outcome."""
IDENTITY_OUTCOMES: Final = frozenset({"new_surface", "new_hypothesis", "new_probe_family"})
"""Outcomes a renamed identifier alone can produce."""

_DIMENSION_OUTCOMES: Final[tuple[tuple[str, OutcomeId], ...]] = (
    ("surface_id", "new_surface"),
    ("hypothesis_id", "new_hypothesis"),
    ("probe_kind", "new_probe_family"),
)


def exact_id_delta(obligation: Obligation, observation: TypedProgressObservation) -> SemanticDelta:
    """The delta LoopX computes from ids alone: what history may only narrow."""
    if _widens_acceptance_hold(obligation):
        return _delta(obligation, observation, [], [], "acceptance_hold_widened")
    baseline = baseline_of(obligation)
    known = ([baseline] if baseline is not None else []) + window_of(obligation)
    claimed, novelty_code = _delta_kinds(observation, baseline)
    outcomes, refusal = _kept(obligation, observation, known, claimed)
    required = required_outcomes(obligation)
    satisfying = [] if refusal == _INCONSISTENT_TERMINAL else [o for o in outcomes if o in required]
    reason_code: DeltaReasonCode
    if satisfying:
        reason_code = "semantic_advance"
    elif refusal is not None:
        reason_code = refusal
    else:
        reason_code = novelty_code if not outcomes else "outcomes_not_required"
    return _delta(obligation, observation, outcomes, satisfying, reason_code)


_INCONSISTENT_TERMINAL: Final[DeltaReasonCode] = "no_followup_vision_path_inconsistent"


def _kept(
    obligation: Obligation,
    observation: TypedProgressObservation,
    known: list[TypedProgressObservation],
    outcomes: list[OutcomeId],
) -> tuple[list[OutcomeId], DeltaReasonCode | None]:
    """The claimed outcomes LoopX's own rules keep, and the code of the first rule (by LoopX's
    precedence) that took one away."""
    external = any(t.kind in EXTERNAL_REVIEW_TRIGGER_KINDS for t in obligation.triggers)
    fingerprint = observation.computed_fingerprint()
    replayed = external and any(o.computed_fingerprint() == fingerprint for o in known)
    identity_without_evidence = (
        external
        and not replayed
        and any(outcome in IDENTITY_OUTCOMES for outcome in outcomes)
        and not _evidence_novel(observation, known)
    )
    if replayed:
        outcomes = []
    elif identity_without_evidence:
        outcomes = [outcome for outcome in outcomes if outcome not in IDENTITY_OUTCOMES]
    known_blocker = "new_concrete_blocker" in outcomes and _blocker_recorded(observation, known)
    # Without the agent vision's no_followup state and stop path, no-follow-up never stands,
    # and LoopX then refuses the whole writeback, not only that outcome.
    inconsistent_terminal = "coverage_backed_no_followup" in outcomes
    dropped = {"coverage_backed_no_followup"} | ({"new_concrete_blocker"} if known_blocker else set())
    rules: tuple[tuple[bool, DeltaReasonCode], ...] = (
        (inconsistent_terminal, _INCONSISTENT_TERMINAL),
        (replayed or known_blocker, "progress_observation_replayed"),
        (identity_without_evidence, "progress_identity_without_new_evidence"),
    )
    return [o for o in outcomes if o not in dropped], next((code for fired, code in rules if fired), None)


def delta_with(
    obligation: Obligation,
    observation: TypedProgressObservation,
    outcomes: list[OutcomeId],
    reason_code: DeltaReasonCode,
) -> SemanticDelta:
    """A delta for `outcomes`, with satisfying outcomes and acceptance derived as LoopX does."""
    required = [] if _widens_acceptance_hold(obligation) else required_outcomes(obligation)
    satisfying = [outcome for outcome in outcomes if outcome in required]
    return _delta(obligation, observation, outcomes, satisfying, reason_code)


def required_outcomes(obligation: Obligation) -> list[OutcomeId]:
    """LoopX's `required_any_of`: the narrowed set, else the set the trigger kinds select."""
    kinds = {trigger.kind for trigger in obligation.triggers}
    if obligation.satisfying_semantic_outcomes:
        return list(dict.fromkeys(obligation.satisfying_semantic_outcomes))
    if kinds & ACCEPTANCE_HOLD_TRIGGER_KINDS:
        return list(ACCEPTANCE_HOLD_OUTCOMES)
    if kinds & VISION_TRIGGER_KINDS:
        return list(VISION_REQUIRED_OUTCOMES)
    if kinds & REVIEW_TRIGGER_KINDS:
        return ["fresh_vision_path_outcome", *DEFAULT_REQUIRED_OUTCOMES]
    return list(DEFAULT_REQUIRED_OUTCOMES)


def baseline_of(obligation: Obligation) -> TypedProgressObservation | None:
    """The obligation's baseline, else the first trigger's."""
    if obligation.progress_baseline is not None:
        return obligation.progress_baseline
    return next((t.progress_baseline for t in obligation.triggers if t.progress_baseline), None)


def window_of(obligation: Obligation) -> list[TypedProgressObservation]:
    """The obligation's window of earlier claims, else the first trigger's, else none."""
    if obligation.progress_window is not None:
        return list(obligation.progress_window)
    return next(
        (list(t.progress_window) for t in obligation.triggers if t.progress_window is not None),
        [],
    )


def _delta(
    obligation: Obligation,
    observation: TypedProgressObservation,
    outcomes: list[OutcomeId],
    satisfying: list[OutcomeId],
    reason_code: DeltaReasonCode,
) -> SemanticDelta:
    return SemanticDelta(
        accepted=bool(satisfying),
        outcomes=outcomes,
        satisfying_outcomes=satisfying,
        required_any_of=required_outcomes(obligation),
        obligation_id=obligation.obligation_id,
        observation_fingerprint=observation.computed_fingerprint(),
        reason=reason_for(reason_code),
        reason_code=reason_code,
    )


def _widens_acceptance_hold(obligation: Obligation) -> bool:
    """LoopX rejects an acceptance-hold obligation whose narrowed set names anything else."""
    declared = obligation.satisfying_semantic_outcomes or []
    return any(t.kind in ACCEPTANCE_HOLD_TRIGGER_KINDS for t in obligation.triggers) and any(
        outcome not in ACCEPTANCE_HOLD_OUTCOMES for outcome in declared
    )


def _delta_kinds(
    observation: TypedProgressObservation, baseline: TypedProgressObservation | None
) -> tuple[list[OutcomeId], DeltaReasonCode]:
    """`deltaKinds`: outcomes against the single baseline, with the code when there are none."""
    result_class = observation.result_class
    if result_class == "unchanged":
        return [], "unchanged_never_advances"
    if not observation.evidence_ids:
        return [], "evidence_required"
    if result_class == "advanced":
        outcomes = [
            outcome
            for field, outcome in _DIMENSION_OUTCOMES
            if getattr(observation, field) is not None
            and (baseline is None or getattr(observation, field) != getattr(baseline, field))
        ]
        return outcomes, "same_route_new_evidence_only"
    if result_class == "blocked":
        if observation.blocker_id is None:
            return [], "blocker_id_required"
        # The baseline's blocker counts whatever its result class; a window claim (see
        # `_blocker_recorded`) only when it was itself blocked.
        if baseline is not None and baseline.blocker_id == observation.blocker_id:
            return [], "blocker_repeated"
        return ["new_concrete_blocker"], "blocker_repeated"
    if observation.coverage_scope_id is None:
        return [], "coverage_scope_required"
    if not _new_terminal_coverage(observation, baseline):
        return [], "terminal_coverage_repeated"
    if result_class == "exploration_exhausted":
        if observation.coverage_complete is not True:
            return [], "coverage_incomplete"
        return ["coverage_backed_exploration_exhausted"], "terminal_coverage_repeated"
    return ["coverage_backed_no_followup"], "terminal_coverage_repeated"


def _new_terminal_coverage(observation: TypedProgressObservation, baseline: TypedProgressObservation | None) -> bool:
    if baseline is None or baseline.result_class != observation.result_class:
        return True
    if baseline.coverage_scope_id != observation.coverage_scope_id:
        return True
    return (
        observation.result_class == "exploration_exhausted"
        and baseline.coverage_complete != observation.coverage_complete
    )


def _evidence_novel(observation: TypedProgressObservation, known: list[TypedProgressObservation]) -> bool:
    """Some evidence id is absent from the baseline and every claim in the window."""
    known_evidence = {evidence for claim in known for evidence in claim.evidence_ids}
    return any(evidence not in known_evidence for evidence in observation.evidence_ids)


def _blocker_recorded(observation: TypedProgressObservation, known: list[TypedProgressObservation]) -> bool:
    """A blocked claim in the baseline or window already names this blocker."""
    return observation.blocker_id is not None and any(
        claim.result_class == "blocked" and claim.blocker_id == observation.blocker_id for claim in known
    )
