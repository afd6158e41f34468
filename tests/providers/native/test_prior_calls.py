"""The native provider's private prior calls: what ran, where, how it ended; first in rank; never public."""

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.evidence import HistoricalEvidenceRequest
from obelisk_session_evidence.contracts.prior_calls import MAX_CALL_OUTPUT_CHARS
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.index.calls import PriorCallBuilder
from obelisk_session_evidence.providers.native.index.repository import RepositoryBinding
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from obelisk_session_evidence.stages.pipeline import PipelineDependencies, run_pipeline
from tests.providers.native.conftest import REAL_CORPUS, requires_real_corpus
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.stages.helpers import enabled_policy, situation_model

HEREDOC_COMMIT = (
    "git add -A && git commit --no-verify -m \"$(cat <<'EOF'\nfeat: bounded retrieval\n\n"
    + "Long body line explaining the change.\n" * 80
    + 'EOF\n)"'
)


def _enablement(root: Path, **overrides) -> Enablement:
    return Enablement(
        **{
            "surface": "replan-history",
            "agent_id": "agent-a",
            "project_id": "project-a",
            "repository_id": "repo-a",
            "repo_roots": ["/work/alpha"],
            "sources": ["claude"],
            "source_roots": {"claude": str(root)},
            "enabled_at": datetime(2026, 11, 29, tzinfo=UTC),
            **overrides,
        }
    )


def _request(terms, **limits) -> HistoricalEvidenceRequest:
    return HistoricalEvidenceRequest(
        request_id="req-1",
        situation_id="situation-1",
        trigger="replan_repetition",
        scope={"agent_id": "agent-a", "project_id": "project-a", "repository_id": "repo-a"},
        evidence_types=["prior_failure", "decision", "file_history", "tool_outcome", "summary"],
        query_terms=list(terms),
        limits={"max_sessions": 20, "max_items": 12, "max_snippet_chars": 600, "max_total_chars": 6000, **limits},
    )


def test_prior_calls_carry_the_whole_command_its_place_outcome_files_and_bounded_output(tmp_path):
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "s1", "/work/alpha/src")
    session.bash(HEREDOC_COMMIT, "error: pre-commit hook failed\n" + "x" * 5000, exit_code=1)
    session.call("Read", {"file_path": "/work/alpha/src/auth.py"}, "def check(): ...")
    session.write()
    provider = NativeIndexProvider(tmp_path / "index", _enablement(root))
    answer = provider.search(_request([HEREDOC_COMMIT[:256], "src/auth.py"]))
    commit = next(call for call in answer.prior_calls if call.tool_name == "Bash")
    assert commit.command == HEREDOC_COMMIT and len(HEREDOC_COMMIT) > 2000 and "\n" in commit.command
    assert (commit.exit_code, commit.is_error, commit.command_truncated) == (1, True, False)
    assert (commit.cwd, commit.repository_cwd) == ("/work/alpha/src", "")
    assert commit.observed_at is not None and commit.observed_at.tzinfo is not None
    assert commit.output_truncated and len(commit.output_excerpt) <= MAX_CALL_OUTPUT_CHARS
    assert commit.output_excerpt.startswith("Exit code 1\nerror: pre-commit hook failed")
    read = next(call for call in answer.prior_calls if call.tool_name == "Read")
    assert (read.command, read.files, read.is_error) == ("/work/alpha/src/auth.py", ["/work/alpha/src/auth.py"], False)
    assert {call.session_ref for call in answer.prior_calls} == {item.session_ref for item in answer.result.items}


def test_the_commands_prior_failure_ranks_first_however_many_rows_the_path_words_match(tmp_path):
    """Issue 13 item 6: forty Read/Glob calls of the route's file do not push its one failure out."""
    root = tmp_path / "claude"
    noisy = ClaudeTranscript(root, "noisy", "/work/alpha")
    for number in range(40):
        noisy.call("Read", {"file_path": f"/work/alpha/tests/test_auth.py#{number}"}, "tests/test_auth.py contents")
        noisy.call("Glob", {"pattern": "tests/test_auth.py"}, "tests/test_auth.py")
    noisy.write()
    ClaudeTranscript(root, "failed", "/work/alpha").bash(
        "pytest tests/test_auth.py -x", "1 failed", exit_code=1
    ).write()
    provider = NativeIndexProvider(tmp_path / "index", _enablement(root))
    answer = provider.search(_request(["pytest tests/test_auth.py -q", "tests/test_auth.py", "auth"], max_items=4))
    assert answer.result.items[0].evidence_type == "prior_failure"
    assert answer.result.items[0].snippet.startswith("$ pytest tests/test_auth.py -x")
    assert answer.prior_calls[0].command == "pytest tests/test_auth.py -x"
    assert answer.result.truncated and answer.result.omitted_count > 0


