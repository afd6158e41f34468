"""Parser records to index rows: sessions, entries and their full-text rows, for one file at a time.

Rows belong to the file they were read from, so re-reading or deleting a file touches only its
rows. The same message copied into several files (resumed or forked sessions) is stored once per
file and deduplicated at query time by `(source, kind, uid)`. An incremental parse may emit a
record again with more content (a Claude message receiving blocks, a call receiving its outcome):
it replaces the stored row. Injected (meta) messages are never indexed.
"""

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Final, NamedTuple

from obelisk_session_evidence.contracts.prior_calls import SHELL_TOOL_NAMES
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.fts import command_key, program_of
from obelisk_session_evidence.providers.native.index.repository import RepositoryResolver, normalise_path, url_key
from obelisk_session_evidence.providers.native.parsers import ParseOutcome
from obelisk_session_evidence.providers.native.records import (
    FILE_TOOL_NAMES,
    MessageRecord,
    SessionRecord,
    SummaryRecord,
    ToolCallRecord,
)


class EntryRow(NamedTuple):
    """One searchable row: a message, a tool call or a summary (a named tuple: one per row written,
    and a frozen dataclass's construction costs about four times as much)."""

    session_id: str
    kind: str
    uid: str
    evidence_type: str
    role: str | None
    tool_name: str | None
    exit_code: int | None
    is_error: int | None
    observed_at: str | None
    command: str
    body: str
    detail: str = ""
    """Stored for snippets, not searchable (a successful file tool's output)."""
    files: tuple[str, ...] = ()
    """Files a tool call named (stored in `call_details`, for compare-route's prior calls)."""
    cwd: str | None = None
    """The folder a tool call ran in, where its source records one (stored in `call_details`)."""
    escalated: bool = False
    """A tool call asked to run outside the agent's sandbox (stored in `call_details`)."""


@dataclass(slots=True)
class WriteCounts:
    """Rows written by one outcome."""

    messages: int = 0
    tool_calls: int = 0
    summaries: int = 0

    def __add__(self, other: "WriteCounts") -> "WriteCounts":
        return WriteCounts(
            self.messages + other.messages, self.tool_calls + other.tool_calls, self.summaries + other.summaries
        )


def display_command(call: ToolCallRecord) -> str:
    """How a call reads in a snippet: the shell command itself, or the tool name and its paths or input."""
    name = call.name or "tool"
    lowered = name.lower()
    if lowered in FILE_TOOL_NAMES and call.file_paths:
        return f"{name} {' '.join(call.file_paths)}"
    if lowered in SHELL_TOOL_NAMES and call.command_text:
        return call.command_text
    return f"{name} {call.command_text}" if call.command_text else name


def entry_rows(outcome: ParseOutcome) -> Iterator[EntryRow]:
    """The searchable rows of one parse outcome, in the parser's order."""
    for message in outcome.messages:
        row = _message_row(message)
        if row is not None:
            yield row
    for call in outcome.tool_calls:
        yield _call_row(call)
    for summary in outcome.summaries:
        yield _summary_row(summary)


def _message_row(message: MessageRecord) -> EntryRow | None:
    evidence_type = message.evidence_type
    if evidence_type is None:
        return None
    return EntryRow(
        message.session_id,
        "message",
        message.record_uid,
        evidence_type,
        message.role,
        None,
        None,
        None,
        message.timestamp,
        "",
        message.text,
    )


def _call_row(call: ToolCallRecord) -> EntryRow:
    is_error = None if call.is_error is None else int(call.is_error)
    output = call.output_excerpt or ""
    evidence_type = call.evidence_type
    file_content = evidence_type == "file_history"
    return EntryRow(
        call.session_id,
        "tool_call",
        call.call_id,
        evidence_type,
        None,
        call.name,
        call.exit_code,
        is_error,
        call.timestamp,
        display_command(call),
        "" if file_content else output,
        output if file_content else "",
        call.file_paths,
        normalise_path(call.cwd) if call.cwd else None,
        call.escalated,
    )


def _summary_row(summary: SummaryRecord) -> EntryRow:
    key = "\x1f".join((summary.kind, summary.timestamp or "", summary.text))
    uid = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:32]
    return EntryRow(
        summary.session_id,
        "summary",
        uid,
        summary.evidence_type,
        summary.kind,
        None,
        None,
        None,
        summary.timestamp,
        "",
        summary.text,
    )


