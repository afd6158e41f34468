"""What a refresh writes: each unit's cursor row (or the failure it met), the removal of files
that are gone, and at the end the roots' states, the index revision and the scan the next refresh
compares with. The tally of it all becomes the `RefreshReport`."""

import hashlib
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.index_status import RefreshReport
from obelisk_session_evidence.providers.native.index.changes import Known, ScannedRoots, Unit, scan_digest
from obelisk_session_evidence.providers.native.index.cursor import (
    FileSignature,
    encode_counts,
    encode_resume,
    has_damaged_files,
)
from obelisk_session_evidence.providers.native.index.integrity import seal
from obelisk_session_evidence.providers.native.index.last_scan import LAST_SCAN, LAST_SCANNED_ROOTS, scanned_roots_key
from obelisk_session_evidence.providers.native.index.listings import Listings, save_listings
from obelisk_session_evidence.providers.native.index.revision import (
    Revision,
    advance_revision,
    current_revision,
    read_meta,
    write_meta,
)
from obelisk_session_evidence.providers.native.index.rows import WriteCounts, delete_file_rows
from obelisk_session_evidence.providers.native.index.store import atomic, quote_identifier
from obelisk_session_evidence.providers.native.parsers import ParseOutcome

UNREADABLE = FileSignature(0, 0, 0, 0, 0, "unreadable", False)
"""The signature stored for a unit that could not be `stat`ed or is not a regular file."""


@dataclass(slots=True)
class Tally:
    """Counters that become the `RefreshReport`."""

    unchanged: int = 0
    added: int = 0
    appended: int = 0
    reread: int = 0
    deleted: int = 0
    failed: int = 0
    bytes_read: int = 0
    skipped: int = 0
    parser_workers: int = 0
    parsed_ahead: int = 0
    rows: WriteCounts = field(default_factory=WriteCounts)
    changes: list[str] = field(default_factory=list)
    interrupted: bool = False
    """The time budget ran out before every unit was looked at."""


REWRITTEN_SHARE: Final = 5
"""Once the files read again or removed since the last merge reach 1/`REWRITTEN_SHARE` of the
index's files, the complete refresh that reaches it ends by merging the full-text index (FTS5
`optimize`). Rows removed stay in it as delete markers until their segments merge, and every
query pays for them: after a migration read every file of the bench's 1M-message index again,
counting a common word's rows cost 300 ms instead of 1-2 ms (optimize: 2.5 s, once)."""


REWRITTEN: Final = "files_rewritten_since_merge"
"""`meta` key: files read again or removed since the full-text index was last merged."""


def _merge_if_rewritten(connection: sqlite3.Connection, tally: Tally) -> None:
    """Count this refresh's rewritten files; merge the full-text index once they reach the share, at
    the end of a complete refresh (a budgeted one never pays for the merge; call inside `atomic()`)."""
    stored = int(read_meta(connection, REWRITTEN) or 0)
    rewritten = stored + tally.reread + tally.deleted
    if not rewritten:
        return  # a refresh that rewrote nothing, after a merge: nothing to count or write
    (files,) = connection.execute("SELECT count(*) FROM files").fetchone()
    if not tally.interrupted and rewritten * REWRITTEN_SHARE >= files:
        connection.execute("INSERT INTO entry_text (entry_text) VALUES ('optimize')")
        rewritten = 0
    if rewritten != stored:
        write_meta(connection, REWRITTEN, str(rewritten))


def full_cursor(connection: sqlite3.Connection, file_id: int) -> sqlite3.Row:
    """Every stored column of a file's cursor row."""
    connection.row_factory = sqlite3.Row
    try:
        return connection.execute("SELECT * FROM files WHERE id = ?", (file_id,)).fetchone()
    finally:
        connection.row_factory = None


def store_cursor(
    connection: sqlite3.Connection,
    unit: Unit,
    file_id: int | None,
    signature: FileSignature,
    outcome: ParseOutcome,
    digest: str | None,
    skipped: Mapping[str, int],
) -> int:
    """Write the cursor a parse leaves, with the file's `skipped` counts (call inside `atomic()`): a
    new row when `file_id` is None. Returns the file's id."""
    values = {
        **_file_identity(unit, signature),
        "end_offset": outcome.end_offset,
        "prefix_digest": digest,
        "resumable": int(outcome.resumable),
        "resume_state": encode_resume(outcome.resume) if outcome.resumable else None,
        "format_version": outcome.format_version,
        "skipped_by_reason": encode_counts(skipped),
        "skipped_total": sum(skipped.values()),
        "failure": None,
        "indexed_at": time.time(),
    }
    return _upsert_file(connection, file_id, values)


def record_failure(
    connection: sqlite3.Connection, unit: Unit, known: sqlite3.Row | None, signature: FileSignature, code: str
) -> None:
    """Remember the failure with the signature it happened at; the file is retried once it changes."""
    values = {
        **_file_identity(unit, signature),
        "end_offset": 0,
        "prefix_digest": None,
        "resumable": 0,
        "resume_state": None,
        "failure": code[:80],
        "indexed_at": time.time(),
    }
    with atomic(connection):
        _upsert_file(connection, None if known is None else known["id"], values)


def _file_identity(unit: Unit, signature: FileSignature) -> dict[str, object]:
    """The `files` columns that name a session file and the signature it was read at."""
    return {
        "source": unit.source,
        "root": unit.root,
        "path": unit.path,
        "signature": signature.digest,
        "device": signature.device,
        "inode": signature.inode,
        "size": signature.size,
        "mtime_ns": signature.mtime_ns,
        "ctime_ns": signature.ctime_ns,
    }


