"""An index as the release before a migration left it, for tests of what the migration brings."""

import sqlite3
from pathlib import Path

from obelisk_session_evidence.providers.native.index.integrity import seal_file
from obelisk_session_evidence.providers.native.index.store import connect


def before_migration(
    path: Path, migration: str, *, dropped_columns: tuple[str, ...] = (), undo: tuple[str, ...] = ()
) -> None:
    """Drop the `call_details` columns `migration` added, run the `undo` statements that put back
    what it changed otherwise, and drop its record, as the release before it left the index; the
    seal goes too (the file was written by hand, not by a refresh)."""
    connection = sqlite3.connect(path)
    for column in dropped_columns:
        connection.execute(f"ALTER TABLE call_details DROP COLUMN {column}")
    for statement in undo:
        connection.execute(statement)
    connection.execute("DELETE FROM schema_migrations WHERE name = ?", (migration,))
    connection.commit()
    connection.close()
    seal_file(path).unlink()


def stored_as_failures(path: Path, *commands: str) -> None:
    """Store the calls that ran `commands` as failures, as a release before an outcome rule did."""
    connection = connect(path)
    with connection:
        connection.execute(
            "UPDATE entries SET evidence_type = 'prior_failure' WHERE id IN"
            f" (SELECT rowid FROM entry_text WHERE command IN ({', '.join('?' * len(commands))}))",
            commands,
        )
    connection.close()


def evidence_types(path: Path) -> list[tuple[str, str]]:
    """Each stored tool call's command and evidence type, in the order they were stored."""
    connection = connect(path)
    try:
        rows = connection.execute(
            "SELECT t.command, e.evidence_type FROM entries e JOIN entry_text t ON t.rowid = e.id"
            " WHERE e.kind = 'tool_call' ORDER BY e.id"
        )
        return [(command, evidence_type) for command, evidence_type in rows]
    finally:
        connection.close()
