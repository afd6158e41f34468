import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import SOURCE_KINDS, EnablementConfig
from obelisk_session_evidence.contracts.errors import ConfigInvalid, IndexUnavailable, InvalidInput
from obelisk_session_evidence.contracts.lifecycle import IndexHealth, ProviderHealth
from obelisk_session_evidence.lifecycle.enablement import disable, enable, status
from obelisk_session_evidence.lifecycle.index_drop import drop_index
from obelisk_session_evidence.lifecycle.policy import load_policy
from obelisk_session_evidence.providers.native.index.store import index_file, writer_lock
from obelisk_session_evidence.state.paths import state_paths
from tests.lifecycle.helpers import enable_request, populate, tree_digest

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def available(paths, enablement):
    return ProviderHealth(
        kind=enablement.provider,
        state="available",
        provider_version="0.1.0 stand-in/1",
        reason_code="provider_available",
    )


def fresh(paths, enablement):
    return IndexHealth(
        freshness="fresh", index_revision="rev-7", counts={"sessions": 3}, usable=True, reason_code="index_fresh"
    )


def _enable(**overrides):
    return enable(enable_request(**overrides), paths=state_paths(), now=T0, probe=available)


def _config() -> EnablementConfig:
    return EnablementConfig.model_validate_json(state_paths().config_file.read_bytes())


def test_enable_writes_config_0600_with_defaults(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    outcome = _enable(repo_roots=(repo,), triggers=())
    config_file = state_paths().config_file
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(config_file.parent.stat().st_mode) == 0o700
    (recorded,) = _config().enablements
    assert recorded == outcome.enablement and outcome.change == "created"
    assert recorded.repo_roots == [str(repo.resolve())]
    assert recorded.sources == list(SOURCE_KINDS)
    assert recorded.triggers == ["operator_requested_history"] and recorded.trigger_grant == "stage_1"
    assert recorded.enabled_at == T0
    assert outcome.provider.state == "available"


def test_enable_same_scope_is_idempotent(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _enable(repo_roots=(repo,), sources=("codex", "claude"))
    before = state_paths().config_file.read_bytes()
    again = enable(
        enable_request(repo_roots=(repo,), sources=("claude", "codex", "claude")),
        paths=state_paths(),
        now=T1,
        probe=available,
    )
    assert again.change == "unchanged" and again.enablement.enabled_at == T0
    assert state_paths().config_file.read_bytes() == before


def test_enable_same_scope_with_new_settings_updates_in_place(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    _enable(repo_roots=(one,))
    _enable(project_ids=("project-two",), repo_roots=(two,))
    outcome = enable(
        enable_request(repo_roots=(one,), triggers=("operator_requested_history",)),
        paths=state_paths(),
        now=T1,
        probe=available,
    )
    config = _config()
    assert outcome.change == "updated"
    assert [e.project_id for e in config.enablements] == ["project-fixture", "project-two"]
    assert config.enablements[0].triggers == ["operator_requested_history"]
    assert config.enablements[0].enabled_at == T1


def test_enable_records_historical_roots_as_repo_roots(tmp_path):
    live, gone = tmp_path / "live", tmp_path / "gone-worktree"
    live.mkdir()
    outcome = _enable(repo_roots=(live,), historical_repo_roots=(gone,))
    assert outcome.enablement.repo_roots == [str(live), str(gone)]
    assert outcome.enablement.historical_repo_roots == [str(gone)]


def test_enable_records_source_roots_and_provider(tmp_path):
    codex_home = tmp_path / "codex-sessions"
    codex_home.mkdir()
    outcome = _enable(
        sources=("codex",),
        source_roots=(f"codex={codex_home}",),
        provider="obelisk",
        obelisk_bin=Path("bin/obelisk"),
    )
    assert outcome.enablement.source_roots == {"codex": str(codex_home)}
    assert outcome.enablement.provider == "obelisk"
    assert outcome.enablement.obelisk_bin == str(Path("bin/obelisk").absolute())


def test_enable_records_an_unavailable_provider_with_its_status():
    def unreachable(paths, enablement):
        return ProviderHealth(
            kind="obelisk", state="unavailable", provider_version=None, reason_code="provider_unavailable"
        )

    outcome = enable(enable_request(provider="obelisk"), paths=state_paths(), now=T0, probe=unreachable)
    assert outcome.provider.reason_code == "provider_unavailable"
    assert len(_config().enablements) == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"repo_roots": (Path("/nonexistent/repo"),)},
            "invalid_input: --repo-root #1 is not an existing folder; declare a worktree that is gone with --historical-repo-root",
        ),
        (
            {"historical_repo_roots": (Path("/"),)},
            "invalid_input: --historical-repo-root #1 exists; pass it as --repo-root",
        ),
        ({"source_roots": ("codex",)}, "invalid_input: --source-root #1 must be SOURCE=PATH"),
        (
            {"source_roots": ("codex=/nonexistent/sessions",)},
            "invalid_input: --source-root #1 is not an existing folder; session folders must exist",
        ),
        (
            {"sources": ("claude",), "source_roots": ("codex=/",)},
            "invalid_input: --source-root #1 names a source that is not enabled (see --source)",
        ),
        ({"source_roots": ("codex=/usr", "codex=/usr")}, "invalid_input: --source-root #2 repeats a source"),
        ({"sources": ("claude", "cursor")}, "invalid_input: 1 unknown --source or --trigger value(s)"),
        ({"triggers": ("every_turn",)}, "invalid_input: 1 unknown --source or --trigger value(s)"),
        (
            {"agent_ids": ("agent one",)},
            "invalid_input: agent_id: String should match pattern '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$'",
        ),
        ({"surface": "every-turn"}, "invalid_input: surface: Input should be 'replan-history'"),
        ({"provider": "openviking"}, "invalid_input: provider: Input should be 'native' or 'obelisk'"),
        ({"agent_ids": ()}, "invalid_input: --agent-id is required"),
    ],
)
def test_enable_rejects_invalid_values_and_writes_nothing(overrides, message):
    with pytest.raises(InvalidInput) as caught:
        _enable(**overrides)
    assert str(caught.value) == message
    assert not state_paths().config_file.exists()


