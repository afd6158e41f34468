"""Repository identity: worktrees, clones and remotes resolve to the same repository; others do not."""

import itertools
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.index.repository import (
    RepositoryBinding,
    RepositoryResolver,
    binds,
    locate_checkout,
    repository_binding,
    repository_sql,
    root_commit_identity,
    under,
    url_key,
)

requires_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(folder: Path, *arguments: str) -> str:
    """Run git in `folder` as a fixed test identity, with no user or system config; its output."""
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith("GIT_")},
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", "-C", str(folder), *arguments], check=True, capture_output=True, env=environment)
    return done.stdout.decode().strip()


def _repository(path: Path, marker: str) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "README").write_text(marker)
    _git(path, "add", "README")
    _git(path, "commit", "-q", "-m", marker)
    return path


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("git@github.com:Owner/Repo.git", "github.com/Owner/Repo"),
        ("https://github.com/Owner/Repo", "github.com/Owner/Repo"),
        ("https://user:token@GitHub.com/Owner/Repo.git/", "github.com/Owner/Repo"),
        ("ssh://git@github.com:22/Owner/Repo.git", "github.com/Owner/Repo"),
        ("/srv/git/repo.git", "file/srv/git/repo"),
        ("file:///srv/git/repo.git", "file/srv/git/repo"),
        ("", None),
        ("not a url", None),
    ],
)
def test_url_key(url, key):
    assert url_key(url) == key


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/w/repo", "/w/repo", True),
        ("/w/repo/sub", "/w/repo", True),
        ("/w/repository", "/w/repo", False),
        ("/w", "/w/repo", False),
        (None, "/w/repo", False),
        ("/anything", "/", True),
    ],
)
def test_under(path, root, inside):
    assert under(path, root) is inside


def test_locate_checkout_never_walks_up_from_a_missing_folder(tmp_path):
    (tmp_path / ".git").mkdir()
    assert locate_checkout(str(tmp_path / "deleted-worktree")) is None
    assert locate_checkout(str(tmp_path)).checkout_root == str(tmp_path)


def test_locate_checkout_follows_a_linked_worktree_to_its_main_checkout(tmp_path):
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    worktree = tmp_path / "elsewhere" / "feature"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main}/.git/worktrees/feature\n")
    checkout = locate_checkout(str(worktree / "src"))
    assert (checkout.toplevel, checkout.checkout_root) == (str(worktree), str(main))


@requires_git
def test_root_commit_identity_is_shared_by_clones_and_worktrees_only(tmp_path):
    origin = _repository(tmp_path / "origin", "alpha")
    _git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    _git(origin, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    other = _repository(tmp_path / "other", "beta")
    identity = root_commit_identity(locate_checkout(str(origin)))
    assert identity is not None and identity.startswith("rootcommits:")
    assert root_commit_identity(locate_checkout(str(tmp_path / "clone"))) == identity
    assert root_commit_identity(locate_checkout(str(tmp_path / "wt"))) == identity
    assert root_commit_identity(locate_checkout(str(other))) != identity


@requires_git
def test_root_commit_identity_is_none_without_commits(tmp_path):
    (tmp_path / "empty").mkdir()
    _git(tmp_path / "empty", "init", "-q")
    assert root_commit_identity(locate_checkout(str(tmp_path / "empty"))) is None


@requires_git
def test_repository_binding_derives_identity_and_remotes_from_the_roots(tmp_path):
    origin = _repository(tmp_path / "origin", "alpha")
    _git(origin, "remote", "add", "upstream", "git@github.com:o/r.git")
    binding = repository_binding([str(origin), "/gone/historical-worktree"])
    assert binding.roots[:2] == (str(origin), "/gone/historical-worktree")
    assert len(binding.identities) == 1
    assert binding.url_keys == ("github.com/o/r",)


@requires_git
def test_resolver_binds_a_clone_outside_every_root_by_root_commit(tmp_path):
    origin = _repository(tmp_path / "origin", "alpha")
    _git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "elsewhere" / "clone"))
    binding = repository_binding([str(origin)])
    checkout_root, identity = RepositoryResolver().resolve(str(tmp_path / "elsewhere" / "clone"))
    assert binds(
        binding, cwd=str(tmp_path / "elsewhere" / "clone"), checkout_root=checkout_root, identity=identity, url=None
    )


