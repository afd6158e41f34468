"""The private spool: documents kept by content digest, so only the digest crosses into Prefect.

Spooled documents hold query terms (commands, hypotheses, blockers), so they are kept only as
long as they are needed: each is written 0600 into a 0700 folder, expires `spool_retention_hours`
(config.json, default 24) after it was last spooled, and expired ones are removed the first time a
process uses that part of the spool (and whenever an expired one is asked for). A document is
read only through `read_spooled`: opened without following a link and without blocking (a FIFO
put in its place cannot hang the reader), only when it is a regular file, and only when its bytes
still have the digest that names it; anything else is a typed `SpoolRefused`, never its content.
"""

import hashlib
import os
import stat
import time
from pathlib import Path
from typing import Final, Literal

from obelisk_session_evidence.contracts.errors import ConfigInvalid, InvalidInput
from obelisk_session_evidence.contracts.reason_codes import SpoolRefusalCode
from obelisk_session_evidence.state.config_store import read_config
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import private_dir, write_private

SpoolKind = Literal["situations", "manifests", "replays"]
"""Replan situations, batch manifests, and the text of a replay's listed calls (`--private-out`)."""
DEFAULT_RETENTION_HOURS: Final = 24
"""How long a spooled document is kept after it was last spooled, unless config.json says otherwise."""
_SWEPT: set[tuple[Path, str]] = set()
"""The spool folders this process has swept (once per process: a batch spools thousands)."""
_RETENTION: dict[Path, tuple[tuple[int, int, int] | None, float]] = {}
"""The retention read from each config file, with the file's version it was read at."""


class SpoolRefused(InvalidInput):
    """A spooled document that cannot be used; `refusal` says why, never what it holds."""

    def __init__(self, refusal: SpoolRefusalCode, kind: SpoolKind) -> None:
        super().__init__(f"spooled {kind[:-1]}: {refusal}")
        self.refusal = refusal


def spool_document(paths: StatePaths, kind: SpoolKind, raw: bytes) -> str:
    """Keep `raw` in the spool; return its content digest (the only public reference). Spooling
    the same bytes again starts their retention again."""
    sweep_expired(paths, kind)
    reference = "sha256:" + hashlib.sha256(raw).hexdigest()
    target = spooled_path(paths, kind, reference)
    if _regular_file(target):
        os.utime(target, follow_symlinks=False)
    else:
        write_private(target, raw)
    return reference


def spooled_path(paths: StatePaths, kind: SpoolKind, reference: str) -> Path:
    """Where the spooled document with this digest lives."""
    return spool_folder(paths, kind) / (reference.removeprefix("sha256:") + ".json")


def spool_folder(paths: StatePaths, kind: SpoolKind) -> Path:
    """The owner-only folder of one kind of spooled document (made 0700 when this tool made it or
    owns it: the spool is never shared)."""
    folder = private_dir(paths.spool_dir / kind)
    for part in (paths.spool_dir, folder):
        status = os.lstat(part)
        if status.st_uid == os.getuid() and stat.S_IMODE(status.st_mode) != 0o700:
            part.chmod(0o700)
    return folder


def read_spooled(paths: StatePaths, kind: SpoolKind, reference: str, *, max_bytes: int) -> bytes:
    """The spooled document, checked against its digest; `SpoolRefused` when absent, expired,
    not a regular file (a link, a FIFO, a folder), larger than `max_bytes`, or altered."""
    sweep_expired(paths, kind)
    path = spooled_path(paths, kind, reference)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SpoolRefused("spool_absent", kind) from None
    except OSError:  # ELOOP: the name is a symbolic link; anything else cannot be read either
        raise SpoolRefused("spool_not_regular", kind) from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise SpoolRefused("spool_not_regular", kind)
        if _expired(status.st_mtime, retention_seconds(paths)):
            path.unlink(missing_ok=True)
            raise SpoolRefused("spool_expired", kind)
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError:
        raise SpoolRefused("spool_not_regular", kind) from None
    finally:
        os.close(descriptor)
    if len(raw) > max_bytes:  # its own refusal: a batch too large is not an altered one
        raise SpoolRefused("spool_too_large", kind)
    if "sha256:" + hashlib.sha256(raw).hexdigest() != reference:
        raise SpoolRefused("spool_altered", kind)
    return raw


def remove_spooled(paths: StatePaths, kind: SpoolKind, reference: str) -> None:
    """Remove one spooled document (absent is fine; a link or FIFO there is removed, never followed)."""
    spooled_path(paths, kind, reference).unlink(missing_ok=True)


def held_count(paths: StatePaths, kind: SpoolKind) -> int:
    """How many unexpired documents of `kind` the spool holds (0 without a spool)."""
    folder = paths.spool_dir / kind
    if not folder.is_dir():
        return 0
    sweep_expired(paths, kind, force=True)
    return sum(1 for entry in os.scandir(folder) if entry.name.endswith(".json"))


def retention_seconds(paths: StatePaths) -> float:
    """`spool_retention_hours` of config.json in seconds; the default without a readable file (the
    retention is no scope check: a broken file reports itself in `status` and admission). Read
    again only when the file changed: a batch reads thousands of spooled items."""
    try:
        status = os.stat(paths.config_file)
        version = (status.st_mtime_ns, status.st_size, status.st_ino)
    except OSError:
        version = None
    cached = _RETENTION.get(paths.config_file)
    if cached is not None and cached[0] == version:
        return cached[1]
    try:
        config = read_config(paths)
    except ConfigInvalid:
        config = None
    hours = config.spool_retention_hours if config is not None else DEFAULT_RETENTION_HOURS
    _RETENTION[paths.config_file] = (version, hours * 3600.0)
    return hours * 3600.0


def sweep_expired(paths: StatePaths, kind: SpoolKind, *, force: bool = False) -> int:
    """Remove the expired documents of `kind` (once per process unless `force`); how many went."""
    folder = paths.spool_dir / kind
    if (folder, kind) in _SWEPT and not force:
        return 0
    _SWEPT.add((folder, kind))
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    retention = retention_seconds(paths)
    removed = 0
    for entry in entries:
        try:
            if _expired(entry.stat(follow_symlinks=False).st_mtime, retention):
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue  # gone meanwhile, or a folder: not the sweep's to remove
    return removed


def _expired(mtime: float, retention: float) -> bool:
    return time.time() - mtime > retention


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