def test_enable_round_trip_with_status_and_disable(tmp_path):
    _enable()
    report = status("project-fixture", paths=state_paths(), probe=available, index_probe=fresh)
    assert (report.enabled, report.healthy, report.reason_code) == (True, True, "healthy")
    (scope,) = report.scopes
    assert scope.index.index_revision == "rev-7" and scope.allowed_scope.agent_id == "agent-fixture"
    assert [d.scope for d in report.denied_scopes] == [
        "cross_agent",
        "cross_project",
        "cross_repository",
        "foreign_archive",
    ]

    outcome = disable("project-fixture", paths=state_paths())
    assert (outcome.reason_code, len(outcome.removed), outcome.remaining_enablements) == ("disabled", 1, 0)
    assert load_policy(state_paths()).config.enablements == []
    report = status("project-fixture", paths=state_paths(), probe=available, index_probe=fresh)
    assert (report.enabled, report.healthy, report.reason_code) == (False, False, "not_enabled")


def test_disable_one_agent_keeps_the_others(tmp_path):
    for agent in ("agent-a", "agent-b"):
        (tmp_path / agent).mkdir()
        _enable(agent_ids=(agent,), source_roots=(f"claude={tmp_path / agent}",), sources=("claude",))
    outcome = disable("project-fixture", agent_id="agent-a", paths=state_paths())
    assert [s.agent_id for s in outcome.removed] == ["agent-a"]
    assert [e.agent_id for e in _config().enablements] == ["agent-b"]


def test_disable_when_nothing_is_enabled_changes_nothing():
    outcome = disable("project-fixture", paths=state_paths())
    assert (outcome.reason_code, outcome.removed) == ("not_enabled", [])
    assert not state_paths().config_file.exists()


