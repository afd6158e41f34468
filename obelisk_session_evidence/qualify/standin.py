"""A stand-in history provider over one case's events, for running the arms without a native index.

It does what the provider contract asks of a real backend, in memory: it serves only the agent's
own, indexed events in the requested repository (another agent's or repository's sessions are
never returned), ranks them for the query terms by a bm25-like weight of shared words, applies
the request's limits and reports the case's true freshness. `full_history_provider` is the
cost ceiling of arm 3: every in-scope event, newest first, no limits.
"""

import hashlib
import math
import re
from collections import Counter
from datetime import timedelta
from typing import Final

from obelisk_session_evidence.contracts.base import EvidenceType
from obelisk_session_evidence.contracts.evidence import (
    EvidenceItem,
    HistoricalEvidenceRequest,
    HistoricalEvidenceResult,
    RequestScope,
    ScopeApplied,
)
from obelisk_session_evidence.contracts.snippets import ELLIPSIS, outcome_line, tool_snippet
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.qualify.synthetic import CASE_EPOCH as EPOCH
from obelisk_session_evidence.qualify.synthetic import HistoryEvent, QualificationCase

_WORD: Final = re.compile(r"[a-z0-9_]{2,}")
STANDIN_VERSION: Final = "0.1.0 qualify-standin/1"


def history_items(case: QualificationCase) -> list[tuple[HistoryEvent, EvidenceItem]]:
    """Every event of the case as the evidence item a provider would return for it."""
    pairs = []
    for number, event in enumerate(case.history):
        pairs.append((event, _item(case.case_id, number, event)))
    return pairs


def in_scope_items(case: QualificationCase) -> list[EvidenceItem]:
    """The agent's own indexed items in the case's repository, in time order."""
    return [item for event, item in history_items(case) if event.owner == "self" and event.indexed]


def standin_provider(case: QualificationCase) -> HandlerProvider:
    """The admitted-retrieval provider of arm 2 for one case."""

    def handler(request: HistoricalEvidenceRequest) -> HistoricalEvidenceResult:
        if case.provider_fault == "scope_leak":
            # A broken backend that read another repository: `retrieve` must reject it whole.
            leaked = request.scope.model_copy(update={"repository_id": "repo-qualify-beta"})
            return _result(request, case, _ranked(request, in_scope_items(case)), scope_from=leaked)
        return _result(request, case, _ranked(request, in_scope_items(case)))

    return HandlerProvider(handler, provider_version=STANDIN_VERSION)


def full_history_provider(case: QualificationCase) -> HandlerProvider:
    """Arm 3: every in-scope item, newest first, no limits (the cost ceiling)."""

    def handler(request: HistoricalEvidenceRequest) -> HistoricalEvidenceResult:
        scope = request.scope
        if case.provider_fault == "scope_leak":
            scope = scope.model_copy(update={"repository_id": "repo-qualify-beta"})
        items = sorted(in_scope_items(case), key=lambda item: item.observed_at or EPOCH, reverse=True)
        return HistoricalEvidenceResult(
            request_id=request.request_id,
            provider_version=STANDIN_VERSION,
            index_revision=f"standin:{case.case_id}",
            scope_applied=_scope(scope),
            freshness=case.freshness,
            items=[item for item in items if item.evidence_type in request.evidence_types],
            truncated=False,
            omitted_count=0,
        )

    return HandlerProvider(handler, provider_version=STANDIN_VERSION)


def _item(case_id: str, number: int, event: HistoryEvent) -> EvidenceItem:
    evidence_type: EvidenceType
    if event.kind == "call":
        evidence_type = "prior_failure" if event.exit_code else "tool_outcome"
        snippet = tool_snippet(event.text, outcome_line(exit_code=event.exit_code, is_error=None), event.output)
    elif event.kind == "edit":
        evidence_type, snippet = "file_history", tool_snippet(f"Edit {event.text}", "ok", "")
    else:
        evidence_type, snippet = event.kind, event.text
    return EvidenceItem(
        session_ref="session:" + _hex(case_id, event.session, event.owner),
        message_ref="message:" + _hex(case_id, str(number)),
        evidence_type=evidence_type,
        observed_at=EPOCH + timedelta(minutes=event.minute),
        revision_ref=event.revision,
        snippet=snippet,
    )


def _hex(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def _ranked(request: HistoricalEvidenceRequest, items: list[EvidenceItem]) -> list[EvidenceItem]:
    """Items sharing a query word, best bm25-like weight first, newer first on ties."""
    candidates = [item for item in items if item.evidence_type in request.evidence_types]
    words = [set(_WORD.findall(item.snippet.lower())) for item in candidates]
    frequency = Counter(word for bag in words for word in bag)
    total = max(1, len(candidates))
    query = {word for term in request.query_terms for word in _WORD.findall(term.lower())}
    scored = []
    for item, bag in zip(candidates, words, strict=False):
        shared = query & bag
        if shared:
            weight = sum(math.log((total - frequency[w] + 0.5) / (frequency[w] + 0.5) + 1) for w in shared)
            scored.append((-weight, -(item.observed_at or EPOCH).timestamp(), item.message_ref or "", item))
    return [entry[-1] for entry in sorted(scored, key=lambda entry: entry[:3])]


def _result(
    request: HistoricalEvidenceRequest,
    case: QualificationCase,
    ranked: list[EvidenceItem],
    *,
    scope_from: RequestScope | None = None,
) -> HistoricalEvidenceResult:
    limits = request.limits
    kept: list[EvidenceItem] = []
    sessions: set[str] = set()
    chars = 0
    cut = False
    for item in ranked:
        snippet = item.snippet
        if len(snippet) > limits.max_snippet_chars:
            snippet, cut = snippet[: limits.max_snippet_chars - 1] + ELLIPSIS, True
        if (
            len(kept) >= limits.max_items
            or len(sessions | {item.session_ref}) > limits.max_sessions
            or chars + len(snippet) > limits.max_total_chars
        ):
            break
        kept.append(item.model_copy(update={"snippet": snippet}))
        sessions.add(item.session_ref)
        chars += len(snippet)
    omitted = len(ranked) - len(kept)
    return HistoricalEvidenceResult(
        request_id=request.request_id,
        provider_version=STANDIN_VERSION,
        index_revision=f"standin:{case.case_id}",
        scope_applied=_scope(scope_from or request.scope),
        freshness=case.freshness,
        items=kept,
        truncated=cut or omitted > 0,
        omitted_count=omitted,
    )


def _scope(scope: RequestScope) -> ScopeApplied:
    return ScopeApplied(agent_id=scope.agent_id, project_id=scope.project_id, repository_id=scope.repository_id)
