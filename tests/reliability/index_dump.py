"""A canonical dump of the native index: what it holds, without rowids, timestamps or inode numbers.

Two indexes built from the same session files must dump equal, however their refreshes went (one
clean build, or a build killed at any point and finished by the next refresh). Lists are sorted,
not de-duplicated, so a doubled row shows up as a difference.
"""

import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FILES = (
    "SELECT path, source, root, size, end_offset, prefix_digest, resumable, format_version,"
    " skipped_by_reason, skipped_total, failure FROM files"
)
_SESSIONS = (
    "SELECT f.path, s.source, s.session_id, s.parent_session_id, s.cwd, s.checkout_root,"
    " s.repository_identity, s.repository_url_key, s.git_branch, s.git_commit, s.started_at,"
    " s.ended_at, s.title FROM sessions s JOIN files f ON f.id = s.file_id"
)
_ENTRIES = (
    "SELECT f.path, s.session_id, e.kind, e.uid, e.evidence_type, e.role, e.tool_name, e.exit_code,"
    " e.is_error, e.observed_at, e.observed_epoch, t.command, t.body, t.detail"
    " FROM entries e JOIN files f ON f.id = e.file_id JOIN sessions s ON s.id = e.session_row"
    " JOIN entry_text t ON t.rowid = e.id"
)


@dataclass(frozen=True)
class IndexDump:
    """The index's content as sorted lists of plain tuples."""

    files: list[tuple[Any, ...]]
    sessions: list[tuple[Any, ...]]
    entries: list[tuple[Any, ...]]
    roots: list[tuple[Any, ...]]

    def differences(self, other: "IndexDump") -> dict[str, int]:
        """Rows per table present in one dump and not the other (a multiset difference)."""
        found = {}
        for name in ("files", "sessions", "entries", "roots"):
            mine, theirs = _counted(getattr(self, name)), _counted(getattr(other, name))
            extra = sum((mine - theirs).values()) + sum((theirs - mine).values())
            if extra:
                found[name] = extra
        return found


def index_dump(connection: sqlite3.Connection) -> IndexDump:
    """The canonical dump of an open index."""
    return IndexDump(
        files=sorted(connection.execute(_FILES).fetchall(), key=repr),
        sessions=sorted(connection.execute(_SESSIONS).fetchall(), key=repr),
        entries=sorted(connection.execute(_ENTRIES).fetchall(), key=repr),
        roots=sorted(connection.execute("SELECT source, path, state FROM roots").fetchall(), key=repr),
    )


def integrity_problems(connection: sqlite3.Connection) -> list[str]:
    """What is wrong with the database file and its full-text index (empty when nothing)."""
    problems = [row[0] for row in connection.execute("PRAGMA integrity_check") if row[0] != "ok"]
    try:
        connection.execute("INSERT INTO entry_text (entry_text) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as error:
        problems.append(f"fts5 integrity-check: {type(error).__name__}")
    orphans = connection.execute(
        "SELECT (SELECT count(*) FROM entry_text WHERE rowid NOT IN (SELECT id FROM entries)),"
        " (SELECT count(*) FROM entries WHERE id NOT IN (SELECT rowid FROM entry_text)),"
        " (SELECT count(*) FROM entries WHERE session_row NOT IN (SELECT id FROM sessions)),"
        " (SELECT count(*) FROM sessions WHERE file_id NOT IN (SELECT id FROM files))"
    ).fetchone()
    for name, count in zip(
        ("text without entry", "entry without text", "entry without session", "session without file"),
        orphans,
        strict=False,
    ):
        if count:
            problems.append(f"{count} {name}")
    return problems


def open_plain(index_path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection (no migrations, no WAL switch) for inspection after a crash."""
    return sqlite3.connect(str(index_path), isolation_level=None)


def _counted(rows: list[tuple[Any, ...]]) -> Counter[str]:
    return Counter(repr(row) for row in rows)
