"""One pass over a sessions root: the units `iter_session_paths` names, their signatures, and whether
every folder could be listed.

A refresh with nothing changed is this scan plus one read of the stored cursors, so it must stay
cheap at 10,000 files: one `stat` per unit and per folder, folder listings reused while the
folder is unchanged (`listings.py`), no `pathlib` globbing. The unit rules are those of
`providers.native.parsers.discovery.iter_session_paths` (a test holds the two to the same answer
on the real corpus and on generated histories):

    claude  every `*.jsonl` at any depth            codex  every `rollout-*.jsonl` at any depth
    pi      `<root>/*/*.jsonl`                       kimi   every folder holding `state.json` or
    dsh     each folder's canonical session file         `context.jsonl`, as one unit
            (the highest `session[.vN].jsonl[.zstd]`)

Symbolic links to folders are not followed (a link loop cannot stall a refresh). A link to a file
counts only while its target lies inside the root: a link leaving it (to another agent's sessions,
say) is not this agent's session and is not a unit at all. One file reached under several names
(symbolic or hard links) is one unit, the first of its paths in order (by device and inode): a
thousand links to one session file are read once, not a thousand times. At most `MAX_LINKS` links
of a root are followed; past them the root is `unreadable` (its freshness `incomplete`).
"""

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, NamedTuple, assert_never

from obelisk_session_evidence.contracts.index_status import RootState
from obelisk_session_evidence.contracts.sources import SourceKind
from obelisk_session_evidence.providers.native.index.cursor import (
    MEMBER_NAMES,
    FileSignature,
    file_status,
    folder_digest,
    folder_signature,
    signature_of_stat,
)
from obelisk_session_evidence.providers.native.index.listings import FOLDER_MARK, LINK_MARK, Entry, Listings, mark

_KIMI_MARKERS = frozenset({"state.json", "context.jsonl"})
_DSH_SESSION_FILE = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")
"""The file names `providers.native.parsers.dsh.canonical_session_file` ranks (kept equal by a test)."""


MAX_LINKS: Final = 1000
"""Links to files a root may hold before the scan stops following them."""


class ScannedUnit(NamedTuple):
    """A unit found under a root, with its signature (None when it vanished before its `stat`, or is
    neither a regular file nor a folder); a tuple, made once per unit on every refresh."""

    path: str
    signature: FileSignature | None


