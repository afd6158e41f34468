"""The invoking turn is not history: the asking session's records from the invocation onward
never count as prior evidence; its earlier records do.

A situation (or the scope LoopX hands an adapter) may name the host session that is asking,
`host-session:<source>:<session id>`, as LoopX means it (`resolve-agent-thread`, thread-agent
bindings): the thread whose agent is asking, and whose history counts. What must not count is the
call that is asking right now and whatever follows it, which a live backend (Obelisk reads the
current transcript) may already hold: the question itself, its partial output, the step it is
asking about. So, for records of the invoking session only (every backend gives a record an opaque
`session:` ref, each its own digest of (LoopX source, session id): the native index
`providers/native/index/results.session_ref`, the Obelisk adapter `providers/obelisk/items.opaque_ref`):

- a record observed before the boundary counts like any other history;
- a record observed at or after the boundary is excluded (`from_invocation`);
- a record without an observation time cannot be placed before the boundary and is excluded
  (`undated`): this is where the boundary cannot be found, and the count says so.

The boundary is the invocation time less `INVOCATION_ALLOWANCE`, which covers the asking tool
call's own records, written by the host a moment before the lookup starts. The invocation time is
when the lookup starts (the wrapper is built per decision), unless the caller names it.

Excluded records are not counted as omitted (they are not history that a limit cut); `exclusion`
reports them by reason.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer
from obelisk_session_evidence.contracts.situation import HOST_SESSION_PATTERN
from obelisk_session_evidence.providers.base import EvidenceProvider

_HOST_SESSION: Final = re.compile(HOST_SESSION_PATTERN)
INVOCATION_ALLOWANCE: Final = timedelta(seconds=30)
"""How long before the lookup the asking call's own records may have been written."""


def is_host_session(value: str) -> bool:
    """True when `value` is a normalised `host-session:<source>:<id>` reference."""
    return _HOST_SESSION.fullmatch(value) is not None


def host_session_refs(invoking_session: str) -> frozenset[str]:
    """Every opaque `session:` ref a provider may give the records of `invoking_session`."""
    from obelisk_session_evidence.providers.native.index.results import session_ref as native_session_ref
    from obelisk_session_evidence.providers.obelisk.items import opaque_ref
    from obelisk_session_evidence.providers.obelisk.plan import OBELISK_SOURCE

    if not is_host_session(invoking_session):
        raise ValueError("not a host-session reference")
    _, source, session_id = invoking_session.split(":", 2)
    if source not in OBELISK_SOURCE:
        raise ValueError("not a host-session reference")  # the pattern admits only known sources
    return frozenset(
        {
            native_session_ref(source, session_id),
            opaque_ref("session", OBELISK_SOURCE[source], session_id),
        }
    )


@dataclass(frozen=True, slots=True)
class InvokingSessionExclusion:
    """What the invoking-turn rule did to one answer (items and prior calls alike)."""

    counted: int = 0
    """Records of the invoking session from before the boundary: kept as history."""
    from_invocation: int = 0
    """Records of the invoking session at or after the boundary: excluded."""
    undated: int = 0
    """Records of the invoking session without a time: excluded, the boundary cannot be placed."""

    @property
    def excluded(self) -> int:
        """Every excluded record."""
        return self.from_invocation + self.undated


def invocation_boundary(invoked_at: datetime) -> datetime:
    """The first instant that belongs to the invoking turn."""
    return invoked_at - INVOCATION_ALLOWANCE


def without_invoking_turn(
    answer: ProviderAnswer, excluded_refs: frozenset[str], boundary: datetime
) -> tuple[ProviderAnswer, InvokingSessionExclusion]:
    """`answer` less the invoking session's records from `boundary` on, and what was dropped."""
    counts = {"counted": 0, "from_invocation": 0, "undated": 0}

    def keep(session_ref: str, observed_at: datetime | None) -> bool:
        if session_ref not in excluded_refs:
            return True
        reason = "undated" if observed_at is None else "counted" if observed_at < boundary else "from_invocation"
        counts[reason] += 1
        return reason == "counted"

    result = answer.result
    items = [item for item in result.items if keep(item.session_ref, item.observed_at)]
    calls = [call for call in answer.prior_calls if keep(call.session_ref, call.observed_at)]
    exclusion = InvokingSessionExclusion(**counts)
    if not exclusion.excluded:
        return answer, exclusion
    kept = {"result": result.model_copy(update={"items": items}), "prior_calls": calls}
    return answer.model_copy(update=kept), exclusion


class WithoutInvokingSession:
    """A provider whose answers never hold the invoking turn's records."""

    def __init__(
        self, provider: EvidenceProvider, invoking_session: str, *, invoked_at: datetime | None = None
    ) -> None:
        self._provider = provider
        self._excluded_refs = host_session_refs(invoking_session)
        self._boundary = invocation_boundary(invoked_at or datetime.now(UTC))
        self.provider_version = provider.provider_version
        self.exclusion = InvokingSessionExclusion()
        """What the last answer lost to the invoking-turn rule."""

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """The wrapped provider's answer less the invoking turn's items and calls."""
        answer, self.exclusion = without_invoking_turn(
            self._provider.search(request), self._excluded_refs, self._boundary
        )
        return answer

    def index_revision(self) -> str | None:
        """The wrapped provider's."""
        return self._provider.index_revision()


def without_invoking_session(
    provider: EvidenceProvider | None, invoking_session: str | None
) -> EvidenceProvider | None:
    """`provider`, wrapped so the invoking turn is excluded when a session is named."""
    if provider is None or invoking_session is None:
        return provider
    return WithoutInvokingSession(provider, invoking_session)
