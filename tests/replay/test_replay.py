"""`replay`: each shell call decided on the history strictly before it, judged by what it did."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.errors import ScopeViolation, UnsupportedOption
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.schemas import json_schema
from obelisk_session_evidence.providers.native.index import lanes, scoped_sql
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.replay import replay_history, replay_one_scope, scopes_to_replay
from obelisk_session_evidence.state.paths import state_paths
from tests.replay.history import CANARY, History, enable

TEST = "pytest tests/test_auth.py"
BUILD = f"make build-{CANARY}"


@pytest.fixture
def history(tmp_path: Path):
    """Session one: a test fails. Session two: the same test fails again (a dead end across
    sessions), a build fails and then passes (the naive rule's false alarm, within the session)."""
    root = tmp_path / "claude"
    sessions = History(root)
    sessions.session("one").bash(TEST, "FAILED test_login - AssertionError", exit_code=1).bash("ls", "src").write()
    (
        sessions.session("two")
        .bash(TEST, "FAILED test_login - AssertionError", exit_code=1)
        .bash(BUILD, "make: *** [build] Error 2", exit_code=2)
        .bash(BUILD, "built")
        .bash("git status", "nothing to commit")
        .write()
    )
    paths = state_paths()
    return paths, enable(paths, root)


def _request(terms: list[str]) -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="operator_requested_history",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=terms,
        limits={"max_sessions": 20, "max_items": 50, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


def test_a_cut_sees_only_what_came_before_the_call(history):
    paths, enablement = history
    provider = NativeIndexProvider(paths.index_dir, enablement)
    assert provider.refresh() == "fresh"
    keys = provider.timeline()
    calls = list(provider.timed_calls(keys))
    assert [call.call.command for call in calls] == [TEST, "ls", TEST, BUILD, BUILD, "git status"]
    first_build = calls[3]
    before = provider.as_of(first_build.cut).search(_request([BUILD]))
    assert before.prior_calls == []  # neither this call nor the later success
    after = provider.as_of(calls[5].cut).search(_request([BUILD]))
    assert [(call.exit_code, call.is_error) for call in after.prior_calls] == [(None, False), (2, True)]
    whole = provider.as_of(calls[2].cut).search(_request([TEST]))
    own = provider.as_of(replace(calls[2].cut, own_session_only=True)).search(_request([TEST]))
    assert len(whole.prior_calls) == 1 and own.prior_calls == []  # the failure lies in session one


def test_a_row_after_the_cut_rejects_the_whole_answer(history, monkeypatch):
    """Fault injection: the SQL cut is bypassed, and the per-row re-check still refuses."""
    paths, enablement = history
    provider = NativeIndexProvider(paths.index_dir, enablement)
    provider.refresh()
    calls = list(provider.timed_calls(provider.timeline()))
    for module in (scoped_sql, lanes):
        monkeypatch.setattr(module, "as_of_sql", lambda *args, **kwargs: "1")
    with pytest.raises(ScopeViolation):
        provider.as_of(calls[0].cut).search(_request([TEST]))


def test_replay_judges_the_verdict_and_the_naive_rule_by_outcome(history):
    paths, _ = history
    (enablement,) = scopes_to_replay(paths, project_id=None, agent_id=None)
    run = replay_one_scope(paths, enablement)
    found = run.report.figures
    assert found.calls == 6 and found.outcomes["failed"] == 3 and found.outcomes["succeeded"] == 3
    assert (found.reruns_of_failure, found.dead_ends) == (2, 1)
    assert found.naive.model_dump() == {
        "alarms": 2,
        "true_alarms": 1,
        "false_alarms": 1,
        "unjudged_alarms": 0,
        "dead_ends_caught": 1,
        "alarms_right": 0.5,
        "dead_ends_caught_rate": 1.0,
    }
    assert found.across_sessions.dead_ends == 1 and found.within_session.dead_ends == 0
    assert found.within_session.naive.false_alarms == 1
    assert found.verdict.dead_ends_caught == 1  # the unchanged test re-run is an alarm
    assert found.across_sessions.verdict.true_alarms == 1
    assert run.report.missed_dead_ends == []
    report = replay_history([run])
    assert report.total == found


def test_the_obelisk_adapter_cannot_replay(history):
    paths, enablement = history
    with pytest.raises(UnsupportedOption):
        replay_one_scope(paths, enablement, provider_kind="obelisk")


def test_replay_json_is_one_valid_document_without_content(history, tmp_path):
    private = tmp_path / "private.json"
    result = CliRunner().invoke(main, ["replay", "--format", "json", "--private-out", str(private)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    Draft202012Validator(json_schema("replay_report_v0")).validate(document)
    assert CANARY not in result.output
    assert document["scopes"][0]["figures"]["calls"] == 6
    listed = json.loads(private.read_text())
    assert private.stat().st_mode & 0o777 == 0o600
    assert any(CANARY in call["command"] for call in listed) == any(
        call["command_digest"] for call in document["scopes"][0]["false_alarms"]
    )


def test_replay_text_and_plot_carry_no_content(history, tmp_path):
    plot = tmp_path / "replay.png"
    result = CliRunner().invoke(main, ["replay", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "naive rule" in result.output and CANARY not in result.output
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and CANARY.encode() not in plot.read_bytes()


def test_replay_check_exits_2_when_the_targets_are_missed(history):
    result = CliRunner().invoke(main, ["replay", "--check", "--format", "json"])
    document = json.loads(result.stdout)
    assert result.exit_code == (0 if document["targets_met"] else 2)


def test_replay_without_an_enablement_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["replay", "--format", "json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["reason_code"] == "invalid_input"


def test_hypothesis_text_never_flips_the_verdict_of_a_repeated_failure(history):
    """The verdict judges commands here: adding a hypothesis (not judged without a hypothesis gap)
    leaves a repeat of an unfixed failure a repeat."""
    from obelisk_session_evidence.replay import decider
    from obelisk_session_evidence.replay.situations import replay_situation

    paths, enablement = history
    provider = NativeIndexProvider(paths.index_dir, enablement)
    provider.refresh()
    calls = list(provider.timed_calls(provider.timeline()))
    repeat = calls[2]  # session two's re-run of the test that failed in session one
    decide = decider(paths, enablement)
    plain = replay_situation(enablement, repeat.call, index=2)
    route = plain.proposed.route.model_copy(update={"hypothesis": "the login token expires one second too early"})
    hypothesised = plain.model_copy(update={"proposed": plain.proposed.model_copy(update={"route": route})})
    verdicts = {
        decide(situation, provider.as_of(repeat.cut)).decision.comparison.verdict for situation in (plain, hypothesised)
    }
    assert verdicts == {"repeats_prior_failure"}
