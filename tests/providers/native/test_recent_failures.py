"""Issue 30 §2: the scope's most recent unresolved failures, for a lookup without a route."""

from datetime import UTC, datetime
from pathlib import Path

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.providers.recent_failures import ListsRecentFailures, RecentFailures
from tests.providers.native.index.transcripts import ClaudeTranscript


def _provider(index_dir: Path, root: Path, **overrides) -> NativeIndexProvider:
    fields = {
        "surface": "replan-history",
        "agent_id": "agent-a",
        "project_id": "project-a",
        "repository_id": "repo-a",
        "repo_roots": ["/work/alpha"],
        "sources": ["claude"],
        "source_roots": {"claude": str(root)},
        "enabled_at": datetime(2026, 11, 29, tzinfo=UTC),
    }
    enablement = Enablement(**{**fields, **overrides})
    return NativeIndexProvider(index_dir, enablement)


def test_recent_failures_are_the_newest_unresolved_in_scope_failed_commands(tmp_path):
    root = tmp_path / "claude"
    earlier = ClaudeTranscript(root, "earlier", "/work/alpha")
    earlier.bash("pytest tests/test_auth.py -x", "FAILED test_login", exit_code=1)
    earlier.bash("make lint", "E501 line too long", exit_code=2)
    earlier.bash("make lint", "clean")  # resolved: ran well after it failed
    earlier.bash("ls", "README.md")  # never failed
    earlier.bash("npm run build", "error TS2304", exit_code=1)
    earlier.write()
    ClaudeTranscript(root, "elsewhere", "/work/beta").bash("cargo test", "failed", exit_code=101).write()
    index_dir = tmp_path / "index"
    refresh_index(index_file(index_dir), {"claude": [root]})
    provider = _provider(index_dir, root)
    assert isinstance(provider, ListsRecentFailures)
    assert provider.recent_failures() == RecentFailures(
        ("npm run build", "pytest tests/test_auth.py -x"), freshness="fresh"
    )


def test_recent_failures_are_bounded_and_none_when_nothing_failed(tmp_path):
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "many", "/work/alpha")
    for number in range(6):
        session.bash(f"./check.sh {number}", "failed", exit_code=1)
    session.write()
    ClaudeTranscript(root, "clean", "/work/alpha").bash("ls", "ok").write()
    index_dir = tmp_path / "index"
    refresh_index(index_file(index_dir), {"claude": [root]})
    assert _provider(index_dir, root).recent_failures().commands == ("./check.sh 5", "./check.sh 4", "./check.sh 3")
    assert _provider(index_dir, root, repo_roots=["/work/gamma"]).recent_failures() == RecentFailures((), "fresh")
