import io
import json

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, situation
from obelisk_session_evidence.loopx import decision_context_extension as extension
from obelisk_session_evidence.loopx.asking import Asker
from obelisk_session_evidence.providers.recent_failures import RecentFailures
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import write_private
from obelisk_session_evidence.state.spool import spool_document
from tests.loopx.helpers import (
    CURRENT_SESSION,
    CURRENT_SESSION_FAILURE,
    EARLIER_SESSION_FAILURE,
    ROUTE,
    backend,
    current_turn_failure,
)

ASKING = Asker(goal_id=FIXTURE_PROJECT, agent_id=FIXTURE_AGENT)
QUERY_CANARY = "zebra-canary-7731"


def _request(**overrides):
    return {
        "schema_version": extension.REQUEST_SCHEMA,
        "operation": "retrieve",
        "namespace": "replan",
        "scope_ref": CURRENT_SESSION,
        "query": "what failed before?",
        "query_summary": "prior failures for this replan",
        "max_results": 4,
        "timeout_seconds": 30,
        "observed_at": "2026-11-29T10:00:00Z",
        **overrides,
    }


def test_response_for_spooled_situation_excludes_only_the_invoking_turn(encoder, tmp_path):
    paths = StatePaths(tmp_path)
    reference = spool_document(paths, "situations", json.dumps(situation()).encode())
    response = extension.response_for(
        _request(query=f"replan-situation:{reference}"),
        asking=ASKING,
        **backend(
            paths=paths,
            history=lambda request: [current_turn_failure(), CURRENT_SESSION_FAILURE, EARLIER_SESSION_FAILURE],
        ),
    )
    assert set(response) == {"schema_version", "ok", "status", "reason_code", "items"}
    assert (response["ok"], response["status"], response["reason_code"]) == (True, "completed", None)
    verdict, *evidence = response["items"]
    # The invoking session's earlier failure counts; its record from the invocation on does not.
    assert [item["resource_ref"] for item in evidence] == [
        CURRENT_SESSION_FAILURE.message_ref,
        EARLIER_SESSION_FAILURE.message_ref,
    ]
    assert verdict["resource_ref"].startswith("replan-decision:sha256:")
    assert verdict["summary"].startswith("verdict repeats_prior_failure; delta route_repeats_prior_failure")
    assert "invoking turn excluded 1" in verdict["summary"]
    assert all(set(item) == {"resource_ref", "summary", "content", "score"} for item in response["items"])


def test_response_for_free_text_goal_scope_is_a_scoped_lookup(encoder, tmp_path):
    response = extension.response_for(
        _request(scope_ref="goal", query=f"pytest test_auth {QUERY_CANARY} failed?"),
        asking=ASKING,
        **backend(paths=StatePaths(tmp_path), history=lambda request: [EARLIER_SESSION_FAILURE]),
    )
    assert (response["status"], response["reason_code"]) == ("completed", None)
    verdict, evidence = response["items"]
    assert evidence["resource_ref"] == EARLIER_SESSION_FAILURE.message_ref
    assert "verdict " in verdict["summary"] and "matched " in verdict["summary"]
    # The query's words are private: neither the verdict nor any summary carries them.
    public = json.dumps([verdict, evidence["summary"]])
    assert QUERY_CANARY not in public and "pytest" not in public


@pytest.mark.parametrize(
    ("overrides", "asking", "reason_code"),
    [
        ({}, Asker(None, None), "not_enabled"),
        ({"scope_ref": "/home/someone/.codex"}, ASKING, "scope_ref_unsupported"),
        # A reference is no bearer token: an asker without an enablement is refused before the spool is read.
        ({"query": "replan-situation:sha256:" + "0" * 64}, ASKING, "not_enabled"),
    ],
)
def test_response_for_typed_unavailable_answers(tmp_path, overrides, asking, reason_code):
    response = extension.response_for(_request(**overrides), paths=StatePaths(tmp_path), asking=asking)
    assert response == {
        "schema_version": extension.RESPONSE_SCHEMA,
        "ok": True,
        "status": "unavailable",
        "reason_code": reason_code,
        "items": [],
    }


def test_response_for_free_text_with_an_unknown_asker_is_refused(encoder, tmp_path):
    paths = StatePaths(tmp_path)
    backend(paths=paths, history=lambda request: [EARLIER_SESSION_FAILURE])
    response = extension.response_for(_request(scope_ref="goal"), paths=paths, asking=Asker(None, None))
    assert (response["status"], response["reason_code"]) == ("unavailable", "asking_agent_unknown")


def test_response_for_a_free_text_command_line_is_judged_as_that_command(encoder, tmp_path):
    """Issue 30 §3: the query is the command that failed before; the verdict says so."""
    response = extension.response_for(
        _request(scope_ref="goal", query=ROUTE),
        asking=ASKING,
        **backend(paths=StatePaths(tmp_path), history=lambda request: [EARLIER_SESSION_FAILURE]),
    )
    verdict, evidence = response["items"]
    assert verdict["summary"].startswith("verdict repeats_prior_failure;"), verdict["summary"]
    assert json.loads(verdict["content"])["matched_items"] == 1
    assert evidence["resource_ref"] == EARLIER_SESSION_FAILURE.message_ref


