"""The index database: one connection recipe, one transaction helper, one writer lock, one error map.

WAL mode lets readers (lookups) run while a refresh writes; the writer lock (an `flock` on a file
beside the database) keeps two refreshes from interleaving. Every sqlite3 or OS fault inside the
index surfaces as `IndexUnavailable` carrying only the fault's class name (`index_errors`).
"""

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.providers.native.index.schema import apply_migrations, pending_migrations

INDEX_FILE_NAME: Final = "native.sqlite"
"""The index file inside `StatePaths.index_dir`."""
BUSY_TIMEOUT_MS: Final = 5000

LOCK_POLL_S: Final = 0.05
MEMORY: Final = ":memory:"


def index_file(index_dir: Path) -> Path:
    """Where the native index lives inside the state directory's index folder."""
    return Path(index_dir) / INDEX_FILE_NAME


def quote_identifier(name: str) -> str:
    """`name` as an SQL identifier: double-quoted, inner quotes doubled (the only way names enter SQL)."""
    return '"' + name.replace('"', '""') + '"'


def connect(index_path: Path | str) -> sqlite3.Connection:
    """Open (creating if needed) the index at `index_path`, in WAL mode, migrated to the latest schema.

    Pass `":memory:"` for a private in-memory index (tests). Transactions are explicit: the
    connection runs in autocommit mode and `atomic()` opens them.
    """
    with index_errors():
        if str(index_path) != MEMORY:
            _prepare_private_file(Path(index_path))
        connection = sqlite3.connect(str(index_path), isolation_level=None, check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if str(index_path) != MEMORY:
                connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA temp_store = MEMORY")
            if pending_migrations(connection):
                # Only a schema change takes the write lock: opening a current index never
                # waits for a refresh in progress.
                with atomic(connection):
                    apply_migrations(connection)
        except BaseException:
            connection.close()
            raise
        return connection


def _prepare_private_file(path: Path) -> None:
    """The index holds private text: its folder is 0700 and its files 0600."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        descriptor = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(descriptor)


@contextlib.contextmanager
def atomic(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run the block in one transaction (a savepoint when already inside one).

    The outermost level uses BEGIN IMMEDIATE so the write lock is taken up front: a refresh that
    would otherwise upgrade a read transaction midway could fail with SQLITE_BUSY after work was done.
    """
    with _savepoint(connection) if connection.in_transaction else _transaction(connection):
        yield connection


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        # Also when COMMIT itself failed (a deferred constraint, SQLITE_BUSY): SQLite then keeps
        # the transaction open, and every later block would nest inside it and never commit.
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def _savepoint(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute("SAVEPOINT atomic")
    try:
        yield
    except BaseException:
        # Undo the nested work only; the outer transaction decides about the rest. On some errors
        # (a full disk, an I/O error) SQLite has already rolled the whole transaction back: the
        # savepoint is gone, and undoing it would replace the block's error with "no such savepoint".
        if connection.in_transaction:
            connection.execute("ROLLBACK TO SAVEPOINT atomic")
            connection.execute("RELEASE SAVEPOINT atomic")
        raise
    connection.execute("RELEASE SAVEPOINT atomic")


@contextlib.contextmanager
def index_errors() -> Iterator[None]:
    """Map sqlite3 and OS faults to `IndexUnavailable(<class name>)`; the foreign message is dropped."""
    try:
        yield
    except sqlite3.Error as error:
        raise IndexUnavailable(f"sqlite:{type(error).__name__}") from None
    except OSError as error:
        raise IndexUnavailable(f"os:{type(error).__name__}") from None


@contextlib.contextmanager
def writer_lock(index_path: Path | str, *, wait_s: float | None) -> Iterator[bool]:
    """Hold the index's writer lock; yields False (without waiting) when another writer holds it.

    `wait_s=None` waits as long as it takes; `0` tries once. An in-memory index has no other
    writer, so its lock is always granted.
    """
    if str(index_path) == MEMORY:
        yield True
        return
    lock_path = Path(f"{index_path}.lock")
    with index_errors():
        lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        acquired = _acquire(descriptor, wait_s)
        try:
            yield acquired
        finally:
            if acquired:
                fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def _acquire(descriptor: int, wait_s: float | None) -> bool:
    deadline = None if wait_s is None else time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(LOCK_POLL_S)


def size_on_disk(index_path: Path | str) -> int:
    """Bytes of the database and its WAL and shared-memory files."""
    if str(index_path) == MEMORY:
        return 0
    total = 0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            total += os.stat(f"{index_path}{suffix}").st_size
    return total
