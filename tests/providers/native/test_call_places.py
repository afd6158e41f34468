"""Each tool call's own working directory (issue 25 item 3): a prior call carries the folder it ran
in, where its source records one (Codex's `workdir`, a Claude Code line's `cwd`), and a call run in
another repository's checkout is out of scope even inside a session bound to this repository."""

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.providers.native.index.older_index import before_migration
from tests.providers.native.index.test_index_repository import _git, _repository
from tests.providers.native.index.transcripts import ClaudeTranscript

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

COMMAND = "make check"
CANARY = "CANARY-other-repository-5b1e9d"
"""Planted in the other repository's command and output: never in any result."""


def _rollout(root: Path, session_id: str, cwd: str, calls: list[tuple[str, str, str | None, int, str]]) -> Path:
    """A Codex rollout: `session_meta`, then per call an `exec_command` (with its `workdir`, when
    given) and its output; calls are `(call id, command, workdir, exit code, output)`."""
    path = root / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [("session_meta", {"id": session_id, "timestamp": "2026-03-01T10:00:00.000Z", "cwd": cwd})]
    for call_id, command, workdir, code, output in calls:
        arguments = {"cmd": command} | ({"workdir": workdir} if workdir is not None else {})
        records.append(
            (
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "call_id": call_id,
                    "arguments": json.dumps(arguments),
                },
            )
        )
        text = f"Process exited with code {code}\nOutput:\n{output}"
        records.append(("response_item", {"type": "function_call_output", "call_id": call_id, "output": text}))
    with open(path, "w", encoding="utf-8") as handle:
        for minute, (kind, payload) in enumerate(records):
            stamp = f"2026-03-01T10:{minute:02d}:00.000Z"
            handle.write(json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n")
    return path


def _enablement(repo: Path, sources: dict[str, Path]) -> Enablement:
    return Enablement(
        surface="replan-history",
        agent_id="agent-a",
        project_id="project-a",
        repository_id="repo-a",
        repo_roots=[str(repo)],
        sources=list(sources),
        source_roots={source: str(root) for source, root in sources.items()},
        enabled_at=datetime(2026, 11, 1, tzinfo=UTC),
    )


def _request(terms: list[str]) -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-place",
        situation_id="situation-place",
        trigger="replan_repetition",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "tool_outcome", "decision", "file_history", "summary"],
        query_terms=terms,
        limits={"max_sessions": 20, "max_items": 50, "max_snippet_chars": 600, "max_total_chars": 20000},
    )


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """The enabled repository (with a subfolder and a linked worktree elsewhere) and another repository."""
    repo = _repository(tmp_path / "work" / "alpha", "alpha")
    (repo / "pkg").mkdir()
    worktree = tmp_path / "work" / "alpha.worktrees" / "feature"
    _git(repo, "worktree", "add", "-q", str(worktree), "-b", "feature")
    other = _repository(tmp_path / "work" / "other", "other")
    return {"repo": repo, "sub": repo / "pkg", "worktree": worktree, "other": other}


def _codex_answer(tmp_path: Path, places: dict[str, Path]) -> tuple[NativeIndexProvider, list[PriorToolCall], str]:
    codex = tmp_path / "agent" / "codex"
    _rollout(
        codex,
        "thread-1",
        str(places["repo"]),
        [
            ("c-repo", COMMAND, str(places["repo"]), 2, "make: *** [check] Error 2 at the top"),
            ("c-sub", COMMAND, str(places["sub"]), 2, "make: *** [check] Error 2 in pkg"),
            ("c-worktree", COMMAND, str(places["worktree"]), 0, "all checks passed in the worktree"),
            ("c-other", f"{COMMAND} TARGET={CANARY}", str(places["other"]), 2, f"failed: {CANARY}"),
            ("c-tmp", COMMAND, "/tmp", 2, "make: *** No rule to make target 'check'"),
        ],
    )
    provider = NativeIndexProvider(tmp_path / "state" / "index", _enablement(places["repo"], {"codex": codex}))
    answer = provider.search(_request([COMMAND, CANARY, f"{COMMAND} TARGET={CANARY}"]))
    public = answer.result.model_dump_json()
    private = json.dumps([call.model_dump(mode="json") for call in answer.prior_calls])
    return provider, answer.prior_calls, public + private


