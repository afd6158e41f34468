"""An index as the release before a migration left it, for tests of what the migration brings."""

import sqlite3
from pathlib import Path

from obelisk_session_evidence.providers.native.index.integrity import seal_file


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
