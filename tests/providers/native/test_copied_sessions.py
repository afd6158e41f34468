"""A session held both under this agent's roots and from a file outside them is not this agent's.

A real Claude Code session (the corpus's `short.jsonl`, byte for byte) is copied from agent B's
folder into agent A's; with both folders indexed, A's lookups (ranked pass and call lanes) leave it
out, and the per-row re-check refuses a row whose session is held from outside A's roots.
"""

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import ScopeViolation
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index.query import SearchResult, SearchRow
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.repository import RepositoryBinding
from obelisk_session_evidence.providers.native.index.results import session_ref
from obelisk_session_evidence.providers.native.index.scope import row_in_scope, scope_filter
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.native.conftest import REAL_CORPUS, requires_real_corpus

REAL_SESSION = REAL_CORPUS / "claude-spotter" / "short.jsonl"
REAL_SESSION_ID = "55604662-cf2a-4331-851a-ec234028f8ca"
REAL_CWD = "/home/marco/projects/spotter"
COMMAND = "mix phx.server"


def _enablement(root: Path, agent: str = "agent-a") -> Enablement:
    return Enablement(
        surface="replan-history",
        agent_id=agent,
        project_id="project-a",
        repository_id="repo-a",
        repo_roots=[REAL_CWD],
        sources=["claude"],
        source_roots={"claude": str(root)},
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )


def _request(agent: str = "agent-a") -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-copy",
        situation_id="situation-copy",
        trigger="replan_repetition",
        scope={"agent_id": agent, "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "tool_outcome", "decision", "file_history", "summary"],
        query_terms=[COMMAND, "mix.exs"],
        limits={"max_sessions": 20, "max_items": 20, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


def _place(root: Path) -> Path:
    target = root / "-home-marco-projects-spotter" / f"{REAL_SESSION_ID}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REAL_SESSION, target)
    return target


@requires_real_corpus
@pytest.mark.parametrize("in_b_too", [True, False], ids=["copied-from-b", "control-only-in-a"])
def test_a_real_session_copied_from_another_agents_folder_is_left_out(tmp_path, in_b_too):
    root_a, root_b = tmp_path / "a" / "claude", tmp_path / "b" / "claude"
    _place(root_a)
    if in_b_too:
        _place(root_b)
    root_b.mkdir(parents=True, exist_ok=True)
    refresh_index(index_file(tmp_path / "index"), {"claude": [root_a, root_b]})
    answer = NativeIndexProvider(tmp_path / "index", _enablement(root_a)).search(_request())
    refs = {item.session_ref for item in answer.result.items} | {call.session_ref for call in answer.prior_calls}
    if in_b_too:
        assert refs == set() and answer.prior_calls == []
    else:
        assert refs == {session_ref("claude", REAL_SESSION_ID)}
        assert any(call.command.startswith(COMMAND) for call in answer.prior_calls)
    assert answer.result.freshness == "fresh"


def _row(path: str, session_files: tuple[str, ...]) -> SearchRow:
    return SearchRow(
        1,
        "tool_call",
        "u",
        "prior_failure",
        "Bash",
        1,
        1,
        None,
        "claude",
        REAL_SESSION_ID,
        REAL_CWD,
        None,
        None,
        None,
        None,
        path,
        COMMAND,
        "",
        "",
        session_files,
    )


def test_row_in_scope_refuses_a_session_also_held_outside_the_roots():
    binding = RepositoryBinding(roots=(REAL_CWD,), identities=(), url_keys=())
    scope = scope_filter({"claude": [Path("/h/a/claude")]}, binding)
    own = "/h/a/claude/-p/s.jsonl"
    assert row_in_scope(_row(own, (own, "/h/a/claude/-p/s/subagents/agent-1.jsonl")), scope, binding)
    assert not row_in_scope(_row(own, (own, "/h/b/claude/-p/s.jsonl")), scope, binding)
    assert not row_in_scope(_row(own, ("/h/a/claude/-p/other.jsonl",)), scope, binding)  # its own file missing


@pytest.mark.parametrize("held_outside", [True, False], ids=["also-held-outside", "control-held-inside"])
def test_search_rejects_the_whole_result_when_a_row_is_held_outside_the_roots(tmp_path, monkeypatch, held_outside):
    """Fault injection: the SQL predicate is bypassed, and the per-row re-check still refuses."""
    root_a = tmp_path / "a" / "claude"
    own = str(root_a / "-home-marco-projects-spotter" / f"{REAL_SESSION_ID}.jsonl")
    elsewhere = (str(tmp_path / "b" / "claude" / "-p" / "s.jsonl"),) if held_outside else ()
    found = SearchResult(rows=[], calls=[_row(own, (own, *elsewhere))], changes=[], matched=1, bounded=False)
    monkeypatch.setattr("obelisk_session_evidence.providers.native.provider.search", lambda *args, **kwargs: found)
    provider = NativeIndexProvider(tmp_path / "index", _enablement(root_a))
    if held_outside:
        with pytest.raises(ScopeViolation):
            provider.search(_request())
    else:
        assert [call.session_ref for call in provider.search(_request()).prior_calls] == [
            session_ref("claude", REAL_SESSION_ID)
        ]
