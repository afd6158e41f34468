"""Metrics per arm: detection quality, context size, latency, freshness and scope handling."""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from obelisk_session_evidence.qualify.arms import ArmRun
from obelisk_session_evidence.qualify.synthetic import QualificationCase

SCOPE_DENIALS: Final = frozenset({"cross_agent_denied", "cross_project_denied", "cross_repository_denied"})
STAGES: Final = ("classify-gap", "admit", "retrieve", "cap-by-tokens", "compare-route", "receipt", "decision")


@dataclass(frozen=True, slots=True)
class Detection:
    """Repeated-route detection against the labels."""

    cases: int
    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int
    false_novelty: int
    """Cases an ideal comparison does not call novel, called `novel`."""
    not_novel: int
    verdict_correct: int
    outcomes_correct: int

    @property
    def precision(self) -> float:
        """TP / (TP + FP); 1.0 when nothing was called a repeat."""
        called = self.true_positive + self.false_positive
        return self.true_positive / called if called else 1.0

    @property
    def recall(self) -> float:
        """TP / (TP + FN); 1.0 when there was nothing to find."""
        actual = self.true_positive + self.false_negative
        return self.true_positive / actual if actual else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_repeat_rate(self) -> float:
        """FP / (FP + TN): routes that were not repeats, called repeats."""
        negatives = self.false_positive + self.true_negative
        return self.false_positive / negatives if negatives else 0.0

    @property
    def false_novelty_rate(self) -> float:
        """`novel` verdicts among cases that are repeats or cannot be certified."""
        return self.false_novelty / self.not_novel if self.not_novel else 0.0


class Labelled(Protocol):
    """A case with its labels (a generated case, or a real one)."""

    @property
    def repeated_route(self) -> bool: ...
    @property
    def expected_verdict(self) -> str: ...
    @property
    def expected_outcomes(self) -> tuple[str, ...]: ...


class Judged(Protocol):
    """What a run decided for a case (an arm's run, or a real case's)."""

    @property
    def verdict(self) -> str: ...
    @property
    def outcomes(self) -> tuple[str, ...]: ...
    @property
    def predicted_repeat(self) -> bool: ...


def detection(cases: Sequence[Labelled], runs: Sequence[Judged]) -> Detection:
    """Detection counts for `runs` (one per case, same order as `cases`)."""
    tp = fp = fn = tn = false_novelty = not_novel = verdicts = outcomes = 0
    for case, run in zip(cases, runs, strict=True):
        actual, called = case.repeated_route, run.predicted_repeat
        tp += actual and called
        fp += (not actual) and called
        fn += actual and not called
        tn += not actual and not called
        if case.expected_verdict != "novel":
            not_novel += 1
            false_novelty += run.verdict == "novel"
        verdicts += run.verdict == case.expected_verdict
        outcomes += tuple(run.outcomes) == tuple(case.expected_outcomes)
    return Detection(len(runs), tp, fp, fn, tn, false_novelty, not_novel, verdicts, outcomes)


def percentile(values: Iterable[float], fraction: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(fraction * len(ordered)))
    return float(ordered[rank - 1])


@dataclass(frozen=True, slots=True)
class ContextSize:
    """Private context per admitted query."""

    queries: int
    tokens_p50: float
    tokens_p95: float
    tokens_max: float
    chars_p50: float
    chars_p95: float
    chars_max: float
    truncation_rate: float


def context_size(runs: Sequence[ArmRun]) -> ContextSize:
    """Token and character percentiles over runs that looked something up."""
    looked_up = [run for run in runs if run.context_tokens is not None]
    tokens = [run.context_tokens or 0 for run in looked_up]
    chars = [run.context_chars or 0 for run in looked_up]
    truncated = sum(bool(run.truncated) for run in looked_up)
    return ContextSize(
        len(looked_up),
        percentile(tokens, 0.5),
        percentile(tokens, 0.95),
        float(max(tokens, default=0)),
        percentile(chars, 0.5),
        percentile(chars, 0.95),
        float(max(chars, default=0)),
        truncated / len(looked_up) if looked_up else 0.0,
    )


def stage_latency(runs: Sequence[ArmRun]) -> dict[str, tuple[float, float]]:
    """(p50, p95) milliseconds per stage that ran, in pipeline order."""
    result = {}
    for stage in STAGES:
        values = [run.latency_ms[stage] for run in runs if stage in run.latency_ms]
        if values:
            result[stage] = (percentile(values, 0.5), percentile(values, 0.95))
    return result


@dataclass(frozen=True, slots=True)
class Safety:
    """Freshness detection and scope handling."""

    freshness_checked: int
    freshness_correct: int
    scope_rejections_expected: int
    scope_rejections: int
    unexpected_scope_rejections: int
    novel_on_unfresh_index: int
    """`novel` verdicts reached while the index was not fresh (must be 0)."""

    @property
    def freshness_accuracy(self) -> float:
        """Share of lookups whose reported freshness was the index's true freshness."""
        return self.freshness_correct / self.freshness_checked if self.freshness_checked else 1.0


def safety(cases: Sequence[QualificationCase], runs: Sequence[ArmRun]) -> Safety:
    """Freshness and scope counts for `runs`."""
    checked = correct = expected = rejected = unexpected = novel_unfresh = 0
    for case, run in zip(cases, runs, strict=True):
        should_reject = case.expected_admission in SCOPE_DENIALS or case.provider_fault == "scope_leak"
        did_reject = run.admission in SCOPE_DENIALS or run.retrieval == "scope_violation"
        expected += should_reject
        rejected += should_reject and did_reject
        unexpected += did_reject and not should_reject
        if run.freshness is not None:
            checked += 1
            truth = "unknown" if case.provider_fault else case.freshness
            correct += run.freshness == truth
        if run.freshness is not None and run.verdict == "novel" and run.freshness != "fresh":
            novel_unfresh += 1
    return Safety(checked, correct, expected, rejected, unexpected, novel_unfresh)
