"""How current the index is for a set of roots, and what it holds (`index status`).

Freshness, most serious first:
- `unknown`: a root was never refreshed (or there is no index);
- `incomplete`: a root is missing or could not be listed (its rows are kept until it can be), or a
  file under it failed to parse;
- `stale`: files were added, changed or deleted since the last refresh (a stat-only scan);
- `fresh`: none of the above.
`stored_freshness` skips the stat scan. `scope_freshness` is what a lookup reports: the same, but a
failed, damaged or vanished file counts only when it can hold the enablement's sessions (issue 13
item 8): when a session it is known to hold binds to the repository, or when what it holds is not
known (no stored session, or one with no cwd, checkout, identity or URL). A file whose stored
sessions all ran in other repositories cannot hold this scope's rows, so it leaves it fresh.
"""

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.index_status import STATUS_TYPE_ORDER, IndexRootStatus, IndexStatus
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.changes import pending_changes
from obelisk_session_evidence.providers.native.index.cursor import decode_counts, has_damaged_files
from obelisk_session_evidence.providers.native.index.repository import RepositoryBinding, binds
from obelisk_session_evidence.providers.native.index.revision import UNKNOWN_REVISION, current_revision, read_meta
from obelisk_session_evidence.providers.native.index.roots import Roots, root_text
from obelisk_session_evidence.providers.native.index.store import MEMORY, connect, index_errors, size_on_disk
from obelisk_session_evidence.providers.native.parsers.outcome import DAMAGE_REASONS

PROBLEM_FILES: Final = (
    # Named: `files_scan` (0012) also leads with (source, root), and SQLite, with no statistics,
    # took it over this partial index, reading every file row of the root (kilobytes each) per lookup.
    "SELECT id, failure, skipped_by_reason FROM files INDEXED BY files_problems"
    " WHERE source = ? AND root = ? AND (failure IS NOT NULL OR skipped_total > 0)"
)
"""A root's failed and damaged files, found through the few such rows (`files_problems`, 0011)."""


def root_keys(roots: Roots) -> list[tuple[str, str]]:
    """`(source, normalised root)` for each root, as the index stores them."""
    return [(source, root_text(root)) for source, paths in roots.items() for root in paths]


def last_refreshed_at(connection: sqlite3.Connection, roots: Roots) -> float | None:
    """When the least recently refreshed of these roots was refreshed; None if one never was."""
    times = []
    for source, root in root_keys(roots):
        found = connection.execute(
            "SELECT refreshed_at FROM roots WHERE source = ? AND path = ?", (source, root)
        ).fetchone()
        if found is None or found[0] is None:
            return None
        times.append(found[0])
    return min(times) if times else None


def stored_freshness(connection: sqlite3.Connection, roots: Roots) -> Freshness:
    """Freshness from what the last refresh recorded, without looking at the disk."""
    keys = root_keys(roots)
    if last_refreshed_at(connection, roots) is None:
        return "unknown"
    for source, root in keys:
        (state,) = connection.execute(
            "SELECT state FROM roots WHERE source = ? AND path = ?", (source, root)
        ).fetchone()
        failed = connection.execute(
            "SELECT 1 FROM files INDEXED BY files_problems WHERE source = ? AND root = ? AND failure IS NOT NULL"
            " LIMIT 1",
            (source, root),
        ).fetchone()
        if state != "indexed" or failed is not None or has_damaged_files(connection, source, root):
            return "incomplete"
    return "fresh"


def scope_freshness(connection: sqlite3.Connection, roots: Roots, binding: RepositoryBinding) -> Freshness:
    """`stored_freshness` for one enablement: only problems that can touch its repository count."""
    if last_refreshed_at(connection, roots) is None:
        return "unknown"
    for source, root in root_keys(roots):
        (state,) = connection.execute(
            "SELECT state FROM roots WHERE source = ? AND path = ?", (source, root)
        ).fetchone()
        if state != "indexed":  # a missing or unreadable root may hold this repository's sessions
            return "incomplete"
        problems = connection.execute(
            PROBLEM_FILES,
            (source, root),
        )
        for file_id, failure, skipped in problems.fetchall():
            damaged = failure is not None or bool(DAMAGE_REASONS & decode_counts(skipped).keys())
            if damaged and _may_hold(connection, file_id, binding):
                return "incomplete"
    return "fresh"


def _may_hold(connection: sqlite3.Connection, file_id: int, binding: RepositoryBinding) -> bool:
    """True unless every session stored for the file is known to belong to another repository."""
    sessions = connection.execute(
        "SELECT cwd, checkout_root, repository_identity, repository_url_key FROM sessions WHERE file_id = ?",
        (file_id,),
    ).fetchall()
    if not sessions:
        return True
    return any(
        all(value is None for value in session)
        or binds(binding, cwd=session[0], checkout_root=session[1], identity=session[2], url=session[3])
        for session in sessions
    )


