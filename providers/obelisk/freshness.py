"""Index freshness and revision from what the Obelisk CLI holds in `index_state`.

The CLI writes no `__last_source_mtime__` and no `__app_heartbeat__` (only its desktop app
does), so freshness is read the way the recordings show the CLI keeps it: `__last_build__`, the
markers a full `--build` writes (`__messages_fts_synced__`), and one row per session file with its
mtime (epoch ms), `lines_processed` and a cursor `<mtime ms>:<lines>:<bytes>:<mtime ms>:<inode>`.
The rows come from the same `--query` that answers (every `--query` refreshes first, recording
4.04) and are compared with the enablement's session files on disk:

    the state lookup failed, or its row cap was reached      unknown
    no __last_build__ row (never built)                     incomplete
    a file (a Kimi session folder) on disk has no row       incomplete
    a row's mtime, size or inode differs from the file      stale
    a row names a file under the roots that is gone         stale
    a file shrank or was replaced since the last full build stale (`ShrinkMemory`)
    every file matches                                      fresh

Paths are compared after resolving links and the home folder: each session root is asked for
under every name Obelisk may have walked it by (`root_aliases`), and every row path is mapped back
to the root's resolved name before it is compared.

Recorded (4.08-4.11): an incremental refresh re-reads a shrunk file (its row says the new size)
but keeps the messages of the removed lines until a full `--build`. No row says so, so the adapter
remembers each file's largest size and inode since the last full build (`ShrinkMemory`): a file
seen smaller or replaced reads `stale` until `__messages_fts_synced__` changes.

Inferred, not recorded (the recording build indexed no Kimi folder): Obelisk keys a Kimi session
by its folder (`sessions/<workspace>/<session>`), not by a file. Such a folder is fresh when its
row's mtime is at least the newest mtime of the files under it.

A lookup the template could not finish (the tool-call SQL or a `search()` failed) downgrades
`fresh` to `incomplete`: absence from a partial lookup is not evidence either.
"""

import hashlib
import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.contracts.sources import SOURCES, SourceKind
from obelisk_session_evidence.providers.obelisk.answer import StateRow, TemplateAnswer
from obelisk_session_evidence.providers.obelisk.template import FULL_BUILD, LAST_BUILD, MARKERS

UNKNOWN_REVISION: Final = "unknown"
MTIME_TOLERANCE_MS: Final = 1.0
"""Obelisk stores float ms; a filesystem may round sub-microsecond parts differently."""
MAX_SESSION_FILES: Final = 20_000


@dataclass(frozen=True, slots=True)
class FileState:
    """One session file (or folder-keyed session) as it is on disk now."""

    path: str
    mtime_ms: float
    size: int | None
    """None for a folder-keyed session."""
    inode: int | None


@dataclass(frozen=True, slots=True)
class SessionRoot:
    """One session folder of the enablement: its source and its resolved path."""

    source: SourceKind
    path: str


def root_aliases(roots: Sequence[str], *, home: Path | None) -> tuple[str, ...]:
    """Every name of every root: as written, links resolved, and a root under the home folder under
    the home as written and as resolved (Obelisk records paths as it walked them from its HOME)."""
    homes = _names(str(home or Path.home()))
    found: dict[str, None] = {}
    for root in roots:
        for name in _names(root):
            found[name] = None
            for home_name in homes:
                if name.startswith(home_name + "/"):
                    rest = name[len(home_name) :]
                    found.update(dict.fromkeys(other + rest for other in homes))
    return tuple(found)


def session_files(roots: Sequence[SessionRoot]) -> list[FileState] | None:
    """Every `*.jsonl` under the roots (a Kimi root: every session folder), by resolved path; a
    missing root has none; None past the file cap."""
    found: list[FileState] = []
    for root in roots:
        base = os.path.realpath(root.path)
        folders: dict[str, float] = {}
        depth = SOURCES[root.source].obelisk_folder_depth  # Kimi: `<workspace>/<session>`
        for directory, _, names in os.walk(base):
            for name in names:
                path = os.path.join(directory, name)
                try:
                    status = os.stat(path)
                except OSError:
                    continue
                mtime_ms = status.st_mtime_ns / 1_000_000
                if depth is not None:
                    folder = _session_folder(base, directory, depth)
                    if folder is not None:
                        folders[folder] = max(folders.get(folder, 0.0), mtime_ms)
                elif name.endswith(".jsonl"):
                    found.append(FileState(path, mtime_ms, status.st_size, status.st_ino))
                if len(found) + len(folders) > MAX_SESSION_FILES:
                    return None
        found.extend(FileState(folder, mtime, None, None) for folder, mtime in folders.items())
    return found


def index_freshness(
    answer: TemplateAnswer,
    files: list[FileState] | None,
    *,
    state_cap: int,
    aliases: Sequence[str] = (),
    shrunk: bool = False,
) -> Freshness:
    """Freshness of Obelisk's index for these session files (see the module docstring)."""
    freshness = _file_freshness(
        answer.state, files, state_failed=answer.state_failed, state_cap=state_cap, aliases=aliases
    )
    if freshness == "fresh" and shrunk:
        freshness = "stale"
    partial = answer.calls_failed or answer.search_failed > 0
    return "incomplete" if freshness == "fresh" and partial else freshness