def test_prepare_evidence_without_an_obligation_brings_the_scopes_recent_unresolved_failures(encoder, tmp_path):
    """Issue 30 §2: LoopX's fixed query names no step; the lookup resumes what failed last."""
    asked = []

    def history(request):
        asked.append(request)
        return [EARLIER_SESSION_FAILURE]

    response = extension.response_for(
        _request(scope_ref="goal", query="current decision evidence"),
        asking=ASKING,
        **backend(paths=StatePaths(tmp_path), history=history, recent=RecentFailures((ROUTE,), "fresh")),
    )
    assert (response["status"], response["reason_code"]) == ("completed", None)
    verdict, evidence = response["items"]
    document = json.loads(verdict["content"])
    assert (document["trigger"], document["verdict"], document["history_items"]) == (
        "resume_or_handoff_gap",
        "repeats_prior_failure",
        1,
    )
    assert evidence["resource_ref"] == EARLIER_SESSION_FAILURE.message_ref
    (request,) = asked
    assert ROUTE in request.query_terms and request.trigger == "resume_or_handoff_gap"
    # The resumed command is private: neither the verdict nor a summary carries it.
    public = json.dumps([verdict, evidence["summary"]])
    assert "pytest" not in public and "test_auth" not in public


@pytest.mark.parametrize(
    ("freshness", "status", "reason_code"),
    [("fresh", "completed", None), ("stale", "unavailable", "index_stale")],
)
def test_prepare_evidence_without_unresolved_failures_is_empty_only_from_a_fresh_index(
    encoder, tmp_path, freshness, status, reason_code
):
    response = extension.response_for(
        _request(scope_ref="goal", query="current decision evidence"),
        asking=ASKING,
        **backend(paths=StatePaths(tmp_path), history=lambda request: [], recent=RecentFailures((), freshness)),
    )
    assert (response["status"], response["reason_code"], response["items"]) == (status, reason_code, [])


def test_response_for_free_text_names_the_asker_in_the_request_when_loopx_sends_it(encoder, tmp_path):
    """Issue 30 §4: a LoopX that sends goal_id/agent_id is answered from them (here LoopX's
    invocation names nobody, as under LoopX's chat server); issue 26 §1: they are held to the
    same rules as the invocation (an agent not enabled is refused, and so is a request that
    names another agent than LoopX's command line)."""
    paths = StatePaths(tmp_path)
    history = backend(paths=paths, history=lambda request: [EARLIER_SESSION_FAILURE])
    response = extension.response_for(
        _request(scope_ref="goal", goal_id=FIXTURE_PROJECT, agent_id=FIXTURE_AGENT),
        asking=Asker(None, None),
        **history,
    )
    assert (response["status"], response["reason_code"]) == ("completed", None)
    other = extension.response_for(
        _request(scope_ref="goal", goal_id=FIXTURE_PROJECT, agent_id="agent-not-enabled"),
        asking=Asker(None, None),
        **history,
    )
    assert (other["status"], other["reason_code"]) == ("unavailable", "not_enabled")
    disagreeing = extension.response_for(
        _request(scope_ref="goal", goal_id=FIXTURE_PROJECT, agent_id="agent-not-enabled"), asking=ASKING, **history
    )
    assert (disagreeing["status"], disagreeing["reason_code"]) == ("unavailable", "asking_agent_conflict")
    unsaid = extension.response_for(
        _request(scope_ref="goal", goal_id=None, agent_id=None), asking=Asker(None, None), **history
    )
    assert (unsaid["status"], unsaid["reason_code"]) == ("unavailable", "asking_agent_unknown")


def test_requested_asker_is_what_the_request_names():
    assert extension.requested_asker({"agent_id": "agent-b"}) == Asker(None, "agent-b")
    assert extension.requested_asker({"goal_id": None}) is None
    assert extension.requested_asker({}) is None


def test_response_for_a_broken_configuration_is_config_invalid(tmp_path):
    paths = StatePaths(tmp_path)
    write_private(paths.config_file, b"{not json")
    response = extension.response_for(_request(scope_ref="goal"), paths=paths, asking=ASKING)
    assert (response["status"], response["reason_code"]) == ("unavailable", "config_invalid")


@pytest.mark.parametrize(
    ("stdin", "reason_code"),
    [
        (b"not json", "request_not_json"),
        (b"[]", "request_not_object"),
        (json.dumps({**_request(), "extra": 1}).encode(), "request_fields_invalid"),
        (json.dumps(_request(operation="sync")).encode(), "request_schema_invalid"),
        (json.dumps(_request(max_results=True)).encode(), "max_results_invalid"),
        (json.dumps(_request(scope_ref=" ")).encode(), "scope_ref_invalid"),
        (json.dumps(_request(agent_id="an agent with spaces")).encode(), "agent_id_invalid"),
        (json.dumps(_request(goal_id=7)).encode(), "goal_id_invalid"),
    ],
)
def test_main_refuses_protocol_violations_with_exit_2(monkeypatch, capsys, stdin, reason_code):
    # The process boundary: LoopX pipes the request into the extension's stdin.
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    assert extension.main([]) == 2
    printed = json.loads(capsys.readouterr().out)
    assert (printed["ok"], printed["reason_code"], printed["items"]) == (False, reason_code, [])


def test_main_answers_unavailable_with_exit_0(monkeypatch, capsys):
    # The process boundary: LoopX pipes the request into the extension's stdin.
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(_request()).encode())))
    assert extension.main([]) == 0  # not LoopX's child: nobody is established as the asker
    assert json.loads(capsys.readouterr().out)["reason_code"] == "asking_agent_unknown"


def test_main_doctor_is_not_ready_without_an_enablement(capsys):
    assert extension.main(["--doctor"]) == 1
    assert capsys.readouterr().out == "not ready: not_enabled\n"


def test_main_doctor_is_not_ready_with_a_broken_configuration(capsys):
    from obelisk_session_evidence.state.paths import state_paths

    write_private(state_paths().config_file, b'{"schema_version": "obelisk_session_evidence_config_v0", "x": 1}')
    assert extension.main(["--doctor"]) == 1
    assert capsys.readouterr().out == "not ready: config_invalid\n"


def test_main_rejects_unknown_arguments(capsys):
    assert extension.main(["--verbose"]) == 2
