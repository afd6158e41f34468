"""The one provider protocol. The native index and the Obelisk adapter both implement it."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from obelisk_session_evidence.contracts.errors import ProviderUnavailable
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest, HistoricalEvidenceResult
from obelisk_session_evidence.contracts.prior_calls import ProviderAnswer


@dataclass(frozen=True, slots=True)
class AsOf:
    """History strictly before one indexed tool call: rows of other sessions observed before
    `epoch`, and rows of the call's own session indexed before the call. `replay` asks for it
    (never a situation: it is the index's own keys); `own_session_only` keeps the call's session
    alone (RFC §10 arm 1: what the current context already holds)."""

    epoch: float
    session_key: int
    """The index's row of the call's session."""
    call_key: int
    """The index's row of the call itself."""
    own_session_only: bool = False


@runtime_checkable
class EvidenceProvider(Protocol):
    """Answers one scoped, bounded lookup, or raises a `ProviderError` subclass."""

    provider_version: str
    """Package version and backend, e.g. `0.1.0 native-index/1`."""

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """Return in-scope items (and their structured prior calls) for `request`; raise
        `ProviderError` when it cannot."""
        ...

    def index_revision(self) -> str | None:
        """The index revision the next lookup would answer from, read without a lookup; None
        when it cannot be known that way (a batch then never skips an item on it)."""
        ...


@runtime_checkable
class ReplayableProvider(EvidenceProvider, Protocol):
    """A provider that can answer as of an earlier moment of its own index (`replay`)."""

    def as_of(self, cut: AsOf) -> EvidenceProvider:
        """The same provider answering from history strictly before `cut` only, without refreshing."""
        ...


class HandlerProvider:
    """A provider built from a function: the test double that ships with the protocol. A handler
    that returns a bare RFC result answers with no structured prior calls."""

    def __init__(
        self,
        handler: Callable[[HistoricalEvidenceRequest], HistoricalEvidenceResult | ProviderAnswer],
        *,
        provider_version: str = "0.1.0 handler/1",
        index_revision: str | None = None,
    ) -> None:
        self.provider_version = provider_version
        self._handler = handler
        self._index_revision = index_revision

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """Delegate to the handler."""
        answer = self._handler(request)
        if isinstance(answer, HistoricalEvidenceResult):
            return ProviderAnswer(result=answer)
        return answer

    def index_revision(self) -> str | None:
        """The revision given at construction."""
        return self._index_revision


class UnavailableProvider:
    """Stands for a backend that could not be constructed; every lookup fails open, typed."""

    def __init__(self, provider_version: str, reason: str) -> None:
        self.provider_version = provider_version
        self._reason = reason

    def search(self, request: HistoricalEvidenceRequest) -> ProviderAnswer:
        """Raise `ProviderUnavailable` with the construction failure's reason."""
        raise ProviderUnavailable(self._reason)

    def index_revision(self) -> str | None:
        """Unknown: the backend never started."""
        return None
