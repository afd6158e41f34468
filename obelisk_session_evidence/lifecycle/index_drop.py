"""`index drop`: delete the native index under the state directory, and nothing outside it.

The agents' session files and Obelisk's data are never touched: symbolic links are removed, never
followed; an index folder that is itself a link, or that overlaps a session, Obelisk or repository
folder, is refused; and a refresh in progress (the index's writer lock) is waited for, not cut off.
"""

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import ConfigInvalid, IndexUnavailable, InvalidInput
from obelisk_session_evidence.contracts.lifecycle import IndexDropOutcome
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.state.paths import StatePaths

INDEX_LOCK_WAIT_S: Final = 2.0
"""How long `index drop` waits for a running refresh before giving up."""


def drop_index(*, paths: StatePaths, wait_s: float = INDEX_LOCK_WAIT_S) -> IndexDropOutcome:
    """Delete the files of the state directory's index folder, and nothing outside it; wait at most
    `wait_s` for a running refresh to end."""
    index_dir = Path(os.path.abspath(paths.index_dir))
    if index_dir.is_symlink():
        raise InvalidInput("the index folder is a symbolic link; refusing to delete through it")
    enablements = _enablements_for_guard(paths)
    repo_roots = [Path(root) for e in enablements for root in e.repo_roots]
    if any(_overlaps(index_dir, root) for root in protected_roots(enablements)) or any(
        root.is_relative_to(index_dir) for root in repo_roots
    ):
        raise InvalidInput("the index folder overlaps a session, Obelisk or repository folder")
    if not index_dir.exists():
        return IndexDropOutcome(index_dir=str(index_dir), removed_files=0, removed_bytes=0, reason_code="index_absent")
    with _index_writer_lock(index_dir, wait_s):
        removed_files, removed_bytes = _remove_tree(index_dir)
    return IndexDropOutcome(
        index_dir=str(index_dir),
        removed_files=removed_files,
        removed_bytes=removed_bytes,
        reason_code="index_dropped",
    )


def _remove_tree(index_dir: Path) -> tuple[int, int]:
    """Unlink every file and link under `index_dir` (never a link's target), then the folders."""
    removed_files = removed_bytes = 0
    for folder, dirnames, filenames in os.walk(index_dir, topdown=False, followlinks=False):
        for name in filenames:
            entry = Path(folder) / name
            removed_bytes += 0 if entry.is_symlink() else entry.lstat().st_size
            entry.unlink()
            removed_files += 1
        for name in dirnames:
            entry = Path(folder) / name
            if entry.is_symlink():  # a link to a folder: remove the link, never what it points at
                entry.unlink()
                removed_files += 1
            else:
                entry.rmdir()
    index_dir.rmdir()
    return removed_files, removed_bytes


@contextmanager
def _index_writer_lock(index_dir: Path, wait_s: float) -> Iterator[None]:
    """Hold the native index's writer lock, so a refresh is never cut off midway."""
    from obelisk_session_evidence.providers.native.index.store import index_file, writer_lock

    with writer_lock(index_file(index_dir), wait_s=wait_s) as acquired:
        if not acquired:
            raise IndexUnavailable("a refresh holds the index; try the drop again when it ends")
        yield


def _enablements_for_guard(paths: StatePaths) -> list[Enablement]:
    try:
        config = load_config(paths)
    except ConfigInvalid:
        return []
    return list(config.enablements) if config else []


def _overlaps(one: Path, other: Path) -> bool:
    return one == other or one.is_relative_to(other) or other.is_relative_to(one)


def protected_roots(enablements: Iterable[Enablement]) -> list[Path]:
    """Folders `index drop` must never reach into: agents' session homes and Obelisk's data."""
    home = Path.home()
    roots = [
        home / ".claude",
        home / ".codex",
        Path(os.environ.get("KIMI_CODE_HOME") or home / ".kimi-code"),
        Path(os.environ.get("PI_CODING_AGENT_SESSION_DIR") or home / ".pi"),
        home / ".dsh",
        Path(os.environ.get("OBELISK_HOME") or home / ".obelisk"),
    ]
    for enablement in enablements:
        roots.extend(Path(root) for root in enablement.source_roots.values())
    return [Path(os.path.abspath(root)) for root in roots]
