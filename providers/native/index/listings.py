"""Folder listings kept between refreshes, reused while a folder's inode, mtime and ctime are unchanged.

Listing a folder (`os.scandir`) costs several times a `stat` (on the 2-core VM this project is
measured on, about 60 µs against 10 µs), and layouts that keep a folder per session (Kimi, DSH)
have thousands of them. Adding, removing or renaming an entry moves the folder's mtime and ctime.
The mtime alone is not enough: `cp -a`, `tar` and `rsync` set it back after adding files, but
nothing can set the ctime back, so an unchanged (inode, mtime, ctime) means an unchanged listing,
except within the clock's granularity: a folder changed less than `RACY_S` ago is always listed
again (the "racily clean" rule git uses for its index). Files are still `stat`ed every time: an
append does not touch the folder.
"""

import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, NamedTuple

RACY_S: Final = 2.0
FOLDER_MARK: Final = "+"
LINK_MARK: Final = "@"
"""How a stored listing marks a folder and a link (`-` marks anything else): `_encoded`."""


class Entry(NamedTuple):
    """One folder entry: what a scan needs of an `os.DirEntry`, and what is stored (a tuple: a no-change
    refresh decodes thousands of listings, and a tuple is made in half a dataclass's time)."""

    name: str
    path: str
    is_folder: bool
    """A real folder (a link to a folder is not one: links are not followed)."""
    is_link: bool = False
    """A symbolic link (to a file, or dangling): a session file only while it stays inside its root."""

    def stat(self) -> os.stat_result:
        """The entry's `stat` (following a link to a file)."""
        return os.stat(self.path)


@dataclass(slots=True)
class Listings:
    """Stored listings (path -> inode, mtime, ctime, encoded names), and those this scan refreshed."""

    stored: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    now_ns: int = 0
    updated: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    visited: set[str] = field(default_factory=set)
    unreadable: bool = False
    """Set when a folder could not be listed."""

    def entries(self, folder: str) -> tuple[list[Entry], int]:
        """`(entries, inode)` of a folder: from the stored listing when still valid, else listed now."""
        try:
            status = os.stat(folder)
        except OSError:
            self.unreadable = True
            return [], 0
        self.visited.add(folder)
        key = (status.st_ino, status.st_mtime_ns, status.st_ctime_ns)
        stored = self.stored.get(folder)
        settled = max(status.st_mtime_ns, status.st_ctime_ns) < self.now_ns - RACY_S * 1e9
        if stored is not None and stored[:3] == key and settled:
            return self.stored_entries(folder, stored)
        try:
            with os.scandir(folder) as listing:
                entries = [Entry(e.name, e.path, _is_folder(e), _is_link(e)) for e in listing]
        except OSError:
            self.unreadable = True
            return [], status.st_ino
        self.updated[folder] = (*key, _encoded(entries))
        return entries, status.st_ino

    def stored_entries(self, folder: str, stored: tuple[int, int, int, str]) -> tuple[list[Entry], int]:
        """`(entries, inode)` of a folder from its stored listing `stored`."""
        return _decoded(folder, stored[3]), stored[0]


def load_listings(connection: sqlite3.Connection, *, now_ns: int) -> Listings:
    """Every stored listing."""
    stored = {path: (inode, mtime, ctime, names) for path, inode, mtime, ctime, names in connection.execute(_SELECT)}
    return Listings(stored=stored, now_ns=now_ns)


def save_listings(connection: sqlite3.Connection, listings: Listings, roots: Iterable[str]) -> None:
    """Store the listings this scan made; forget folders under the scanned roots it no longer saw."""
    prefixes = tuple(root.rstrip("/") + "/" for root in roots)
    roots = tuple(root.rstrip("/") for root in roots)
    gone = [
        (path,)
        for path in listings.stored
        if path not in listings.visited and (path in roots or path.startswith(prefixes))
    ]
    connection.executemany("DELETE FROM folders WHERE path = ?", gone)
    connection.executemany(
        "INSERT INTO folders (path, inode, mtime_ns, ctime_ns, listing) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (path) DO UPDATE SET inode = excluded.inode, mtime_ns = excluded.mtime_ns,"
        " ctime_ns = excluded.ctime_ns, listing = excluded.listing",
        ((path, *values) for path, values in listings.updated.items()),
    )


_SELECT: Final = "SELECT path, inode, mtime_ns, ctime_ns, listing FROM folders"


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def mark(entry: Entry) -> str:
    """How a stored listing marks the entry: `FOLDER_MARK`, `LINK_MARK` or `-`."""
    return FOLDER_MARK if entry.is_folder else LINK_MARK if entry.is_link else "-"


def _encoded(entries: list[Entry]) -> str:
    """`+name` for a folder, `@name` for a link, `-name` otherwise (`mark`), joined by `/` (the one
    character no name holds)."""
    return "/".join(mark(entry) + entry.name for entry in entries)


def _decoded(folder: str, text: str) -> list[Entry]:
    if not text:
        return []
    prefix = folder if folder.endswith("/") else folder + "/"
    return [
        Entry(part[1:], prefix + part[1:], part[0] == FOLDER_MARK, part[0] == LINK_MARK) for part in text.split("/")
    ]
