"""Repository identity: which repository a session ran in, stable across worktrees, clones and remotes.

A session is bound to the enablement's repository when any of these holds (all are SQL predicates
in `query.search_sql`, and `binds` re-checks each returned row):

1. its recorded cwd lies under one of the enablement's `repo_roots` (path prefix, so worktrees
   kept under a root belong to it; the only rule for histories whose worktree is gone);
2. its cwd resolves to a git checkout whose *main* working tree lies under a root (a linked
   worktree elsewhere on disk follows its `.git` file to the main repository);
3. its checkout's root-commit identity (`sha256` of the repository's first commit, the same in
   every clone and worktree, unchanged by renamed remotes) equals that of a checkout at a root;
4. its recorded remote URL (Codex's `git.repository_url`), normalised, equals a remote URL of a
   checkout at a root.

The enablement's `repository_id` stays the LoopX id: the binding to actual checkouts is made
by its `repo_roots`, and the identities and URLs derived from them when a lookup runs. A session
that satisfies none of the rules (no cwd, a cwd outside every root with no resolvable checkout,
a placeholder cwd) is in no repository and is excluded from every scoped query: fail closed.
"""

import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

GIT_TIMEOUT_S: Final = 5.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:]*)(?::\d+)?(?P<path>/.*)?$", re.I)


@dataclass(frozen=True, slots=True)
class Checkout:
    """A git working tree and the main working tree of its repository."""

    toplevel: str
    """The working tree that holds the path (a linked worktree, or the main one)."""
    checkout_root: str
    """The main working tree (the folder holding the shared `.git`)."""
    common_dir: str
    """The repository's shared git directory."""


@dataclass(frozen=True, slots=True)
class RepositoryBinding:
    """What binds sessions to one enablement's repository (see the module docstring)."""

    roots: tuple[str, ...]
    """Normalised repo roots, plus their resolved real paths where those differ."""
    identities: tuple[str, ...]
    """Root-commit identities of the checkouts found at the roots."""
    url_keys: tuple[str, ...]
    """Normalised remote URLs of the checkouts found at the roots."""


def normalise_path(path: str) -> str:
    """A path compared as text: normalised separators and dots, no trailing slash."""
    return os.path.normpath(path) if path.startswith("/") else path


def under(path: str | None, root: str) -> bool:
    """True when `path` equals `root` or lies inside it (compared as text, whole components)."""
    if not path:
        return False
    prefix = root if root.endswith("/") else root + "/"
    return path == root or path.startswith(prefix)


def locate_checkout(path: str) -> Checkout | None:
    """The git checkout holding an existing folder, found by its nearest `.git`; None when there is none.

    A folder that no longer exists is never resolved through its parents: the nearest existing
    ancestor may be a different repository (a home folder kept in git, say).
    """
    start = Path(path)
    if not path.startswith("/") or not start.is_dir():
        return None
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return Checkout(str(folder), str(folder), str(marker))
        if marker.is_file():
            common = _common_dir_of_worktree(folder, marker)
            if common is None:
                return None
            main = common.parent if common.name == ".git" else common
            return Checkout(str(folder), str(main), str(common))
    return None


def _common_dir_of_worktree(folder: Path, marker: Path) -> Path | None:
    """Follow a linked worktree's `.git` file (`gitdir: …`) and its `commondir` to the shared git dir."""
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    gitdir = gitdir if gitdir.is_absolute() else folder / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        # A submodule's gitdir has no commondir: the gitdir itself is the repository.
        return Path(os.path.normpath(gitdir))
    resolved = Path(common) if Path(common).is_absolute() else gitdir / common
    return Path(os.path.normpath(resolved))


def root_commit_identity(checkout: Checkout) -> str | None:
    """`sha256` of the repository's lexically first root commit; None without git or commits."""
    output = _git(checkout.toplevel, "rev-list", "--max-parents=0", "HEAD")
    roots = sorted(line.strip() for line in (output or "").splitlines() if line.strip())
    if not roots:
        return None
    return "rootcommit:" + hashlib.sha256(roots[0].encode("ascii", "replace")).hexdigest()