@pytest.mark.parametrize(
    ("provider", "usable", "reason_code"),
    [
        (("available", "provider_available"), True, "healthy"),
        (("unavailable", "provider_unavailable"), True, "provider_unavailable"),
        (("unknown", "provider_status_unknown"), True, "provider_status_unknown"),
        (("available", "provider_available"), False, "index_incomplete"),
        (("unavailable", "provider_unavailable"), False, "provider_unavailable"),
    ],
)
def test_status_reason_codes(provider, usable, reason_code):
    state, code = provider
    _enable()
    report = status(
        "project-fixture",
        paths=state_paths(),
        probe=lambda p, e: ProviderHealth(kind="native", state=state, provider_version=None, reason_code=code),
        index_probe=lambda p, e: IndexHealth(
            freshness="fresh" if usable else "incomplete",
            index_revision=None,
            usable=usable,
            reason_code="index_fresh" if usable else "index_incomplete",
        ),
    )
    assert (report.healthy, report.reason_code) == (reason_code == "healthy", reason_code)
    assert report.scopes[0].reason_code == reason_code


def test_status_filters_by_agent(tmp_path):
    _enable()
    report = status("project-fixture", agent_id="agent-other", paths=state_paths(), probe=available, index_probe=fresh)
    assert (report.enabled, report.reason_code, report.scopes) == (False, "not_enabled", [])


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b'{"enablements": [', "config.json: not valid JSON at line 1 column 18"),
        (b"\xff\xfe", "config.json: document is not valid UTF-8"),
        (
            b'{"schema_version": "obelisk_session_evidence_config_v9"}',
            "config.json: schema_version: Input should be 'obelisk_session_evidence_config_v0'",
        ),
        (b'{"enablements": [], "enablements": []}', "config.json: duplicate key in a JSON object"),
        (b'{"allow_cross_agent": true}', "config.json: <root>: unknown field (1)"),
    ],
)
def test_corrupt_config_fails_closed(content, detail):
    _enable()
    state_paths().config_file.write_bytes(content)
    assert load_policy(state_paths()).load_reason_code == "config_invalid"
    report = status("project-fixture", paths=state_paths(), probe=available, index_probe=fresh)
    assert (report.config_state, report.healthy, report.reason_code) == ("config_invalid", False, "config_invalid")
    assert report.config_detail == f"{detail}; fix or remove config.json; admission stays off until then"
    for change in (lambda: _enable(), lambda: disable("project-fixture", paths=state_paths())):
        with pytest.raises(ConfigInvalid) as caught:
            change()
        assert caught.value.detail == report.config_detail
    assert state_paths().config_file.read_bytes() == content


def test_config_writable_by_others_is_refused():
    _enable()
    state_paths().config_file.chmod(0o666)
    assert load_policy(state_paths()).load_reason_code == "config_invalid"
    report = status("project-fixture", paths=state_paths())
    assert report.config_detail.startswith("config.json is writable by others; make it 0600")


def test_disable_keeps_every_byte_of_index_sessions_and_obelisk_data(tmp_path, monkeypatch):
    sessions = populate(tmp_path / "sessions", {"proj/s1.jsonl": b'{"type":"user"}\n', "proj/s2.jsonl": b"x" * 4096})
    obelisk_home = populate(tmp_path / "obelisk", {"obelisk.sqlite": os.urandom(2048)})
    monkeypatch.setenv("OBELISK_HOME", str(obelisk_home))
    index = populate(state_paths().index_dir, {"index.sqlite": os.urandom(8192), "index.sqlite-wal": b"wal"})
    repo = populate(tmp_path / "repo", {"README.md": b"# repo\n"})
    before = [tree_digest(root) for root in (sessions, obelisk_home, index, repo)]
    _enable(repo_roots=(repo,), sources=("claude",), source_roots=(f"claude={sessions}",))
    disable("project-fixture", paths=state_paths())
    assert [tree_digest(root) for root in (sessions, obelisk_home, index, repo)] == before


