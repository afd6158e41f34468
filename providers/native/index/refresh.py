"""Incremental refresh: read only what changed in the session roots since the last refresh.

Per unit (a session file, or a Kimi session folder), the stored cursor decides the work:
unchanged signature -> nothing is read; same inode, grown, and every byte before the cursor
intact (a `sha256` of the whole prefix, so an in-place edit hidden behind an append is seen) ->
only the new bytes are parsed, from the last complete line; shrunk, replaced, rewritten or not
resumable -> that unit alone is re-read and its rows replaced; gone -> its rows are removed; no
longer a file (a folder, a pipe, a dangling link) -> its rows are removed and it counts as failed.
A root that is missing or cannot be listed keeps its rows and makes the refresh `incomplete`.
A half-written last line is never consumed (the parsers stop before it). Each unit is written in
its own transaction, so a reader sees every file either before or after its update. A file is
parsed a chunk at a time (`chunked`), each chunk's rows written before the next is read.

This module decides each unit's work and parses it; `refresh_writes` writes the outcome.
"""

import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.contracts.index_status import RefreshReport
from obelisk_session_evidence.providers.native.index.changes import (
    Known,
    ScannedRoots,
    Unit,
    known_files,
    same_scan_as_last,
    scan_roots,
)
from obelisk_session_evidence.providers.native.index.chunked import (
    PARSE_CHUNK_BYTES,
    ParseFailed,
    has_more,
    named_so_far,
    parse_chunk,
)
from obelisk_session_evidence.providers.native.index.cursor import (
    FileSignature,
    PrefixDigest,
    decode_counts,
    decode_resume,
    prefix_digest,
)
from obelisk_session_evidence.providers.native.index.deferred_indexes import (
    defer_indexes,
    is_first_build,
    restore_indexes,
)
from obelisk_session_evidence.providers.native.index.integrity import is_damage, mark_writing
from obelisk_session_evidence.providers.native.index.listings import load_listings
from obelisk_session_evidence.providers.native.index.parse_ahead import Job, ParsedAhead, worker_count
from obelisk_session_evidence.providers.native.index.refresh_writes import (
    UNREADABLE,
    Tally,
    count,
    delete_gone,
    finish,
    full_cursor,
    record_failure,
    store_cursor,
)
from obelisk_session_evidence.providers.native.index.repository import RESOLUTION_VERSION, RepositoryResolver
from obelisk_session_evidence.providers.native.index.revision import read_meta, write_meta
from obelisk_session_evidence.providers.native.index.roots import Roots
from obelisk_session_evidence.providers.native.index.rows import OutcomeWriter, WriteCounts, delete_file_rows
from obelisk_session_evidence.providers.native.index.store import (
    atomic,
    connect,
    discard,
    index_errors,
    writer_lock,
)
from obelisk_session_evidence.providers.native.parsers import ParseOutcome
from obelisk_session_evidence.providers.native.parsers.outcome import ResumeState

Progress = Callable[[int, int], None]
"""Called with (units done, units total) as a refresh proceeds."""


def refresh_index(
    index_path: Path | str,
    roots: Roots,
    *,
    progress: Progress | None = None,
    wait_s: float | None = None,
    workers: int | None = None,
    chunk_bytes: int = PARSE_CHUNK_BYTES,
) -> RefreshReport:
    """Bring the index at `index_path` up to date with `roots`, waiting for any other writer first.

    `workers`: parser processes for new files; None lets `worker_count` decide from the new bytes
    and the free cores. A session file is parsed at most `chunk_bytes` at a time (`chunked`),
    whatever its size.
    """
    with writer_lock(index_path, wait_s=wait_s) as acquired:
        if not acquired:
            raise IndexUnavailable("refresh_busy")
        try:
            return _refresh_open(index_path, roots, progress, workers, chunk_bytes)
        except IndexUnavailable as error:
            if not is_damage(error):
                raise
        # The repair: a damaged index is rebuilt from the session files, which are the truth.
        with index_errors():
            discard(index_path)
        return _refresh_open(index_path, roots, progress, workers, chunk_bytes)


