"""The integrity guard every open of the index passes: damage is `index_unavailable`, never an answer.

Every writer of ours marks the index `writing` in its seal file (`<index>.sealed`) before its first
write; a refresh that ends cleanly checkpoints the WAL into the database and *seals* it: the file's
size, times and inode, and a CRC-32 of each `CHUNK_BYTES` of its bytes. An open then costs two
`stat` calls while the file is as sealed. When it is not:

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

A seal costs what the write changed, not the file's size: the `writing` mark carries the seal it
replaced while the file is still as sealed, and when the file is still as it was at the mark (no
checkpoint wrote it meanwhile) and no other writer marked it, every page the refresh wrote is a
frame of the WAL; only the chunks those pages (and a change of size) fall in are read again. Any
other case reads the whole file, as a seal without a mark does.
"""

import contextlib
import json
import os
import secrets
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
CHUNK_BYTES: Final = 1 << 16
"""The span of the database file each CRC-32 of a seal covers (a page size divides it)."""
_WAL_MAGIC: Final = (0x377F0682, 0x377F0683)
_WAL_HEADER: Final = 32
_WAL_FRAME_HEADER: Final = 24


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
        if not _same_bytes(seal, index_path):
            raise IndexUnavailable(f"{DAMAGED}; {REPAIR}")
    elif connection.execute("PRAGMA quick_check(1)").fetchall() != [("ok",)]:
        raise IndexUnavailable(f"{DAMAGED}; {REPAIR}")
    _write_seal(index_path, _sealed_state(connection, index_path))


def mark_writing(connection: sqlite3.Connection) -> str | None:
    """Before a write: until it is sealed again, the file may change and is checked, not compared.
    The mark carries the seal it replaces while the database file is still as that seal says;
    returns the mark's token, for `seal` (None for an in-memory database)."""
    path = database_path(connection)
    if path is None:
        return None
    token = secrets.token_hex(8)
    _write_seal(path, {"state": "writing", "token": token, **_carried(_read_seal(path), path)})
    return token


def seal(connection: sqlite3.Connection, token: str | None = None) -> None:
    """After a clean write: move the WAL into the database and record the file as it now is. With
    the `token` of this writer's mark, only the chunks written since are read again when it can be."""
    path = database_path(connection)
    if path is None:
        return
    base = _unchanged_base(_read_seal(path), path, token)
    written = _wal_chunks(path) if base is not None else None
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if written is not None and _read_seal(path).get("token") != token:
        written = None  # another writer marked the index meanwhile: the checkpoint may hold its pages
    _write_seal(path, _sealed_state(connection, path, base if written is not None else None, written))


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


def chunk_crcs(
    index_path: Path | str,
    size: int,
    known: list[int] | None = None,
    dirty: set[int] | None = None,
) -> str:
    """The CRC-32 of each `CHUNK_BYTES` of the file's first `size` bytes, as 8 hex digits each;
    with `known` (the CRCs of the file before a write), only `dirty` chunks and new ones are read."""
    crcs = []
    with open(index_path, "rb", buffering=0) as handle:
        for number in range(-(-size // CHUNK_BYTES)):
            if known is not None and dirty is not None and number < len(known) and number not in dirty:
                crcs.append(known[number])
            else:
                length = min(CHUNK_BYTES, size - number * CHUNK_BYTES)
                crcs.append(zlib.crc32(os.pread(handle.fileno(), length, number * CHUNK_BYTES)))
    return "".join(f"{crc:08x}" for crc in crcs)


def _same_bytes(seal: dict[str, Any], index_path: Path | str) -> bool:
    """The file's bytes are the sealed ones (a seal from before the chunks holds one CRC of the file)."""
    if "crcs" not in seal:
        return seal.get("crc") == file_crc(index_path)
    size = os.stat(index_path).st_size
    return seal.get("chunk_bytes") == CHUNK_BYTES and seal["crcs"] == chunk_crcs(index_path, size)


def _carried(seal: dict[str, Any], index_path: Path | str) -> dict[str, Any]:
    """What a new `writing` mark carries: the seal it replaces, while the database file is as that
    seal (or the mark before, for a second writer in a row) says, else nothing."""
    base = seal.get("from") if seal.get("state") == "writing" else seal
    if not isinstance(base, dict) or base.get("state") != "sealed" or "crcs" not in base:
        return {}
    return {"from": base} if base.get("signature") == signature(index_path)[:4] else {}


def _unchanged_base(seal: dict[str, Any], index_path: Path | str, token: str | None) -> dict[str, Any] | None:
    """The seal this writer's mark carried, when the mark is still its own and the database file
    is still as that seal says: then every page written since is a frame of the WAL."""
    base = seal.get("from")
    if token is None or seal.get("token") != token or not isinstance(base, dict):
        return None
    if base.get("chunk_bytes") != CHUNK_BYTES or base.get("signature") != signature(index_path)[:4]:
        return None
    return base


def _wal_chunks(index_path: Path | str) -> set[int] | None:
    """The seal chunks the WAL's frames fall in, once their pages move into the file (stale frames
    past its last commit included: a chunk read again for nothing costs less than one missed); None
    when the WAL is not one SQLite wrote. Chunks, not pages: what is held grows with the file's size
    by a number per 64 KiB, not per page."""
    try:
        with open(f"{index_path}-wal", "rb", buffering=0) as wal:
            header = wal.read(_WAL_HEADER)
            if len(header) < _WAL_HEADER:
                return set()
            magic, page_size = int.from_bytes(header[:4], "big"), int.from_bytes(header[8:12], "big")
            page_size = 65536 if page_size == 1 else page_size
            if magic not in _WAL_MAGIC or page_size < 512:
                return None
            frame = _WAL_FRAME_HEADER + page_size
            end = os.fstat(wal.fileno()).st_size - frame + 1
            chunks: set[int] = set()
            for offset in range(_WAL_HEADER, end, frame):
                number = int.from_bytes(os.pread(wal.fileno(), 4, offset), "big")
                first, last = (number - 1) * page_size, number * page_size - 1
                chunks.update(range(first // CHUNK_BYTES, last // CHUNK_BYTES + 1))
    except FileNotFoundError:
        return set()
    return chunks


def _sealed_state(
    connection: sqlite3.Connection,
    index_path: Path | str,
    base: dict[str, Any] | None = None,
    written: set[int] | None = None,
) -> dict[str, Any]:
    """`sealed` with the chunk CRCs when the WAL is empty (its frames would move into the file later,
    changing it without any damage); else `checked`, which a changed file re-checks. With the
    `base` seal and the chunks the WAL moved into the file since (`written`), only those are read."""
    current = signature(index_path)
    if len(current) > 4:
        return {"state": "checked", "signature": current}
    known, dirty = None, None
    if base is not None and written is not None:
        text = base["crcs"]
        known = [int(text[at : at + 8], 16) for at in range(0, len(text), 8)]
        dirty = written
        old_size = base["signature"][0]
        if old_size != current[0]:  # the chunk the old end fell in, and all after it, changed extent
            dirty.update(range(min(old_size, current[0]) // CHUNK_BYTES, -(-max(old_size, current[0]) // CHUNK_BYTES)))
    crcs = chunk_crcs(index_path, current[0], known, dirty)
    return {"state": "sealed", "signature": current, "chunk_bytes": CHUNK_BYTES, "crcs": crcs}


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
