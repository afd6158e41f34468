"""`NativeIndexProvider`: scoped, ranked, bounded, redacted answers with honest freshness."""

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence import __version__
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import IndexUnavailable, ScopeViolation
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.snippets import parse_tool_snippet
from obelisk_session_evidence.providers.base import EvidenceProvider
from obelisk_session_evidence.providers.native.index.query import SearchResult, SearchRow
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.results import session_ref
from obelisk_session_evidence.providers.native.index.store import index_file, writer_lock
from obelisk_session_evidence.providers.native.parsers import default_roots
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.qualify.session_writers import FAILING_COMMAND
from tests.providers.native.index.transcripts import ClaudeTranscript

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
REF = re.compile(r"^[a-z]+:[0-9a-f]{16,64}$")


def _enablement(**overrides) -> Enablement:
    return Enablement(
        **{
            "surface": "replan-history",
            "agent_id": "agent-a",
            "project_id": "project-a",
            "repository_id": "repo-a",
            "repo_roots": ["/work/alpha"],
            "sources": ["claude"],
            "enabled_at": datetime(2026, 11, 29, tzinfo=UTC),
            **overrides,
        }
    )


def _request(terms=(FAILING_COMMAND, "tests/test_auth.py"), *, types=None, **limits) -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="replan_repetition",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=types or ["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=list(terms),
        limits={"max_sessions": 20, "max_items": 50, "max_snippet_chars": 600, "max_total_chars": 20000, **limits},
    )


@pytest.fixture
def mixed(tmp_path: Path):
    """An index holding one in-scope session and four that must never be returned."""
    root_a, root_b = tmp_path / "agent-a" / "claude", tmp_path / "agent-b" / "claude"
    sessions = {
        "in-scope": ClaudeTranscript(root_a, "in-scope", "/work/alpha/src"),
        "other-repository": ClaudeTranscript(root_a, "other-repository", "/work/beta"),
        "look-alike-repository": ClaudeTranscript(root_a, "look-alike-repository", "/work/alpha-fork"),
        "placeholder-cwd": ClaudeTranscript(root_a, "placeholder-cwd", "{{cwd}}"),
        "other-agent": ClaudeTranscript(root_b, "other-agent", "/work/alpha"),
    }
    for session in sessions.values():
        session.user("Fix the expired-token login bug").bash(FAILING_COMMAND, "FAILED test_login", exit_code=1).write()
    index_dir = tmp_path / "state" / "index"
    refresh_index(index_file(index_dir), {"claude": [root_a, root_b]})
    return index_dir, root_a, sessions


def test_provider_implements_the_protocol(tmp_path):
    provider = NativeIndexProvider(tmp_path / "index", _enablement())
    assert isinstance(provider, EvidenceProvider)
    assert provider.provider_version == f"{__version__} native-index/1"


def test_search_in_a_mixed_index_returns_only_the_scoped_session(mixed):
    index_dir, root_a, _ = mixed
    provider = NativeIndexProvider(index_dir, _enablement(source_roots={"claude": str(root_a)}))
    result = provider.search(_request()).result
    assert result.items
    assert {item.session_ref for item in result.items} == {session_ref("claude", "in-scope")}
    assert result.freshness == "fresh"


def test_search_without_repository_roots_returns_nothing(mixed):
    index_dir, root_a, _ = mixed
    provider = NativeIndexProvider(index_dir, _enablement(repo_roots=[], source_roots={"claude": str(root_a)}))
    assert provider.search(_request()).result.items == []


def test_search_never_reads_a_source_the_enablement_does_not_bind(mixed, tmp_path):
    index_dir, root_a, _ = mixed
    codex_root = tmp_path / "agent-a" / "codex"
    provider = NativeIndexProvider(index_dir, _enablement(sources=["codex"], source_roots={"codex": str(codex_root)}))
    assert provider.search(_request()).result.items == []


def test_search_generated_histories_stays_in_the_repository_across_agents(generated, tmp_path):
    """All five agents, a worktree, and bait sessions running the same command in another repository."""
    roots = {source: str(path) for source, path in default_roots(generated.home).items()}
    enablement = _enablement(repo_roots=[str(generated.repo_root)], sources=list(roots), source_roots=roots)
    provider = NativeIndexProvider(tmp_path / "index", enablement, home=generated.home)
    result = provider.search(_request(max_sessions=200)).result
    returned = {item.session_ref for item in result.items}
    allowed = {session_ref(s.source, s.session_id) for s in generated.sessions if not s.is_bait}
    bait = {session_ref(s.source, s.session_id) for s in generated.sessions if s.is_bait}
    worktree = {
        session_ref(s.source, s.session_id) for s in generated.sessions if s.cwd == str(generated.worktree_root)
    }
    assert returned and returned <= allowed and not returned & bait
    assert returned & worktree, "sessions in a linked worktree belong to the main repository"


def test_search_rejects_a_request_for_another_scope(tmp_path):
    provider = NativeIndexProvider(tmp_path / "index", _enablement())
    request = _request().model_copy(update={"scope": _request().scope.model_copy(update={"agent_id": "agent-b"})})
    with pytest.raises(ScopeViolation):
        provider.search(request)


