"""Replayed calls to figures: the verdict and the naive rule judged by what each call did."""

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import get_args

from obelisk_session_evidence.contracts.prior_calls import CallOutcome
from obelisk_session_evidence.contracts.replay import (
    EvidencePlace,
    PlaceFigures,
    ReplayFigures,
    RuleFigures,
)

_JUDGED_FALSE: frozenset[CallOutcome] = frozenset({"succeeded", "no_match"})


@dataclass(frozen=True, slots=True)
class JudgedCall:
    """One replayed call: what it did, what the verdict said, and where its evidence lies."""

    outcome: CallOutcome
    verdict: str
    alarm: bool
    """The verdict alarmed (`repeats_prior_failure`)."""
    alarm_place: EvidencePlace | None
    """Where the alarm's evidence lies: its own session when the own-session replay alarms too."""
    rerun_of_failure: bool
    """It re-ran a command whose last run failed (the naive rule alarms)."""
    rerun_place: EvidencePlace | None
    """Where that failed last run lies."""
    private_items: int
    truncated: bool
    decide_ms: float
    own_alarm: bool | None = None
    """Arm 1 (`replay_scope(arms=...)`): the verdict decided on the call's own session alone
    alarmed; None when the replay decided it only for alarms."""
    own_decide_ms: float | None = None
    """Arm 1's decision time."""
    private_tokens: int = 0
    """Tokens of the private result the decision (arm 2) capped."""
    history_size: int | None = None
    """Arm 3: the size of the whole in-scope history before the call; None outside arms."""

    @property
    def dead_end(self) -> bool:
        """A re-run of a failed command that failed again."""
        return self.rerun_of_failure and self.outcome == "failed"


def figures(calls: Sequence[JudgedCall]) -> ReplayFigures:
    """The figures of a set of replayed calls."""
    dead_ends = sum(call.dead_end for call in calls)
    return ReplayFigures(
        calls=len(calls),
        outcomes={outcome: sum(call.outcome == outcome for call in calls) for outcome in get_args(CallOutcome)},
        reruns_of_failure=sum(call.rerun_of_failure for call in calls),
        dead_ends=dead_ends,
        repeated_dead_end_rate=_rate(dead_ends, len(calls)),
        verdicts=dict(sorted(Counter(call.verdict for call in calls).items())),
        verdict=_rule(calls, alarmed=lambda call: call.alarm, counted=lambda call: call.dead_end),
        naive=_rule(calls, alarmed=lambda call: call.rerun_of_failure, counted=lambda call: call.dead_end),
        within_session=_place(calls, "within_session"),
        across_sessions=_place(calls, "across_sessions"),
        private_items_p95=int(_percentile([call.private_items for call in calls], 95)),
        truncated_decisions=sum(call.truncated for call in calls),
        decide_ms_p95=round(_percentile([call.decide_ms for call in calls], 95), 2),
    )


def arm_rule(calls: Sequence[JudgedCall], alarmed: Callable[[JudgedCall], bool]) -> RuleFigures:
    """An alarm rule (an arm's verdicts) judged by outcome over every dead end of `calls`."""
    return _rule(calls, alarmed=alarmed, counted=lambda call: call.dead_end)


def percentile(values: Sequence[float], percent: int) -> float:
    """Nearest-rank percentile; 0 for no values."""
    return _percentile(values, percent)


def _place(calls: Sequence[JudgedCall], place: EvidencePlace) -> PlaceFigures:
    return PlaceFigures(
        dead_ends=sum(call.dead_end and call.rerun_place == place for call in calls),
        verdict=_rule(
            calls,
            alarmed=lambda call: call.alarm and call.alarm_place == place,
            counted=lambda call: call.dead_end and call.rerun_place == place,
        ),
        naive=_rule(
            calls,
            alarmed=lambda call: call.rerun_of_failure and call.rerun_place == place,
            counted=lambda call: call.dead_end and call.rerun_place == place,
        ),
    )


def _rule(
    calls: Sequence[JudgedCall], *, alarmed: Callable[[JudgedCall], bool], counted: Callable[[JudgedCall], bool]
) -> RuleFigures:
    """A rule's alarms judged by outcome; `counted` picks the dead ends its recall is over."""
    alarms = [call for call in calls if alarmed(call)]
    true = sum(call.outcome == "failed" for call in alarms)
    false = sum(call.outcome in _JUDGED_FALSE for call in alarms)
    dead_ends = [call for call in calls if counted(call)]
    caught = sum(alarmed(call) for call in dead_ends)
    return RuleFigures(
        alarms=len(alarms),
        true_alarms=true,
        false_alarms=false,
        unjudged_alarms=len(alarms) - true - false,
        dead_ends_caught=caught,
        alarms_right=_rate(true, true + false),
        dead_ends_caught_rate=_rate(caught, len(dead_ends)),
    )


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _percentile(values: Sequence[float], percent: int) -> float:
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)])
