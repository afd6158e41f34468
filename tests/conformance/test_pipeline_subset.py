"""The full pipeline only narrows LoopX: history removes outcomes, never adds one."""

import json
import time
from collections import Counter
from collections.abc import Callable

import pytest

from fixtures.conformance_cases import ConformanceCase
from fixtures.situations import situation
from obelisk_session_evidence.contracts.config import AdmissionPolicy
from obelisk_session_evidence.contracts.decision import ReplanEvidenceDecision
from obelisk_session_evidence.contracts.errors import ProviderUnavailable
from obelisk_session_evidence.contracts.evidence import EvidenceItem, HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.conformance.conftest import LoopxAnswers, record_timing
from tests.stages.helpers import enabled_policy, item, result_for

pytestmark = pytest.mark.conformance

ROUTE = "pytest tests/test_auth.py -x"
History = Callable[[HistoricalEvidenceRequest], list[EvidenceItem]]


def _failed_before(request: HistoricalEvidenceRequest) -> list[EvidenceItem]:
    return [item(tool_snippet(ROUTE, "exit 1", "1 failed"), "prior_failure")]


def _ran_before(request: HistoricalEvidenceRequest) -> list[EvidenceItem]:
    return [item(tool_snippet(ROUTE, "exit 0", "3 passed"), "tool_outcome")]


def _other_route(request: HistoricalEvidenceRequest) -> list[EvidenceItem]:
    return [item(tool_snippet("ruff check src/billing", "exit 0", ""), "tool_outcome")]


def _unavailable(request: HistoricalEvidenceRequest) -> list[EvidenceItem]:
    raise ProviderUnavailable("stand-in")


PROVIDER_VARIANTS: tuple[tuple[str, History | None, str], ...] = (
    ("failed_before", _failed_before, "fresh"),
    ("ran_before", _ran_before, "fresh"),
    ("other_route", _other_route, "fresh"),
    ("stale_empty", lambda request: [], "stale"),
    ("unavailable", _unavailable, "fresh"),
    ("not_enabled", None, "fresh"),
)
"""History a stand-in provider answers with, rotated over the cases."""


def _situation_for(case: ConformanceCase) -> ReplanSituation:
    document = situation(commands=[ROUTE], operator_requested=True, repeated=False)
    document["obligation"] = case.obligation
    document["proposed"]["observation"] = case.observation
    return load_contract(ReplanSituation, json.dumps(document).encode())


def _dependencies(encoder, variant: tuple[str, History | None, str]) -> PipelineDependencies:
    _, history, freshness = variant
    if history is None:
        policy = AdmissionPolicy(config=None, load_reason_code="config_absent")
        provider = HandlerProvider(lambda request: result_for(request, []))
    else:
        policy = enabled_policy()
        provider = HandlerProvider(lambda request: result_for(request, history(request), freshness=freshness))
    return PipelineDependencies(
        policy=policy,
        provider=provider,
        encoder=encoder,
        thresholds=RouteThresholds(),
        digest_salt="conformance-salt",
    )


@pytest.fixture(scope="session")
def pipeline_decisions(loopx_answers: LoopxAnswers, encoder) -> list[ReplanEvidenceDecision]:
    """The full pipeline's public decision for every generated case."""
    dependencies = [_dependencies(encoder, variant) for variant in PROVIDER_VARIANTS]
    started = time.monotonic()
    decisions = [
        run_pipeline(_situation_for(case), dependencies[index % len(dependencies)]).decision
        for index, case in enumerate(loopx_answers.cases)
    ]
    record_timing("pipeline_seconds", time.monotonic() - started)
    return decisions


def test_pipeline_outcomes_are_a_subset_of_loopx(
    loopx_answers: LoopxAnswers, pipeline_decisions: list[ReplanEvidenceDecision]
) -> None:
    violations = []
    for case, decision, theirs in zip(loopx_answers.cases, pipeline_decisions, loopx_answers.answers, strict=False):
        ours = decision.semantic_delta
        if "error" in theirs:
            if ours.accepted or ours.outcomes:
                violations.append((case.label, "accepted what LoopX refuses"))
            continue
        if not set(ours.outcomes) <= set(theirs["outcomes"]):
            violations.append((case.label, ("outcomes", ours.outcomes, theirs["outcomes"])))
        if not set(ours.satisfying_outcomes) <= set(theirs["satisfying_outcomes"]):
            violations.append((case.label, ("satisfying", ours.satisfying_outcomes)))
        if ours.accepted and not theirs["accepted"]:
            violations.append((case.label, "accepted"))
        if ours.required_any_of != theirs["required_any_of"]:
            violations.append((case.label, "required_any_of"))
        if ours.observation_fingerprint != theirs["observation_fingerprint"]:
            violations.append((case.label, "observation_fingerprint"))
        if decision.obligation_id != theirs["obligation_id"]:
            violations.append((case.label, "obligation_id"))
    assert not violations, f"{len(violations)} violations; first: {violations[:8]}"


def test_pipeline_history_narrowed_some_accepted_writebacks(
    loopx_answers: LoopxAnswers, pipeline_decisions: list[ReplanEvidenceDecision]
) -> None:
    narrowed: Counter[str] = Counter()
    for index, (decision, theirs) in enumerate(zip(pipeline_decisions, loopx_answers.answers, strict=False)):
        if "error" not in theirs and len(decision.semantic_delta.outcomes) < len(theirs["outcomes"]):
            narrowed[PROVIDER_VARIANTS[index % len(PROVIDER_VARIANTS)][0]] += 1
    # Only a route that repeats history narrows; the other variants keep LoopX's outcomes.
    assert narrowed["failed_before"] and narrowed["ran_before"]
    assert set(narrowed) <= {"failed_before", "ran_before"}
