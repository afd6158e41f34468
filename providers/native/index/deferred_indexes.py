"""The call tables' secondary indexes, dropped for a first build and made once at its end.

A first build writes every tool call's `call_details` and `call_sessions` rows; keeping their four
secondary indexes in order row by row costs about a twentieth of the build, sorting each once at
the end a fraction of that. The dropped indexes' own SQL is kept in `meta` in the transaction that
drops them, so a build that dies midway leaves them to the next refresh (`restore_indexes`), and
lookups in between stay correct, only slower. Rows and index definitions end up as they would
have been written row by row.
"""

import json
import sqlite3
from typing import Final

from obelisk_session_evidence.providers.native.index.revision import read_meta
from obelisk_session_evidence.providers.native.index.store import atomic, quote_identifier

DEFERRED_KEY: Final = "deferred_indexes"
"""`meta` key: the SQL of the indexes a first build dropped, as a JSON list, until they are made."""
_DEFERRED_INDEXES: Final = (
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    " AND tbl_name IN ('call_details', 'call_sessions') ORDER BY name"
)


def is_first_build(connection: sqlite3.Connection) -> bool:
    """True when the index holds no entries yet (every row a refresh writes is a new one)."""
    return connection.execute("SELECT 1 FROM entries LIMIT 1").fetchone() is None


def defer_indexes(connection: sqlite3.Connection) -> None:
    """Drop the call tables' secondary indexes, remembering their SQL (call outside a transaction)."""
    with atomic(connection):
        indexes = connection.execute(_DEFERRED_INDEXES).fetchall()
        if not indexes:
            return
        connection.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)", (DEFERRED_KEY, json.dumps([sql for _, sql in indexes]))
        )
        for name, _ in indexes:
            connection.execute(f"DROP INDEX {quote_identifier(name)}")


def restore_indexes(connection: sqlite3.Connection) -> None:
    """Make the indexes `defer_indexes` dropped, if any are still missing (call outside a transaction)."""
    stored = read_meta(connection, DEFERRED_KEY)
    if stored is None:
        return
    with atomic(connection):
        for statement in json.loads(stored):
            connection.execute(statement)
        connection.execute("DELETE FROM meta WHERE key = ?", (DEFERRED_KEY,))