def epoch_of(timestamp: str | None) -> float | None:
    """Seconds since the epoch for a parser timestamp (`…Z`); None when absent or malformed."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp).timestamp()
    except ValueError:
        return None


def delete_file_rows(connection: sqlite3.Connection, file_id: int, *, keep_sessions: bool = False) -> None:
    """Remove every row read from one file (its full-text rows, entries and sessions). With
    `keep_sessions`, its sessions' places stay (nothing searchable does), so a file that vanished
    still tells which repositories it can have held (`status.scope_freshness`)."""
    connection.execute("DELETE FROM entry_text WHERE rowid IN (SELECT id FROM entries WHERE file_id = ?)", (file_id,))
    connection.execute(
        "DELETE FROM call_details WHERE entry_id IN (SELECT id FROM entries WHERE file_id = ?)", (file_id,)
    )
    connection.execute(
        "DELETE FROM call_sessions WHERE session_row IN (SELECT id FROM sessions WHERE file_id = ?)", (file_id,)
    )
    connection.execute("DELETE FROM entries WHERE file_id = ?", (file_id,))
    if not keep_sessions:
        connection.execute("DELETE FROM sessions WHERE file_id = ?", (file_id,))


class OutcomeWriter:
    """Writes parse outcomes into the index (call inside `atomic()`, under the writer lock)."""

    def __init__(self, connection: sqlite3.Connection, resolver: RepositoryResolver) -> None:
        self._connection = connection
        self._resolver = resolver

    def write(self, file_id: int, source: SourceKind, outcome: ParseOutcome, *, fresh: bool) -> WriteCounts:
        """Store one outcome; `fresh` says the file has no rows yet (bulk insert, no lookups)."""
        session_rows = {
            session.session_id: self._upsert_session(file_id, source, session) for session in outcome.sessions
        }
        rows = list(_unique(entry_rows(outcome)))
        for session_id in dict.fromkeys(row.session_id for row in rows):  # in the order the rows name them
            if session_id in session_rows:
                continue
            bare = SessionRecord(source=source, session_id=session_id)
            session_rows[session_id] = self._existing_session(file_id, session_id) or self._upsert_session(
                file_id, source, bare
            )
        kinds = Counter(row.kind for row in rows)
        counts = WriteCounts(kinds["message"], kinds["tool_call"], kinds["summary"])
        if fresh:
            self._insert(file_id, rows, session_rows)
        else:
            self._upsert(file_id, rows, session_rows)
        return counts

    def _insert(self, file_id: int, rows: list[EntryRow], session_rows: dict[str, int]) -> None:
        (last,) = self._connection.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()
        ids = range(last + 1, last + 1 + len(rows))
        entries = [_entry_values(i, file_id, r, session_rows) for i, r in zip(ids, rows, strict=False)]
        self._connection.executemany(_INSERT_ENTRY, entries)
        self._connection.executemany(
            _INSERT_TEXT, ((i, r.command, r.body, r.detail) for i, r in zip(ids, rows, strict=False))
        )
        details = [
            _details(entry, r, self._resolver) for entry, r in zip(entries, rows, strict=False) if r.kind == "tool_call"
        ]
        self._connection.executemany(_INSERT_DETAILS, details)
        self._connection.executemany(_UPSERT_CALL_SESSION, _call_sessions(details))

    def _upsert(self, file_id: int, rows: list[EntryRow], session_rows: dict[str, int]) -> None:
        fresh_rows = []
        for row in rows:
            found = self._connection.execute(
                "SELECT id FROM entries WHERE file_id = ? AND kind = ? AND uid = ?", (file_id, row.kind, row.uid)
            ).fetchone()
            if found is None:
                fresh_rows.append(row)
                continue
            entry_id = found[0]
            self._connection.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
            self._connection.execute("DELETE FROM entry_text WHERE rowid = ?", (entry_id,))
            self._connection.execute("DELETE FROM call_details WHERE entry_id = ?", (entry_id,))
            entry = _entry_values(entry_id, file_id, row, session_rows)
            self._connection.execute(_INSERT_ENTRY, entry)
            self._connection.execute(_INSERT_TEXT, (entry_id, row.command, row.body, row.detail))
            if row.kind == "tool_call":
                details = _details(entry, row, self._resolver)
                self._connection.execute(_INSERT_DETAILS, details)
                self._connection.executemany(_UPSERT_CALL_SESSION, _call_sessions([details]))
        self._insert(file_id, fresh_rows, session_rows)

    def _existing_session(self, file_id: int, session_id: str) -> int | None:
        found = self._connection.execute(
            "SELECT id FROM sessions WHERE file_id = ? AND session_id = ?", (file_id, session_id)
        ).fetchone()
        return None if found is None else found[0]

    def _upsert_session(self, file_id: int, source: SourceKind, session: SessionRecord) -> int:
        cwd = normalise_path(session.cwd) if session.cwd else None
        checkout_root, identity = self._resolver.resolve(cwd)
        values = (
            file_id,
            source,
            session.session_id,
            session.parent_session_id,
            cwd,
            checkout_root,
            identity,
            url_key(session.repository_url),
            session.git_branch,
            session.git_commit,
            session.started_at,
            session.ended_at,
            session.title,
        )
        (row_id,) = self._connection.execute(_UPSERT_SESSION, values).fetchone()
        return row_id


_INSERT_ENTRY: Final = (
    "INSERT INTO entries (id, file_id, session_row, kind, uid, evidence_type, role, tool_name, exit_code,"
    " is_error, observed_at, observed_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_TEXT: Final = "INSERT INTO entry_text (rowid, command, body, detail) VALUES (?, ?, ?, ?)"
_UPSERT_CALL_SESSION: Final = (
    "INSERT INTO call_sessions (lane, value, session_row, newest_epoch) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (lane, value, session_row) DO UPDATE SET newest_epoch = max(newest_epoch, excluded.newest_epoch)"
)
_INSERT_DETAILS: Final = (
    "INSERT INTO call_details (entry_id, session_row, program, command_key, observed_epoch, paths, cwd,"
    " checkout_root, repository_identity, escalated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPSERT_SESSION: Final = """
