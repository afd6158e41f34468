"""The integrity guard every open of the index passes: damage is `index_unavailable`, never an answer.

Every writer of ours marks the index `writing` in its seal file (`<index>.sealed`) before its first
write; a refresh that ends cleanly checkpoints the WAL into the database and *seals* it: the file's
size, times and inode, and a CRC-32 of its bytes. An open then costs two `stat` calls while the
file is as sealed. When it is not:

- sealed, and nothing of ours wrote since: the bytes are read again; the same CRC (a `touch`) is
  resealed, another one means something else changed the file: `index_damaged`;
- a writer of ours died before sealing, or wrote without sealing (a cached binding), or there is no
  seal (an index from before this guard): `PRAGMA quick_check` runs once, and a passed check seals
  the file as it is. An empty file is a new index, and a seal beside it is dropped.

A damaged index raises `IndexUnavailable("index_damaged; repair: … index refresh")`: lookups answer
`index_unavailable` (never `novel` over a `fresh` index), `index status` exits 2, and `index
refresh` discards the file and rebuilds it from the session files. While another process holds the
writer lock the check is left to that writer. The guard sees a change through the file's times, so
bytes that rot in place without any write go unseen until the next write.
"""

import contextlib
import json
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.contracts.errors import IndexUnavailable

SEAL_SUFFIX: Final = ".sealed"
DAMAGED: Final = "index_damaged"
REPAIR: Final = "repair: obelisk-session-evidence index refresh"
"""The command that rebuilds a damaged index, named in every damage error."""
_CHUNK: Final = 1 << 20


def seal_file(index_path: Path | str) -> Path:
    return Path(f"{index_path}{SEAL_SUFFIX}")


def signature(index_path: Path | str) -> list[int]:
    """What changes whenever the database's bytes do: size, modification and change times, inode;
    the WAL's size and modification time when it holds frames (an empty or absent WAL is none)."""
    found = os.stat(index_path)
    values = [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino]
    with contextlib.suppress(FileNotFoundError):
        wal = os.stat(f"{index_path}-wal")
        if wal.st_size:
            values += [wal.st_size, wal.st_mtime_ns]
    return values


def verify(connection: sqlite3.Connection, index_path: Path | str, *, writer_active: bool, new: bool = False) -> None:
    """Raise `IndexUnavailable(index_damaged)` unless the index is as sealed, or checks sound. A
    `new` (empty when opened) database has nothing to check: a seal left beside it was another file's."""
    if new:
        seal_file(index_path).unlink(missing_ok=True)
        return
    seal, current = _read_seal(index_path), signature(index_path)
    if writer_active or seal.get("signature") == current:
        return
    if seal.get("state") == "sealed":
        if seal.get("crc") != file_crc(index_path):
            raise IndexUnavailable(f"{DAMAGED}; {REPAIR}")
    elif connection.execute("PRAGMA quick_check(1)").fetchall() != [("ok",)]:
        raise IndexUnavailable(f"{DAMAGED}; {REPAIR}")
    _write_seal(index_path, _sealed_state(connection, index_path))


def mark_writing(connection: sqlite3.Connection) -> None:
    """Before a write: until it is sealed again, the file may change and is checked, not compared."""
    path = database_path(connection)
    if path is not None:
        _write_seal(path, {"state": "writing"})


def seal(connection: sqlite3.Connection) -> None:
    """After a clean write: move the WAL into the database and record the file as it now is."""
    path = database_path(connection)
    if path is not None:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _write_seal(path, _sealed_state(connection, path))


def file_crc(index_path: Path | str) -> int:
    crc = 0
    with open(index_path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def database_path(connection: sqlite3.Connection) -> str | None:
    """The main database's file, or None for an in-memory one."""
    for _, name, file in connection.execute("PRAGMA database_list"):
        if name == "main":
            return file or None
    return None


def is_damage(error: IndexUnavailable) -> bool:
    return error.detail.startswith(DAMAGED)


def _sealed_state(connection: sqlite3.Connection, index_path: Path | str) -> dict[str, Any]:
    """`sealed` with the CRC when the WAL is empty (its frames would move into the file later,
    changing it without any damage); else `checked`, which a changed file re-checks."""
    current = signature(index_path)
    if len(current) > 4:
        return {"state": "checked", "signature": current}
    return {"state": "sealed", "signature": current, "crc": file_crc(index_path)}


def _read_seal(index_path: Path | str) -> dict[str, Any]:
    try:
        value = json.loads(seal_file(index_path).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write_seal(index_path: Path | str, state: dict[str, Any]) -> None:
    """Best effort: a seal that cannot be written only means the next open checks again."""
    target = seal_file(index_path)
    temporary = target.with_name(target.name + ".tmp")
    with contextlib.suppress(OSError):
        descriptor = os.open(temporary, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            json.dump(state, handle)
        os.replace(temporary, target)