def test_codex_calls_carry_the_workdir_they_ran_in_and_its_place_in_the_repository(tmp_path, places):
    _, calls, _ = _codex_answer(tmp_path, places)
    by_output = {call.output_excerpt.splitlines()[-1]: call for call in calls}
    top = by_output["make: *** [check] Error 2 at the top"]
    sub = by_output["make: *** [check] Error 2 in pkg"]
    linked = by_output["all checks passed in the worktree"]
    elsewhere = by_output["make: *** No rule to make target 'check'"]
    assert (top.cwd, top.repository_cwd) == (str(places["repo"]), "")
    assert (sub.cwd, sub.repository_cwd) == (str(places["sub"]), "pkg")
    # A linked worktree of the same repository stays in scope, with its own place.
    assert (linked.cwd, linked.repository_cwd) == (str(places["worktree"]), "")
    # A folder that is no checkout keeps today's reading: in scope, outside the repository.
    assert (elsewhere.cwd, elsewhere.repository_cwd) == ("/tmp", None)


def test_a_codex_call_run_in_another_repository_is_neither_a_prior_call_nor_an_item(tmp_path, places):
    _, calls, everything = _codex_answer(tmp_path, places)
    assert len(calls) == 4
    assert all(call.cwd != str(places["other"]) for call in calls)
    assert CANARY not in everything


def test_the_other_repositorys_call_is_left_out_of_the_replay_timeline_too(tmp_path, places):
    provider, _, _ = _codex_answer(tmp_path, places)
    timed = list(provider.timed_calls(provider.timeline()))
    assert len(timed) == 4
    assert CANARY not in json.dumps([item.call.model_dump(mode="json") for item in timed])


def test_a_claude_call_after_a_cd_carries_the_folder_the_bash_tool_moved_to(tmp_path, places):
    claude = tmp_path / "agent" / "claude"
    transcript = ClaudeTranscript(claude, "s-cd", str(places["repo"]))
    transcript.bash("cd pkg", "")
    transcript.cwd = str(places["sub"])  # Claude Code writes each later line with the Bash tool's new cwd
    transcript.bash(COMMAND, "make: *** [check] Error 2", exit_code=2)
    transcript.cwd = str(places["other"])
    transcript.bash(f"{COMMAND} TARGET={CANARY}", f"failed: {CANARY}", exit_code=2)
    transcript.cwd = str(places["repo"])  # the file stays named after the session's first cwd
    transcript.write()
    provider = NativeIndexProvider(tmp_path / "state" / "index", _enablement(places["repo"], {"claude": claude}))
    answer = provider.search(_request([COMMAND, "cd pkg", CANARY]))
    by_command = {call.command: call for call in answer.prior_calls}
    assert (by_command["cd pkg"].cwd, by_command["cd pkg"].repository_cwd) == (str(places["repo"]), "")
    assert (by_command[COMMAND].cwd, by_command[COMMAND].repository_cwd) == (str(places["sub"]), "pkg")
    assert set(by_command) == {"cd pkg", COMMAND}
    public = answer.result.model_dump_json()
    assert CANARY not in public + json.dumps([call.model_dump(mode="json") for call in answer.prior_calls])


def test_parsers_record_a_call_place_only_where_the_source_records_one(tmp_path, places):
    rollout = _rollout(
        tmp_path / "codex",
        "thread-2",
        str(places["repo"]),
        [
            ("with", "ls", str(places["sub"]), 0, "x"),
            ("relative", "ls", "pkg", 0, "y"),
            ("without", "ls", None, 0, "z"),
        ],
    )
    calls = {call.call_id: call.cwd for call in parse_session_file(rollout, "codex").tool_calls}
    assert calls == {"with": str(places["sub"]), "relative": f"{places['repo']}/pkg", "without": None}


def test_an_index_built_before_call_places_reads_every_file_again(tmp_path, places):
    claude = tmp_path / "agent" / "claude"
    transcript = ClaudeTranscript(claude, "s-old", str(places["repo"]))
    transcript.cwd = str(places["sub"])
    transcript.bash(COMMAND, "make: *** [check] Error 2", exit_code=2)
    transcript.cwd = str(places["repo"])
    transcript.write()
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    before_migration(path, "0008_call_places", dropped_columns=("cwd", "checkout_root", "repository_identity"))
    report = refresh_index(path, {"claude": [claude]})
    assert (report.files_added, report.files_reread) == (0, 1)
    connection = connect(path)
    try:
        assert connection.execute("SELECT cwd FROM call_details").fetchall() == [(str(places["sub"]),)]
    finally:
        connection.close()
