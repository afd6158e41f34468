"""The connection recipe, named migrations, `atomic()`, the writer lock and the error map."""

import sqlite3
import stat

import pytest

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.providers.native.index.schema import MIGRATIONS, apply_migrations, pending_migrations
from obelisk_session_evidence.providers.native.index.store import (
    atomic,
    connect,
    index_errors,
    index_file,
    quote_identifier,
    size_on_disk,
    writer_lock,
)


def test_connect_records_every_migration_once(tmp_path):
    path = index_file(tmp_path / "index")
    connect(path).close()
    connection = connect(path)
    try:
        names = [row[0] for row in connection.execute("SELECT name FROM schema_migrations ORDER BY name")]
        assert names == [migration.name for migration in MIGRATIONS]
        assert pending_migrations(connection) == []
        with atomic(connection):
            assert apply_migrations(connection) == []
    finally:
        connection.close()


def test_connect_uses_wal_and_private_files(tmp_path):
    path = index_file(tmp_path / "index")
    connection = connect(path)
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        connection.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert size_on_disk(path) >= path.stat().st_size > 0


def test_atomic_rolls_back_everything_on_error(fresh_index):
    with pytest.raises(RuntimeError), atomic(fresh_index):
        fresh_index.execute("INSERT INTO meta (key, value) VALUES ('a', '1')")
        raise RuntimeError("stop")
    assert fresh_index.execute("SELECT count(*) FROM meta").fetchone() == (0,)


def test_atomic_nested_rolls_back_only_the_inner_block(fresh_index):
    with atomic(fresh_index):
        fresh_index.execute("INSERT INTO meta (key, value) VALUES ('outer', '1')")
        with pytest.raises(RuntimeError), atomic(fresh_index):
            fresh_index.execute("INSERT INTO meta (key, value) VALUES ('inner', '1')")
            raise RuntimeError("stop")
    assert fresh_index.execute("SELECT key FROM meta").fetchall() == [("outer",)]


def _parent_and_child(path):
    """An index with a deferred foreign key: a dangling child fails only at COMMIT."""
    connection = connect(path)
    connection.execute("PRAGMA foreign_keys = ON")
    connection.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    connection.execute("CREATE TABLE child (parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)")
    return connection


def test_atomic_rolls_back_a_failed_commit_so_the_next_block_commits(tmp_path):
    path = index_file(tmp_path / "index")
    connection = _parent_and_child(path)
    try:
        with pytest.raises(sqlite3.IntegrityError), atomic(connection):
            connection.execute("INSERT INTO child (parent_id) VALUES (7)")  # no parent 7: COMMIT fails
        assert not connection.in_transaction
        with atomic(connection):
            connection.execute("INSERT INTO parent (id) VALUES (1)")
    finally:
        connection.close()
    reader = sqlite3.connect(path)  # another connection sees only committed rows
    try:
        assert reader.execute("SELECT id FROM parent").fetchall() == [(1,)]
        assert reader.execute("SELECT count(*) FROM child").fetchone() == (0,)
    finally:
        reader.close()


def test_atomic_nested_reports_the_error_when_sqlite_already_ended_the_transaction(fresh_index):
    """SQLite rolls a whole transaction back on some errors (a full disk, an I/O error): the
    savepoint is then gone, and the block's own error must not be masked by undoing it."""
    with pytest.raises(RuntimeError, match="the block's own"), atomic(fresh_index):
        fresh_index.execute("INSERT INTO meta (key, value) VALUES ('outer', '1')")
        with atomic(fresh_index):
            fresh_index.execute("ROLLBACK")  # what SQLite does itself on SQLITE_FULL
            raise RuntimeError("the block's own error")
    assert not fresh_index.in_transaction
    assert fresh_index.execute("SELECT count(*) FROM meta").fetchone() == (0,)


@pytest.mark.parametrize(
    ("name", "quoted"), [("entries", '"entries"'), ('we"ird', '"we""ird"'), ("a b", '"a b"'), ("", '""')]
)
def test_quote_identifier(name, quoted):
    assert quote_identifier(name) == quoted


@pytest.mark.parametrize(
    ("error", "detail"),
    [
        (sqlite3.OperationalError("database is locked: secret text"), "sqlite:OperationalError"),
        (
            sqlite3.DatabaseError("file is not a database"),
            "index_damaged:sqlite:DatabaseError; repair: obelisk-session-evidence index refresh",
        ),
        (
            UnicodeDecodeError("utf-8", b"\xff", 0, 1, "flipped"),
            "index_damaged:UnicodeDecodeError; repair: obelisk-session-evidence index refresh",
        ),
        (sqlite3.IntegrityError("UNIQUE constraint"), "sqlite:IntegrityError"),
        (PermissionError("/home/me/private"), "os:PermissionError"),
    ],
)
def test_index_errors_maps_foreign_errors_without_their_message(error, detail):
    with pytest.raises(IndexUnavailable) as raised, index_errors():
        raise error
    assert raised.value.detail == detail
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    assert str(error) not in str(raised.value)


def test_connect_on_a_corrupt_file_is_index_unavailable(tmp_path):
    path = index_file(tmp_path / "index")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(IndexUnavailable) as raised:
        connect(path)
    assert raised.value.reason_code == "index_unavailable"


def test_writer_lock_admits_one_writer_at_a_time(tmp_path):
    path = index_file(tmp_path / "index")
    with writer_lock(path, wait_s=0) as first, writer_lock(path, wait_s=0.1) as second:
        assert (first, second) == (True, False)
    with writer_lock(path, wait_s=0) as again:
        assert again