def test_drop_index_removes_only_the_index_folder(tmp_path, monkeypatch):
    sessions = populate(tmp_path / "sessions", {"s1.jsonl": b"{}\n"})
    outside = populate(tmp_path / "outside", {"keep.bin": b"keep"})
    obelisk_home = populate(tmp_path / "obelisk", {"obelisk.sqlite": b"db"})
    monkeypatch.setenv("OBELISK_HOME", str(obelisk_home))
    _enable(sources=("claude",), source_roots=(f"claude={sessions}",))
    index = populate(state_paths().index_dir, {"index.sqlite": b"12345", "shards/a.bin": b"123"})
    (index / "link-to-outside").symlink_to(outside / "keep.bin")
    (index / "dir-link").symlink_to(outside, target_is_directory=True)
    before = [tree_digest(root) for root in (sessions, outside, obelisk_home)]
    config_before = state_paths().config_file.read_bytes()
    outcome = drop_index(paths=state_paths())
    assert (outcome.reason_code, outcome.removed_files, outcome.removed_bytes) == (
        "index_dropped",
        5,
        8,
    )  # and the writer lock file
    assert not index.exists()
    assert [tree_digest(root) for root in (sessions, outside, obelisk_home)] == before
    assert state_paths().config_file.read_bytes() == config_before
    assert drop_index(paths=state_paths()).reason_code == "index_absent"


def test_drop_index_refuses_a_symlinked_index_folder(tmp_path):
    target = populate(tmp_path / "elsewhere", {"precious.db": b"data"})
    state_paths().root.mkdir(parents=True)
    state_paths().index_dir.symlink_to(target, target_is_directory=True)
    with pytest.raises(InvalidInput, match="symbolic link"):
        drop_index(paths=state_paths())
    assert (target / "precious.db").read_bytes() == b"data"


def test_drop_index_refuses_an_index_folder_inside_a_session_root(tmp_path, monkeypatch):
    sessions = tmp_path / "sessions"
    monkeypatch.setenv("OBELISK_SESSION_EVIDENCE_HOME", str(sessions))
    populate(sessions, {"index/agent-notes.jsonl": b"{}\n"})
    _enable(sources=("claude",), source_roots=(f"claude={sessions}",))
    with pytest.raises(InvalidInput, match="overlaps a session, Obelisk or repository folder"):
        drop_index(paths=state_paths())
    assert (sessions / "index" / "agent-notes.jsonl").exists()


_WRITER = """
import sys, time
from pathlib import Path
from obelisk_session_evidence.contracts.lifecycle import ProviderHealth
from obelisk_session_evidence.lifecycle.enablement import EnableRequest, enable
from obelisk_session_evidence.state.paths import state_paths
health = ProviderHealth(kind="native", state="unknown", provider_version=None, reason_code="provider_status_unknown")
worker, count, base, go = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
while not go.exists():
    time.sleep(0.001)
for n in range(count):
    for agent, repo in ((f"agent-{worker}-{n}", base / f"{worker}-{n}"), ("agent-shared", base / "shared")):
        enable(EnableRequest(agent_ids=(agent,), project_ids=("project-fixture",),
                             repository_ids=("repo-fixture",), repo_roots=(repo,)),
               paths=state_paths(), probe=lambda p, e: health)
"""


def test_enable_from_two_processes_loses_nothing(tmp_path):
    count = 12
    for worker in ("w1", "w2"):
        for n in range(count):
            (tmp_path / "repos" / f"{worker}-{n}").mkdir(parents=True)
    (tmp_path / "repos" / "shared").mkdir()
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, worker, str(count), str(tmp_path / "repos"), str(go)],
            env=env,
            stderr=subprocess.PIPE,
        )
        for worker in ("w1", "w2")
    ]
    go.touch()
    results = [(w.wait(timeout=120), w.stderr.read()) for w in workers]
    assert results == [(0, b""), (0, b"")]
    config = _config()
    agents = sorted(e.agent_id for e in config.enablements)
    assert len(agents) == 2 * count + 1 and agents.count("agent-shared") == 1
    assert stat.S_IMODE(state_paths().config_file.stat().st_mode) == 0o600
    leftovers = [p.name for p in state_paths().root.iterdir() if p.name.startswith(".config.json.")]
    assert leftovers == []


def test_drop_index_waits_for_no_refresh_and_gives_up_while_one_runs():
    index = populate(state_paths().index_dir, {"native.sqlite": b"rows"})
    with writer_lock(index_file(index), wait_s=0) as held:
        assert held
        with pytest.raises(IndexUnavailable, match="a refresh holds the index"):
            drop_index(paths=state_paths(), wait_s=0.1)
    assert (index / "native.sqlite").read_bytes() == b"rows"