BINDING = RepositoryBinding(
    roots=("/w/repo",),
    identities=("rootcommits:aa",),
    url_keys=("github.com/o/r",),
    checkouts=("/w/repo",),
    remotes_known=True,
)


@pytest.mark.parametrize(
    ("session", "bound"),
    [
        ({"cwd": "/w/repo/src"}, True),
        ({"cwd": "/w/repo-other"}, False),
        ({"cwd": "/elsewhere", "checkout_root": "/w/repo"}, True),
        ({"cwd": "/elsewhere", "identity": "rootcommits:aa"}, True),
        ({"cwd": "/elsewhere", "identity": "rootcommits:bb"}, False),
        ({"cwd": "/w/repo/nested", "checkout_root": "/w/repo/nested", "identity": "rootcommits:bb"}, False),
        ({"cwd": "/w/repo/src", "checkout_root": "/w/repo", "url": "github.com/evil/x"}, False),
        ({"cwd": None, "url": "github.com/o/r"}, True),
        ({"cwd": None}, False),
        ({"cwd": "{{cwd}}"}, False),
    ],
)
def test_binds(session, bound):
    arguments = {"cwd": None, "checkout_root": None, "identity": None, "url": None, **session}
    assert binds(BINDING, **arguments) is bound


SUBFOLDER_ROOT = RepositoryBinding(roots=("/mono/service",), identities=(), url_keys=(), enclosing=("/mono",))
UNKNOWN_REMOTES = RepositoryBinding(roots=("/w/repo",), identities=(), url_keys=(), checkouts=("/w/repo",))


@pytest.mark.parametrize(
    ("binding", "session", "bound"),
    [
        (SUBFOLDER_ROOT, {"cwd": "/mono/service/src", "checkout_root": "/mono"}, True),
        (SUBFOLDER_ROOT, {"cwd": "/mono/other-service", "checkout_root": "/mono"}, False),
        (SUBFOLDER_ROOT, {"cwd": "/mono/service/vendor/x", "checkout_root": "/mono/service/vendor/x"}, False),
        (UNKNOWN_REMOTES, {"cwd": "/w/repo", "checkout_root": "/w/repo", "url": "github.com/any/remote"}, True),
    ],
)
def test_binds_a_subfolder_root_and_unknown_remotes(binding, session, bound):
    arguments = {"cwd": None, "checkout_root": None, "identity": None, "url": None, **session}
    assert binds(binding, **arguments) is bound


def test_repository_sql_agrees_with_binds_on_every_combination():
    values = {
        "cwd": [None, "/w/repo", "/w/repo/src", "/w/repo-other", "/mono/service/a", "/mono/b", "/elsewhere"],
        "checkout_root": [None, "/w/repo", "/w/repo/nested", "/mono", "/elsewhere"],
        "identity": [None, "rootcommits:aa", "rootcommits:bb"],
        "url": [None, "github.com/o/r", "github.com/evil/x"],
    }
    connection = sqlite3.connect(":memory:")
    connection.execute(
        "CREATE TABLE sessions (id INTEGER PRIMARY KEY, cwd, checkout_root, repository_identity, repository_url_key)"
    )
    rows = list(itertools.product(*values.values()))
    connection.executemany(
        "INSERT INTO sessions (cwd, checkout_root, repository_identity, repository_url_key) VALUES (?, ?, ?, ?)", rows
    )
    for binding in (BINDING, SUBFOLDER_ROOT, UNKNOWN_REMOTES):
        params: dict[str, object] = {}
        predicate = repository_sql(binding, params)
        selected = {
            row_id for (row_id,) in connection.execute(f"SELECT id FROM sessions AS s WHERE {predicate}", params)
        }
        expected = {
            number
            for number, row in enumerate(rows, start=1)
            if binds(binding, **dict(zip(("cwd", "checkout_root", "identity", "url"), row, strict=False)))
        }
        assert selected == expected
