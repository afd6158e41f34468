"""Repository identity: which repository a session ran in, stable across worktrees, clones and remotes.

At refresh, each session's cwd is resolved to the git checkout holding its *real* path (symbolic
links followed) and that repository's identity. A session is bound to the enablement's repository
when its recorded remote (Codex's `git.repository_url`) does not contradict it, and one of these holds
(all are SQL predicates in `repository_sql`, and `binds` re-checks each returned row):

1. its checkout's main working tree is the main working tree of a checkout at a root (a linked
   worktree anywhere on disk follows its `.git` file to the main repository);
2. its checkout's identity equals that of a checkout at a root: `sha256` over the *set* of every root
   commit (the same in every clone and worktree, unchanged by renamed remotes; a repository that merged
   this one's history has more root commits, so it is another repository);
3. its cwd resolves to no checkout (the folder is gone, or was never in git), and the cwd lies under
   a root (path prefix: the only rule left for histories whose worktree is gone) or its recorded
   remote is a remote of a checkout at a root;
4. its checkout is the repository that *encloses* a root given as a subfolder, and the cwd lies under
   that root (a root inside a bigger checkout binds its own folder, not the whole enclosing checkout).

A tool call that records the folder it ran in (`call_details.cwd`: Codex's `workdir`, a Claude Code
line's `cwd`) is resolved the same way, and is out of scope when that folder resolves to a checkout
that none of rules 1, 2 and 4 binds: a call the agent ran in another repository, even from a
session bound to this one (`call_place_sql`, re-checked by `foreign_place`). A call's folder that
resolves to no checkout (`/tmp`, a folder since removed) leaves the call as its session places it.

A cwd under a root that resolves to a checkout with another identity (a nested repository, another
repository's worktree placed under the root, a symbolic link to another repository) belongs to that
other repository and is excluded. A recorded remote that is not among the root checkouts' remotes
contradicts the cwd's repository, so the session is excluded (a remote renamed since the session
was recorded excludes it too: fail closed).

The enablement's `repository_id` stays the LoopX id: the binding to actual checkouts is made
by its `repo_roots`, and the identities and URLs derived from them (`stored_binding` keeps them in
the index, so a lookup runs no `git`). A session that satisfies none of the rules (no cwd, a
placeholder cwd, a cwd outside every root in no bound checkout) is excluded from every scoped query:
fail closed.
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
RESOLUTION_VERSION: Final = "2"
"""How sessions' cwds were resolved (real paths, root-commit sets); stored rows of another version
are resolved again by the next refresh (`refresh.resolve_again_if_outdated`)."""
_IDENTITY_PREFIX: Final = "rootcommits:"
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:]*)(?::\d+)?(?P<path>/.*)?$", re.I)


@dataclass(frozen=True, slots=True)
class Checkout:
    """A git working tree and the main working tree of its repository (real paths)."""

    toplevel: str
    """The working tree that holds the path (a linked worktree, or the main one)."""
    checkout_root: str
    """The main working tree (the folder holding the shared `.git`)."""
    common_dir: str
    """The repository's shared git directory."""
    git_dir: str
    """This working tree's own git directory (the common one, for a main working tree)."""


@dataclass(frozen=True, slots=True)
class RepositoryBinding:
    """What binds sessions to one enablement's repository (see the module docstring)."""

    roots: tuple[str, ...]
    """Normalised repo roots, plus their resolved real paths where those differ."""
    identities: tuple[str, ...]
    """Root-commit identities of the checkouts whose top is a root."""
    url_keys: tuple[str, ...]
    """Normalised remote URLs of the checkouts found at the roots."""
    checkouts: tuple[str, ...] = ()
    """Main working trees of the checkouts whose top is a root (real paths)."""
    enclosing: tuple[str, ...] = ()
    """Main working trees of checkouts that hold a root as a subfolder: they bind only under it."""
    remotes_known: bool = False
    """Git listed the remotes of a checkout at a root (perhaps none): a recorded remote outside
    `url_keys` then contradicts the repository. Without git's answer nothing is contradicted."""


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
    """The git checkout holding an existing folder's real path, found by its nearest `.git`; None when
    there is none.

    The real path, so a symbolic link inside one repository to another resolves to the other. A
    folder that no longer exists is never resolved through its parents: the nearest existing
    ancestor may be a different repository (a home folder kept in git, say).
    """
    if not path.startswith("/"):
        return None
    start = Path(os.path.realpath(path))
    if not start.is_dir():
        return None
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return Checkout(str(folder), str(folder), str(marker), str(marker))
        if marker.is_file():
            found = _common_dir_of_worktree(folder, marker)
            if found is None:
                return None
            git_dir, common = found
            main = common.parent if common.name == ".git" else common
            return Checkout(str(folder), os.path.realpath(main), str(common), str(git_dir))
    return None


