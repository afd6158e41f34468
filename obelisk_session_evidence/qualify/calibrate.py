"""Threshold calibration on the training split only, and the sweeps the report plots."""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.qualify.arms import ArmRun, Trace, rejudge
from obelisk_session_evidence.qualify.metrics import detection

MAX_FALSE_REPEAT_RATE: Final = 0.02
"""The issue's ceiling on false repeats; calibration never trades past it."""
SEARCH_SPACE: Final[dict[str, tuple[int, ...]]] = {
    "command_repeat": tuple(range(50, 101, 5)),
    "hypothesis_repeat": tuple(range(50, 101, 5)),
    "blocker_repeat": tuple(range(50, 101, 5)),
    "min_text_words": (1, 2, 3, 4),
}
"""The values each threshold may take, searched one threshold at a time in this order."""
SWEPT: Final = ("command_repeat", "hypothesis_repeat", "blocker_repeat")


def rescored(traces: Sequence[Trace], runs: Sequence[ArmRun], thresholds: RouteThresholds) -> list[ArmRun]:
    """`runs` re-decided under `thresholds` (only compare-route runs again)."""
    rescored_runs = []
    for trace, run in zip(traces, runs, strict=True):
        verdict, outcomes = rejudge(trace, thresholds)
        rescored_runs.append(replace(run, verdict=verdict, outcomes=outcomes))
    return rescored_runs


def calibrate(traces: Sequence[Trace], runs: Sequence[ArmRun], *, start: RouteThresholds) -> RouteThresholds:
    """The thresholds with the best smoothed F1 at a false-repeat rate within the ceiling.

    Each threshold is searched in turn, the others held. A value is scored by the mean F1 of
    itself and its neighbours in the search space, and it qualifies only when it and its more
    lenient neighbour both keep the false-repeat rate within the ceiling: a value at the edge of
    a cliff on the training split would fall off it on the held-back split. Ties go to the
    stricter value. `traces` and `runs` must come from the training split only.
    """
    cases = [trace.case for trace in traces]
    best = start
    for name, values in SEARCH_SPACE.items():
        results = [detection(cases, rescored(traces, runs, best.model_copy(update={name: v}))) for v in values]
        keys = []
        for index, value in enumerate(values):
            window = results[max(0, index - 1) : index + 2]
            lenient = results[index - 1] if index > 0 else results[index]
            within = all(r.false_repeat_rate <= MAX_FALSE_REPEAT_RATE for r in (results[index], lenient))
            smoothed = sum(r.f1 for r in window) / len(window)
            keys.append((within, round(smoothed, 6), results[index].outcomes_correct, value))
        best = best.model_copy(update={name: max(keys)[3]})
    return best


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """Detection at one value of one threshold, the others held."""

    threshold: str
    value: int
    precision: float
    recall: float
    false_repeat_rate: float


def sweep(traces: Sequence[Trace], runs: Sequence[ArmRun], *, around: RouteThresholds) -> list[SweepPoint]:
    """Precision and recall as each swept threshold moves from 50 to 100."""
    cases = [trace.case for trace in traces]
    points = []
    for name in SWEPT:
        for value in range(50, 101, 5):
            result = detection(cases, rescored(traces, runs, around.model_copy(update={name: value})))
            points.append(SweepPoint(name, value, result.precision, result.recall, result.false_repeat_rate))
    return points