def _refresh_open(
    index_path: Path | str, roots: Roots, progress: Progress | None, workers: int | None, chunk_bytes: int
) -> RefreshReport:
    connection = connect(index_path, holds_writer_lock=True)
    try:
        return refresh_locked(connection, roots, progress=progress, workers=workers, chunk_bytes=chunk_bytes)
    finally:
        connection.close()


def refresh_locked(
    connection: sqlite3.Connection,
    roots: Roots,
    *,
    progress: Progress | None = None,
    resolver: RepositoryResolver | None = None,
    budget_s: float | None = None,
    workers: int | None = None,
    chunk_bytes: int = PARSE_CHUNK_BYTES,
) -> RefreshReport:
    """Refresh through an open connection; the caller holds the writer lock.

    With `budget_s`, no further unit is started once the budget is spent: what was written stays
    (each unit is its own transaction), the roots do not count as refreshed, the report says
    `stale`, and the next refresh carries on where this one stopped. `workers` and `chunk_bytes` as
    for `refresh_index`.
    """
    started = time.monotonic()
    with index_errors():
        mark = mark_writing(connection)  # sealed again at the end (`finish`); a death in between is checked
        restore_indexes(connection)  # a first build that died midway left them out
        listings = load_listings(connection, now_ns=time.time_ns())
        scanned = scan_roots(roots, listings)
        tally = Tally()
        resolver = resolver or RepositoryResolver()
        resolve_again_if_outdated(connection, resolver)
        repeated = same_scan_as_last(connection, scanned)
        if repeated is not None:
            tally.unchanged, tally.failed = repeated
            if progress is not None:
                progress(len(scanned.units), len(scanned.units))
            return finish(connection, scanned, listings, tally, time.monotonic() - started, mark)
        known = known_files(connection, scanned)
        deadline = None if budget_s is None else started + budget_s
        writer = OutcomeWriter(connection, resolver)
        _refresh_units(connection, writer, scanned, known, tally, progress, deadline, workers, chunk_bytes)
        restore_indexes(connection)
        delete_gone(connection, scanned, known, tally)
        return finish(connection, scanned, listings, tally, time.monotonic() - started, mark)


