"""A `ContextProvider` (loopx/capabilities/context_providers/base.py) that LoopX can be handed.

LoopX's agent-turn-recall runtime (`run_configured_agent_turn_recall(..., provider=...)`) and
Decision Context both take a provider object with `provider_id`, `retrieve(...)` and `sync(...)`.
This one answers from this project's pipeline (`recall.py` says how LoopX's arguments map onto a
typed situation): a leading content-free verdict item, then bounded items whose `content` is
the private snippet for the in-process caller, whose `summary` (which LoopX publishes) names
only the evidence type and date, with `read_performed` true only when historical items were
actually read back. It is read-only: `sync` writes
nothing and says so. Nothing here raises to LoopX: every fault is an `unavailable` retrieval.

Import cost: LoopX's record types are imported on the first call, from the LoopX process that
holds this object, so this module imports without LoopX installed.
"""

import time
from collections.abc import Sequence
from typing import Any

from obelisk_session_evidence.contracts.base import PROVIDER_ID
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.loopx.recall import (
    Recall,
    bounded_max_results,
    invoking_session_of,
    recall,
    situation_for,
    unavailable,
)
from obelisk_session_evidence.providers.factory import ProviderFactory
from obelisk_session_evidence.providers.version import PACKAGE_VERSION
from obelisk_session_evidence.state.paths import StatePaths, state_paths


class SessionEvidenceContextProvider:
    """LoopX's `ContextProvider` protocol over one situation (or spooled situation refs)."""

    provider_id = PROVIDER_ID

    def __init__(
        self,
        *,
        situation: ReplanSituation | None = None,
        paths: StatePaths | None = None,
        provider_factory: ProviderFactory | None = None,
    ) -> None:
        self._situation = situation
        self._paths = paths or state_paths()
        self._provider_factory = provider_factory

    def retrieve(
        self,
        *,
        namespace: str,
        scope_ref: str,
        query: str,
        query_summary: str,
        max_results: int,
        timeout_seconds: float,
        observed_at: str,
    ) -> Any:
        """Bounded items for the bound situation (else the spooled one `query` names)."""
        from loopx.capabilities.context_providers.base import (
            ContextProviderItem,
            ContextProviderRetrieval,
        )

        del timeout_seconds  # each backend bounds its own time (RFC §6); see README
        started = time.monotonic()
        limit = bounded_max_results(max_results)
        outcome = self._recall(scope_ref=scope_ref, query=query, max_results=limit)
        return ContextProviderRetrieval(
            provider=PROVIDER_ID,
            namespace=namespace,
            status=outcome.status,
            query_summary=query_summary,
            observed_at=observed_at,
            search_performed=outcome.search_performed,
            read_performed=outcome.read_performed,
            items=tuple(
                ContextProviderItem(
                    resource_ref=item.resource_ref,
                    summary=item.summary,
                    content=item.content,
                    score=None,
                )
                for item in outcome.items
            ),
            reason_code=outcome.reason_code,
            provider_version=PACKAGE_VERSION,
            latency_ms=int((time.monotonic() - started) * 1000),
            requested_limit=limit,
            visibility="private",
            target_scope_kind="same_agent_project_repository",
            # Scope is the owner's enablement for the situation's agent, checked at admission.
            actor_binding_verified=outcome.search_performed,
        )

    def sync(
        self,
        *,
        namespace: str,
        resources: Sequence[tuple[str, str]],
        timeout_seconds: float,
        observed_at: str,
        execute: bool,
    ) -> Any:
        """Read-only: nothing is ever written."""
        from loopx.capabilities.context_providers.base import ContextProviderSync

        del timeout_seconds, execute
        return ContextProviderSync(
            provider=PROVIDER_ID,
            namespace=namespace,
            status="unavailable",
            observed_at=observed_at,
            requested_count=len(resources),
            completed_count=0,
            reason_code="read_only_provider",
            provider_version=PACKAGE_VERSION,
        )

    def _recall(self, *, scope_ref: str, query: str, max_results: int) -> Recall:
        situation: ReplanSituation | None
        if self._situation is not None:
            situation = self._situation
            invoking_session, error = invoking_session_of(scope_ref)
        else:
            situation, invoking_session, error = situation_for(self._paths, scope_ref=scope_ref, query=query)
        if situation is None or error is not None:
            return unavailable(error or "situation_ref_required")
        return recall(
            situation,
            invoking_session=invoking_session,
            max_results=max_results,
            paths=self._paths,
            provider_factory=self._provider_factory,
        )
