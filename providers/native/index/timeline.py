"""A scope's tool calls in the order they ran: what `replay` walks, and the cut before each.

Every in-scope tool-call row with a time, oldest first (ties by index row: a session's rows are
indexed in file order), each as the private prior call it would be to a later lookup and the
as-of cut just before it. Undated calls cannot be placed against other sessions: they are
counted, never replayed. The scope is the same SQL predicate set as every search.
"""

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.providers.base import AsOf
from obelisk_session_evidence.providers.native.index.calls import PriorCallBuilder
from obelisk_session_evidence.providers.native.index.query import fetch_rows
from obelisk_session_evidence.providers.native.index.scoped_sql import JOINS, ScopeFilter, scope_clauses
from obelisk_session_evidence.providers.native.index.store import quote_identifier

CHUNK: Final = 256
"""Calls whose rows are read at a time (bounded memory for any timeline length)."""


@dataclass(frozen=True, slots=True)
class TimedCall:
    """One in-scope tool call, as later lookups see it, and the cut that excludes it and all after it."""

    call: PriorToolCall
    cut: AsOf


@dataclass(frozen=True, slots=True)
class Timeline:
    """The in-scope tool calls with a time, and how many had none."""

    call_keys: tuple[tuple[int, int, float], ...]
    """(call row, session row, epoch) per call, oldest first."""
    undated: int


def timeline(connection: sqlite3.Connection, scope: ScopeFilter) -> Timeline:
    """The scope's dated tool calls in time order (keys only), and the count of undated ones."""
    params: dict[str, object] = {}
    where = scope_clauses(scope, None, params)
    sql = (
        f"SELECT e.id, e.session_row, e.observed_epoch, s.source, e.uid FROM {quote_identifier('entries')} AS e\n"
        f"{JOINS}\nWHERE e.kind = 'tool_call' AND {where}\nORDER BY e.observed_epoch IS NULL, e.observed_epoch, e.id"
    )
    dated: list[tuple[int, int, float]] = []
    undated = 0
    seen: set[tuple[str, str]] = set()
    for row_id, session_row, epoch, source, uid in connection.execute(sql, params):
        if (source, uid) in seen:
            continue  # a record a resumed session's file copied: it ran once
        seen.add((source, uid))
        if epoch is None:
            undated += 1
        else:
            dated.append((row_id, session_row, epoch))
    return Timeline(tuple(dated), undated)


def timed_calls(
    connection: sqlite3.Connection, keys: tuple[tuple[int, int, float], ...], builder: PriorCallBuilder
) -> Iterator[TimedCall]:
    """The calls `keys` as prior calls with their cuts, in order, read `CHUNK` at a time."""
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        rows = fetch_rows(connection, [row_id for row_id, _, _ in chunk])
        built = builder.build_each(connection, [rows[row_id] for row_id, _, _ in chunk if row_id in rows])
        for (row_id, session_row, epoch), call in zip(chunk, built, strict=True):
            yield TimedCall(call, AsOf(epoch=epoch, session_key=session_row, call_key=row_id))
