"""One pass over a sessions root: the units `iter_session_paths` names, their signatures, and whether
every folder could be listed.

A refresh with nothing changed is this scan plus one read of the stored cursors, so it must stay
cheap at 10,000 files: `os.scandir` once per folder, one `stat` per unit, no `pathlib` globbing.
The unit rules are those of `providers.native.parsers.discovery.iter_session_paths` (a test holds
the two to the same answer on the real corpus and on generated histories):

    claude  every `*.jsonl` at any depth            codex  every `rollout-*.jsonl` at any depth
    pi      `<root>/*/*.jsonl`                       kimi   every folder holding `state.json` or
    dsh     each folder's canonical session file         `context.jsonl`, as one unit
            (the highest `session[.vN].jsonl[.zstd]`)

Symbolic links to folders are not followed (a link loop cannot stall a refresh).
"""

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contracts.config import SourceKind
from contracts.index_status import RootState
from providers.native.index.cursor import FileSignature, file_signature, folder_signature, signature_of_stat

_KIMI_MARKERS = frozenset({"state.json", "context.jsonl"})
_DSH_SESSION_FILE = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")
"""The file names `providers.native.parsers.dsh.canonical_session_file` ranks (kept equal by a test)."""


@dataclass(frozen=True, slots=True)
class ScannedUnit:
    """A unit found under a root, with its signature (None when it vanished before its `stat`)."""

    path: str
    signature: FileSignature | None


@dataclass(slots=True)
class _Walk:
    """Folders visited, and whether any could not be listed."""

    unreadable: bool = False


def scan_root(root: Path, source: SourceKind) -> tuple[RootState, list[ScannedUnit]]:
    """The root's state and its units, sorted by path."""
    if not root.exists():
        return "missing", []
    if not root.is_dir():
        return "unreadable", []
    walk = _Walk()
    units = sorted(_units(str(root), source, walk), key=lambda unit: unit.path)
    return ("unreadable" if walk.unreadable else "indexed"), units


def _units(root: str, source: SourceKind, walk: _Walk) -> Iterator[ScannedUnit]:
    if source == "pi":
        for folder in _entries(root, walk):
            if _is_folder(folder):
                for entry in _entries(folder.path, walk):
                    if entry.name.endswith(".jsonl"):
                        yield _file_unit(entry)
        return
    pending: list[tuple[str, int]] = [(root, 0)]
    while pending:
        folder, inode = pending.pop()
        entries = _entries(folder, walk)
        if source == "claude":
            yield from (_file_unit(e) for e in entries if e.name.endswith(".jsonl"))
        elif source == "codex":
            yield from (_file_unit(e) for e in entries if e.name.startswith("rollout-") and e.name.endswith(".jsonl"))
        elif source == "kimi" and any(entry.name in _KIMI_MARKERS for entry in entries):
            yield _folder_unit(folder, entries, inode)
            continue  # a session folder is one unit: its agents' folders hold no further sessions
        elif source == "dsh" and (chosen := _canonical_dsh_file(entries)) is not None:
            yield _file_unit(chosen)
        # The listing already holds each folder's inode: no `stat` is spent on folders.
        pending.extend((entry.path, entry.inode()) for entry in entries if _is_folder(entry))


def _canonical_dsh_file(entries: list[os.DirEntry[str]]) -> os.DirEntry[str] | None:
    """`canonical_session_file` on entries already listed: the highest `vN` (compressed wins a tie)."""
    ranked = [
        (int(matched.group(1) or 0), matched.group(2) is not None, entry.name, entry)
        for entry in entries
        if (matched := _DSH_SESSION_FILE.match(entry.name))
    ]
    return max(ranked, key=lambda rank: rank[:3])[3] if ranked else None


def _entries(folder: str, walk: _Walk) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:
        walk.unreadable = True
        return []


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _file_unit(entry: os.DirEntry[str]) -> ScannedUnit:
    try:
        status = entry.stat()
    except OSError:
        return ScannedUnit(entry.path, None)
    if entry.is_dir():
        return _folder_unit(entry.path)
    return ScannedUnit(entry.path, signature_of_stat(status))


def _folder_unit(path: str, entries: list[os.DirEntry[str]] | None = None, inode: int = 0) -> ScannedUnit:
    try:
        if entries is None:
            return ScannedUnit(path, file_signature(path))
        return ScannedUnit(path, folder_signature(inode or os.stat(path).st_ino, entries))
    except OSError:
        return ScannedUnit(path, None)
