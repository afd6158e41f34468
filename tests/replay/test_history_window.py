"""The history window (`history_window_days`): rows observed before the window's first instant are
left out in SQL, relative to now, or to the cut's time in a replay; `enable` records it."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from obelisk_session_evidence.cli import main
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import ScopeViolation
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index import scoped_sql
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.replay import replay_one_scope
from obelisk_session_evidence.state.paths import state_paths
from tests.replay.history import History, enable

TEST = "pytest tests/test_auth.py"


@pytest.fixture
def history(tmp_path: Path):
    """The test fails in a session of January 1st and again in two sessions of March 1st."""
    root = tmp_path / "claude"
    sessions = History(root)
    old = sessions.session("january").bash(TEST, "FAILED test_login", exit_code=1).write()
    old.write_text(old.read_text().replace('"2026-03-01T', '"2026-01-01T'))
    sessions.session("march").bash(TEST, "FAILED test_login", exit_code=1).write()
    sessions.session("later").bash(TEST, "FAILED test_login", exit_code=1).write()
    paths = state_paths()
    return paths, enable(paths, root)


def _request() -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="operator_requested_history",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=[TEST],
        limits={"max_sessions": 20, "max_items": 50, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


def _windowed(enablement: Enablement, days: int | None) -> Enablement:
    return enablement.model_copy(update={"history_window_days": days})


def test_a_replay_window_ends_at_the_cut(history):
    paths, enablement = history
    provider = NativeIndexProvider(paths.index_dir, _windowed(enablement, 30))
    provider.refresh()
    cuts = [timed.cut for timed in provider.timed_calls(provider.timeline())]
    seen = [len(provider.as_of(cut).search(_request()).prior_calls) for cut in cuts]
    assert seen == [0, 0, 1]  # March's first call no longer sees January's failure; the later one sees March's
    unbounded = NativeIndexProvider(paths.index_dir, _windowed(enablement, None))
    assert [len(unbounded.as_of(cut).search(_request()).prior_calls) for cut in cuts] == [0, 1, 2]
    wide = NativeIndexProvider(paths.index_dir, _windowed(enablement, 90))
    assert [len(wide.as_of(cut).search(_request()).prior_calls) for cut in cuts] == [0, 1, 2]


def test_a_live_window_ends_now(history):
    """March 2026 lies more than 30 days before any date this test runs on: nothing is left."""
    paths, enablement = history
    live = NativeIndexProvider(paths.index_dir, _windowed(enablement, 30)).search(_request())
    assert live.prior_calls == [] and live.result.items == []
    whole = NativeIndexProvider(paths.index_dir, _windowed(enablement, None)).search(_request())
    assert len(whole.prior_calls) == 3


def test_a_row_before_the_window_rejects_the_whole_answer(history, monkeypatch):
    """Fault injection: the SQL window is bypassed, and the per-row re-check still refuses."""
    paths, enablement = history
    monkeypatch.setattr(scoped_sql, "window_sql", lambda *args, **kwargs: "1")
    with pytest.raises(ScopeViolation):
        NativeIndexProvider(paths.index_dir, _windowed(enablement, 30)).search(_request())


def test_a_replay_with_a_window_misses_the_dead_end_it_cuts_off(history):
    paths, enablement = history
    whole = replay_one_scope(paths, _windowed(enablement, None)).report.figures
    windowed = replay_one_scope(paths, _windowed(enablement, 30)).report.figures
    assert whole.dead_ends == windowed.dead_ends == 2  # the naive rule reads the timeline, not the window
    assert whole.across_sessions.verdict.dead_ends_caught == 2
    assert windowed.across_sessions.verdict.dead_ends_caught == 1


def test_enable_records_the_window_and_refuses_a_bad_one(tmp_path):
    root = tmp_path / "claude"
    root.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    base = ["enable", "--surface", "replan-history", "--agent-id", "a", "--project-id", "p", "--repository-id", "r"]
    base += ["--repo-root", str(repo), "--source", "claude", "--source-root", f"claude={root}", "--format", "json"]
    default = CliRunner().invoke(main, base)
    assert default.exit_code == 0, default.output
    assert json.loads(default.stdout)["enablement"]["history_window_days"] is None
    windowed = CliRunner().invoke(main, [*base, "--history-window-days", "30"])
    assert windowed.exit_code == 0, windowed.output
    assert json.loads(windowed.stdout)["enablement"]["history_window_days"] == 30
    config = json.loads(state_paths().config_file.read_text())
    assert config["enablements"][0]["history_window_days"] == 30
    assert CliRunner().invoke(main, [*base, "--history-window-days", "0"]).exit_code == 2