INSERT INTO sessions (file_id, source, session_id, parent_session_id, cwd, checkout_root,
    repository_identity, repository_url_key, git_branch, git_commit, started_at, ended_at, title)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (file_id, session_id) DO UPDATE SET
    parent_session_id = excluded.parent_session_id, cwd = excluded.cwd,
    checkout_root = excluded.checkout_root, repository_identity = excluded.repository_identity,
    repository_url_key = excluded.repository_url_key, git_branch = excluded.git_branch,
    git_commit = excluded.git_commit, started_at = excluded.started_at, ended_at = excluded.ended_at,
    title = excluded.title
RETURNING id
"""


_EntryValues = tuple[
    int, int, int, str, str, str, str | None, str | None, int | None, int | None, str | None, float | None
]
"""An `entries` row (the column order of `_INSERT_ENTRY`)."""


def _entry_values(entry_id: int, file_id: int, row: EntryRow, session_rows: dict[str, int]) -> _EntryValues:
    return (
        entry_id,
        file_id,
        session_rows[row.session_id],
        row.kind,
        row.uid,
        row.evidence_type,
        row.role,
        row.tool_name,
        row.exit_code,
        row.is_error,
        row.observed_at,
        epoch_of(row.observed_at),
    )


class _CallDetails(NamedTuple):
    """A tool call's `call_details` row (the column order of `_INSERT_DETAILS`)."""

    entry_id: int
    session_row: int
    program: str | None
    command_key: str | None
    observed_epoch: float | None
    paths: str
    cwd: str | None
    checkout_root: str | None
    repository_identity: str | None
    escalated: bool


def _details(entry: _EntryValues, row: EntryRow, resolver: RepositoryResolver) -> _CallDetails:
    """A tool call's `call_details` row from its `entries` values: program and command key for shell
    commands only; its own cwd resolved as a session's is (`repository.py`)."""
    shell = (row.tool_name or "").lower() in SHELL_TOOL_NAMES
    program, key = (program_of(row.command), command_key(row.command)) if shell else (None, None)
    entry_id, _, session_row, *_, observed_epoch = entry
    checkout_root, identity = resolver.resolve(row.cwd)
    return _CallDetails(
        entry_id,
        session_row,
        program,
        key,
        observed_epoch,
        "\n".join(row.files),
        row.cwd,
        checkout_root,
        identity,
        row.escalated,
    )


def _call_sessions(details: Iterable[_CallDetails]) -> list[tuple[str, str, int, float]]:
    """`call_sessions` rows: per lane, value and session, the time of the newest run (0 when undated)."""
    newest: dict[tuple[str, str, int], float] = {}
    for call in details:
        for lane, value in (("command_key", call.command_key), ("program", call.program)):
            if value is not None:
                slot = (lane, value, call.session_row)
                newest[slot] = max(newest.get(slot, 0.0), call.observed_epoch or 0.0)
    return [(*slot, epoch) for slot, epoch in newest.items()]


def _unique(rows: Iterable[EntryRow]) -> Iterator[EntryRow]:
    """One row per (kind, uid): a summary repeated verbatim in a file is one summary."""
    seen: set[tuple[str, str]] = set()
    for row in rows:
        key = (row.kind, row.uid)
        if key not in seen:
            seen.add(key)
            yield row