@pytest.mark.parametrize("lane", ["rows", "calls", "changes"])
def test_search_rejects_the_whole_result_when_one_row_is_out_of_scope(mixed, monkeypatch, lane):
    """Fault injection: the SQL scope is bypassed, and the per-row re-check still refuses (items and prior calls)."""
    index_dir, root_a, _ = mixed
    stray = SearchRow(
        1,
        "tool_call",
        "u",
        "prior_failure",
        "Bash",
        1,
        1,
        None,
        "claude",
        "x",
        "/work/beta",
        None,
        None,
        None,
        None,
        str(root_a / "-work-beta" / "x.jsonl"),
        "pytest",
        "text",
        "",
        (str(root_a / "-work-beta" / "x.jsonl"),),
    )
    lanes = {name: [stray] if lane == name else [] for name in ("rows", "calls", "changes")}
    found = SearchResult(**lanes, matched=1, bounded=False)
    monkeypatch.setattr("obelisk_session_evidence.providers.native.provider.search", lambda *args, **kwargs: found)
    provider = NativeIndexProvider(index_dir, _enablement(source_roots={"claude": str(root_a)}))
    with pytest.raises(ScopeViolation):
        provider.search(_request())


def test_search_items_carry_opaque_refs_and_readable_tool_snippets(mixed):
    index_dir, root_a, _ = mixed
    result = NativeIndexProvider(index_dir, _enablement(source_roots={"claude": str(root_a)})).search(_request()).result
    for item in result.items:
        assert REF.match(item.session_ref) and REF.match(item.message_ref)
        assert "/" not in item.session_ref + item.message_ref
    (failure,) = [item for item in result.items if item.evidence_type == "prior_failure"]
    parsed = parse_tool_snippet(failure.snippet)
    assert (parsed.command, parsed.outcome, parsed.exit_code) == (FAILING_COMMAND, "exit", 1)
    assert failure.observed_at is not None and failure.observed_at.tzinfo is not None


def test_search_respects_evidence_types(mixed):
    index_dir, root_a, _ = mixed
    provider = NativeIndexProvider(index_dir, _enablement(source_roots={"claude": str(root_a)}))
    result = provider.search(_request(["expired-token login"], types=["decision"])).result
    assert [item.evidence_type for item in result.items] == ["decision"]


@pytest.fixture
def busy(tmp_path: Path):
    """One in-scope repository with six sessions of two calls each."""
    root = tmp_path / "claude"
    for number in range(6):
        session = ClaudeTranscript(root, f"s{number}", "/work/alpha")
        session.bash(FAILING_COMMAND, "FAILED " + "details " * 100, exit_code=1)
        session.bash(FAILING_COMMAND + " --lf", "FAILED again " + "more " * 100, exit_code=1).write()
    return NativeIndexProvider(tmp_path / "index", _enablement(source_roots={"claude": str(root)}))


def test_search_limits_items_and_counts_what_it_omits(busy):
    result = busy.search(_request(max_items=3)).result
    assert len(result.items) == 3
    assert (result.truncated, result.omitted_count) == (True, 9)


def test_search_limits_sessions(busy):
    result = busy.search(_request(max_sessions=2)).result
    assert len({item.session_ref for item in result.items}) == 2
    assert result.omitted_count == 8 and result.truncated


@pytest.mark.parametrize(
    ("max_snippet_chars", "max_total_chars", "truncated"), [(40, 20000, True), (600, 500, True), (2000, 20000, False)]
)
def test_search_limits_snippet_and_total_characters(busy, max_snippet_chars, max_total_chars, truncated):
    result = busy.search(_request(max_snippet_chars=max_snippet_chars, max_total_chars=max_total_chars)).result
    assert all(len(item.snippet) <= max_snippet_chars for item in result.items)
    assert sum(len(item.snippet) for item in result.items) <= max_total_chars
    assert result.truncated is truncated
    assert (result.omitted_count == 0) is (len(result.items) == 12)


def test_search_redacts_secrets_in_snippets(tmp_path):
    root = tmp_path / "claude"
    ClaudeTranscript(root, "s", "/work/alpha").bash(
        f"aws s3 cp x s3://bucket --key {AWS_KEY}", f"error: key {AWS_KEY} rejected", exit_code=1
    ).write()
    provider = NativeIndexProvider(tmp_path / "index", _enablement(source_roots={"claude": str(root)}))
    result = provider.search(_request(["aws s3 cp"])).result
    assert result.items and all(AWS_KEY not in item.snippet for item in result.items)
    assert "[REDACTED:aws-access-key]" in result.items[0].snippet


def test_search_does_not_wait_for_another_refresh_and_reports_stale(tmp_path):
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "s", "/work/alpha")
    session.bash("make build", "ok").write()
    provider = NativeIndexProvider(
        tmp_path / "index", _enablement(source_roots={"claude": str(root)}), refresh_window_s=0
    )
    with writer_lock(index_file(tmp_path / "index"), wait_s=0):
        assert provider.search(_request(["make build"])).result.freshness == "unknown"
    provider.search(_request(["make build"]))
    session.bash("make deploy", "ok").write()
    with writer_lock(index_file(tmp_path / "index"), wait_s=0):
        result = provider.search(_request(["make build"])).result
    assert (result.freshness, len(result.items)) == ("stale", 1)


def test_search_reports_incomplete_when_a_file_fails(tmp_path):
    root = tmp_path / "claude"
    ClaudeTranscript(root, "s", "/work/alpha").bash("make build", "ok").write()
    (root / "-x" / "broken.jsonl").mkdir(parents=True)
    provider = NativeIndexProvider(tmp_path / "index", _enablement(source_roots={"claude": str(root)}))
    assert provider.search(_request(["make build"])).result.freshness == "incomplete"


def test_search_on_a_corrupt_index_is_index_unavailable(tmp_path):
    index_file(tmp_path / "index").parent.mkdir(parents=True)
    index_file(tmp_path / "index").write_bytes(b"garbage" * 1000)
    provider = NativeIndexProvider(tmp_path / "index", _enablement(source_roots={"claude": str(tmp_path)}))
    with pytest.raises(IndexUnavailable):
        provider.search(_request())
