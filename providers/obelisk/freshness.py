"""Index freshness and revision from what the Obelisk CLI writes into `index_state`.

The CLI writes no `__last_source_mtime__` and no `__app_heartbeat__` (only its desktop app
does), so freshness is read the way the recordings show the CLI keeps it: `__last_build__` plus
one row per session file with its mtime (epoch ms), `lines_processed` and a cursor
`<mtime ms>:<lines>:<bytes>:<mtime ms>:<inode>`. The rows come from the same `--query` that
answers (and every `--query` refreshes first, recording 4.04), and are compared with the
enablement's session files on disk:

    the state lookup failed, or its row cap was reached      unknown
    no __last_build__ row (never built)                     incomplete
    a file on disk has no row                               incomplete
    a row's mtime, size or inode differs from the file      stale
    a row names a file under the roots that is gone         stale
    every file matches                                      fresh

A lookup the template could not finish (the tool-call SQL or a `search()` failed) downgrades
`fresh` to `incomplete`: absence from a partial lookup is not evidence either.
"""

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.digests import canonical_digest
from obelisk_session_evidence.providers.obelisk.answer import StateRow, TemplateAnswer
from obelisk_session_evidence.providers.obelisk.template import LAST_BUILD

UNKNOWN_REVISION: Final = "unknown"
MTIME_TOLERANCE_MS: Final = 1.0
"""Obelisk stores float ms; a filesystem may round sub-microsecond parts differently."""
MAX_SESSION_FILES: Final = 20_000


@dataclass(frozen=True, slots=True)
class FileState:
    """One session file as it is on disk now."""

    path: str
    mtime_ms: float
    size: int
    inode: int


def session_files(session_roots: Sequence[str]) -> list[FileState] | None:
    """Every `*.jsonl` under the roots (a missing root has none); None past the file cap."""
    found: list[FileState] = []
    for root in session_roots:
        for directory, _, names in os.walk(root):
            for name in names:
                if not name.endswith(".jsonl"):
                    continue
                path = os.path.join(directory, name)
                try:
                    status = os.stat(path)
                except OSError:
                    continue
                found.append(FileState(path, status.st_mtime_ns / 1_000_000, status.st_size, status.st_ino))
                if len(found) > MAX_SESSION_FILES:
                    return None
    return found


def index_freshness(answer: TemplateAnswer, files: list[FileState] | None, *, state_cap: int) -> Freshness:
    """Freshness of Obelisk's index for these session files (see the module docstring)."""
    freshness = _file_freshness(answer.state, files, state_failed=answer.state_failed, state_cap=state_cap)
    partial = answer.calls_failed or answer.search_failed > 0
    return "incomplete" if freshness == "fresh" and partial else freshness


def index_revision(state: Iterable[StateRow]) -> str:
    """`obelisk-index:sha256:<hex>` over `__last_build__` and the file cursors, or `unknown`."""
    values = sorted((row.jsonl_path, row.mtime, row.cursor) for row in state)
    if not any(path == LAST_BUILD for path, _, _ in values):
        return UNKNOWN_REVISION
    return "obelisk-index:" + canonical_digest([list(value) for value in values])


def _file_freshness(
    state: list[StateRow], files: list[FileState] | None, *, state_failed: bool, state_cap: int
) -> Freshness:
    if state_failed or files is None or len(state) >= state_cap:
        return "unknown"
    rows = {row.jsonl_path: row for row in state}
    if LAST_BUILD not in rows:
        return "incomplete"
    on_disk = {file.path: file for file in files}
    if any(path not in rows for path in on_disk):
        return "incomplete"
    indexed = [path for path in rows if path != LAST_BUILD]
    if any(path not in on_disk for path in indexed):
        return "stale"
    if any(not _matches(rows[path], file) for path, file in on_disk.items()):
        return "stale"
    return "fresh"


def _matches(row: StateRow, file: FileState) -> bool:
    """mtime, size and inode from the row's cursor (lines cannot be checked without reading)."""
    parts = (row.cursor or "").split(":")
    if len(parts) != 5 or row.mtime is None:
        return False
    try:
        size, inode = int(parts[2]), int(parts[4])
    except ValueError:
        return False
    return abs(float(row.mtime) - file.mtime_ms) <= MTIME_TOLERANCE_MS and size == file.size and inode == file.inode
