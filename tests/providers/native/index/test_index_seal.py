"""The seal a refresh leaves costs what the refresh wrote, and still tells every change of the file.

A seal keeps a CRC-32 per `CHUNK_BYTES` of the database; a refresh that starts from a sealed file
reads again only the chunks its WAL pages fall in. Whatever path a seal took, its CRCs must be the
file's own, and a byte changed afterwards outside the refresh's pages must read as damage.
"""

import json
import os
import sqlite3
import zlib
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.errors import IndexUnavailable
from obelisk_session_evidence.providers.native.index import integrity
from obelisk_session_evidence.providers.native.index.integrity import (
    CHUNK_BYTES,
    chunk_crcs,
    file_crc,
    mark_writing,
    seal,
    seal_file,
    signature,
)
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.status import index_status
from obelisk_session_evidence.providers.native.index.store import atomic, connect, index_file

SESSIONS = 60


@pytest.fixture
def built(tmp_path: Path, transcript) -> tuple[Path, dict, object]:
    """An index of many sessions (a database of many chunks), sealed by its build."""
    for number in range(SESSIONS):
        session = transcript(f"s{number}")
        for turn in range(20):
            session.user(f"session {number} turn {turn} " + "lorem ipsum dolor " * 60)
        session.write()
    path = index_file(tmp_path / "index")
    roots = {"claude": [tmp_path / "claude"]}
    refresh_index(path, roots)
    assert os.stat(path).st_size > 16 * CHUNK_BYTES
    return path, roots, transcript("s0")


def _seal(path: Path) -> dict:
    return json.loads(seal_file(path).read_text(encoding="ascii"))


def _as_the_file_is(path: Path) -> bool:
    return _seal(path)["crcs"] == chunk_crcs(path, os.stat(path).st_size)


@pytest.fixture
def hashed(monkeypatch) -> list[int]:
    """The byte counts the seal's CRCs read, call by call."""
    counts: list[int] = []
    crc32 = zlib.crc32

    def counting(data, value=0):
        counts.append(len(data))
        return crc32(data, value)

    monkeypatch.setattr(integrity.zlib, "crc32", counting)
    return counts


def test_an_append_refresh_reads_again_only_the_chunks_it_wrote(built, hashed):
    path, roots, session = built
    session.user("one more turn").write()
    hashed.clear()
    report = refresh_index(path, roots)
    read = sum(hashed)
    assert report.files_appended == 1
    assert _as_the_file_is(path)
    assert 0 < read < os.stat(path).st_size / 4


def test_a_refresh_with_nothing_new_reads_a_few_chunks(built, hashed):
    path, roots, _ = built
    hashed.clear()
    assert refresh_index(path, roots).files_unchanged == SESSIONS
    read = sum(hashed)
    assert _as_the_file_is(path)
    assert 0 < read <= 4 * CHUNK_BYTES


def test_a_file_rewritten_and_shrunk_is_sealed_as_it_is(built, tmp_path):
    path, roots, session = built
    session.path.write_text(session.path.read_text()[: len(session.path.read_text()) // 3].rsplit("\n", 1)[0] + "\n")
    refresh_index(path, roots)
    with sqlite3.connect(path) as connection:
        connection.execute("DELETE FROM entries WHERE id % 3 = 0")  # frees pages: the next seal may shrink
    seal_file(path).unlink()
    refresh_index(path, roots)  # no seal: checked, sealed whole
    session.user("after").write()
    refresh_index(path, roots)
    assert _as_the_file_is(path)


def test_a_byte_changed_after_an_incremental_seal_is_damage(built):
    path, roots, session = built
    session.user("one more turn").write()
    refresh_index(path, roots)
    with open(path, "r+b") as handle:  # a chunk the append did not touch, the seal left as it was
        handle.seek(CHUNK_BYTES * 8 + 100)
        byte = handle.read(1)
        handle.seek(CHUNK_BYTES * 8 + 100)
        handle.write(bytes([byte[0] ^ 0x10]))
    with pytest.raises(IndexUnavailable) as raised:
        index_status(path)
    assert raised.value.detail.startswith("index_damaged")


def test_another_writers_mark_makes_the_seal_read_the_whole_file(built, hashed):
    path, _, _ = built
    writer, other = connect(path, holds_writer_lock=True), connect(path)
    try:
        mark = mark_writing(writer)
        with atomic(writer):
            writer.execute("UPDATE meta SET value = value || 'x' WHERE key = 'last_refresh_at'")
        mark_writing(other)  # a lookup caching its binding while the refresh writes
        with atomic(other):
            other.execute("DELETE FROM entries WHERE id % 7 = 0")
        _sealed_reading_the_whole_file(path, writer, mark, hashed)
    finally:
        writer.close()
        other.close()


def test_a_checkpoint_during_the_write_makes_the_seal_read_the_whole_file(built, hashed):
    path, _, _ = built
    connection = connect(path, holds_writer_lock=True)
    try:
        mark = mark_writing(connection)
        with atomic(connection):
            connection.execute("DELETE FROM entries WHERE id % 5 = 0")
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)")  # pages moved into the file: not in the WAL any more
        with atomic(connection):
            connection.execute("UPDATE meta SET value = value || 'x' WHERE key = 'last_refresh_at'")
        _sealed_reading_the_whole_file(path, connection, mark, hashed)
    finally:
        connection.close()


def _sealed_reading_the_whole_file(path, connection, mark, hashed):
    hashed.clear()
    seal(connection, mark)
    assert sum(hashed) == os.stat(path).st_size
    assert _as_the_file_is(path)


def test_a_seal_from_before_the_chunks_is_still_compared(built):
    path, _, _ = built
    seal_file(path).write_text(
        json.dumps({"state": "sealed", "signature": [0, 0, 0, 0], "crc": file_crc(path)}), encoding="ascii"
    )
    assert index_status(path).freshness == "fresh"  # a touch: the same bytes, sealed again
    assert _as_the_file_is(path) and _seal(path)["signature"] == signature(path)
    seal_file(path).write_text(
        json.dumps({"state": "sealed", "signature": [0, 0, 0, 0], "crc": file_crc(path) ^ 1}), encoding="ascii"
    )
    with pytest.raises(IndexUnavailable):
        index_status(path)