def scan_root(root: Path, source: SourceKind, listings: Listings | None = None) -> tuple[RootState, list[ScannedUnit]]:
    """The root's state and its units, sorted by path."""
    try:
        is_folder = stat.S_ISDIR(os.stat(root).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        # A link that leads nowhere (dangling, or a loop) is a root that cannot be read, not an absent one.
        return ("unreadable" if os.path.lexists(root) else "missing"), []
    except OSError:
        return "unreadable", []
    if not is_folder:
        return "unreadable", []
    listings = listings if listings is not None else Listings()
    before = listings.unreadable
    listings.unreadable = False
    inside = _Inside(os.path.realpath(root))
    units = _distinct(sorted(_units(str(root), source, listings, inside), key=lambda unit: unit.path))
    state: RootState = "unreadable" if listings.unreadable or inside.links > MAX_LINKS else "indexed"
    listings.unreadable = before or listings.unreadable
    return state, units


def stored_kimi_digest(folder: str, stored: Mapping[str, tuple[int, int, int, str]]) -> str | None:
    """A stored Kimi session's signature digest now, as a scan would find it, when its folders are
    as `stored` lists them (path -> inode, mtime, ctime, encoded names; a folder missing there reads
    as empty). The names are read encoded, never decoded into entries (which cost most of the
    per-lookup check of a Kimi session). None on a link in those listings, or a linked agent
    `wire.jsonl` leaving the session folder (stricter than a scan's root): a None only sends the
    caller to the full scan."""
    members = _kimi_members(folder, lambda path: _stored_names(stored, path), _no_link, _Inside(folder))
    return folder_digest(members) if members is not None else None


def _stored_names(stored: Mapping[str, tuple[int, int, int, str]], folder: str) -> Iterator[tuple[str, str]]:
    """A stored listing's names (`listings._encoded`), each as (mark, name)."""
    found = stored.get(folder)
    if found is not None and found[3]:
        yield from ((part[0], part[1:]) for part in found[3].split("/"))


def _no_link(path: str) -> bool:
    return False


def _distinct(units: list[ScannedUnit]) -> list[ScannedUnit]:
    """The first unit of each file (device and inode); folders and vanished files are kept as they are."""
    seen: set[tuple[int, int]] = set()
    distinct = []
    for unit in units:
        signature = unit.signature
        if signature is not None and not signature.is_directory:
            key = (signature.device, signature.inode)
            if key in seen:
                continue
            seen.add(key)
        distinct.append(unit)
    return distinct


@dataclass(slots=True)
class _Inside:
    """Whether a linked file's target stays inside the root (compared by real path), and how many
    links were seen (past `MAX_LINKS` none is followed)."""

    real_root: str
    links: int = 0

    def __call__(self, entry: Entry) -> bool:
        if not entry.is_link:
            return True
        self.links += 1
        if self.links > MAX_LINKS:
            return False
        target = os.path.realpath(entry.path)
        return target.startswith(self.real_root.rstrip("/") + "/")


def _units(root: str, source: SourceKind, listings: Listings, inside: _Inside) -> Iterator[ScannedUnit]:
    if source == "pi":
        for child in listings.entries(root)[0]:
            if child.is_folder:
                files = listings.entries(child.path)[0]
                yield from (_file_unit(e) for e in files if e.name.endswith(".jsonl") and inside(e))
        return
    pending = [root]
    while pending:
        folder = pending.pop()
        entries, inode = listings.entries(folder)
        match source:
            case "claude":
                yield from (_file_unit(e) for e in entries if e.name.endswith(".jsonl") and inside(e))
            case "codex":
                rollouts = (e for e in entries if e.name.startswith("rollout-") and e.name.endswith(".jsonl"))
                yield from (_file_unit(e) for e in rollouts if inside(e))
            case "kimi":
                if any(entry.name in _KIMI_MARKERS for entry in entries):
                    if (unit := _kimi_unit(folder, inode, entries, listings, inside)) is not None:
                        yield unit
                    continue  # a session folder is one unit: its agents' folders hold no further sessions
            case "dsh":
                if (chosen := _canonical_dsh_file(entries)) is not None and inside(chosen):
                    yield _file_unit(chosen)
            case _:
                assert_never(source)
        pending.extend(entry.path for entry in entries if entry.is_folder)


def _canonical_dsh_file(entries: list[Entry]) -> Entry | None:
    """`canonical_session_file` on entries already listed: the highest `vN` (compressed wins a tie)."""
    ranked = [
        (int(matched.group(1) or 0), matched.group(2) is not None, entry.name, entry)
        for entry in entries
        if (matched := _DSH_SESSION_FILE.match(entry.name))
    ]
    return max(ranked, key=lambda rank: rank[:3])[3] if ranked else None


def _file_unit(entry: Entry) -> ScannedUnit:
    """A session file's unit. Anything else at its name (a folder, a named pipe or device, a
    dangling link) has no signature: it is not a session file, and opening a pipe would block."""
    if entry.is_folder:
        return ScannedUnit(entry.path, None)
    try:
        status = entry.stat()
    except OSError:
        return ScannedUnit(entry.path, None)
    if not stat.S_ISREG(status.st_mode):
        return ScannedUnit(entry.path, None)
    return ScannedUnit(entry.path, signature_of_stat(status))


def _kimi_unit(
    folder: str, inode: int, entries: list[Entry], listings: Listings, inside: "_Inside"
) -> ScannedUnit | None:
    """A Kimi session folder's signature from its listing: `stat` only the files its parse reads.
    None when one of them is a link leaving the root: the folder is then not this agent's session."""

    def names_in(path: str) -> Iterator[tuple[str, str]]:
        listed = entries if path == folder else listings.entries(path)[0]
        return ((mark(entry), entry.name) for entry in listed)

    def link_inside(path: str) -> bool:
        return inside(Entry(os.path.basename(path), path, False, True))

    members = _kimi_members(folder, names_in, link_inside, inside)
    return ScannedUnit(folder, folder_signature(inode, members)) if members is not None else None


def _kimi_members(
    folder: str, names_in: Callable[[str], Iterable[tuple[str, str]]], link_ok: Callable[[str], bool], inside: "_Inside"
) -> list[tuple[str, os.stat_result]] | None:
    """The files a Kimi session folder's parse reads, as (name, `stat`), from its folders' names
    (`names_in`: (mark, name), `listings.mark`); None on a link among them that is not `link_ok`, or
    a linked agent `wire.jsonl` leaving `inside`. The scan and the per-lookup check share these rules."""
    prefix = folder if folder.endswith("/") else folder + "/"
    members = []
    for kind, name in names_in(folder):
        if name not in MEMBER_NAMES and name != "agents":
            continue
        path = prefix + name
        if kind == LINK_MARK and not link_ok(path):
            return None
        if kind != FOLDER_MARK:
            if name in MEMBER_NAMES and (member := file_status(path)) is not None:
                members.append((name, member))
            continue
        for agent_kind, agent in names_in(path):
            if agent_kind == LINK_MARK and not link_ok(f"{path}/{agent}"):
                return None
            if agent_kind != FOLDER_MARK:
                continue
            wire = _agent_wire(f"{path}/{agent}/wire.jsonl", inside)
            if wire is None:
                return None
            if wire is not False:
                members.append((f"agents/{agent}/wire.jsonl", wire))
    return members


def _agent_wire(path: str, inside: "_Inside") -> os.stat_result | Literal[False] | None:
    """An agent's `wire.jsonl`: its `stat` (one `lstat` when it is no link), False when no regular
    file is there, None when it is a link leaving the root (the folder is then no session of it)."""
    try:
        status = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISLNK(status.st_mode):
        if not inside(Entry("wire.jsonl", path, False, True)):
            return None
        return file_status(path) or False
    return status if stat.S_ISREG(status.st_mode) else False
