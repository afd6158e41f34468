"""The invoking host session is not history: its records never count as prior evidence.

A situation (or the scope LoopX hands an adapter) may name the session that is asking,
`host-session:<source>:<session id>`. Every provider gives an item an opaque `session:` ref,
each backend its own digest of (LoopX source, session id): the native index
`providers/native/index/results.session_ref`, the Obelisk adapter
`providers/obelisk/items.opaque_ref`. The wrapper here drops items carrying any of that
session's refs from every answer, before `cap-by-tokens` and `compare-route` see them, so the
current session can neither pass as a prior failure nor make a route look repeated.

Items are dropped without counting as omitted: they are not history that a limit cut.
"""

import re
from typing import Final

from contracts.evidence import HistoricalEvidenceRequest
from contracts.prior_calls import ProviderAnswer
from contracts.situation import HOST_SESSION_PATTERN
from providers.base import EvidenceProvider

_HOST_SESSION: Final = re.compile(HOST_SESSION_PATTERN)


def is_host_session(value: str) -> bool:
    """True when `value` is a normalised `host-session:<source>:<id>` reference."""
    return _HOST_SESSION.fullmatch(value) is not None


def host_session_refs(invoking_session: str) -> frozenset[str]:
    """Every opaque `session:` ref a provider may give the records of `invoking_session`."""
    from providers.native.index.results import session_ref as native_session_ref
    from providers.obelisk.items import opaque_ref
    from providers.obelisk.plan import OBELISK_SOURCE

    if not is_host_session(invoking_session):
        raise ValueError("not a host-session reference")
    _, source, session_id = invoking_session.split(":", 2)
    return frozenset(
        {
            native_session_ref(source, session_id),
            opaque_ref("session", OBELISK_SOURCE[source], session_id),  # type: ignore[index]
        }
    )


class WithoutInvokingSession:
    """A provider whose answers never hold the invoking session's items."""

    def __init__(self, provider: EvidenceProvider, invoking_session: str) -> None:
        self._provider = provider
        self._excluded_refs = host_session_refs(invoking_session)
        self.provider_version = provider.provider_version

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """The wrapped provider's answer less the invoking session's items and calls."""
        answer = self._provider.search(request)
        result = answer.result
        kept = [item for item in result.items if item.session_ref not in self._excluded_refs]
        calls = [call for call in answer.prior_calls if call.session_ref not in self._excluded_refs]
        if len(kept) == len(result.items) and len(calls) == len(answer.prior_calls):
            return answer
        return ProviderAnswer(result=result.model_copy(update={"items": kept}), prior_calls=calls)

    def index_revision(self) -> str | None:
        """The wrapped provider's."""
        return self._provider.index_revision()


def without_invoking_session(
    provider: EvidenceProvider | None, invoking_session: str | None
) -> EvidenceProvider | None:
    """`provider`, wrapped so the invoking session is excluded when one is named."""
    if provider is None or invoking_session is None:
        return provider
    return WithoutInvokingSession(provider, invoking_session)
