"""Qualification metrics: detection counts, percentiles, context size, freshness and scope."""

import dataclasses

import pytest

from obelisk_session_evidence.qualify.arms import ArmRun
from obelisk_session_evidence.qualify.metrics import context_size, detection, percentile, safety, stage_latency
from obelisk_session_evidence.qualify.synthetic import qualification_cases

SAMPLE = qualification_cases(seed=0, per_family=2)


def _run(case, verdict: str, **fields) -> ArmRun:
    defaults = dict(
        outcomes=case.expected_outcomes,
        admission="admitted",
        retrieval="retrieved",
        freshness=case.freshness,
        context_tokens=100,
        context_chars=300,
        truncated=False,
    )
    return ArmRun(case.case_id, "admitted_retrieval", verdict, **{**defaults, **fields})


def test_detection_perfect_runs() -> None:
    runs = [_run(case, case.expected_verdict) for case in SAMPLE]
    result = detection(SAMPLE, runs)
    assert (result.precision, result.recall, result.f1, result.false_repeat_rate) == (1.0, 1.0, 1.0, 0.0)
    assert result.verdict_correct == result.outcomes_correct == len(SAMPLE)


def test_detection_calling_everything_novel() -> None:
    result = detection(SAMPLE, [_run(case, "novel") for case in SAMPLE])
    assert result.recall == 0.0 and result.precision == 1.0 and result.false_novelty_rate == 1.0


def test_detection_calling_everything_a_repeat() -> None:
    result = detection(SAMPLE, [_run(case, "repeats_prior_failure") for case in SAMPLE])
    assert result.recall == 1.0 and result.false_repeat_rate == 1.0
    assert result.precision == pytest.approx(sum(c.repeated_route for c in SAMPLE) / len(SAMPLE))


@pytest.mark.parametrize(
    ("values", "fraction", "expected"),
    [([], 0.5, 0.0), ([5], 0.95, 5.0), ([1, 2, 3, 4], 0.5, 2.0), (list(range(1, 101)), 0.95, 95.0)],
)
def test_percentile_nearest_rank(values, fraction, expected) -> None:
    assert percentile(values, fraction) == expected


def test_context_size_ignores_runs_without_lookup() -> None:
    runs = [_run(SAMPLE[0], "novel", context_tokens=t, context_chars=3 * t, truncated=t > 150) for t in (100, 200)]
    runs.append(_run(SAMPLE[0], "not_compared", context_tokens=None, context_chars=None, truncated=None))
    size = context_size(runs)
    assert (size.queries, size.tokens_max, size.chars_max, size.truncation_rate) == (2, 200.0, 600.0, 0.5)


def test_stage_latency_in_pipeline_order() -> None:
    runs = [dataclasses.replace(_run(SAMPLE[0], "novel"), latency_ms={"compare-route": 2.0, "admit": 1.0})]
    assert list(stage_latency(runs)) == ["admit", "compare-route"]


def test_safety_counts_scope_rejections_and_unfresh_novelty() -> None:
    runs = []
    for case in SAMPLE:
        admission = case.expected_admission
        retrieval = "scope_violation" if case.provider_fault else "retrieved"
        freshness = "unknown" if case.provider_fault else case.freshness
        runs.append(_run(case, case.expected_verdict, admission=admission, retrieval=retrieval, freshness=freshness))
    result = safety(SAMPLE, runs)
    assert result.scope_rejections == result.scope_rejections_expected > 0
    assert result.unexpected_scope_rejections == 0 and result.freshness_accuracy == 1.0
    assert result.novel_on_unfresh_index == 0
    stale = [
        dataclasses.replace(r, verdict="novel") if c.freshness != "fresh" else r
        for c, r in zip(SAMPLE, runs, strict=False)
    ]
    assert safety(SAMPLE, stale).novel_on_unfresh_index > 0