ROOTS_WITHOUT_CHECKOUTS = RepositoryBinding(roots=("/work/alpha", "/work/alpha-wt/feature"), identities=(), url_keys=())
"""Two roots, neither a checkout on this machine."""


@pytest.mark.parametrize(
    ("cwd", "identity", "expected"),
    [
        ("/work/alpha", None, ""),
        # No checkout on this machine to tell a subfolder from: the session's folder is its checkout
        # (as a worktree under a worktree parent is), so a root's sessions are all at the top.
        ("/work/alpha/src/lib", None, ""),
        ("/work/alpha-wt/feature/src", None, ""),
        ("/tmp", None, None),
        ("/work/alphabet", None, None),
        (None, None, None),
    ],
)
def test_repository_cwd_without_a_checkout_on_disk(cwd, identity, expected):
    builder = PriorCallBuilder(ROOTS_WITHOUT_CHECKOUTS)
    assert builder.repository_cwd(cwd, identity=identity) == expected


@pytest.mark.parametrize(
    ("cwd", "session_cwd", "expected"),
    [
        # A call's own folder under its session's (after a `cd`): that folder of the session's checkout.
        ("/work/alpha/packages/codegen", "/work/alpha", "packages/codegen"),
        ("/work/alpha-wt/feature/src", "/work/alpha-wt/feature", "src"),
        ("/work/alpha", "/work/alpha", ""),
        # Outside the session's folder, or a session outside every root: as before.
        ("/work/alpha/src", "/work/elsewhere", ""),
        ("/tmp/x", "/tmp", None),
    ],
)
def test_a_calls_folder_gone_from_this_machine_is_placed_by_its_sessions_folder(cwd, session_cwd, expected):
    builder = PriorCallBuilder(ROOTS_WITHOUT_CHECKOUTS)
    assert builder.repository_cwd(cwd, identity=None, session_cwd=session_cwd) == expected


def test_repository_cwd_follows_a_linked_worktree_or_clone_to_its_top(tmp_path):
    main, linked = tmp_path / "main", tmp_path / "elsewhere" / "wt"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (linked / "pkg").mkdir(parents=True)
    (linked / ".git").write_text(f"gitdir: {main}/.git/worktrees/wt\n")
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / "app").mkdir()
    builder = PriorCallBuilder(RepositoryBinding(roots=(str(main),), identities=("rootcommit:same",), url_keys=()))
    assert builder.repository_cwd(str(linked / "pkg"), identity=None) == "pkg"
    assert builder.repository_cwd(str(clone / "app"), identity="rootcommit:same") == "app"
    assert builder.repository_cwd(str(clone / "app"), identity="rootcommit:other") is None


CANARY = "CANARY-PRIOR-CALL-5e1f"


def test_prior_calls_never_reach_the_decision_receipt_or_logs(tmp_path, encoder, caplog):
    """Canary in a call's command, output, cwd and files: it reaches the private prior calls only."""
    root = tmp_path / "claude"
    cwd = f"/work/alpha/{CANARY}"
    session = ClaudeTranscript(root, "s1", cwd)
    session.bash(f"pytest tests/test_auth.py -x --tag {CANARY}\nsecond line", f"FAILED {CANARY}", exit_code=1)
    session.call("Read", {"file_path": f"/work/alpha/{CANARY}.py"}, CANARY)
    session.write()
    overrides = {"repo_roots": ["/work/alpha"], "sources": ["claude"], "source_roots": {"claude": str(root)}}
    policy = enabled_policy(**overrides)
    provider = NativeIndexProvider(tmp_path / "index", policy.config.enablements[0])
    dependencies = PipelineDependencies(
        policy=policy, provider=provider, encoder=encoder, thresholds=RouteThresholds(), digest_salt="salt"
    )
    situation = situation_model(commands=["pytest tests/test_auth.py -x"], files=[f"{CANARY}.py"])
    with caplog.at_level(logging.DEBUG):
        run = run_pipeline(situation, dependencies)
    decision, calls = run.decision, run.values.capped.prior_calls
    assert any(CANARY in call.command and CANARY in (call.cwd or "") for call in calls)  # the path carries it
    assert any(CANARY in call.output_excerpt for call in calls)
    assert any(any(CANARY in path for path in call.files) for call in calls)
    assert decision.receipt is not None and CANARY not in decision.receipt.model_dump_json()
    assert CANARY not in decision.model_dump_json()
    assert CANARY not in caplog.text