def resolve_again_if_outdated(connection: sqlite3.Connection, resolver: RepositoryResolver) -> None:
    """Resolve every stored session's and call's cwd again when the rows were resolved by other
    rules (`RESOLUTION_VERSION`): one lookup per distinct cwd, not a re-read of the sessions."""
    if read_meta(connection, "repository_resolution") == RESOLUTION_VERSION:
        return
    cwds = [cwd for (cwd,) in connection.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL")]
    calls = connection.execute("SELECT entry_id, cwd FROM call_details WHERE cwd IS NOT NULL").fetchall()
    with atomic(connection):
        for cwd in cwds:
            connection.execute(
                "UPDATE sessions SET checkout_root = ?, repository_identity = ? WHERE cwd = ?",
                (*resolver.resolve(cwd), cwd),
            )
        connection.executemany(
            "UPDATE call_details SET checkout_root = ?, repository_identity = ? WHERE entry_id = ?",
            ((*resolver.resolve(cwd), entry_id) for entry_id, cwd in calls),
        )
        write_meta(connection, "repository_resolution", RESOLUTION_VERSION)


def _new_units(scanned: ScannedRoots, known: dict[str, Known], chunk_bytes: int) -> list[Job]:
    """The units no cursor knows yet, in refresh order, that one parse reads whole, so they may be
    parsed ahead (a larger file is parsed here, a chunk at a time: a worker would hold it whole)."""
    return [
        (unit.path, unit.source, unit.signature.size)
        for unit in scanned.units
        if unit.signature is not None and unit.path not in known and unit.signature.size <= chunk_bytes
    ]


def _refresh_units(
    connection: sqlite3.Connection,
    writer: OutcomeWriter,
    scanned: ScannedRoots,
    known: dict[str, Known],
    tally: Tally,
    progress: Progress | None,
    deadline: float | None,
    workers: int | None,
    chunk_bytes: int,
) -> None:
    """Refresh each unit in scan order, new ones parsed ahead by workers, until `deadline`."""
    jobs = _new_units(scanned, known, chunk_bytes)
    if jobs and is_first_build(connection):
        defer_indexes(connection)
    with ParsedAhead(jobs, worker_count(jobs) if workers is None else workers) as ahead:
        tally.parser_workers = ahead.started
        for done, unit in enumerate(scanned.units, start=1):
            if deadline is not None and time.monotonic() > deadline:
                tally.interrupted = True
                break
            _refresh_unit(connection, writer, unit, known.get(unit.path), tally, ahead, chunk_bytes)
            if progress is not None:
                progress(done, len(scanned.units))
        tally.parsed_ahead = ahead.delivered


def _refresh_unit(
    connection: sqlite3.Connection,
    writer: OutcomeWriter,
    unit: Unit,
    stored: Known | None,
    tally: Tally,
    ahead: ParsedAhead,
    chunk_bytes: int,
) -> None:
    signature = unit.signature
    if signature is None:
        _not_a_file(connection, unit, stored, tally)
        return
    if stored is not None and stored.signature == signature.digest:
        tally.unchanged += 1
        tally.failed += stored.failure is not None
        return
    known = None if stored is None else full_cursor(connection, stored.id)
    try:
        start, skipped, counts = _parse_and_write(
            connection, writer, unit, known, signature, ahead if stored is None else None, chunk_bytes
        )
    except ParseFailed as failure:
        record_failure(connection, unit, known, signature, failure.code)
        tally.failed += 1
        tally.changes.append(f"failed:{unit.path}:{signature.digest}")
        return
    count(tally, known, start, signature, sum(skipped.values()), counts, unit)


def _not_a_file(connection: sqlite3.Connection, unit: Unit, stored: Known | None, tally: Tally) -> None:
    """No session file at this name any more: a folder, a named pipe or device, a dangling or looping
    link, or gone since the listing. Its old rows go (they would still be found, as if current), and
    it is remembered as failed, so freshness stays `incomplete` until a file is back."""
    tally.failed += 1
    if stored is not None and stored.signature == UNREADABLE.digest:
        return
    known = None if stored is None else full_cursor(connection, stored.id)
    with atomic(connection):
        if known is not None:
            delete_file_rows(connection, known["id"], keep_sessions=True)
        record_failure(connection, unit, known, UNREADABLE, "not_a_file")
    tally.changes.append(f"failed:{unit.path}:{UNREADABLE.digest}")


def _parse_and_write(
    connection: sqlite3.Connection,
    writer: OutcomeWriter,
    unit: Unit,
    known: sqlite3.Row | None,
    signature: FileSignature,
    ahead: ParsedAhead | None,
    chunk_bytes: int,
) -> tuple[int, Counter[str], WriteCounts]:
    """Parse and write one unit in one transaction, a chunk at a time (`chunked`): the new bytes of
    an append-only file from its resume point, else the whole file. Returns where reading started,
    the records skipped and the rows written over every chunk. A parse that fails raises
    `ParseFailed` and leaves the unit's rows as they were."""
    start, outcome, verified = _first_chunk(unit, _resume_point(unit, known, signature), ahead, chunk_bytes)
    with atomic(connection):
        file_id = store_cursor(connection, unit, None if known is None else known["id"], signature, outcome, None, {})
        if known is not None and not start:
            delete_file_rows(connection, file_id)
        counts, skipped, chunk_start = WriteCounts(), Counter[str](), start
        while True:
            more = has_more(outcome, chunk_start, chunk_bytes)
            counts += writer.write(file_id, unit.source, named_so_far(outcome, more), fresh=chunk_start == start == 0)
            skipped.update(outcome.skipped_records)
            if not more:
                break
            chunk_start, resume = outcome.end_offset, outcome.resume
            del outcome  # one chunk's records held at a time
            outcome = parse_chunk(unit.path, unit.source, chunk_start, resume, chunk_bytes)
        digest = _cursor_digest(unit, outcome, start, verified)
        in_file = Counter(skipped)  # the cursor counts what earlier refreshes skipped too
        if start and known is not None:
            in_file.update(decode_counts(known["skipped_by_reason"]))
        store_cursor(connection, unit, file_id, signature, outcome, digest, in_file)
    return start, skipped, counts


def _first_chunk(
    unit: Unit,
    resume_point: tuple[int, ResumeState | None, PrefixDigest | None],
    ahead: ParsedAhead | None,
    chunk_bytes: int,
) -> tuple[int, ParseOutcome, PrefixDigest | None]:
    """`(start_offset, first chunk's outcome, verified prefix)`: from the resume point, or from 0 when
    the resumed records belong to another session."""
    start, resume, verified = resume_point
    try:
        outcome = None if ahead is None else ahead.take(unit.path)
    except Exception as error:  # a worker's parse raised: the unit fails as it would have here
        raise ParseFailed(type(error).__name__) from error
    if outcome is None:
        outcome = parse_chunk(unit.path, unit.source, start, resume, chunk_bytes)
    if start and _identity_changed(resume, outcome):
        start, verified = 0, None
        outcome = parse_chunk(unit.path, unit.source, 0, None, chunk_bytes)
    return start, outcome, verified


def _resume_point(
    unit: Unit, known: sqlite3.Row | None, signature: FileSignature
) -> tuple[int, ResumeState | None, PrefixDigest | None]:
    """`(start_offset, resume_state, verified prefix)` where an append-only file can continue, else
    `(0, None, None)`."""
    start_over: tuple[int, ResumeState | None, PrefixDigest | None] = 0, None, None
    if known is None or not _grown_in_place(known, signature):
        return start_over
    offset = known["end_offset"]
    resume = decode_resume(known["resume_state"])
    if resume is None or known["prefix_digest"] is None:
        return start_over
    verified = prefix_digest(unit.path, offset)
    if verified is None or verified.text != known["prefix_digest"]:
        return start_over
    return offset, resume, verified


def _grown_in_place(known: sqlite3.Row, signature: FileSignature) -> bool:
    """True when the stored cursor may continue: a resumable, unfailed file at the same inode that
    grew past the cursor."""
    if signature.is_directory or not known["resumable"] or known["failure"] is not None:
        return False
    same_file = (known["device"], known["inode"]) == (signature.device, signature.inode)
    offset = known["end_offset"]
    return same_file and known["size"] < signature.size and 0 < offset <= signature.size


def _cursor_digest(unit: Unit, outcome: ParseOutcome, start: int, verified: PrefixDigest | None) -> str | None:
    """The prefix digest stored with a resumable file's cursor: the one the parse hashed while reading
    from 0, else `verified` continued over the bytes read since."""
    if not outcome.resumable:
        return None
    if not start and outcome.prefix_sha256 is not None:
        return outcome.prefix_sha256
    try:
        digest = prefix_digest(unit.path, outcome.end_offset, verified)
    except Exception as error:  # the file could not be read again: the unit fails as a parse would
        raise ParseFailed(type(error).__name__) from error
    return None if digest is None else digest.text


def _identity_changed(resume: object, outcome: ParseOutcome) -> bool:
    """A resumed parse that files its records under another session id must re-read the whole file."""
    before = getattr(getattr(resume, "session", None), "session_id", None)
    after = outcome.resume.session.session_id if outcome.resume.session else None
    return before is not None and after is not None and before != after
