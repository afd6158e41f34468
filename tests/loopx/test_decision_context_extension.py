import io
import json

import pytest

from fixtures.situations import situation
from obelisk_session_evidence.loopx import decision_context_extension as extension
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import spool_document
from tests.loopx.helpers import (
    CURRENT_SESSION,
    CURRENT_SESSION_FAILURE,
    EARLIER_SESSION_FAILURE,
    backend,
)


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


def test_response_for_spooled_situation_excludes_the_invoking_session(encoder, tmp_path):
    paths = StatePaths(tmp_path)
    reference = spool_document(paths, "situations", json.dumps(situation()).encode())
    response = extension.response_for(
        _request(query=f"replan-situation:{reference}"),
        **backend(paths=paths, history=lambda request: [CURRENT_SESSION_FAILURE, EARLIER_SESSION_FAILURE]
        ),
    )
    assert set(response) == {"schema_version", "ok", "status", "reason_code", "items"}
    assert (response["ok"], response["status"], response["reason_code"]) == (True, "completed", None)
    assert [item["resource_ref"] for item in response["items"]] == [EARLIER_SESSION_FAILURE.message_ref]
    assert set(response["items"][0]) == {"resource_ref", "summary", "content", "score"}


@pytest.mark.parametrize(
    ("overrides", "reason_code"),
    [
        ({}, "situation_ref_required"),
        ({"scope_ref": "/home/someone/.codex"}, "scope_ref_unsupported"),
        ({"query": "replan-situation:sha256:" + "0" * 64}, "situation_not_found"),
    ],
)
def test_response_for_typed_unavailable_answers(tmp_path, overrides, reason_code):
    response = extension.response_for(_request(**overrides), paths=StatePaths(tmp_path))
    assert response == {
        "schema_version": extension.RESPONSE_SCHEMA,
        "ok": True,
        "status": "unavailable",
        "reason_code": reason_code,
        "items": [],
    }


@pytest.mark.parametrize(
    ("stdin", "reason_code"),
    [
        (b"not json", "request_not_json"),
        (b"[]", "request_not_object"),
        (json.dumps({**_request(), "extra": 1}).encode(), "request_fields_invalid"),
        (json.dumps(_request(operation="sync")).encode(), "request_schema_invalid"),
        (json.dumps(_request(max_results=True)).encode(), "max_results_invalid"),
        (json.dumps(_request(scope_ref=" ")).encode(), "scope_ref_invalid"),
    ],
)
def test_main_refuses_protocol_violations_with_exit_2(monkeypatch, capsys, stdin, reason_code):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    assert extension.main([]) == 2
    printed = json.loads(capsys.readouterr().out)
    assert (printed["ok"], printed["reason_code"], printed["items"]) == (False, reason_code, [])


def test_main_answers_unavailable_with_exit_0(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(_request()).encode())))
    assert extension.main([]) == 0
    assert json.loads(capsys.readouterr().out)["reason_code"] == "situation_ref_required"


def test_main_doctor_exits_0_and_prints_nothing(capsys):
    assert extension.main(["--doctor"]) == 0
    assert capsys.readouterr().out == ""


def test_main_rejects_unknown_arguments(capsys):
    assert extension.main(["--verbose"]) == 2
