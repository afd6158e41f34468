"""Per-file cursors: the change signature of a session file and the parser state to resume it.

A signature is (device, inode, size, mtime_ns, ctime_ns): a same-millisecond append or a
replacement that keeps the mtime still moves the ctime or the inode. A Kimi session folder is one
unit whose signature digests every file in it. The resume state (`ResumeState`) is stored as
MessagePack so a later refresh can continue an append-only file from its last complete line.
"""

import hashlib
import os
import sqlite3
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from obelisk_session_evidence.providers.native.parsers import ResumeState
from obelisk_session_evidence.providers.native.parsers.outcome import DAMAGE_REASONS

DIGEST_CHUNK: Final = 1 << 20
"""Bytes read at a time while digesting a file's prefix (memory stays bounded on any file)."""


@dataclass(frozen=True, slots=True)
class FileSignature:
    """What a file (or Kimi session folder) looks like on disk now."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str
    """The signature as one comparable string."""
    is_directory: bool


def signature_of_stat(status: os.stat_result) -> FileSignature:
    """The signature of a session file from its `stat`."""
    device, inode, size = status.st_dev, status.st_ino, status.st_size
    return FileSignature(device, inode, size, status.st_mtime_ns, status.st_ctime_ns, stat_digest(status), False)


def stat_digest(status: os.stat_result) -> str:
    """A session file's signature as one comparable string (`FileSignature.digest`)."""
    return f"{status.st_dev}:{status.st_ino}:{status.st_size}:{status.st_mtime_ns}:{status.st_ctime_ns}"


def file_signature(path: Path | str) -> FileSignature:
    """The signature of a session file, or of every file in a Kimi session folder (raises OSError)."""
    status = os.stat(path)
    if not stat.S_ISDIR(status.st_mode):
        return signature_of_stat(status)
    members = []
    for name in MEMBER_NAMES:
        if (member := file_status(os.path.join(path, name))) is not None:
            members.append((name, member))
    try:
        with os.scandir(os.path.join(path, "agents")) as agents:
            for agent in agents:
                if (wire := file_status(os.path.join(agent.path, "wire.jsonl"))) is not None:
                    members.append((f"agents/{agent.name}/wire.jsonl", wire))
    except (FileNotFoundError, NotADirectoryError):
        pass
    return folder_signature(status.st_ino, members)


def folder_signature(inode: int, members: list[tuple[str, os.stat_result]]) -> FileSignature:
    """The signature of a Kimi session folder: a digest over every file its parse reads
    (`state.json`, `context.jsonl`, `wire.jsonl`, `agents/*/wire.jsonl`), given as (name, stat)."""
    size = mtime = ctime = 0
    for _, member in members:
        size += member.st_size
        mtime = max(mtime, member.st_mtime_ns)
        ctime = max(ctime, member.st_ctime_ns)
    return FileSignature(0, inode, size, mtime, ctime, digest=folder_digest(members), is_directory=True)


def folder_digest(members: list[tuple[str, os.stat_result]]) -> str:
    """`folder_signature`'s digest alone (what the per-lookup check compares)."""
    text = "\n".join(
        [
            f"{name}:{member.st_ino}:{member.st_size}:{member.st_mtime_ns}:{member.st_ctime_ns}"
            for name, member in sorted(members, key=_name)
        ]
    )
    return "dir:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def _name(member: tuple[str, os.stat_result]) -> str:
    return member[0]


MEMBER_NAMES: Final = ("state.json", "context.jsonl", "wire.jsonl")
"""The files at the top of a Kimi session folder that its parse reads."""


def file_status(path: str) -> os.stat_result | None:
    """A regular file's `stat`, or None when there is none at `path`."""
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return status if stat.S_ISREG(status.st_mode) else None


@dataclass(frozen=True, slots=True)
class PrefixDigest:
    """A running `sha256` over a file's first `length` bytes.

    An append is resumed only when every byte before the cursor is unchanged: checking only the last
    few KiB let an in-place edit near the start, followed by an append, go unseen."""

    hasher: Any
    length: int

    @property
    def text(self) -> str:
        """The digest as stored in the cursor."""
        return self.hasher.hexdigest()


def prefix_digest(path: Path | str, end_offset: int, base: PrefixDigest | None = None) -> PrefixDigest | None:
    """The digest of the file's bytes `[0, end_offset)`, or None when the file is shorter.

    `base`, a digest of a shorter prefix of the same file, is continued (not changed), so after a
    verified append only the new bytes are read. Memory stays bounded: the file is read into one
    buffer of at most `DIGEST_CHUNK` bytes.
    """
    hasher = hashlib.sha256() if base is None else base.hasher.copy()
    position = 0 if base is None else base.length
    buffer = memoryview(bytearray(min(DIGEST_CHUNK, max(0, end_offset - position))))
    with open(path, "rb", buffering=0) as handle:
        handle.seek(position)
        while position < end_offset:
            read = handle.readinto(buffer[: end_offset - position])
            if not read:
                return None
            hasher.update(buffer[:read])
            position += read
    return PrefixDigest(hasher, position)


def encode_resume(state: ResumeState) -> bytes:
    """The resume state as MessagePack: written in C, several times faster than JSON of `asdict`."""
    return _RESUME_ENCODER.encode(state)


def decode_resume(stored: bytes | str | None) -> ResumeState | None:
    """The stored resume state, every field checked against its type; None when absent, or written by
    another parser version (JSON text before MessagePack, other fields): that file is then re-read from 0."""
    if not isinstance(stored, bytes) or not stored:
        return None
    try:
        return _RESUME_DECODER.decode(stored)
    except msgspec.DecodeError:  # a ValidationError (fields of another parser version) is one too
        return None


_RESUME_ENCODER: Final = msgspec.msgpack.Encoder()
_RESUME_DECODER: Final = msgspec.msgpack.Decoder(ResumeState)


def encode_counts(counts: Mapping[str, int]) -> str:
    """Skip counts per reason as `reason=n,...` (reasons sorted, zeros dropped)."""
    return ",".join(f"{reason}={count}" for reason, count in sorted(counts.items()) if count)


def decode_counts(text: str | None) -> dict[str, int]:
    """The inverse of `encode_counts`; malformed parts are ignored."""
    counts: dict[str, int] = {}
    for part in (text or "").split(","):
        reason, _, count = part.partition("=")
        if reason and count.isdigit():
            counts[reason] = int(count)
    return counts


def has_damaged_files(connection: sqlite3.Connection, source: str, root: str) -> bool:
    """True when a file under the root had damaged lines skipped (see `DAMAGE_REASONS`)."""
    rows = connection.execute(
        "SELECT skipped_by_reason FROM files INDEXED BY files_problems"  # not `files_scan`: see `status.PROBLEM_FILES`
        " WHERE source = ? AND root = ? AND skipped_total > 0",
        (source, root),
    )
    return any(DAMAGE_REASONS & decode_counts(text).keys() for (text,) in rows)
