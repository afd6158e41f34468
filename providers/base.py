"""The one provider protocol. The native index and the Obelisk adapter both implement it."""

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from contracts.errors import ProviderUnavailable
from contracts.evidence import HistoricalEvidenceRequest, HistoricalEvidenceResult


@runtime_checkable
class EvidenceProvider(Protocol):
    """Answers one scoped, bounded lookup, or raises a `ProviderError` subclass."""

    provider_version: str
    """Package version and backend, e.g. `0.1.0 native-index/1`."""

    def search(self, request: HistoricalEvidenceRequest) -> HistoricalEvidenceResult:
        """Return in-scope items for `request`; raise `ProviderError` when it cannot."""
        ...


class HandlerProvider:
    """A provider built from a function: the test double that ships with the protocol."""

    def __init__(
        self,
        handler: Callable[[HistoricalEvidenceRequest], HistoricalEvidenceResult],
        *,
        provider_version: str = "0.1.0 handler/1",
    ) -> None:
        self.provider_version = provider_version
        self._handler = handler

    def search(self, request: HistoricalEvidenceRequest) -> HistoricalEvidenceResult:
        """Delegate to the handler."""
        return self._handler(request)


class UnavailableProvider:
    """Stands for a backend that could not be constructed; every lookup fails open, typed."""

    def __init__(self, provider_version: str, reason: str) -> None:
        self.provider_version = provider_version
        self._reason = reason

    def search(self, request: HistoricalEvidenceRequest) -> HistoricalEvidenceResult:
        """Raise `ProviderUnavailable` with the construction failure's reason."""
        raise ProviderUnavailable(self._reason)
