"""The index revision (a counter and a chained digest) and the other small facts kept in `meta`."""

import hashlib
import sqlite3
from dataclasses import dataclass
from typing import Final

UNKNOWN_REVISION: Final = "unknown"
_GENESIS: Final = hashlib.sha256(b"obelisk-session-evidence native-index").hexdigest()


@dataclass(frozen=True, slots=True)
class Revision:
    """How many content changes the index has seen, and a digest chained over all of them."""

    counter: int
    digest: str

    @property
    def text(self) -> str:
        """`<counter>-<digest prefix>`, the form results carry; `unknown` before the first refresh."""
        return f"{self.counter}-{self.digest[:16]}" if self.counter else UNKNOWN_REVISION


def read_meta(connection: sqlite3.Connection, key: str) -> str | None:
    """One value from `meta`, or None."""
    found = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if found is None else found[0]


def write_meta(connection: sqlite3.Connection, key: str, value: str) -> None:
    """Set one value in `meta` (call inside `atomic()`)."""
    connection.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def current_revision(connection: sqlite3.Connection) -> Revision:
    """The stored revision (counter 0 before any content was indexed)."""
    counter = read_meta(connection, "revision_counter")
    return Revision(int(counter) if counter else 0, read_meta(connection, "revision_digest") or _GENESIS)


def advance_revision(connection: sqlite3.Connection, change_digest: str) -> Revision:
    """Count one content change and chain its digest (call inside `atomic()`)."""
    previous = current_revision(connection)
    digest = hashlib.sha256(f"{previous.digest}:{change_digest}".encode("ascii")).hexdigest()
    revision = Revision(previous.counter + 1, digest)
    write_meta(connection, "revision_counter", str(revision.counter))
    write_meta(connection, "revision_digest", revision.digest)
    return revision
