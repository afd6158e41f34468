"""Incremental refresh: read only what changed in the session roots since the last refresh.

Per unit (a session file, or a Kimi session folder), the stored cursor decides the work:
unchanged signature -> nothing is read; same inode, grown, and every byte before the cursor
intact (a `sha256` of the whole prefix, so an in-place edit hidden behind an append is seen) ->
only the new bytes are parsed, from the last complete line; shrunk, replaced, rewritten or not
resumable -> that unit alone is re-read and its rows replaced; gone -> its rows are removed; no
longer a file (a folder, a pipe, a dangling link) -> its rows are removed and it counts as failed.
A root that is missing or cannot be listed keeps its rows and makes the refresh `incomplete`.
A half-written last line is never consumed (the parsers stop before it). Each unit is written in
its own transaction, so a reader sees every file either before or after its update.
"""

import hashlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.contracts.index_status import RefreshReport
from obelisk_session_evidence.providers.native.index.changes import (
    LAST_SCAN,
    Known,
    ScannedRoots,
    Unit,
    known_files,
    same_scan_as_last,
    scan_digest,
    scan_roots,
)
from obelisk_session_evidence.providers.native.index.cursor import (
    FileSignature,
    PrefixDigest,
    decode_counts,
    decode_resume,
    encode_counts,
    encode_resume,
    has_damaged_files,
    prefix_digest,
)
from obelisk_session_evidence.providers.native.index.deferred_indexes import (
    defer_indexes,
    is_first_build,
    restore_indexes,
)
from obelisk_session_evidence.providers.native.index.integrity import is_damage, mark_writing, seal
from obelisk_session_evidence.providers.native.index.listings import Listings, load_listings, save_listings
from obelisk_session_evidence.providers.native.index.parse_ahead import Job, ParsedAhead, worker_count
from obelisk_session_evidence.providers.native.index.repository import RESOLUTION_VERSION, RepositoryResolver
from obelisk_session_evidence.providers.native.index.revision import (
    Revision,
    advance_revision,
    current_revision,
    read_meta,
    write_meta,
)
from obelisk_session_evidence.providers.native.index.roots import Roots
from obelisk_session_evidence.providers.native.index.rows import OutcomeWriter, WriteCounts, delete_file_rows
from obelisk_session_evidence.providers.native.index.store import (
    atomic,
    connect,
    discard,
    index_errors,
    quote_identifier,
    writer_lock,
)
from obelisk_session_evidence.providers.native.parsers import ParseOutcome, parse_session_file
from obelisk_session_evidence.providers.native.parsers.outcome import ResumeState

Progress = Callable[[int, int], None]
"""Called with (units done, units total) as a refresh proceeds."""
UNREADABLE = FileSignature(0, 0, 0, 0, 0, "unreadable", False)
"""The signature stored for a unit that could not be `stat`ed or is not a regular file."""


@dataclass(slots=True)
class _Tally:
    """Counters that become the `RefreshReport`."""

    unchanged: int = 0
    added: int = 0
    appended: int = 0
    reread: int = 0
    deleted: int = 0
    failed: int = 0
    bytes_read: int = 0
    skipped: int = 0
    rows: WriteCounts = field(default_factory=WriteCounts)
    changes: list[str] = field(default_factory=list)
    interrupted: bool = False
    """The time budget ran out before every unit was looked at."""


def refresh_index(
    index_path: Path | str, roots: Roots, *, progress: Progress | None = None, wait_s: float | None = None
) -> RefreshReport:
    """Bring the index at `index_path` up to date with `roots`, waiting for any other writer first."""
    with writer_lock(index_path, wait_s=wait_s) as acquired:
        if not acquired:
            raise IndexUnavailable("refresh_busy")
        try:
            return _refresh_open(index_path, roots, progress)
        except IndexUnavailable as error:
            if not is_damage(error):
                raise
        # The repair: a damaged index is rebuilt from the session files, which are the truth.
        with index_errors():
            discard(index_path)
        return _refresh_open(index_path, roots, progress)


def _refresh_open(index_path: Path | str, roots: Roots, progress: Progress | None) -> RefreshReport:
    connection = connect(index_path, holds_writer_lock=True)
    try:
        return refresh_locked(connection, roots, progress=progress)
    finally:
        connection.close()