def _common_dir_of_worktree(folder: Path, marker: Path) -> tuple[Path, Path] | None:
    """Follow a linked worktree's `.git` file (`gitdir: …`) and its `commondir` to `(git dir, shared git dir)`."""
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
        real = Path(os.path.realpath(gitdir))
        return real, real
    resolved = Path(common) if Path(common).is_absolute() else gitdir / common
    return Path(os.path.realpath(gitdir)), Path(os.path.realpath(resolved))


def root_commit_identity(checkout: Checkout) -> str | None:
    """`sha256` over the sorted set of every root commit of HEAD's history; None without git or commits.

    The whole set, not one member: a repository that merged this one's history shares this one's
    root commit, and its own first commit may sort before or after it."""
    output = _git(checkout.git_dir, "rev-list", "--max-parents=0", "HEAD")
    roots = sorted({line.strip() for line in (output or "").splitlines() if line.strip()})
    if not roots:
        return None
    return _IDENTITY_PREFIX + hashlib.sha256("\n".join(roots).encode("ascii", "replace")).hexdigest()


def remote_url_keys(checkout: Checkout) -> tuple[str, ...] | None:
    """Normalised URLs of every remote the checkout's repository names; None when git could not say."""
    output = _git(checkout.common_dir, "config", "--local", "--get-regexp", r"^remote\..*\.url$", nothing_found=1)
    if output is None:
        return None
    keys = (url_key(line.split(None, 1)[1]) for line in output.splitlines() if " " in line)
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
                self._cwds[cwd] = (checkout.checkout_root, self.identity(checkout))
        return self._cwds[cwd]

    def identity(self, checkout: Checkout) -> str | None:
        """The checkout's root-commit identity, computed once per repository."""
        if checkout.common_dir not in self._identities:
            self._identities[checkout.common_dir] = root_commit_identity(checkout)
        return self._identities[checkout.common_dir]


def repository_binding(repo_roots: Sequence[str], resolver: RepositoryResolver | None = None) -> RepositoryBinding:
    """The roots, checkouts, identities and remote URLs that bind sessions to these repository roots."""
    resolver = resolver or RepositoryResolver()
    roots: dict[str, None] = {}
    identities: dict[str, None] = {}
    urls: dict[str, None] = {}
    checkouts: dict[str, None] = {}
    enclosing: dict[str, None] = {}
    remotes_known = False
    for root in repo_roots:
        normal = normalise_path(root)
        roots[normal] = None
        real = os.path.realpath(normal)
        roots.setdefault(real, None)
        checkout = locate_checkout(normal)
        if checkout is None:
            continue
        remotes = remote_url_keys(checkout)
        remotes_known = remotes_known or remotes is not None
        for key in remotes or ():
            urls[key] = None
        if checkout.toplevel != real:
            enclosing[checkout.checkout_root] = None
            continue
        checkouts[checkout.checkout_root] = None
        if (identity := resolver.identity(checkout)) is not None:
            identities[identity] = None
    return RepositoryBinding(
        tuple(roots), tuple(identities), tuple(urls), tuple(checkouts), tuple(enclosing), remotes_known
    )


def binds(
    binding: RepositoryBinding,
    *,
    cwd: str | None,
    checkout_root: str | None,
    identity: str | None,
    url: str | None,
) -> bool:
    """The Python twin of `repository_sql`, used to re-check every returned row."""
    if binding.remotes_known and url is not None and url not in binding.url_keys:
        return False
    if checkout_root in binding.checkouts or (identity is not None and identity in binding.identities):
        return True
    if checkout_root is not None and checkout_root not in binding.enclosing:
        return False
    if any(under(cwd, root) for root in binding.roots):
        return True
    return checkout_root is None and url is not None and url in binding.url_keys


