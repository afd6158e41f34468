"""An optional provider capability: the scope's most recent unresolved failed commands.

A lookup normally brings its own route. When LoopX asks for decision evidence without one
(`prepare-evidence` on resume or hand-off), a provider that can list what this agent last tried
in this repository that failed, and has not succeeded since, gives that route. The native index
can (`native/index/recent_failures.py`); a backend that cannot simply lacks the method.
"""

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from obelisk_session_evidence.contracts.base import Freshness


@dataclass(frozen=True, slots=True)
class RecentFailures:
    """Private: the commands never leave the process that asked."""

    commands: tuple[str, ...]
    """The newest unresolved failed shell commands of the scope, newest first (bounded)."""
    freshness: Freshness
    """The index's freshness for the scope: an empty list means "none" only when `fresh`."""


@runtime_checkable
class ListsRecentFailures(Protocol):
    """A provider that can list its scope's recent unresolved failures."""

    def recent_failures(self) -> RecentFailures:
        """The scope's recent unresolved failures; raise `ProviderError` when it cannot."""
        ...