def refresh_locked(
    connection: sqlite3.Connection,
    roots: Roots,
    *,
    progress: Progress | None = None,
    resolver: RepositoryResolver | None = None,
    budget_s: float | None = None,
) -> RefreshReport:
    """Refresh through an open connection; the caller holds the writer lock.

    With `budget_s`, no further unit is started once the budget is spent: what was written stays
    (each unit is its own transaction), the roots do not count as refreshed, the report says
    `stale`, and the next refresh carries on where this one stopped.
    """
    started = time.monotonic()
    with index_errors():
        mark_writing(connection)  # sealed again at the end (`_finish`); a death in between is checked
        restore_indexes(connection)  # a first build that died midway left them out
        listings = load_listings(connection, now_ns=time.time_ns())
        scanned = scan_roots(roots, listings)
        tally = _Tally()
        resolver = resolver or RepositoryResolver()
        resolve_again_if_outdated(connection, resolver)
        repeated = same_scan_as_last(connection, scanned)
        if repeated is not None:
            tally.unchanged, tally.failed = repeated
            if progress is not None:
                progress(len(scanned.units), len(scanned.units))
            return _finish(connection, scanned, listings, tally, time.monotonic() - started)
        writer = OutcomeWriter(connection, resolver)
        known = known_files(connection, scanned)
        seen = {unit.path for unit in scanned.units}
        total = len(scanned.units)
        jobs = _new_units(scanned, known)
        if jobs and is_first_build(connection):
            defer_indexes(connection)
        with ParsedAhead(jobs, worker_count(jobs)) as ahead:
            for done, unit in enumerate(scanned.units, start=1):
                if budget_s is not None and time.monotonic() - started > budget_s:
                    tally.interrupted = True
                    break
                _refresh_unit(connection, writer, unit, known.get(unit.path), tally, ahead)
                if progress is not None:
                    progress(done, total)
        restore_indexes(connection)
        listed = set(scanned.listed)
        for path, row in known.items():
            if path not in seen and (row.source, row.root) in listed:
                with atomic(connection):
                    delete_file_rows(connection, row.id)
                    connection.execute("DELETE FROM files WHERE id = ?", (row.id,))
                tally.deleted += 1
                tally.changes.append(f"deleted:{path}")
        return _finish(connection, scanned, listings, tally, time.monotonic() - started)