@requires_real_corpus
def test_real_heredoc_commit_and_lint_failures_come_back_whole_and_first(tmp_path):
    """Real Claude Code sessions (claude-spotter): a heredoc commit that failed six times and a
    `mix credo` run that exited 2 twice come back as prior calls, whole, newest first, at the front."""
    root = REAL_CORPUS / "claude-spotter"
    worktrees = "/home/USER/projects/spotter-worktrees"
    provider = NativeIndexProvider(
        tmp_path / "index", _enablement(root, repo_roots=[f"{worktrees}/spotter-4te", f"{worktrees}/spotter-a0y"])
    )
    commit = 'git add -A && git commit -m "feat: instrument hook controllers with trace correlation and error spans'
    answer = provider.search(_request([commit, "lib/spotter_web/controllers/hooks_controller.ex"], max_items=6))
    commits = [call for call in answer.prior_calls if call.command.startswith(commit)]
    assert len(commits) == 6 and all(call.is_error for call in commits)
    assert all("\n" in call.command and len(call.command) >= 1167 for call in commits)
    assert [call.observed_at for call in commits] == sorted((call.observed_at for call in commits), reverse=True)
    assert {call.repository_cwd for call in commits} == {""}  # the worktree's own root
    assert answer.result.items[0].evidence_type == "prior_failure"
    assert answer.result.items[0].snippet.startswith("$ git add -A && git commit")
    credo = "mix credo --strict lib/spotter/services/active_session_registry.ex 2>&1"
    answer = provider.search(_request([credo, "lib/spotter_web/controllers/hooks_controller.ex"], max_items=6))
    runs = [call for call in answer.prior_calls if call.command.startswith("mix credo --strict")]
    assert runs and runs[0].exit_code in (2, 6) and all(call.tool_name == "Bash" for call in runs)


def test_the_change_lane_brings_the_edits_and_formatters_after_the_commands_runs(tmp_path):
    """What changed after the proposed command's newest run arrives beside it, however much else
    the session did: an Edit and a `mix format` (the real shape of claude-spotter/ae4a77f8-…)."""
    root = tmp_path / "claude"
    session = ClaudeTranscript(root, "s1", "/work/alpha")
    session.call("Edit", {"file_path": "/work/alpha/lib/before.ex", "old_string": "a", "new_string": "b"}, "ok")
    session.bash(
        "git add -A && git commit -m 'feat: otel'",
        "Pre-commit validation failed:\n[FORMAT] Run 'mix format'",
        exit_code=1,
    )
    for number in range(30):
        session.call("Read", {"file_path": f"/work/alpha/lib/file_{number}.ex"}, "defmodule X do end")
    session.bash("git status", "On branch main")
    session.bash("mix format", "")
    session.call("Edit", {"file_path": "/work/alpha/lib/after.ex", "old_string": "a", "new_string": "b"}, "ok")
    session.write()
    provider = NativeIndexProvider(tmp_path / "index", _enablement(root))
    calls = provider.search(_request(["git add -A && git commit -m 'feat: otel'"], max_items=4)).prior_calls
    commands = [call.command for call in calls]
    assert commands[0].startswith("git add -A && git commit")
    assert "mix format" in commands[1:3] and "/work/alpha/lib/after.ex" in commands[1:3]
    assert "git status" not in commands[:3]
    before = commands.index("/work/alpha/lib/before.ex") if "/work/alpha/lib/before.ex" in commands else len(commands)
    assert before > 2  # an edit before the run is no change since it; the lane does not bring it
