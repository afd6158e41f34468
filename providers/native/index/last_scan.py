"""What the last complete refresh recorded of its scan, and whether the session roots are exactly as
it left them, by one `stat` per stored folder and unit: no listing decoded (but a Kimi session's),
no unit built, no scan digest.

A lookup inside the refresh window verifies its scope's files before it may say `fresh`
(`changes.pending_changes`). Walking the roots as a refresh does costs most of a decision at
10,000 session files (about 130 ms of CPU on the bench's 1M-message corpus). The stored state
answers a narrower question on its own. When the last complete refresh scanned exactly these roots,
found each of them a listed folder, and nothing was written to the index since (same revision),
then `folders` holds every folder that scan visited and `files` every unit it found. If every such
folder still has the inode, mtime and ctime it was listed with, settled past `RACY_S` (the rule a
scan follows to reuse a listing), no unit was added, removed or renamed; if every stored unit still
has its stored signature, none changed: a scan would find what the last one found.

Anything else answers False, which only means "look closer" (the full scan): another refresh's
roots, a write since, a folder holding a link (a scan resolves link targets again), a folder
changed or too recently to trust its times, a unit whose signature moved.
"""

import hashlib
import os
import sqlite3
import stat
from collections.abc import Sequence
from typing import Final, NamedTuple

from obelisk_session_evidence.providers.native.index.cursor import stat_digest
from obelisk_session_evidence.providers.native.index.listings import LINK_MARK, RACY_S
from obelisk_session_evidence.providers.native.index.revision import current_revision, read_meta
from obelisk_session_evidence.providers.native.index.roots import Roots, root_text
from obelisk_session_evidence.providers.native.index.scan import stored_kimi_digest

LAST_SCAN: Final = "last_complete_scan"
"""`meta` key: the digest of the last complete refresh's scan, the revision it left, and its counts."""
LAST_SCANNED_ROOTS: Final = "last_complete_scan_roots"
"""`meta` key: the revision the last complete refresh left and a digest of the roots it scanned."""

_FOLDERS: Final = (
    "SELECT path, inode, mtime_ns, ctime_ns, listing FROM folders"
    " WHERE path = :root OR (path > :root || '/' AND path < :root || '0')"  # '0' follows '/'
)
_UNITS: Final = "SELECT path, signature FROM files WHERE source = ? AND root = ?"


class LastScan(NamedTuple):
    """`LAST_SCAN` read."""

    revision: str
    digest: str
    units: int
    """Units found with a signature."""
    failed: int


def read_last_scan(connection: sqlite3.Connection) -> LastScan | None:
    """What the last complete refresh recorded of its scan; None when there is no such record."""
    parts = (read_meta(connection, LAST_SCAN) or "").split(" ")
    if len(parts) != 4 or not (parts[2].isdigit() and parts[3].isdigit()):
        return None
    return LastScan(parts[0], parts[1], int(parts[2]), int(parts[3]))


def scanned_roots_key(revision: str, states: Sequence[tuple[str, str, str]]) -> str:
    """What `LAST_SCANNED_ROOTS` holds for a scan of these (source, root, state), in scan order
    (order matters: the first root to list a path claims it)."""
    text = "\n".join("\x1f".join(state) for state in states)
    return f"{revision} {hashlib.sha256(text.encode('utf-8', 'surrogateescape')).hexdigest()}"


def as_last_refresh_left(connection: sqlite3.Connection, roots: Roots, *, now_ns: int) -> bool:
    """True when one `stat` per stored folder and unit under `roots` finds each as the last complete
    refresh of exactly these roots left it, with nothing written since (see the module docstring)."""
    last = read_last_scan(connection)
    if last is None:
        return False
    pairs = [(source, root_text(root)) for source, paths in roots.items() for root in paths]
    expected = scanned_roots_key(current_revision(connection).text, [(*pair, "indexed") for pair in pairs])
    if read_meta(connection, LAST_SCANNED_ROOTS) != expected:
        return False
    units = 0
    for source, root in pairs:
        folders = _settled_listings(connection, root, now_ns)
        if folders is None:
            return False
        stored = connection.execute(_UNITS, (source, root)).fetchall()
        if source == "kimi":
            if any(stored_kimi_digest(path, folders) != signature for path, signature in stored):
                return False
        elif any(_file_digest(path) != signature for path, signature in stored):
            return False
        units += len(stored)
    return units == last.units  # every unit that refresh found is stored, and no other


def _file_digest(path: str) -> str | None:
    """A session file's signature digest now (None when no regular file is there): the scan's
    `_file_unit` for a path without a link, in a third of its time (no entry, no unit made)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return stat_digest(status) if stat.S_ISREG(status.st_mode) else None


def _settled_listings(
    connection: sqlite3.Connection, root: str, now_ns: int
) -> dict[str, tuple[int, int, int, str]] | None:
    """The stored listings under `root` (path -> inode, mtime, ctime, encoded names) when every one
    of those folders is as it was listed and settled, and none holds a link; else None."""
    racy_before = now_ns - RACY_S * 1e9
    stored: dict[str, tuple[int, int, int, str]] = {}
    # One pass of thousands: each test is spelled out (no tuples built, no `max`).
    for path, inode, mtime, ctime, listing in connection.execute(_FOLDERS, {"root": root}):
        if mtime >= racy_before or ctime >= racy_before or listing[:1] == LINK_MARK or "/" + LINK_MARK in listing:
            return None
        try:
            status = os.stat(path)
        except OSError:
            return None
        if status.st_ino != inode or status.st_mtime_ns != mtime or status.st_ctime_ns != ctime:
            return None
        stored[path] = (inode, mtime, ctime, listing)
    return stored if root in stored else None
