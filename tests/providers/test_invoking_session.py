from datetime import UTC, datetime, timedelta

import pytest

from obelisk_session_evidence.contracts.config import SOURCE_KINDS
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.providers.invoking_session import (
    INVOCATION_ALLOWANCE,
    InvokingSessionExclusion,
    WithoutInvokingSession,
    host_session_refs,
    is_host_session,
    without_invoking_session,
)
from obelisk_session_evidence.providers.native.index.results import session_ref as native_session_ref
from obelisk_session_evidence.providers.obelisk.items import opaque_ref
from obelisk_session_evidence.providers.obelisk.plan import OBELISK_SOURCE
from tests.loopx.helpers import (
    CURRENT_SESSION,
    CURRENT_SESSION_FAILURE,
    CURRENT_SESSION_ID,
    EARLIER_SESSION_FAILURE,
    failure_in,
)
from tests.stages.helpers import result_for, situation_model

INVOKED_AT = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize("source", SOURCE_KINDS)
def test_host_session_refs_cover_every_backends_session_ref(source):
    session_id = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert host_session_refs(f"host-session:{source}:{session_id}") == {
        native_session_ref(source, session_id),
        opaque_ref("session", OBELISK_SOURCE[source], session_id),
    }


@pytest.mark.parametrize(
    "current_ref",
    [
        native_session_ref("codex", CURRENT_SESSION_ID),
        opaque_ref("session", OBELISK_SOURCE["codex"], CURRENT_SESSION_ID),
    ],
    ids=["native", "obelisk"],
)
def test_without_invoking_session_drops_the_invoking_turn_under_either_backends_ref(current_ref):
    current = CURRENT_SESSION_FAILURE.model_copy(update={"session_ref": current_ref, "observed_at": INVOKED_AT})
    inner = HandlerProvider(lambda r: result_for(r, [current, EARLIER_SESSION_FAILURE]))
    wrapper = WithoutInvokingSession(inner, CURRENT_SESSION, invoked_at=INVOKED_AT)
    assert wrapper.search(_request()).result.items == [EARLIER_SESSION_FAILURE]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (CURRENT_SESSION, True),
        ("host-session:claude:session-1", True),
        ("host-session:codex:", False),
        ("host-session:cursor:abc", False),
        ("host-session:codex:has space", False),
        ("replan-history", False),
        ("host-session:codex:abc\n", False),
    ],
)
def test_is_host_session_table(value, expected):
    assert is_host_session(value) is expected


def test_the_invoking_sessions_history_counts_and_only_its_turn_from_the_invocation_is_dropped():
    session = CURRENT_SESSION_FAILURE.session_ref
    boundary = INVOKED_AT - INVOCATION_ALLOWANCE
    before = failure_in(session, message=10, observed_at=boundary - timedelta(seconds=1))
    at = failure_in(session, message=11, observed_at=boundary)
    after = failure_in(session, message=12, observed_at=INVOKED_AT + timedelta(seconds=5))
    undated = failure_in(session, message=13, observed_at=None)
    other_undated = failure_in(EARLIER_SESSION_FAILURE.session_ref, message=14, observed_at=None)
    inner = HandlerProvider(
        lambda r: result_for(r, [CURRENT_SESSION_FAILURE, before, at, after, undated, other_undated])
    )
    wrapper = WithoutInvokingSession(inner, CURRENT_SESSION, invoked_at=INVOKED_AT)
    result = wrapper.search(_request()).result
    assert result.items == [CURRENT_SESSION_FAILURE, before, other_undated]
    assert wrapper.exclusion == InvokingSessionExclusion(counted=2, from_invocation=2, undated=1)
    assert wrapper.exclusion.excluded == 3
    # Not history a limit cut: nothing is reported as omitted or truncated.
    assert (result.truncated, result.omitted_count) == (False, 0)


def test_the_invocation_defaults_to_when_the_lookup_starts():
    now = datetime.now(UTC)
    recent = failure_in(CURRENT_SESSION_FAILURE.session_ref, message=20, observed_at=now)
    inner = HandlerProvider(lambda r: result_for(r, [recent, CURRENT_SESSION_FAILURE]))
    wrapper = WithoutInvokingSession(inner, CURRENT_SESSION)
    assert wrapper.search(_request()).result.items == [CURRENT_SESSION_FAILURE]


def test_without_invoking_session_is_identity_when_no_session_is_named():
    inner = HandlerProvider(lambda r: result_for(r, []))
    assert without_invoking_session(inner, None) is inner
    assert without_invoking_session(None, CURRENT_SESSION) is None


def _request():
    from obelisk_session_evidence.stages.admit import admit
    from obelisk_session_evidence.stages.classify_gap import classify_gap
    from tests.stages.helpers import enabled_policy

    situation = situation_model()
    return admit(situation, classify_gap(situation), policy=enabled_policy()).request
