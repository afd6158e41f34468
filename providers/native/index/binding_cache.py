"""The repository binding kept in the index, so a decision runs no `git` (it ran 4 per decision).

`repository_binding` asks git for each root's root commits and remotes. What it answers can change
only when one of these changes, so the stored binding is reused while a `stat` of each is unchanged
(its *validity*), and recomputed otherwise:

- a root's real path (a symbolic link retargeted), and every `.git` looked for between the root and
  the checkout found above it (a repository created in between, or removed);
- the checkout's `.git` file (a worktree moved), its `HEAD`, the ref `HEAD` names (loose, per
  worktree or shared) and `packed-refs`: HEAD's history, hence its root commits, moves only with them;
- the repository's `config` (remotes added, removed or renamed).

A ref store other than files (reftable) still invalidates through its folder's stat. Storing is best
effort: a busy or read-only index leaves the binding uncached, and the next lookup tries again.
"""

import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from obelisk_session_evidence.providers.native.index.integrity import mark_writing
from obelisk_session_evidence.providers.native.index.repository import (
    RESOLUTION_VERSION,
    RepositoryBinding,
    repository_binding,
)
from obelisk_session_evidence.providers.native.index.store import BUSY_TIMEOUT_MS, atomic

_FIELDS: Final = ("roots", "identities", "url_keys", "checkouts", "enclosing")


def stored_binding(connection: sqlite3.Connection, repo_roots: Sequence[str]) -> RepositoryBinding:
    """The binding for `repo_roots`: from the index while still valid, else computed (with git) and stored."""
    key = json.dumps(list(repo_roots))
    validity = binding_validity(repo_roots)
    found = connection.execute(
        "SELECT validity, binding FROM repository_bindings WHERE repo_roots = ?", (key,)
    ).fetchone()
    if found is not None and found[0] == validity:
        decoded = _decoded(found[1])
        if decoded is not None:
            return decoded
    binding = repository_binding(repo_roots)
    _store(connection, key, validity, binding)
    return binding


def binding_validity(repo_roots: Sequence[str]) -> str:
    """A digest of every file whose change could change the binding (stats and two small reads, no git)."""
    parts = [RESOLUTION_VERSION]
    for root in repo_roots:
        real = os.path.realpath(root) if root.startswith("/") else root
        parts.append(f"root:{root}:{real}")
        parts.extend(_checkout_files(Path(real)))
    return hashlib.sha256("\n".join(parts).encode("utf-8", "replace")).hexdigest()


def _checkout_files(start: Path) -> list[str]:
    """Signatures of the `.git` markers from `start` up to the first one found, and of that repository's
    HEAD, refs and config (the order of `locate_checkout`'s walk)."""
    parts = [f"start:{_signature(start)}"]
    if not start.is_dir():
        return parts
    for folder in (start, *start.parents):
        marker = folder / ".git"
        parts.append(f"{marker}:{_signature(marker)}")
        if marker.is_dir():
            return parts + _repository_files(marker, marker)
        if marker.is_file():
            git_dir = _linked_git_dir(folder, marker)
            if git_dir is None:
                return parts
            common = _read(git_dir / "commondir")
            common_dir = git_dir if common is None else Path(os.path.normpath(git_dir / common))
            return parts + [f"commondir:{common}"] + _repository_files(git_dir, common_dir)
    return parts


def _repository_files(git_dir: Path, common_dir: Path) -> list[str]:
    head = _read(git_dir / "HEAD") or ""
    named = head.removeprefix("ref:").strip() if head.startswith("ref:") else ""
    files = [git_dir / "HEAD", common_dir / "packed-refs", common_dir / "config", common_dir / "refs"]
    if named:
        files += [git_dir / named, common_dir / named]
    return [f"head:{head}"] + [f"{path}:{_signature(path)}" for path in files]


def _linked_git_dir(folder: Path, marker: Path) -> Path | None:
    text = _read(marker)
    if text is None or not text.startswith("gitdir:"):
        return None
    git_dir = Path(text.removeprefix("gitdir:").strip())
    return git_dir if git_dir.is_absolute() else folder / git_dir


def _read(path: Path) -> str | None:
    """A small git file's first line (HEAD, commondir, a `.git` file), or None."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None


def _signature(path: Path) -> str:
    try:
        status = os.stat(path)
    except OSError:
        return "absent"
    values = (status.st_mode, status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    return ":".join(str(value) for value in values)


def _store(connection: sqlite3.Connection, key: str, validity: str, binding: RepositoryBinding) -> None:
    fields = {name: list(getattr(binding, name)) for name in _FIELDS}
    encoded = json.dumps({**fields, "remotes_known": binding.remotes_known})
    connection.execute("PRAGMA busy_timeout = 0")  # a lookup never waits on a refresh to cache this
    try:
        mark_writing(connection)  # not sealed after: the next open checks the file once
        with atomic(connection):
            connection.execute(
                "INSERT INTO repository_bindings (repo_roots, validity, binding) VALUES (?, ?, ?)"
                " ON CONFLICT (repo_roots) DO UPDATE SET validity = excluded.validity, binding = excluded.binding",
                (key, validity, encoded),
            )
    except sqlite3.OperationalError:
        pass  # busy or read-only: the binding is still used, only not cached
    finally:
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _decoded(text: str) -> RepositoryBinding | None:
    try:
        raw = json.loads(text)
        fields = {name: tuple(str(value) for value in raw[name]) for name in _FIELDS}
        return RepositoryBinding(**fields, remotes_known=raw["remotes_known"] is True)
    except (ValueError, KeyError, TypeError):
        return None
