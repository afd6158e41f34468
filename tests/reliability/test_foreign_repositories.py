"""Attacks on the repository scope: sessions that look like this repository's and are not.

Each case once counted as this repository's history and flipped a verdict: a cwd under the root
that is really another repository (nested, another repository's worktree, a symbolic link to one),
a repository that merged this one's history, a Codex session whose recorded remote is foreign, and a
session file that is a link leaving the agent's folder (to another agent's sessions). The stand-ins
are real `git` repositories under `tmp_path`; the in-scope controls (the root itself and a linked
worktree of it placed elsewhere) must still be found.
"""

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.providers.native.index.results import session_ref
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.native.index.test_index_repository import _git, _repository
from tests.providers.native.index.transcripts import ClaudeTranscript

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

COMMAND = "pytest -x tests/test_ledger.py"
IN_SCOPE = ("root", "own-worktree-elsewhere")
ATTACKS = ("nested-repository", "other-repositorys-worktree", "symlink-to-other-repository", "merged-history")


def _merged_history(path: Path, origin: Path) -> Path:
    """A clone of `origin` that merged an unrelated history whose root commit sorts after origin's,
    so "the lexically first root commit" of both is origin's."""
    _git(path.parent, "clone", "-q", str(origin), str(path))
    (origin_root,) = _git(origin, "rev-list", "--max-parents=0", "HEAD").split()
    for attempt in range(64):  # a root commit of the same tree: no conflict to merge
        unrelated = _git(path, "commit-tree", "HEAD^{tree}", "-m", f"unrelated root {attempt}")
        if unrelated > origin_root:
            break
    _git(path, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", unrelated)
    return path


def _codex_session(root: Path, session_id: str, cwd: str, remote: str) -> None:
    path = root / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    git = {"commit_hash": "0" * 40, "branch": "main", "repository_url": remote}
    call = {
        "type": "function_call",
        "name": "exec_command",
        "call_id": "c1",
        "arguments": json.dumps({"cmd": f"{COMMAND} -k {session_id}"}),
    }
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": f"Process exited with code 1\nOutput:\n1 failed in {session_id}",
    }
    records = [
        ("session_meta", {"id": session_id, "timestamp": "2026-03-01T10:00:00.000Z", "cwd": cwd, "git": git}),
        ("response_item", call),
        ("response_item", output),
    ]
    with open(path, "w", encoding="utf-8") as handle:
        for kind, payload in records:
            handle.write(json.dumps({"timestamp": "2026-03-01T10:00:01.000Z", "type": kind, "payload": payload}) + "\n")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The enabled repository, the foreign ones placed to look like it, and one session in each."""
    base = tmp_path_factory.mktemp("foreign")
    root = _repository(base / "work" / "ledger", "ledger")
    _git(root, "remote", "add", "origin", "git@github.com:team/ledger.git")
    other = _repository(base / "work" / "other", "other")
    _git(root, "worktree", "add", "-q", str(base / "elsewhere" / "ledger-feature"), "-b", "feature")
    _repository(root / "vendor" / "nested", "nested")
    _git(other, "worktree", "add", "-q", str(root / "wt-of-other"), "-b", "other-feature")
    (root / "link-to-other").symlink_to(other)
    merged = _merged_history(base / "elsewhere" / "merged", root)
    cwds = {
        "root": root / "src",
        "own-worktree-elsewhere": base / "elsewhere" / "ledger-feature",
        "nested-repository": root / "vendor" / "nested",
        "other-repositorys-worktree": root / "wt-of-other",
        "symlink-to-other-repository": root / "link-to-other",
        "merged-history": merged,
    }
    (root / "src").mkdir()
    claude, codex = base / "agent" / "claude", base / "agent" / "codex"
    for name, cwd in cwds.items():
        ClaudeTranscript(claude, name, str(cwd)).bash(
            f"{COMMAND} -k {name}", f"1 failed in {name}", exit_code=1
        ).write()
    _codex_session(codex, "codex-own-remote", str(root / "src"), "https://github.com/team/ledger")
    _codex_session(codex, "codex-foreign-remote", str(root / "src"), "https://github.com/evil/other.git")
    enablement = Enablement(
        surface="replan-history",
        agent_id="agent-a",
        project_id="project-a",
        repository_id="repo-a",
        repo_roots=[str(root)],
        sources=["claude", "codex"],
        source_roots={"claude": str(claude), "codex": str(codex)},
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )
    provider = NativeIndexProvider(base / "state" / "index", enablement)
    request = HistoricalEvidenceRequest(
        request_id="req-foreign",
        situation_id="situation-foreign",
        trigger="replan_repetition",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "tool_outcome"],
        query_terms=[COMMAND],
        limits={"max_sessions": 20, "max_items": 50, "max_snippet_chars": 600, "max_total_chars": 20000},
    )
    result = provider.search(request).result
    return {item.session_ref for item in result.items}


@pytest.mark.parametrize(("source", "name"), [*(("claude", name) for name in IN_SCOPE), ("codex", "codex-own-remote")])
def test_sessions_of_this_repository_are_found(world, source, name):
    assert session_ref(source, name) in world


@pytest.mark.parametrize("name", ATTACKS)
def test_a_cwd_that_is_another_repository_is_excluded(world, name):
    assert session_ref("claude", name) not in world


def test_a_codex_session_whose_recorded_remote_is_foreign_is_excluded(world):
    assert session_ref("codex", "codex-foreign-remote") not in world
