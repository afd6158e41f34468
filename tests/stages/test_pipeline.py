from obelisk_session_evidence.contracts.config import AdmissionPolicy
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.stages.pipeline import PIPELINE, PipelineDependencies, run_pipeline
from tests.stages.helpers import enabled_policy, item, result_for, situation_model

FAILED_RUN = tool_snippet("pytest tests/test_auth.py -x", "exit 1", "1 failed")


def _dependencies(encoder, policy, handler, freshness="fresh"):
    provider = HandlerProvider(lambda request: result_for(request, handler(request), freshness=freshness))
    return PipelineDependencies(
        policy=policy, provider=provider, encoder=encoder, thresholds=RouteThresholds(), digest_salt="salt"
    )


def test_pipeline_stage_order_is_the_rfc_order():
    assert [stage.name for stage in PIPELINE] == [
        "classify-gap",
        "admit",
        "retrieve",
        "cap-by-tokens",
        "compare-route",
        "receipt",
        "decision",
    ]


def test_run_pipeline_removes_outcome_for_repeated_failure(encoder):
    run = run_pipeline(situation_model(), _dependencies(encoder, enabled_policy(), lambda r: [item(FAILED_RUN)]))
    decision = run.decision
    assert decision.comparison.verdict == "repeats_prior_failure"
    assert decision.semantic_delta.outcomes == [] and not decision.semantic_delta.accepted
    assert decision.semantic_delta.reason_code == "route_repeats_prior_failure"
    assert decision.receipt.result_count == 1 and decision.receipt.evidence_type_counts["prior_failure"] == 1
    assert run.private_result.items[0].snippet == FAILED_RUN


def test_run_pipeline_keeps_outcome_for_novel_route(encoder):
    decision = run_pipeline(
        situation_model(commands=["ruff check src/auth"]),
        _dependencies(encoder, enabled_policy(), lambda r: [item(FAILED_RUN)]),
    ).decision
    assert decision.comparison.verdict == "novel"
    assert decision.semantic_delta.outcomes == ["new_probe_family"] and decision.semantic_delta.accepted


def test_run_pipeline_empty_stale_history_is_unverified_not_novel(encoder):
    decision = run_pipeline(
        situation_model(), _dependencies(encoder, enabled_policy(), lambda r: [], freshness="stale")
    ).decision
    assert decision.comparison.verdict == "novelty_unverified"
    assert decision.receipt.freshness == "stale" and decision.receipt.result_count == 0


def test_run_pipeline_not_admitted_has_no_receipt(encoder):
    policy = AdmissionPolicy(config=None, load_reason_code="config_absent")
    decision = run_pipeline(situation_model(), _dependencies(encoder, policy, lambda r: [])).decision
    assert decision.receipt is None and decision.comparison.verdict == "not_compared"
    assert decision.admission.reason_code == "not_enabled"
    assert decision.semantic_delta.outcomes == ["new_probe_family"]


def test_run_pipeline_public_decision_carries_no_content(encoder):
    canary = "CANARY-PIPELINE-77aa"
    decision = run_pipeline(
        situation_model(commands=[f"pytest {canary}"], hypothesis=canary, blocker=canary),
        _dependencies(encoder, enabled_policy(), lambda r: [item(f"$ pytest {canary}\nexit 1\n{canary}")]),
    ).decision
    assert canary not in decision.model_dump_json()
