"""Fixtures for the Obelisk adapter: the recordings' HOME, the stand-in over it, enablements."""

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fixtures.obelisk_stand_in import StandIn, install_stand_in
from fixtures.obelisk_stand_in.corpus_home import lay_out_home
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest, RequestLimits, RequestScope
from obelisk_session_evidence.providers.obelisk import ObeliskProvider
from obelisk_session_evidence.providers.obelisk.discovery import clear_probe_cache


@pytest.fixture(autouse=True)
def forget_probes() -> Iterator[None]:
    """Each test probes afresh (the root conftest already strips `OBELISK_*` variables)."""
    clear_probe_cache()
    yield
    clear_probe_cache()


@pytest.fixture
def corpus_home(tmp_path: Path) -> Path:
    """The real corpus laid out as in the recordings (a fresh copy: tests may change files)."""
    return lay_out_home(tmp_path / "home")


@pytest.fixture
def stand_in(tmp_path: Path, corpus_home: Path) -> StandIn:
    """The stand-in CLI with HOME = `corpus_home`, its index not built yet."""
    return install_stand_in(tmp_path / "stand-in", home=corpus_home)


SPOTTER_ROOT = "/home/USER/projects/spotter-worktrees"
"""The spotter checkout's worktree parent, as the corpus records its cwds."""
CODEX_ROOT = "/Users/Sample_User/repos/codemie-ai/codemie-code"
ALL_TYPES = ["prior_failure", "decision", "file_history", "tool_outcome", "summary"]


def enablement_for(home: Path, *, roots: list[str], sources: list[str]) -> Enablement:
    """Agent `agent-1` in `proj-1`/`repo-1` reading the given sources under `home`."""
    folders = {
        "claude": home / ".claude" / "projects",
        "codex": home / ".codex" / "sessions",
        "dsh": home / ".deepseek" / "sessions",
    }
    return Enablement(
        surface="replan-history",
        agent_id="agent-1",
        project_id="proj-1",
        repository_id="repo-1",
        repo_roots=roots,
        sources=sources,
        source_roots={source: str(folders[source]) for source in sources},
        provider="obelisk",
        enabled_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def request_for(*terms: str, types: list[str] | None = None) -> HistoricalEvidenceRequest:
    """A lookup for `terms` in agent-1's scope."""
    return HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="sit-1",
        trigger="replan_repetition",
        scope=RequestScope(agent_id="agent-1", project_id="proj-1", repository_id="repo-1"),
        evidence_types=types or list(ALL_TYPES),
        query_terms=list(terms),
        limits=RequestLimits(max_sessions=10, max_items=12, max_snippet_chars=600, max_total_chars=6000),
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> StandIn:
    """A stand-in whose index is built once per module; tests must not change its HOME."""
    base = tmp_path_factory.mktemp("built")
    installed = install_stand_in(base / "stand-in", home=lay_out_home(base / "home"))
    subprocess.run([str(installed.executable), "--build"], check=True, capture_output=True)
    return installed


def provider_for(stand_in: StandIn, enablement: Enablement, work_dir: Path, **kwargs: Any) -> ObeliskProvider:
    """The adapter pointed at `stand_in`, with its HOME."""
    kwargs.setdefault("timeout_s", 5.0)
    kwargs.setdefault("obelisk_home", stand_in.home / ".obelisk")
    return ObeliskProvider(enablement, binary=str(stand_in.executable), work_dir=work_dir, **kwargs)
