"""The native SQLite index: incremental refresh from the agents' session files, scoped full-text search.

store.py       connection (WAL), `atomic()`, writer lock, the sqlite3 -> IndexUnavailable map
integrity.py   the seal every open checks: a damaged index is index_unavailable, refresh rebuilds it
schema.py      named migrations recorded in `schema_migrations`; the tokenizer choice
cursor.py      per-file change signatures and resumable parser state
rows.py        parser records -> sessions, entries and full-text rows
refresh.py     `refresh_index`: only what changed is read
refresh_writes.py  what a refresh writes: cursors, failures, gone files, the end revision
repository.py  repository identity (roots, worktrees, root commit, remote URL)
fts.py         the one FTS5 escaping function and the query it builds
query.py       `search_sql` builds, `search` runs
scope.py       one enablement as SQL predicates, re-checked per row
excerpts.py    snippet windows around the hit
results.py     rows -> evidence items under the request's limits
status.py      freshness and `index_status`
revision.py    the index revision
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "connect": "store",
    "index_file": "store",
    "index_status": "status",
    "refresh_index": "refresh",
    "refresh_locked": "refresh",
}
"""Loaded on first use: a module that needs only `repository` must not pay for the parsers."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(name)
    return getattr(import_module(f"obelisk_session_evidence.providers.native.index.{_EXPORTS[name]}"), name)
