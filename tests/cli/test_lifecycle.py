import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from fixtures.situations import situation
from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.state.paths import state_paths

IDS = (
    "--surface",
    "replan-history",
    "--agent-id",
    "agent-fixture",
    "--project-id",
    "project-fixture",
    "--repository-id",
    "repo-fixture",
)
SCOPE = (*IDS, "--historical-repo-root", "/nonexistent/fixture-repo")


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    """Rich wraps text at the terminal width; a wide one keeps assertions on one line."""
    monkeypatch.setenv("COLUMNS", "200")


def _invoke(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


def _document(result, contract):
    document = json.loads(result.stdout)
    Draft202012Validator(json_schema(contract)).validate(document)
    return document


def test_enable_status_disable_status_round_trip(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    enabled = _invoke("enable", *IDS, "--repo-root", str(repo), "--format", "json")
    assert enabled.exit_code == 0, enabled.output
    outcome = _document(enabled, "obelisk_session_evidence_enable_v0")
    assert outcome["change"] == "created" and outcome["enablement"]["repo_roots"] == [str(repo.resolve())]

    shown = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    report = _document(shown, "obelisk_session_evidence_status_v0")
    assert report["enabled"] is True and report["scopes"][0]["allowed_scope"]["agent_id"] == "agent-fixture"
    assert shown.exit_code == (0 if report["healthy"] else 2)

    disabled = _invoke("disable", "--project-id", "project-fixture", "--format", "json")
    assert disabled.exit_code == 0
    assert _document(disabled, "obelisk_session_evidence_disable_v0")["reason_code"] == "disabled"

    shown = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    report = _document(shown, "obelisk_session_evidence_status_v0")
    assert (shown.exit_code, report["enabled"], report["reason_code"]) == (2, False, "not_enabled")


def test_enable_twice_is_unchanged():
    first = _invoke("enable", *SCOPE, "--format", "json")
    second = _invoke("enable", *SCOPE, "--format", "json")
    assert (first.exit_code, second.exit_code) == (0, 0)
    assert json.loads(second.stdout)["change"] == "unchanged"
    assert json.loads(first.stdout)["enablement"] == json.loads(second.stdout)["enablement"]


def test_enable_text_names_scope_and_provider():
    result = _invoke("enable", *SCOPE, "--trigger", "operator_requested_history")
    assert result.exit_code == 0
    assert "agent agent-fixture · project project-fixture · repository repo-fixture" in result.stdout
    assert "operator_requested_history" in result.stdout and "replan_repetition" not in result.stdout


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (
            ("--allow-cross-agent",),
            "error: scope_broadening_not_qualified: --allow-cross-agent: v0 enables one agent, project and repository",
        ),
        (
            ("--allow-cross-project",),
            "error: scope_broadening_not_qualified: --allow-cross-project: v0 enables one agent, project and repository",
        ),
        (
            ("--foreign-archive", "/archives/x"),
            "error: scope_broadening_not_qualified: --foreign-archive: v0 enables one agent, project and repository",
        ),
        (
            ("--agent-id", "agent-other"),
            "error: scope_broadening_not_qualified: more than one --agent-id: v0 enables one agent, project and repository",
        ),
        (
            ("--repo-root", "/nonexistent/repo"),
            "error: invalid_input: --repo-root #1 is not an existing folder; declare a worktree that is gone with --historical-repo-root",
        ),
        (("--source-root", "claude"), "error: invalid_input: --source-root #1 must be SOURCE=PATH"),
    ],
)
def test_enable_rejections_are_one_line_exit_2(extra, line):
    result = _invoke("enable", *SCOPE, *extra)
    assert (result.exit_code, result.stderr) == (2, line + "\n")
    assert not state_paths().config_file.exists()


def test_enable_rejects_a_second_agent_on_the_same_sessions():
    assert _invoke("enable", *SCOPE).exit_code == 0
    result = _invoke("enable", *SCOPE[:3], "agent-other", *SCOPE[4:])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: scope_broadening_not_qualified: this scope would read the same sessions as another"
        " enabled scope; separate them with --source, --source-root or --repo-root\n"
    )


def test_corrupt_config_is_a_clear_error_and_admission_stays_off(tmp_path):
    assert _invoke("enable", *SCOPE).exit_code == 0
    state_paths().config_file.write_text('{"enablements": [{"agent_id": "agent-fixture",')
    detail = (
        "config.json: not valid JSON at line 1 column 47; fix or remove config.json; admission stays off until then"
    )

    for args in (("enable", *SCOPE), ("disable", "--project-id", "project-fixture")):
        result = _invoke(*args)
        assert (result.exit_code, result.stderr) == (2, f"error: config_invalid: {detail}\n")

    shown = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    report = _document(shown, "obelisk_session_evidence_status_v0")
    assert (shown.exit_code, report["reason_code"], report["config_detail"]) == (2, "config_invalid", detail)
    text = _invoke("status", "--project-id", "project-fixture")
    assert text.exit_code == 2 and f"configuration invalid: {detail}" in text.stdout

    ran = _invoke("run", "--situation", "-", "--format", "json", stdin=json.dumps(situation()))
    assert json.loads(ran.stdout)["admission"] == {"admitted": False, "reason_code": "config_invalid"}


