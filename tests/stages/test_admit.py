import pytest

from obelisk_session_evidence.contracts.config import AdmissionPolicy
from obelisk_session_evidence.contracts.evidence import MAX_QUERY_TERM_CHARS, MAX_QUERY_TERMS
from obelisk_session_evidence.stages.admit import admit, query_terms_for
from obelisk_session_evidence.stages.classify_gap import classify_gap
from tests.stages.helpers import enabled_policy, situation_model

ABSENT = AdmissionPolicy(config=None, load_reason_code="config_absent")
INVALID = AdmissionPolicy(config=None, load_reason_code="config_invalid")


def _admit(policy, **kwargs):
    situation = situation_model(**kwargs)
    return admit(situation, classify_gap(situation), policy=policy)


@pytest.mark.parametrize(
    ("policy", "kwargs", "reason_code"),
    [
        (ABSENT, {}, "not_enabled"),
        (INVALID, {}, "config_invalid"),
        (enabled_policy(), {"repeated": False}, "no_history_gap"),
        (
            enabled_policy(),
            {"scope": {"agent_id": "agent-fixture", "project_id": "project-fixture"}},
            "scope_incomplete",
        ),
        (
            enabled_policy(),
            {"scope": {"agent_id": "agent-fixture", "project_id": "project-other", "repository_id": "repo-fixture"}},
            "cross_project_denied",
        ),
        (
            enabled_policy(),
            {"scope": {"agent_id": "agent-other", "project_id": "project-fixture", "repository_id": "repo-fixture"}},
            "cross_agent_denied",
        ),
        (
            enabled_policy(),
            {"scope": {"agent_id": "agent-fixture", "project_id": "project-fixture", "repository_id": "repo-other"}},
            "cross_repository_denied",
        ),
        (enabled_policy(triggers=["operator_requested_history"]), {}, "trigger_not_enabled"),
        (
            enabled_policy(),
            {
                "commands": [],
                "files": [],
                "proposed_ids": {
                    "surface_id": None,
                    "hypothesis_id": None,
                    "probe_kind": None,
                    "evidence_ids": ["e-1"],
                },
            },
            "no_query_terms",
        ),
    ],
)
def test_admit_denials(policy, kwargs, reason_code):
    admission = _admit(policy, **kwargs)
    assert (admission.status, admission.reason_code) == ("not_admitted", reason_code)


def test_admit_same_scope_builds_bounded_request():
    admission = _admit(enabled_policy())
    request = admission.request
    assert admission.status == "admitted" and admission.reason_code == "admitted"
    assert request.trigger == "replan_repetition"
    assert (request.scope.agent_id, request.scope.project_id, request.scope.repository_id) == (
        "agent-fixture",
        "project-fixture",
        "repo-fixture",
    )
    assert request.scope.allow_cross_agent is False and request.scope.allow_cross_project is False
    assert request.query_terms[:2] == ["pytest tests/test_auth.py -x", "tests/test_auth.py"]
    assert admission.token_budget == 2000


def test_admit_picks_first_enabled_trigger():
    admission = _admit(enabled_policy(triggers=["operator_requested_history"]), operator_requested=True)
    assert admission.request.trigger == "operator_requested_history"


def test_admit_request_id_is_deterministic():
    assert _admit(enabled_policy()).request.request_id == _admit(enabled_policy()).request.request_id


def test_admit_clamps_limits_to_hard_caps():
    admission = _admit(enabled_policy(), limits={"max_items": 10_000, "max_tokens": 10_000, "max_snippet_chars": 100})
    assert admission.request.limits.max_items == 50
    assert admission.request.limits.max_snippet_chars == 100
    assert admission.token_budget == 8000


def test_query_terms_for_are_bounded_and_folded():
    situation = situation_model(commands=[f"cmd {i}   --flag\n{'x' * 1000}" for i in range(30)], hypothesis="a  b")
    terms = query_terms_for(situation)
    assert len(terms) == MAX_QUERY_TERMS
    assert all(len(term) <= MAX_QUERY_TERM_CHARS and "\n" not in term for term in terms)
    assert terms[0].startswith("cmd 0 --flag x")
