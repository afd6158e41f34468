"""The repository binding is stored in the index: a decision runs no `git`, and a change that can move
the repository's identity (a merged history, a new remote, a root replaced) makes it recomputed."""

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index.refresh import refresh_locked
from obelisk_session_evidence.providers.native.index.revision import write_meta
from obelisk_session_evidence.providers.native.index.store import MEMORY, atomic, connect
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.native.index.test_index_repository import _git, _repository, requires_git
from tests.providers.native.index.transcripts import ClaudeTranscript

pytestmark = requires_git


def _git_runs(monkeypatch, folder: Path) -> Path:
    """A log of every `git` command started from now on: a `git` first on PATH records its
    arguments and runs the real one."""
    real_git = shutil.which("git")
    shim = folder / "git"
    log = folder / "git-runs.log"
    folder.mkdir()
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real_git}" "$@"\n')
    shim.chmod(0o755)
    log.touch()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _decide(index_dir: Path, root: Path, claude: Path) -> None:
    enablement = Enablement(
        surface="replan-history",
        agent_id="agent-a",
        project_id="project-a",
        repository_id="repo-a",
        repo_roots=[str(root)],
        sources=["claude"],
        source_roots={"claude": str(claude)},
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )
    request = HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="replan_repetition",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure"],
        query_terms=["pytest -x"],
        limits={"max_sessions": 5, "max_items": 5, "max_snippet_chars": 400, "max_total_chars": 4000},
    )
    NativeIndexProvider(index_dir, enablement).search(request)


def test_a_decision_after_the_first_runs_no_git(tmp_path, monkeypatch):
    root = _repository(tmp_path / "work" / "ledger", "ledger")
    claude = tmp_path / "claude"
    ClaudeTranscript(claude, "s1", str(root)).bash("pytest -x", "1 failed", exit_code=1).write()
    runs = _git_runs(monkeypatch, tmp_path / "bin")
    _decide(tmp_path / "index", root, claude)  # the first decision computes and stores the binding
    assert runs.read_text() != ""  # it ran git (and the log sees it)
    runs.write_text("")
    _decide(tmp_path / "index", root, claude)  # a later process: a new provider, the same index
    assert runs.read_text() == ""


@pytest.mark.parametrize("change", ["merged-unrelated-history", "remote-added", "root-replaced", "new-commit"])
def test_the_stored_binding_is_recomputed_when_the_identity_can_change(change, tmp_path):
    from obelisk_session_evidence.providers.native.index.binding_cache import stored_binding

    root = _repository(tmp_path / "ledger", "ledger")
    connection = connect(MEMORY)
    before = stored_binding(connection, [str(root)])
    if change == "merged-unrelated-history":
        unrelated = _git(root, "commit-tree", "HEAD^{tree}", "-m", "unrelated root")
        _git(root, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", unrelated)
    elif change == "remote-added":
        _git(root, "remote", "add", "origin", "git@github.com:team/ledger.git")
    elif change == "root-replaced":
        root.rename(tmp_path / "ledger-old")
        _repository(root, "another repository at the same path")
    else:
        (root / "CHANGE").write_text("x")
        _git(root, "add", "CHANGE")
        _git(root, "commit", "-q", "-m", "a commit with no new root")
    after = stored_binding(connection, [str(root)])
    expected = {
        "merged-unrelated-history": ("identities",),
        "remote-added": ("url_keys",),
        "root-replaced": ("identities",),
        "new-commit": (),
    }[change]
    changed = tuple(name for name in ("identities", "url_keys") if getattr(before, name) != getattr(after, name))
    assert changed == expected
    assert after == stored_binding(connection, [str(root)])  # and stored again, valid until the next change
    connection.close()


def test_sessions_resolved_by_earlier_rules_are_resolved_again(tmp_path):
    root = _repository(tmp_path / "ledger", "ledger")
    nested = _repository(root / "vendor" / "nested", "nested")
    claude = tmp_path / "claude"
    ClaudeTranscript(claude, "s1", str(nested)).bash("pytest -x", "1 failed", exit_code=1).write()
    connection = connect(MEMORY)
    refresh_locked(connection, {"claude": [claude]})
    with atomic(connection):  # what an index written before the identity rules changed holds
        connection.execute("UPDATE sessions SET checkout_root = ?, repository_identity = NULL", (str(root),))
        write_meta(connection, "repository_resolution", "1")
    refresh_locked(connection, {"claude": [claude]})
    (checkout_root,) = connection.execute("SELECT checkout_root FROM sessions").fetchone()
    (version,) = connection.execute("SELECT value FROM meta WHERE key = 'repository_resolution'").fetchone()
    connection.close()
    assert (checkout_root, version) == (os.path.realpath(nested), "2")
