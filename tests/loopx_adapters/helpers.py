"""Builders shared by the LoopX adapter tests: stand-in providers and the current session."""

from collections.abc import Callable
from datetime import datetime, timezone

from contracts.config import AdmissionPolicy
from contracts.evidence import EvidenceItem, HistoricalEvidenceRequest
from contracts.situation import ReplanSituation
from contracts.snippets import tool_snippet
from contracts.thresholds import RouteThresholds
from providers.native.index.results import session_ref as native_session_ref
from providers.base import HandlerProvider
from stages.pipeline import PipelineDependencies
from tests.stages.helpers import enabled_policy, result_for

CURRENT_SESSION = "host-session:codex:0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
ROUTE = "pytest tests/test_auth.py -x"
FAILED_RUN = tool_snippet(ROUTE, "exit 1", "FAILED tests/test_auth.py::test_login - secret-ish text")
History = Callable[[HistoricalEvidenceRequest], list[EvidenceItem]]


def failure_in(session_ref: str, *, message: int = 1) -> EvidenceItem:
    return EvidenceItem(
        session_ref=session_ref,
        message_ref=f"message:{message:064x}",
        evidence_type="prior_failure",
        observed_at=datetime(2026, 11, 20, 9, 30, tzinfo=timezone.utc),
        snippet=FAILED_RUN,
    )


CURRENT_SESSION_ID = CURRENT_SESSION.split(":", 2)[2]
CURRENT_SESSION_FAILURE = failure_in(native_session_ref("codex", CURRENT_SESSION_ID), message=1)
"""The current session's failure as the native index would report it."""
EARLIER_SESSION_FAILURE = failure_in("session:" + "ab" * 32, message=2)


def dependencies_for(
    encoder,
    history: History,
    *,
    policy: AdmissionPolicy | None = None,
    freshness: str = "fresh",
) -> Callable[[ReplanSituation], PipelineDependencies]:
    """A factory the adapters call instead of the owner's wiring."""

    def build(situation: ReplanSituation) -> PipelineDependencies:
        return PipelineDependencies(
            policy=policy or enabled_policy(),
            provider=HandlerProvider(
                lambda request: result_for(request, history(request), freshness=freshness)
            ),
            encoder=encoder,
            thresholds=RouteThresholds(),
            digest_salt="adapter-salt",
        )

    return build
