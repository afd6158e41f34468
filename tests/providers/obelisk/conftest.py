"""Fixtures for the Obelisk adapter: a clean environment, a stand-in CLI, enablement, requests."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from contracts.config import Enablement
from contracts.evidence import HistoricalEvidenceRequest, RequestLimits, RequestScope
from fixtures.obelisk_stand_in import CANARY, StandIn, install_stand_in, stand_in_data
from providers.obelisk import ObeliskProvider
from providers.obelisk.answer import Row
from providers.obelisk.discovery import clear_probe_cache
from providers.obelisk.plan import QueryPlan, query_plan

ALL_TYPES = ["prior_failure", "decision", "file_history", "tool_outcome", "summary"]


@pytest.fixture(autouse=True)
def forget_probes() -> Iterator[None]:
    """Each test probes afresh (the root conftest already strips `OBELISK_*` variables)."""
    clear_probe_cache()
    yield
    clear_probe_cache()


@pytest.fixture
def repo_root(tmp_path: Path) -> str:
    """An absolute repository root (it need not exist: rows are matched by path)."""
    return str(tmp_path / "work" / "repo")


@pytest.fixture
def stand_in(tmp_path: Path, repo_root: str) -> StandIn:
    """The stand-in CLI serving canary-marked rows of one agent in `repo_root`."""
    return install_stand_in(tmp_path / "stand-in", data=stand_in_data(repo_root, canary=CANARY))


@pytest.fixture
def enablement(repo_root: str) -> Enablement:
    """Agent `agent-1` in `proj-1`/`repo-1`, bound to Claude, Codex and DSH sessions."""
    return Enablement(
        surface="replan-history",
        agent_id="agent-1",
        project_id="proj-1",
        repository_id="repo-1",
        repo_roots=[repo_root],
        sources=["claude", "codex", "dsh"],
        provider="obelisk",
        enabled_at=datetime(2026, 8, 1, tzinfo=UTC),
    )


@pytest.fixture
def make_request() -> Callable[..., HistoricalEvidenceRequest]:
    """Build a valid request; keyword arguments override fields."""

    def build(**overrides: Any) -> HistoricalEvidenceRequest:
        fields: dict[str, Any] = {
            "request_id": "req-1",
            "situation_id": "sit-1",
            "trigger": "replan_repetition",
            "scope": RequestScope(agent_id="agent-1", project_id="proj-1", repository_id="repo-1"),
            "evidence_types": list(ALL_TYPES),
            "query_terms": ["pytest -x tests/unit", "retry"],
            "limits": RequestLimits(
                max_sessions=10, max_items=20, max_snippet_chars=400, max_total_chars=8000
            ),
        }
        fields.update(overrides)
        return HistoricalEvidenceRequest(**fields)

    return build


@pytest.fixture
def make_provider(stand_in: StandIn, enablement: Enablement) -> Callable[..., ObeliskProvider]:
    """A provider pointed at the stand-in; keyword arguments go to the constructor."""

    def build(**kwargs: Any) -> ObeliskProvider:
        kwargs.setdefault("binary", str(stand_in.executable))
        kwargs.setdefault("timeout_s", 5.0)
        return ObeliskProvider(enablement, **kwargs)

    return build


@pytest.fixture
def make_row(repo_root: str) -> Callable[..., Row]:
    """Build one template row in `repo_root`; keyword arguments override fields."""

    def build(**overrides: Any) -> Row:
        fields: dict[str, Any] = {
            "term": 0,
            "terms": [0],
            "source": "claude",
            "session_source": "claude",
            "session_id": "s-1",
            "message_id": "m-1",
            "timestamp": "2026-08-01T09:00:00.000Z",
            "cwd": repo_root,
            "project_path": repo_root,
            "role": "assistant",
            "content_type": "text",
            "is_meta": False,
            "rank": 0,
            "text": "we chose to stop the retry loop",
            "text_chars": 31,
            "window_start": 0,
            "tool_name": None,
            "is_error": None,
            "exit_code": None,
        }
        fields.update(overrides)
        return Row(**fields)

    return build


@pytest.fixture
def make_plan(
    enablement: Enablement, make_request: Callable[..., HistoricalEvidenceRequest]
) -> Callable[..., QueryPlan]:
    """A checked plan for `make_request(**overrides)` with provider `options`."""

    def build(options: dict[str, object] | None = None, **overrides: Any) -> QueryPlan:
        return query_plan(make_request(**overrides), enablement=enablement, options=options or {})

    return build
