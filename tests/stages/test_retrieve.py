import pytest

from obelisk_session_evidence.contracts.errors import ProviderTimeout, ScopeViolation
from obelisk_session_evidence.contracts.evidence import ScopeApplied
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.stages.admit import admit
from obelisk_session_evidence.stages.classify_gap import classify_gap
from obelisk_session_evidence.stages.retrieve import retrieve
from tests.stages.helpers import enabled_policy, item, result_for, situation_model

CANARY = "CANARY-RETRIEVE-51be"


def _admission():
    situation = situation_model()
    return admit(situation, classify_gap(situation), policy=enabled_policy())


def _raise(error):
    def handler(request):
        raise error

    return handler


def _other_agent(request):
    result = result_for(request, [item("$ pytest")])
    return result.model_copy(
        update={
            "scope_applied": ScopeApplied(
                agent_id="agent-other", project_id="project-fixture", repository_id="repo-fixture"
            )
        }
    )


def _unrequested_type(request):
    return result_for(request, [item("x", evidence_type="summary")])


@pytest.mark.parametrize(
    ("handler", "reason_code"),
    [
        (_raise(ProviderTimeout("10s")), "provider_timeout"),
        (_raise(RuntimeError(CANARY)), "provider_crashed"),
        (_raise(ScopeViolation("1 row")), "scope_violation"),
        (_other_agent, "scope_violation"),
        (lambda request: {"not": "a result"}, "provider_crashed"),
    ],
)
def test_retrieve_fault_is_typed_empty_result(handler, reason_code):
    retrieval = retrieve(_admission(), provider=HandlerProvider(handler))
    assert retrieval.reason_code == reason_code
    assert retrieval.result.items == [] and retrieval.result.freshness == "unknown"
    assert CANARY not in retrieval.model_dump_json()


def test_retrieve_rejects_unrequested_evidence_type():
    situation = situation_model(evidence_types=["prior_failure"])
    admission = admit(situation, classify_gap(situation), policy=enabled_policy())
    assert retrieve(admission, provider=HandlerProvider(_unrequested_type)).reason_code == "scope_violation"


def test_retrieve_without_provider_is_unavailable():
    retrieval = retrieve(_admission(), provider=None)
    assert (retrieval.reason_code, retrieval.result.freshness) == ("provider_unavailable", "unknown")


def test_retrieve_not_admitted_asks_nobody():
    situation = situation_model(repeated=False)
    admission = admit(situation, classify_gap(situation), policy=enabled_policy())
    calls = []
    retrieval = retrieve(admission, provider=HandlerProvider(lambda request: calls.append(request)))
    assert (retrieval.status, retrieval.reason_code, calls) == ("not_admitted", "not_admitted", [])


def test_retrieve_passes_in_scope_result_through():
    retrieval = retrieve(_admission(), provider=HandlerProvider(lambda r: result_for(r, [item("$ pytest")])))
    assert retrieval.reason_code == "retrieved" and len(retrieval.result.items) == 1


def test_each_distinct_text_of_an_answer_is_redacted_once_and_every_copy_masked(monkeypatch):
    """The same command run in many sessions fails the same way each time: one redaction per text."""
    from obelisk_session_evidence.providers.redaction import redaction

    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    command, output = f"curl -H 'token {secret}' https://api", f"error: bad credentials for {secret}"
    calls = [
        PriorToolCall(
            session_ref=f"session:{n:016x}",
            tool_name="Bash",
            command=command,
            exit_code=1,
            is_error=True,
            output_excerpt=output,
            outcome="failed",
        )
        for n in range(5)
    ]
    redacted_texts: list[str] = []
    real_redact = redaction.redact

    def counted(text: str) -> str:  # a pure function: only a count of its calls can tell the memo is there
        redacted_texts.append(text)
        return real_redact(text)

    monkeypatch.setattr(redaction, "redact", counted)
    retrieval = retrieve(
        _admission(),
        provider=HandlerProvider(
            lambda request: ProviderAnswer(result=result_for(request, [item(output)]), prior_calls=calls)
        ),
    )
    assert retrieval.reason_code == "retrieved"
    assert sorted(redacted_texts) == sorted([command, output])
    texts = [retrieval.result.items[0].snippet] + [
        t for call in retrieval.prior_calls for t in (call.command, call.output_excerpt)
    ]
    assert len(texts) == 11 and all(secret not in text and "[REDACTED:" in text for text in texts)
