"""Candidate rows to evidence items under the request's limits, with honest truncation counts.

Rows arrive best first. Copies of one record in several files collapse to the first (best) one.
Items are then taken while `max_items`, `max_sessions` and `max_total_chars` allow; each snippet
is a redacted window of at most `max_snippet_chars` (fewer when the total budget is nearly spent).
Everything a limit drops is counted in `omitted_count`, including matches beyond the candidates
the query fetched. The query's count is bounded (`query.SearchResult.bounded`), so `omitted_count`
is a lower bound: "at least N items were left out" (exact when nothing was bounded); `truncated`
is true when anything was dropped, any snippet was cut, or the count was bounded.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from obelisk_session_evidence.contracts.evidence import EvidenceItem, RequestLimits
from obelisk_session_evidence.contracts.limits import LimitTally
from obelisk_session_evidence.contracts.snippets import outcome_line
from obelisk_session_evidence.providers.native.index.excerpts import call_snippet, text_snippet
from obelisk_session_evidence.providers.native.index.query import SearchRow

MIN_ITEM_CHARS: Final = 40
"""Below this many characters of remaining budget an item is omitted rather than shown as a stub."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The items chosen for a result and what the limits cut."""

    items: tuple[EvidenceItem, ...]
    truncated: bool
    omitted_count: int


def session_ref(source: str, session_id: str) -> str:
    """`session:<32 hex>`: a digest of the agent and its session id, never a path."""
    return "session:" + _digest(source, session_id)


def message_ref(source: str, kind: str, uid: str) -> str:
    """`message:<32 hex>`: a digest of the agent, the record kind and the record's own id."""
    return "message:" + _digest(source, kind, uid)


def distinct_rows(rows: Sequence[SearchRow]) -> list[SearchRow]:
    """The first (best-ranked) row of each record; later copies from other files are dropped."""
    seen: set[tuple[str, str, str]] = set()
    chosen = []
    for row in rows:
        key = (row.source, row.kind, row.uid)
        if key not in seen:
            seen.add(key)
            chosen.append(row)
    return chosen


def select_items(
    rows: Sequence[SearchRow],
    limits: RequestLimits,
    needles: Sequence[str],
    *,
    unfetched: int = 0,
    bounded: bool = False,
) -> Selection:
    """Items for `rows` within `limits`; `unfetched` counts matches the query did not fetch, and
    `bounded` says that count is a lower bound (more may have matched)."""
    items: list[EvidenceItem] = []
    tally = LimitTally(limits)
    omitted, truncated = unfetched, False
    for row in distinct_rows(rows):
        session = (row.source, row.session_id)
        budget = tally.room(session)
        if budget < min(MIN_ITEM_CHARS, limits.max_snippet_chars):
            omitted += 1
            continue
        snippet, cut = snippet_for(row, needles, budget)
        if not snippet.strip():
            omitted += 1
            continue
        truncated = truncated or cut
        tally.take(session, len(snippet))
        items.append(_item(row, snippet))
    return Selection(tuple(items), truncated or bounded or omitted > 0, omitted)


def snippet_for(row: SearchRow, needles: Sequence[str], max_chars: int) -> tuple[str, bool]:
    """The redacted snippet of a row: the tool-call layout for calls, a text window otherwise."""
    if row.kind == "tool_call":
        is_error = None if row.is_error is None else bool(row.is_error)
        outcome = outcome_line(exit_code=row.exit_code, is_error=is_error)
        return call_snippet(row.command, outcome, row.body or row.detail, needles, max_chars)
    return text_snippet(row.body, needles, max_chars)


def _item(row: SearchRow, snippet: str) -> EvidenceItem:
    return EvidenceItem(
        session_ref=session_ref(row.source, row.session_id),
        message_ref=message_ref(row.source, row.kind, row.uid),
        evidence_type=row.evidence_type,
        observed_at=moment(row.observed_at),
        revision_ref=row.git_commit[:80] if row.git_commit else None,
        snippet=snippet,
    )


def moment(timestamp: str | None) -> datetime | None:
    """A parser timestamp as an aware datetime; None when absent, malformed or naive."""
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:32]