def _upsert_file(connection: sqlite3.Connection, file_id: int | None, values: dict[str, object]) -> int:
    names = [quote_identifier(name) for name in values]
    if file_id is None:
        placeholders = ", ".join("?" for _ in names)
        cursor = connection.execute(
            f"INSERT INTO files ({', '.join(names)}) VALUES ({placeholders})", tuple(values.values())
        )
        return int(cursor.lastrowid or 0)
    assignments = ", ".join(f"{name} = ?" for name in names)
    connection.execute(f"UPDATE files SET {assignments} WHERE id = ?", (*values.values(), file_id))
    return file_id


def delete_gone(connection: sqlite3.Connection, scanned: ScannedRoots, known: dict[str, Known], tally: Tally) -> None:
    """Remove the rows of stored files the scan no longer found, under roots it listed fully."""
    seen = {unit.path for unit in scanned.units}
    listed = set(scanned.listed)
    for path, row in known.items():
        if path not in seen and (row.source, row.root) in listed:
            with atomic(connection):
                delete_file_rows(connection, row.id)
                connection.execute("DELETE FROM files WHERE id = ?", (row.id,))
            tally.deleted += 1
            tally.changes.append(f"deleted:{path}")


def count(
    tally: Tally,
    known: sqlite3.Row | None,
    start: int,
    signature: FileSignature,
    skipped: int,
    counts: WriteCounts,
    unit: Unit,
) -> None:
    """Add one written unit to the tally (`skipped`: the records its parse skipped)."""
    if known is None:
        tally.added += 1
    elif start:
        tally.appended += 1
    else:
        tally.reread += 1
    tally.bytes_read += max(0, signature.size - start)
    tally.skipped += skipped
    for name in ("messages", "tool_calls", "summaries"):
        setattr(tally.rows, name, getattr(tally.rows, name) + getattr(counts, name))
    written = counts.messages + counts.tool_calls + counts.summaries
    if known is None or not start or written:
        tally.changes.append(f"{'append' if start else 'read'}:{unit.path}:{signature.digest}:{written}")


def finish(
    connection: sqlite3.Connection,
    scanned: ScannedRoots,
    listings: Listings,
    tally: Tally,
    seconds: float,
    mark: str | None = None,
) -> RefreshReport:
    """Write what the refresh ends with, seal the index (`mark`: the token of the refresh's
    `writing` mark) and report."""
    with atomic(connection):
        save_listings(connection, listings, [root for _, root in scanned.listed])
        revision = _end_revision(connection, scanned, tally)
        _merge_if_rewritten(connection, tally)
    seal(connection, mark)  # a clean end: later opens trust the file as it now is
    unreadable = sum(state == "unreadable" for state in scanned.states.values())
    damaged = any(has_damaged_files(connection, source, root) for source, root in scanned.states)
    return RefreshReport(
        roots=len(scanned.states),
        unreadable_roots=unreadable,
        files_seen=len(scanned.units),
        files_unchanged=tally.unchanged,
        files_added=tally.added,
        files_appended=tally.appended,
        files_reread=tally.reread,
        files_deleted=tally.deleted,
        files_failed=tally.failed,
        bytes_read=tally.bytes_read,
        messages_written=tally.rows.messages,
        tool_calls_written=tally.rows.tool_calls,
        summaries_written=tally.rows.summaries,
        skipped_records=tally.skipped,
        parser_workers=tally.parser_workers,
        files_parsed_ahead=tally.parsed_ahead,
        index_revision=revision.text,
        content_changed=bool(tally.changes),
        freshness=_freshness(scanned, tally, damaged=damaged),
        seconds=round(seconds, 6),
    )


def _end_revision(connection: sqlite3.Connection, scanned: ScannedRoots, tally: Tally) -> Revision:
    """The revision the refresh leaves (advanced when content changed); a complete refresh also
    records its roots as refreshed and its scan (call inside `atomic()`)."""
    now = time.time()
    if not tally.interrupted:
        for (source, root), state in scanned.states.items():
            connection.execute(
                "INSERT INTO roots (source, path, state, refreshed_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (source, path) DO UPDATE SET state = excluded.state,"
                " refreshed_at = excluded.refreshed_at",
                (source, root, state, now),
            )
        write_meta(connection, "last_refresh_at", repr(now))
    if tally.changes:
        change_digest = hashlib.sha256("\n".join(sorted(tally.changes)).encode("utf-8", "replace")).hexdigest()
        revision = advance_revision(connection, change_digest)
    else:
        revision = current_revision(connection)
    if not tally.interrupted:
        _remember_scan(connection, scanned, revision, tally)
    return revision


def _freshness(scanned: ScannedRoots, tally: Tally, *, damaged: bool) -> Freshness:
    if tally.interrupted:
        return "stale"
    if scanned.unlisted or tally.failed or damaged:
        return "incomplete"
    return "fresh"


def _remember_scan(connection: sqlite3.Connection, scanned: ScannedRoots, revision: Revision, tally: Tally) -> None:
    """Store what the next refresh compares its scan with (call inside `atomic()`, after a complete refresh)."""
    unchanged = sum(unit.signature is not None for unit in scanned.units)
    write_meta(connection, LAST_SCAN, f"{revision.text} {scan_digest(scanned)} {unchanged} {tally.failed}")
    states = [(source, root, state) for (source, root), state in scanned.states.items()]
    write_meta(connection, LAST_SCANNED_ROOTS, scanned_roots_key(revision.text, states))