def remote_url_keys(checkout: Checkout) -> tuple[str, ...]:
    """Normalised URLs of every remote the checkout's repository names."""
    output = _git(checkout.toplevel, "config", "--get-regexp", r"^remote\..*\.url$")
    keys = (url_key(line.split(None, 1)[1]) for line in (output or "").splitlines() if " " in line)
    return tuple(sorted({key for key in keys if key}))


def url_key(url: str | None) -> str | None:
    """A remote URL reduced to `host/path` (scheme, user, port and `.git` dropped; host lower-cased).

    `git@github.com:o/r.git`, `ssh://git@github.com:22/o/r` and `https://github.com/o/r/` all give
    `github.com/o/r`. A local path gives `file` plus the path.
    """
    if not url or not url.strip():
        return None
    text = url.strip()
    matched = _URL.match(text)
    if matched:
        host, path = matched["host"].lower(), matched["path"] or ""
        if matched["scheme"].lower() == "file":
            host = "file"
    elif text.startswith("/"):
        host, path = "file", text
    elif scp := _SCP_LIKE.match(text):
        host, path = scp["host"].lower(), "/" + scp["path"]
    else:
        return None
    path = path.rstrip("/")
    path = path.removesuffix(".git").rstrip("/")
    return f"{host}{path}" if path else None


class RepositoryResolver:
    """Resolves cwds to (checkout root, identity), remembering each repository's identity."""

    def __init__(self) -> None:
        self._identities: dict[str, str | None] = {}
        self._cwds: dict[str, tuple[str | None, str | None]] = {}

    def resolve(self, cwd: str | None) -> tuple[str | None, str | None]:
        """`(checkout_root, repository_identity)` for a session cwd; `(None, None)` when unresolvable."""
        if not cwd:
            return None, None
        if cwd not in self._cwds:
            checkout = locate_checkout(cwd)
            if checkout is None:
                self._cwds[cwd] = (None, None)
            else:
                self._cwds[cwd] = (normalise_path(checkout.checkout_root), self.identity(checkout))
        return self._cwds[cwd]

    def identity(self, checkout: Checkout) -> str | None:
        """The checkout's root-commit identity, computed once per repository."""
        if checkout.common_dir not in self._identities:
            self._identities[checkout.common_dir] = root_commit_identity(checkout)
        return self._identities[checkout.common_dir]


def repository_binding(repo_roots: Sequence[str], resolver: RepositoryResolver | None = None) -> RepositoryBinding:
    """The roots, identities and remote URLs that bind sessions to these repository roots."""
    resolver = resolver or RepositoryResolver()
    roots: dict[str, None] = {}
    identities: dict[str, None] = {}
    urls: dict[str, None] = {}
    for root in repo_roots:
        normal = normalise_path(root)
        roots[normal] = None
        real = os.path.realpath(normal)
        roots.setdefault(real, None)
        checkout = locate_checkout(normal)
        if checkout is None:
            continue
        if (identity := resolver.identity(checkout)) is not None:
            identities[identity] = None
        for key in remote_url_keys(checkout):
            urls[key] = None
    return RepositoryBinding(tuple(roots), tuple(identities), tuple(urls))


def binds(
    binding: RepositoryBinding,
    *,
    cwd: str | None,
    checkout_root: str | None,
    identity: str | None,
    url: str | None,
) -> bool:
    """The Python twin of the SQL repository predicate, used to re-check every returned row."""
    if any(under(cwd, root) or under(checkout_root, root) for root in binding.roots):
        return True
    return (identity is not None and identity in binding.identities) or (
        url is not None and url in binding.url_keys
    )


def _git(folder: str, *arguments: str) -> str | None:
    """Run git in `folder` with the caller's GIT_* variables removed; None on any failure."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    environment["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        completed = subprocess.run(
            ["git", "-C", folder, *arguments],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_S,
            env=environment,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("utf-8", errors="replace")
