"""The index database: one connection recipe, one transaction helper, one writer lock, one error map.

WAL mode lets readers (lookups) run while a refresh writes; the writer lock (an `flock` on a file
beside the database) keeps two refreshes from interleaving. Every sqlite3 or OS fault inside the
index surfaces as `IndexUnavailable` carrying only the fault's class name (`index_errors`).
"""

import contextlib
import errno
import fcntl
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.providers.native.index.integrity import (
    DAMAGED,
    REPAIR,
    mark_writing,
    seal,
    seal_file,
    verify,
)
from obelisk_session_evidence.providers.native.index.schema import (
    apply_migrations,
    pending_migrations,
    unknown_migrations,
)

SCHEMA_TOO_NEW: Final = "schema_too_new"
NOT_A_FILE: Final = "index_path_not_a_file"
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


def connect(index_path: Path | str, *, holds_writer_lock: bool = False) -> sqlite3.Connection:
    """Open (creating if needed) the index at `index_path`, in WAL mode, migrated to the latest schema,
    past the integrity guard (`integrity.verify`: a damaged index raises `index_unavailable`).

    Pass `":memory:"` for a private in-memory index (tests). Transactions are explicit: the
    connection runs in autocommit mode and `atomic()` opens them. A caller that holds the writer
    lock says so, so the guard checks rather than leaving the check to the writer.
    """
    with index_errors():
        new = str(index_path) != MEMORY and _prepare_private_file(Path(index_path))
        connection = sqlite3.connect(str(index_path), isolation_level=None, check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if str(index_path) != MEMORY:
                connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA temp_store = MEMORY")
            if unknown_migrations(connection):
                # A newer release wrote this index: its rows may mean something this one cannot read.
                raise IndexUnavailable(f"{SCHEMA_TOO_NEW}; upgrade obelisk-session-evidence or drop the index")
            if str(index_path) != MEMORY:
                busy = not holds_writer_lock and writer_busy(index_path)
                verify(connection, index_path, writer_active=busy, new=new)
            if pending_migrations(connection):
                # Only a schema change takes the write lock: opening a current index never
                # waits for a refresh in progress.
                mark_writing(connection)
                with atomic(connection):
                    apply_migrations(connection)
                seal(connection)
        except BaseException:
            connection.close()
            raise
        return connection


def _prepare_private_file(path: Path) -> bool:
    """The index holds private text: its folder is 0700 and its files 0600. Its folder must be a
    real folder and the index a regular file in it: a link at either place (a dangling one would
    make SQLite create the file wherever it points) is refused, never followed. True for a new
    (empty) file."""
    _real_folder(path.parent)
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise IndexUnavailable(f"{NOT_A_FILE}: the index path is not a regular file") from None
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise IndexUnavailable(f"{NOT_A_FILE}: the index path is not a regular file")
    finally:
        os.close(descriptor)
    return status.st_size == 0


def _real_folder(folder: Path) -> None:
    """Create the index folder if needed; refuse one that is a link (it would put the index elsewhere)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise IndexUnavailable(f"{NOT_A_FILE}: the index folder is a link")


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
        if type(error) is sqlite3.DatabaseError:  # "malformed", "not a database": the file is damaged
            raise IndexUnavailable(f"{DAMAGED}:sqlite:DatabaseError; {REPAIR}") from None
        raise IndexUnavailable(f"sqlite:{type(error).__name__}") from None
    except OSError as error:
        raise IndexUnavailable(f"os:{type(error).__name__}") from None
    except UnicodeError as error:  # text a damaged page no longer decodes (flipped bytes)
        raise IndexUnavailable(f"{DAMAGED}:{type(error).__name__}; {REPAIR}") from None


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
        _real_folder(lock_path.parent)
        descriptor = os.open(lock_path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    try:
        acquired = _acquire(descriptor, wait_s)
        try:
            yield acquired
        finally:
            if acquired:
                fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def writer_busy(index_path: Path | str) -> bool:
    """True while another open file holds the writer lock (a refresh is writing)."""
    try:
        descriptor = os.open(f"{index_path}.lock", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)  # closing the descriptor releases a lock it got
    return False


def discard(index_path: Path | str) -> None:
    """Remove a damaged index and its WAL, shared memory and seal (the caller holds the writer lock)."""
    for path in (Path(index_path), *(Path(f"{index_path}{suffix}") for suffix in ("-wal", "-shm"))):
        path.unlink(missing_ok=True)
    seal_file(index_path).unlink(missing_ok=True)


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
