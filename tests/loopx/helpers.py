"""Builders shared by the LoopX adapter tests: stand-in providers and the current session."""

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import EvidenceItem, HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.providers.native.index.results import session_ref as native_session_ref
from obelisk_session_evidence.providers.recent_failures import RecentFailures
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.state.private_files import write_private
from tests.stages.helpers import enabled_policy, result_for

CURRENT_SESSION = "host-session:codex:0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
ROUTE = "pytest tests/test_auth.py -x"
FAILED_RUN = tool_snippet(ROUTE, "exit 1", "FAILED tests/test_auth.py::test_login - secret-ish text")
History = Callable[[HistoricalEvidenceRequest], list[EvidenceItem]]
NO_RUN_HISTORY = """echo '{"ok": true, "goals": []}'"""
"""LoopX's `--format json history` for a goal the agent never ran: no obligation can be open."""
CANNOT_START = 'echo "LoopX\'s runtime cannot start" >&2; exit 1'
"""A LoopX whose state cannot be read (its Node runtime cannot start)."""


def loopx_on_path(monkeypatch: pytest.MonkeyPatch, folder: Path, script: str) -> None:
    """Put a `loopx` that runs `script` first on PATH: the product asks the `loopx` on PATH for
    LoopX's run history, and these tests do not start LoopX's Node runtime."""
    folder.mkdir(parents=True, exist_ok=True)
    loopx = folder / "loopx"
    loopx.write_text(f"#!/bin/sh\n{script}\n")
    loopx.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")


EARLIER = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def failure_in(session_ref: str, *, message: int = 1, observed_at: datetime | None = EARLIER) -> EvidenceItem:
    return EvidenceItem(
        session_ref=session_ref,
        message_ref=f"message:{message:064x}",
        evidence_type="prior_failure",
        observed_at=observed_at,
        snippet=FAILED_RUN,
    )


CURRENT_SESSION_ID = CURRENT_SESSION.split(":", 2)[2]
CURRENT_SESSION_REF = native_session_ref("codex", CURRENT_SESSION_ID)
CURRENT_SESSION_FAILURE = failure_in(CURRENT_SESSION_REF, message=1)
"""An earlier turn's failure in the invoking session, as the native index would report it."""


def current_turn_failure(message: int = 3) -> EvidenceItem:
    """A failure of the invoking session recorded now: the invoking turn, not history."""
    return failure_in(CURRENT_SESSION_REF, message=message, observed_at=datetime.now(UTC))


EARLIER_SESSION_FAILURE = failure_in("session:" + "ab" * 32, message=2)


class ListingProvider(HandlerProvider):
    """A stand-in provider that can also list its scope's recent unresolved failures."""

    def __init__(self, handler: Callable[..., Any], recent: RecentFailures) -> None:
        super().__init__(handler)
        self._recent = recent

    def recent_failures(self) -> RecentFailures:
        return self._recent


def backend(
    history: History,
    *,
    enabled: bool = True,
    freshness: str = "fresh",
    paths: StatePaths | None = None,
    recent: RecentFailures | None = None,
) -> dict[str, Any]:
    """The state (the fixture scope enabled, unless not) and a provider answering `history`
    (and listing `recent` failures, when given): the keyword arguments the adapters take
    instead of the owner's real backends."""
    paths = paths or state_paths()
    if enabled:
        write_private(paths.config_file, enabled_policy().config.model_dump_json().encode())

    def build(enablement: Enablement, kind: str) -> HandlerProvider:
        def handler(request: HistoricalEvidenceRequest) -> Any:
            return result_for(request, history(request), freshness=freshness)

        return HandlerProvider(handler) if recent is None else ListingProvider(handler, recent)

    return {"paths": paths, "provider_factory": build}