def test_hand_edited_broadening_flag_keeps_run_from_admitting(tmp_path):
    assert _invoke("enable", *SCOPE).exit_code == 0
    document = json.loads(state_paths().config_file.read_text())
    document["enablements"][0]["allow_cross_agent"] = True
    state_paths().config_file.write_text(json.dumps(document))
    other = situation(
        scope={"agent_id": "agent-other", "project_id": "project-fixture", "repository_id": "repo-fixture"}
    )
    for document in (situation(), other):
        ran = _invoke("run", "--situation", "-", "--format", "json", stdin=json.dumps(document))
        assert json.loads(ran.stdout)["admission"] == {"admitted": False, "reason_code": "config_invalid"}


def test_environment_variable_does_not_broaden_run(monkeypatch):
    assert _invoke("enable", *SCOPE).exit_code == 0
    monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_ALLOW_CROSS_AGENT", "1")
    other = situation(
        scope={"agent_id": "agent-other", "project_id": "project-fixture", "repository_id": "repo-fixture"}
    )
    ran = _invoke("run", "--situation", "-", "--format", "json", stdin=json.dumps(other))
    assert json.loads(ran.stdout)["admission"] == {"admitted": False, "reason_code": "cross_agent_denied"}


def test_status_text_lists_what_is_denied():
    assert _invoke("enable", *SCOPE, "--trigger", "replan_repetition").exit_code == 0
    result = _invoke("status", "--project-id", "project-fixture")
    assert "denied in v0: cross-agent, cross-project, cross-repository, foreign-archive" in result.stdout
    assert "hypothesis_history_gap, resume_or_handoff_gap, operator_requested_history" in result.stdout


def test_status_rejects_a_malformed_id():
    result = _invoke("status", "--project-id", "not an id")
    assert (result.exit_code, result.stderr) == (2, "error: invalid_input: --project-id is not an opaque id\n")


def test_disable_when_not_enabled_exits_0_and_says_so():
    result = _invoke("disable", "--project-id", "project-fixture")
    assert result.exit_code == 0 and "not enabled: nothing to disable" in result.stdout


@pytest.mark.parametrize("command", [("enable",), ("status",), ("disable",), ("index",), ("index", "drop")])
def test_lifecycle_commands_have_help_with_an_example(command):
    result = _invoke(*command, "--help")
    assert result.exit_code == 0 and "Example: obelisk-session-evidence" in result.stdout


def test_enable_from_concurrent_cli_processes(tmp_path):
    executable = shutil.which("obelisk-session-evidence", path=str(Path(sys.executable).parent))
    env = {**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(state_paths().root)}
    processes = []
    for n in range(6):
        repo = tmp_path / f"repo-{n}"
        repo.mkdir()
        args = [executable, "enable", *IDS[:3], f"agent-{n}", *IDS[4:], "--repo-root", str(repo)]
        processes.append(subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    assert [(p.wait(timeout=120), p.stderr.read()) for p in processes] == [(0, b"")] * 6
    agents = sorted(e.agent_id for e in load_policy(state_paths()).config.enablements)
    assert agents == [f"agent-{n}" for n in range(6)]


def test_status_on_a_stale_index_exits_2_with_index_stale(tmp_path):
    from tests.providers.native.index.transcripts import ClaudeTranscript

    repo, sessions = tmp_path / "repo", tmp_path / "claude"
    repo.mkdir()
    ClaudeTranscript(sessions, "s1", str(repo)).user("hello").write()
    enabled = _invoke(
        "enable", *SCOPE, "--repo-root", str(repo), "--source", "claude", "--source-root", f"claude={sessions}"
    )
    assert enabled.exit_code == 0, enabled.output
    assert _invoke("index", "refresh", "--root", f"claude={sessions}").exit_code == 0
    fresh = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    assert (fresh.exit_code, json.loads(fresh.stdout)["reason_code"]) == (0, "healthy")

    ClaudeTranscript(sessions, "s2", str(repo)).user("again").write()
    stale = _invoke("status", "--project-id", "project-fixture", "--format", "json")
    report = _document(stale, "obelisk_session_evidence_status_v0")
    assert (stale.exit_code, report["healthy"], report["reason_code"]) == (2, False, "index_stale")
    assert report["scopes"][0]["index"]["freshness"] == "stale"
    text = _invoke("status", "--project-id", "project-fixture")
    assert text.exit_code == 2 and "index_stale" in text.stdout