def resolve_again_if_outdated(connection: sqlite3.Connection, resolver: RepositoryResolver) -> None:
    """Resolve every stored session's cwd again when the rows were resolved by other rules
    (`RESOLUTION_VERSION`): one lookup per distinct cwd, not a re-read of the sessions."""
    if read_meta(connection, "repository_resolution") == RESOLUTION_VERSION:
        return
    cwds = [cwd for (cwd,) in connection.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL")]
    with atomic(connection):
        for cwd in cwds:
            connection.execute(
                "UPDATE sessions SET checkout_root = ?, repository_identity = ? WHERE cwd = ?",
                (*resolver.resolve(cwd), cwd),
            )
        write_meta(connection, "repository_resolution", RESOLUTION_VERSION)


def _new_units(scanned: ScannedRoots, known: dict[str, Known]) -> list[Job]:
    """The units no cursor knows yet, in refresh order: each is parsed whole, so it may be parsed ahead."""
    return [
        (unit.path, unit.source, unit.signature.size)
        for unit in scanned.units
        if unit.signature is not None and unit.path not in known
    ]


def _full_cursor(connection: sqlite3.Connection, file_id: int) -> sqlite3.Row:
    connection.row_factory = sqlite3.Row
    try:
        return connection.execute("SELECT * FROM files WHERE id = ?", (file_id,)).fetchone()
    finally:
        connection.row_factory = None


def _refresh_unit(
    connection: sqlite3.Connection,
    writer: OutcomeWriter,
    unit: Unit,
    stored: Known | None,
    tally: _Tally,
    ahead: ParsedAhead,
) -> None:
    signature = unit.signature
    if signature is None:
        # No session file at this name any more: a folder, a named pipe or device, a dangling or looping
        # link, or gone since the listing. Its old rows go (they would still be found, as if current),
        # and it is remembered as failed, so freshness stays `incomplete` until a file is back.
        tally.failed += 1
        if stored is None or stored.signature != UNREADABLE.digest:
            known = None if stored is None else _full_cursor(connection, stored.id)
            with atomic(connection):
                if known is not None:
                    delete_file_rows(connection, known["id"], keep_sessions=True)
                _record_failure(connection, unit, known, UNREADABLE, "not_a_file")
            tally.changes.append(f"failed:{unit.path}:{UNREADABLE.digest}")
        return
    if stored is not None and stored.signature == signature.digest:
        tally.unchanged += 1
        tally.failed += stored.failure is not None
        return
    known = None if stored is None else _full_cursor(connection, stored.id)
    start, resume, verified = _resume_point(unit, known, signature)
    try:
        outcome = ahead.take(unit.path) if stored is None else None
        if outcome is None:
            outcome = parse_session_file(Path(unit.path), unit.source, start_offset=start, resume=resume)
        if start and _identity_changed(resume, outcome):
            start, verified, outcome = 0, None, parse_session_file(Path(unit.path), unit.source)
        digest = _cursor_digest(unit, outcome, start, verified)
    except Exception as error:
        _record_failure(connection, unit, known, signature, type(error).__name__)
        tally.failed += 1
        tally.changes.append(f"failed:{unit.path}:{signature.digest}")
        return
    with atomic(connection):
        file_id = _store_cursor(connection, unit, known, signature, outcome, digest, appended=bool(start))
        if known is not None and not start:
            delete_file_rows(connection, file_id)
        counts = writer.write(file_id, unit.source, outcome, fresh=not start)
    _count(tally, known, start, signature, outcome, counts, unit)


def _resume_point(
    unit: Unit, known: sqlite3.Row | None, signature: FileSignature
) -> tuple[int, ResumeState | None, PrefixDigest | None]:
    """`(start_offset, resume_state, verified prefix)` where an append-only file can continue, else
    `(0, None, None)`."""
    start_over: tuple[int, ResumeState | None, PrefixDigest | None] = 0, None, None
    if known is None or signature.is_directory or not known["resumable"] or known["failure"] is not None:
        return start_over
    same_file = (known["device"], known["inode"]) == (signature.device, signature.inode)
    offset = known["end_offset"]
    if not same_file or signature.size <= known["size"] or offset > signature.size or offset <= 0:
        return start_over
    resume = decode_resume(known["resume_state"])
    if resume is None or known["prefix_digest"] is None:
        return start_over
    verified = prefix_digest(unit.path, offset)
    if verified is None or verified.text != known["prefix_digest"]:
        return start_over
    return offset, resume, verified


def _cursor_digest(unit: Unit, outcome: ParseOutcome, start: int, verified: PrefixDigest | None) -> str | None:
    """The prefix digest stored with a resumable file's cursor: the one the parse hashed while reading
    from 0, else `verified` continued over the appended bytes."""
    if not outcome.resumable:
        return None
    if not start and outcome.prefix_sha256 is not None:
        return outcome.prefix_sha256
    digest = prefix_digest(unit.path, outcome.end_offset, verified)
    return None if digest is None else digest.text


def _identity_changed(resume: object, outcome: ParseOutcome) -> bool:
    """A resumed parse that files its records under another session id must re-read the whole file."""
    before = getattr(getattr(resume, "session", None), "session_id", None)
    after = outcome.resume.session.session_id if outcome.resume.session else None
    return before is not None and after is not None and before != after


def _store_cursor(
    connection: sqlite3.Connection,
    unit: Unit,
    known: sqlite3.Row | None,
    signature: FileSignature,
    outcome: ParseOutcome,
    digest: str | None,
    *,
    appended: bool,
) -> int:
    skipped = dict(outcome.skipped_records)
    if appended and known is not None:
        for reason, count in decode_counts(known["skipped_by_reason"]).items():
            skipped[reason] = skipped.get(reason, 0) + count
    values = {
        "source": unit.source,
        "root": unit.root,
        "path": unit.path,
        "signature": signature.digest,
        "device": signature.device,
        "inode": signature.inode,
        "size": signature.size,
        "mtime_ns": signature.mtime_ns,
        "ctime_ns": signature.ctime_ns,
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
    return _upsert_file(connection, known, values)


def _record_failure(
    connection: sqlite3.Connection, unit: Unit, known: sqlite3.Row | None, signature: FileSignature, code: str
) -> None:
    """Remember the failure with the signature it happened at; the file is retried once it changes."""
    values = {
        "source": unit.source,
        "root": unit.root,
        "path": unit.path,
        "signature": signature.digest,
        "device": signature.device,
        "inode": signature.inode,
        "size": signature.size,
        "mtime_ns": signature.mtime_ns,
        "ctime_ns": signature.ctime_ns,
        "end_offset": 0,
        "prefix_digest": None,
        "resumable": 0,
        "resume_state": None,
        "failure": code[:80],
        "indexed_at": time.time(),
    }
    with atomic(connection):
        _upsert_file(connection, known, values)


def _upsert_file(connection: sqlite3.Connection, known: sqlite3.Row | None, values: dict[str, object]) -> int:
    names = [quote_identifier(name) for name in values]
    if known is None:
        placeholders = ", ".join("?" for _ in names)
        cursor = connection.execute(
            f"INSERT INTO files ({', '.join(names)}) VALUES ({placeholders})", tuple(values.values())
        )
        return int(cursor.lastrowid or 0)
    assignments = ", ".join(f"{name} = ?" for name in names)
    connection.execute(f"UPDATE files SET {assignments} WHERE id = ?", (*values.values(), known["id"]))
    return int(known["id"])


def _count(
    tally: _Tally,
    known: sqlite3.Row | None,
    start: int,
    signature: FileSignature,
    outcome: ParseOutcome,
    counts: WriteCounts,
    unit: Unit,
) -> None:
    if known is None:
        tally.added += 1
    elif start:
        tally.appended += 1
    else:
        tally.reread += 1
    tally.bytes_read += max(0, signature.size - start)
    tally.skipped += outcome.skipped_total
    for name in ("messages", "tool_calls", "summaries"):
        setattr(tally.rows, name, getattr(tally.rows, name) + getattr(counts, name))
    written = counts.messages + counts.tool_calls + counts.summaries
    if known is None or not start or written:
        tally.changes.append(f"{'append' if start else 'read'}:{unit.path}:{signature.digest}:{written}")


def _finish(
    connection: sqlite3.Connection, scanned: ScannedRoots, listings: Listings, tally: _Tally, seconds: float
) -> RefreshReport:
    now = time.time()
    with atomic(connection):
        save_listings(connection, listings, [root for _, root in scanned.listed])
        for (source, root), state in scanned.states.items() if not tally.interrupted else ():
            connection.execute(
                "INSERT INTO roots (source, path, state, refreshed_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (source, path) DO UPDATE SET state = excluded.state,"
                " refreshed_at = excluded.refreshed_at",
                (source, root, state, now),
            )
        if not tally.interrupted:
            write_meta(connection, "last_refresh_at", repr(now))
        if tally.changes:
            change_digest = hashlib.sha256("\n".join(sorted(tally.changes)).encode("utf-8", "replace")).hexdigest()
            revision = advance_revision(connection, change_digest)
        else:
            revision = current_revision(connection)
        if not tally.interrupted:
            _remember_scan(connection, scanned, revision, tally)
    seal(connection)  # a clean end: later opens trust the file as it now is
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
        index_revision=revision.text,
        content_changed=bool(tally.changes),
        freshness="stale"
        if tally.interrupted
        else "incomplete"
        if scanned.unlisted or tally.failed or damaged
        else "fresh",
        seconds=round(seconds, 6),
    )


def _remember_scan(connection: sqlite3.Connection, scanned: ScannedRoots, revision: Revision, tally: _Tally) -> None:
    """Store what the next refresh compares its scan with (call inside `atomic()`, after a complete refresh)."""
    unchanged = sum(unit.signature is not None for unit in scanned.units)
    write_meta(connection, LAST_SCAN, f"{revision.text} {scan_digest(scanned)} {unchanged} {tally.failed}")