def repository_sql(binding: RepositoryBinding, params: dict[str, object]) -> str:
    """The repository predicate over the `sessions` row `s` (see the module docstring); every value
    is a bound parameter added to `params`."""
    urls = _placeholders("url", binding.url_keys, params)
    remote_agrees = "s.repository_url_key IS NULL" + (f" OR s.repository_url_key IN ({urls})" if urls else "")
    bound = []
    if binding.checkouts:
        bound.append(f"s.checkout_root IN ({_placeholders('checkout', binding.checkouts, params)})")
    if binding.identities:
        bound.append(f"s.repository_identity IN ({_placeholders('identity', binding.identities, params)})")
    prefixes = _under_roots_sql("s.cwd", "repo", binding.roots, params)
    if prefixes:
        enclosing = _placeholders("enclosing", binding.enclosing, params)
        checkout = (
            f"(s.checkout_root IS NULL OR s.checkout_root IN ({enclosing}))"
            if enclosing
            else ("s.checkout_root IS NULL")
        )
        bound.append(f"({checkout} AND ({' OR '.join(prefixes)}))")
    if urls:
        bound.append(f"(s.checkout_root IS NULL AND s.repository_url_key IN ({urls}))")
    if not bound:
        return "0"
    if not binding.remotes_known:
        return f"({' OR '.join(bound)})"
    return f"(({remote_agrees}) AND ({' OR '.join(bound)}))"


def foreign_place(
    binding: RepositoryBinding, *, cwd: str | None, checkout_root: str | None, identity: str | None
) -> bool:
    """The Python twin of `call_place_sql`: a call's own folder lies in a checkout that `binds` does
    not bind (a call records no remote)."""
    return checkout_root is not None and not binds(
        binding, cwd=cwd, checkout_root=checkout_root, identity=identity, url=None
    )


def call_place_sql(binding: RepositoryBinding, params: dict[str, object], *, entry: str) -> str:
    """The entry `entry` is no call whose own folder resolved to a checkout of another repository
    (the module docstring); every value is a bound parameter added to `params`."""
    same = []
    if binding.checkouts:
        same.append(f"place.checkout_root IN ({_placeholders('place_checkout', binding.checkouts, params)})")
    if binding.identities:
        same.append(f"place.repository_identity IN ({_placeholders('place_identity', binding.identities, params)})")
    if binding.enclosing and binding.roots:
        prefixes = _under_roots_sql("place.cwd", "place", binding.roots, params)
        enclosing = _placeholders("place_enclosing", binding.enclosing, params)
        same.append(f"(place.checkout_root IN ({enclosing}) AND ({' OR '.join(prefixes)}))")
    foreign = f" AND NOT ({' OR '.join(same)})" if same else ""
    return (
        f"NOT EXISTS (SELECT 1 FROM call_details AS place WHERE place.entry_id = {entry}"
        f" AND place.checkout_root IS NOT NULL{foreign})"
    )


def _under_roots_sql(column: str, name: str, roots: Sequence[str], params: dict[str, object]) -> list[str]:
    """Per root, `column` is the root or lies under it (whole components), with `name`d parameters."""
    prefixes = []
    for i, root in enumerate(roots):
        params[f"{name}_root_{i}"], params[f"{name}_prefix_{i}"] = root, root if root.endswith("/") else root + "/"
        prefixes.append(
            f"{column} = :{name}_root_{i} OR substr({column}, 1, length(:{name}_prefix_{i})) = :{name}_prefix_{i}"
        )
    return prefixes


def _placeholders(name: str, values: Sequence[str], params: dict[str, object]) -> str:
    for i, value in enumerate(values):
        params[f"{name}_{i}"] = value
    return ", ".join(f":{name}_{i}" for i in range(len(values)))


def _git(git_dir: str, *arguments: str, nothing_found: int | None = None) -> str | None:
    """Run git on exactly this git directory (never one git would discover above an invalid `.git`),
    with the caller's GIT_* variables removed; None on any failure (`""` when git exits with
    `nothing_found`, its code for a query that matched nothing)."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    environment["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        completed = subprocess.run(
            ["git", f"--git-dir={git_dir}", *arguments],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_S,
            env=environment,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode == nothing_found:
        return ""
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("utf-8", errors="replace")
