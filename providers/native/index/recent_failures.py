"""The scope's most recent unresolved failures: for a lookup that brings no route of its own.

When LoopX prepares decision evidence without naming a step (`prepare-evidence` on resume or
hand-off), the useful history is what this agent last tried in this repository that failed and
has not run successfully since. This reads it in bounded work:

- the newest `FAILURE_WINDOW` calls (any scope) by time (`call_details_time`), of which the
  in-scope shell calls that failed (a non-zero exit code or an error flag), at most
  `FAILURE_SCAN`, newest first;
- each failed command (by its `command_key`) counts once, and only when no in-scope run of the
  same key after it ended well (exit code 0, no error flag);
- at most `take` commands come back, newest failure first.

The commands are private: they become the route of a private situation, whose lookup then
brings their history through the ordinary scoped search.
"""

import sqlite3
from typing import Final

from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES
from obelisk_session_evidence.providers.native.index.query import fetch_rows
from obelisk_session_evidence.providers.native.index.scoped_sql import JOINS, BuiltQuery, ScopeFilter, scope_clauses
from obelisk_session_evidence.providers.native.index.store import quote_identifier

FAILURE_WINDOW: Final = 5000
"""Newest calls (of any scope) walked by time."""
FAILURE_SCAN: Final = 200
"""In-scope failed shell calls read among them."""
MAX_RECENT_FAILURES: Final = 3
"""Commands a routeless lookup carries: enough to resume on, few enough to stay on point."""


def recent_failure_commands(
    connection: sqlite3.Connection, scope: ScopeFilter, *, take: int = MAX_RECENT_FAILURES
) -> list[str]:
    """The newest in-scope shell commands that failed and have not succeeded since."""
    query = failed_calls_sql(scope)
    chosen: dict[str, int] = {}  # command_key -> entry id of its newest failure
    for entry_id, key, epoch in connection.execute(query.sql, query.params):
        if key in chosen:
            continue
        if _succeeded_since(connection, scope, key, epoch):
            chosen[key] = 0  # resolved: later failures of it are older still
            continue
        chosen[key] = entry_id
        if sum(1 for found in chosen.values() if found) >= take:
            break
    ids = [found for found in chosen.values() if found]
    rows = fetch_rows(connection, ids)
    return [rows[i].command for i in ids if i in rows and rows[i].command.strip()]


def failed_calls_sql(scope: ScopeFilter) -> BuiltQuery:
    """Of the newest `FAILURE_WINDOW` calls, the in-scope failed shell calls with a command key,
    newest first, at most `FAILURE_SCAN`: (entry id, command key, observed epoch)."""
    params: dict[str, object] = {"window": FAILURE_WINDOW, "scan": FAILURE_SCAN}
    where = scope_clauses(scope, None, params)
    shells = ", ".join(f":shell_{i}" for i in range(len(SHELL_TOOL_NAMES)))
    params.update({f"shell_{i}": name for i, name in enumerate(sorted(SHELL_TOOL_NAMES))})
    window = (
        f"SELECT entry_id, command_key, observed_epoch FROM {quote_identifier('call_details')}"
        " WHERE command_key IS NOT NULL ORDER BY observed_epoch DESC LIMIT :window"
    )
    sql = (
        # CROSS JOIN keeps the walk by time the outer loop (SQLite never reorders it).
        f"SELECT e.id, c.command_key, c.observed_epoch FROM ({window}) AS c\n"
        f"CROSS JOIN {quote_identifier('entries')} AS e ON e.id = c.entry_id\n{JOINS.replace('JOIN', 'CROSS JOIN')}\n"
        f"WHERE lower(e.tool_name) IN ({shells}) AND (coalesce(e.exit_code, 0) <> 0 OR e.is_error = 1)\n"
        f"  AND {where}\nORDER BY c.observed_epoch DESC, e.id DESC LIMIT :scan"
    )
    return BuiltQuery(sql, params)


def _succeeded_since(connection: sqlite3.Connection, scope: ScopeFilter, key: str, epoch: float | None) -> bool:
    """Whether an in-scope run of `key` observed after `epoch` ended well."""
    params: dict[str, object] = {"key": key, "since": epoch if epoch is not None else 0.0}
    where = scope_clauses(scope, None, params)
    sql = (
        f"SELECT 1 FROM {quote_identifier('call_details')} AS c\n"
        f"JOIN {quote_identifier('entries')} AS e ON e.id = c.entry_id\n{JOINS}\n"
        "WHERE c.command_key = :key AND c.observed_epoch > :since\n"
        "  AND coalesce(e.exit_code, 0) = 0 AND coalesce(e.is_error, 0) = 0\n"
        f"  AND {where}\nLIMIT 1"
    )
    return connection.execute(sql, params).fetchone() is not None
