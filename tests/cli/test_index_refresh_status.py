"""`index refresh` and `index status`: thin commands, JSON that validates, one-line errors."""

import json

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.schemas import json_schema
from tests.providers.native.index.transcripts import ClaudeTranscript


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")


def _invoke(*args):
    return CliRunner().invoke(main, list(args))


def _document(result, contract):
    document = json.loads(result.stdout)
    Draft202012Validator(json_schema(contract)).validate(document)
    return document


def test_index_refresh_then_status_json(tmp_path):
    ClaudeTranscript(tmp_path / "claude", "s1", "/work/alpha").user("hello").bash("make", "ok").write()
    refreshed = _invoke("index", "refresh", "--root", f"claude={tmp_path / 'claude'}", "--format", "json")
    assert refreshed.exit_code == 0, refreshed.stderr
    report = _document(refreshed, "obelisk_session_evidence_index_refresh_v0")
    assert (report["files_added"], report["messages_written"], report["freshness"]) == (1, 1, "fresh")
    status = _invoke("index", "status", "--format", "json")
    assert status.exit_code == 0
    document = _document(status, "obelisk_session_evidence_index_status_v0")
    assert (document["files"], document["tool_calls"], document["index_revision"]) == (1, 1, report["index_revision"])
    assert document["roots"][0]["path"] == str(tmp_path / "claude")


def test_index_refresh_text_reports_counts(tmp_path):
    ClaudeTranscript(tmp_path / "claude", "s1", "/work/alpha").user("hello").write()
    result = _invoke("index", "refresh", "--root", f"claude={tmp_path / 'claude'}")
    assert result.exit_code == 0
    assert "1 seen: 1 added" in result.stdout and "freshness" in result.stdout


def test_index_refresh_incomplete_exits_2_after_printing_the_report(tmp_path):
    (tmp_path / "claude" / "-x" / "broken.jsonl").mkdir(parents=True)
    result = _invoke("index", "refresh", "--root", f"claude={tmp_path / 'claude'}", "--format", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["freshness"] == "incomplete"


@pytest.mark.parametrize("root", ["claude", "bogus=/tmp/x", "claude=", "=/tmp/x"])
def test_index_refresh_rejects_a_malformed_root(root):
    result = _invoke("index", "refresh", "--root", root)
    assert (result.exit_code, result.stderr) == (
        2,
        "error: invalid_input: --root takes SOURCE=PATH with SOURCE one of claude, codex, kimi, pi, dsh\n",
    )


def test_index_status_without_an_index():
    result = _invoke("index", "status")
    assert (result.exit_code, result.stdout) == (
        0,
        "no native index yet: run `obelisk-session-evidence index refresh`.\n",
    )


@pytest.mark.parametrize("command", [("index", "refresh"), ("index", "status")])
def test_index_commands_have_help_with_an_example(command):
    result = _invoke(*command, "--help")
    assert result.exit_code == 0 and "Example: obelisk-session-evidence" in result.stdout


def test_index_status_counts_failed_tool_calls_apart_from_files_that_failed_to_parse(tmp_path):
    (
        ClaudeTranscript(tmp_path / "claude", "s1", "/work/alpha")
        .user("run the tests")
        .bash("make test", "2 failed", exit_code=2)
        .call("Bash", {"command": "make lint"}, "boom", is_error=True)
        .bash("make build", "ok")
        .write()
    )
    assert _invoke("index", "refresh", "--root", f"claude={tmp_path / 'claude'}").exit_code == 0
    document = _document(_invoke("index", "status", "--format", "json"), "obelisk_session_evidence_index_status_v0")
    assert (document["tool_calls"], document["failed_tool_calls"], document["failures"]) == (3, 2, 0)
    assert list(document["evidence_type_counts"]) == [
        "prior_failure",
        "tool_outcome",
        "file_history",
        "decision",
        "summary",
    ]
    assert document["evidence_type_counts"]["prior_failure"] == 2
    text = _invoke("index", "status").stdout
    assert "3 tool calls (2 failed)" in text
    assert "files that failed to parse │ 0" in text


def test_index_status_without_an_index_lists_every_evidence_type_as_zero():
    document = _document(_invoke("index", "status", "--format", "json"), "obelisk_session_evidence_index_status_v0")
    assert document["failed_tool_calls"] == 0
    assert set(document["evidence_type_counts"].values()) == {0} and len(document["evidence_type_counts"]) == 5