def index_freshness(connection: sqlite3.Connection, roots: Roots) -> Freshness:
    """Stored freshness, downgraded to `stale` when a stat scan finds changes since the last refresh."""
    stored = stored_freshness(connection, roots)
    if stored in ("unknown", "incomplete"):
        return stored
    return "stale" if pending_changes(connection, roots) else stored


def stored_roots(connection: sqlite3.Connection) -> dict[SourceKind, list[Path]]:
    """Every root a refresh has read, per source."""
    roots: dict[SourceKind, list[Path]] = {}
    for source, path in connection.execute("SELECT source, path FROM roots ORDER BY source, path"):
        roots.setdefault(source, []).append(Path(path))
    return roots


def index_status(index_path: Path | str, *, roots: Roots | None = None) -> IndexStatus:
    """Counts, freshness, revision and size of the index; freshness over `roots` (default: all it has read)."""
    if str(index_path) != MEMORY and not Path(index_path).exists():
        return IndexStatus(
            exists=False,
            files=0,
            sessions=0,
            messages=0,
            tool_calls=0,
            summaries=0,
            failures=0,
            failed_tool_calls=0,
            evidence_type_counts=dict.fromkeys(STATUS_TYPE_ORDER, 0),
            skipped_records=0,
            freshness="unknown",
            index_revision=UNKNOWN_REVISION,
            last_refresh_at=None,
            size_bytes=0,
        )
    connection = connect(index_path)
    try:
        return status_of(connection, roots=roots, size_bytes=size_on_disk(index_path))
    finally:
        connection.close()


def status_of(connection: sqlite3.Connection, *, roots: Roots | None = None, size_bytes: int = 0) -> IndexStatus:
    """`index_status` for an open connection."""
    with index_errors():
        kinds = dict(connection.execute("SELECT kind, count(*) FROM entries GROUP BY kind").fetchall())
        types = dict(connection.execute("SELECT evidence_type, count(*) FROM entries GROUP BY evidence_type"))
        skipped: dict[str, int] = {}
        for (text,) in connection.execute("SELECT skipped_by_reason FROM files WHERE skipped_total > 0"):
            for reason, count in decode_counts(text).items():
                skipped[reason] = skipped.get(reason, 0) + count
        last = read_meta(connection, "last_refresh_at")
        chosen = roots if roots is not None else stored_roots(connection)
        return IndexStatus(
            exists=True,
            files=_count(connection, "SELECT count(*) FROM files"),
            sessions=_count(connection, "SELECT count(*) FROM sessions"),
            messages=kinds.get("message", 0),
            tool_calls=kinds.get("tool_call", 0),
            summaries=kinds.get("summary", 0),
            failures=_count(connection, "SELECT count(*) FROM files WHERE failure IS NOT NULL"),
            failed_tool_calls=_count(
                connection, "SELECT count(*) FROM entries WHERE kind = 'tool_call' AND evidence_type = 'prior_failure'"
            ),
            evidence_type_counts={kind: types.get(kind, 0) for kind in STATUS_TYPE_ORDER},
            skipped_records=sum(skipped.values()),
            skipped_by_reason=dict(sorted(skipped.items())),
            freshness=index_freshness(connection, chosen) if chosen else "unknown",
            index_revision=current_revision(connection).text,
            last_refresh_at=datetime.fromtimestamp(float(last), tz=UTC) if last else None,
            size_bytes=size_bytes,
            roots=list(_root_statuses(connection)),
        )


def _root_statuses(connection: sqlite3.Connection) -> Iterator[IndexRootStatus]:
    rows = connection.execute(
        "SELECT r.source, r.path, r.state, r.refreshed_at,"
        " (SELECT count(*) FROM files f WHERE f.source = r.source AND f.root = r.path),"
        " (SELECT count(*) FROM files f WHERE f.source = r.source AND f.root = r.path AND f.failure IS NOT NULL)"
        " FROM roots r ORDER BY r.source, r.path"
    )
    for source, path, state, refreshed_at, files, failed in rows:
        yield IndexRootStatus(
            source=source,
            path=path,
            state=state,
            files=files,
            failed_files=failed,
            refreshed_at=datetime.fromtimestamp(refreshed_at, tz=UTC) if refreshed_at else None,
        )


def _count(connection: sqlite3.Connection, sql: str) -> int:
    (count,) = connection.execute(sql).fetchone()
    return int(count)