def index_revision(state: Iterable[StateRow]) -> str:
    """`obelisk-index:sha256:<hex>` over what the index holds for these roots: every row but
    `__last_build__`, whose time every `--query` rewrites even when nothing changed; `unknown`
    when the index was never built."""
    rows = list(state)
    if not any(row.jsonl_path == LAST_BUILD for row in rows):
        return UNKNOWN_REVISION
    held = sorted(
        (row.jsonl_path, row.mtime, row.lines_processed, row.cursor) for row in rows if row.jsonl_path != LAST_BUILD
    )
    return "obelisk-index:" + canonical_digest([list(value) for value in held])


@dataclass(slots=True)
class ShrinkMemory:
    """Each file's largest size and inode seen since the last full build, and the files seen
    shrunk or replaced since: Obelisk still holds the rows of their removed lines."""

    build: float | int | None = None
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    """sha256 of the path -> (largest size, inode)."""
    shrunk: set[str] = field(default_factory=set)

    def observe(self, state: Iterable[StateRow]) -> bool:
        """Take this lookup's rows; True while any file shrank or was replaced since the full build."""
        rows = list(state)
        build = next((row.mtime for row in rows if row.jsonl_path == FULL_BUILD), None)
        if build != self.build:
            self.build, self.sizes, self.shrunk = build, {}, set()
        for row in rows:
            cursor = _cursor(row)
            if row.jsonl_path in MARKERS or cursor is None:
                continue
            key = hashlib.sha256(row.jsonl_path.encode("utf-8", "surrogatepass")).hexdigest()
            size, inode = cursor
            before = self.sizes.get(key)
            if before is not None and (size < before[0] or inode != before[1]):
                self.shrunk.add(key)
            largest = before[0] if before is not None and before[1] == inode else 0
            self.sizes[key] = (max(size, largest), inode)
        return bool(self.shrunk)

    def document(self) -> dict[str, object]:
        """What `load_memory` reads back (digests and numbers only, never a path)."""
        return {"build": self.build, "sizes": self.sizes, "shrunk": sorted(self.shrunk)}


def load_memory(path: Path | None, cache: dict[str, ShrinkMemory], key: str) -> ShrinkMemory:
    """The memory for `key`: this process's, else the private file's, else a new one."""
    if key in cache:
        return cache[key]
    memory = ShrinkMemory()
    if path is not None:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            memory = ShrinkMemory(
                build=document["build"],
                sizes={k: (int(v[0]), int(v[1])) for k, v in document["sizes"].items()},
                shrunk=set(document["shrunk"]),
            )
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            memory = ShrinkMemory()
    cache[key] = memory
    return memory


def save_memory(path: Path | None, memory: ShrinkMemory) -> None:
    """Atomically replace the private file (0600 in a 0700 folder); failures are ignored."""
    if path is None:
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(memory.document(), handle)
        os.replace(temporary, path)
    except OSError:
        pass


def _names(path: str) -> list[str]:
    written = os.path.abspath(os.path.expanduser(path))
    return list(dict.fromkeys((written, os.path.realpath(written))))


def _session_folder(base: str, directory: str, depth: int) -> str | None:
    relative = os.path.relpath(directory, base)
    parts = [] if relative == "." else relative.split(os.sep)
    if len(parts) < depth:
        return None
    return os.path.join(base, *parts[:depth])


def _canonical(path: str, aliases: Sequence[tuple[str, str]]) -> str:
    """`path` with the longest alias prefix replaced by that alias's resolved name."""
    for alias, real in aliases:
        if path == alias or path.startswith(alias + "/"):
            return real + path[len(alias) :]
    return path


def _file_freshness(
    state: list[StateRow],
    files: list[FileState] | None,
    *,
    state_failed: bool,
    state_cap: int,
    aliases: Sequence[str],
) -> Freshness:
    if state_failed or files is None or len(state) >= state_cap:
        return "unknown"
    if not any(row.jsonl_path == LAST_BUILD for row in state):
        return "incomplete"
    pairs = sorted(((alias, os.path.realpath(alias)) for alias in aliases), key=lambda pair: -len(pair[0]))
    rows = {_canonical(row.jsonl_path, pairs): row for row in state if row.jsonl_path not in MARKERS}
    on_disk = {file.path: file for file in files}
    if any(path not in rows for path in on_disk):
        return "incomplete"
    if any(path not in on_disk for path in rows):
        return "stale"
    if any(not _matches(rows[path], file) for path, file in on_disk.items()):
        return "stale"
    return "fresh"


def _matches(row: StateRow, file: FileState) -> bool:
    """A file: mtime, size and inode from the row's cursor (lines cannot be checked without
    reading). A folder-keyed session: the row is at least as new as its newest file."""
    if row.mtime is None:
        return False
    if file.size is None:
        return float(row.mtime) >= file.mtime_ms - MTIME_TOLERANCE_MS
    cursor = _cursor(row)
    if cursor is None:
        return False
    size, inode = cursor
    return abs(float(row.mtime) - file.mtime_ms) <= MTIME_TOLERANCE_MS and size == file.size and inode == file.inode


def _cursor(row: StateRow) -> tuple[int, int] | None:
    """(size, inode) from a `<mtime>:<lines>:<bytes>:<mtime>:<inode>` cursor, else None."""
    parts = (row.cursor or "").split(":")
    if len(parts) != 5:
        return None
    try:
        return int(parts[2]), int(parts[4])
    except ValueError:
        return None
