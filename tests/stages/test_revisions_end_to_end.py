"""Revision-aware verdicts end to end (issue 26 item 4): `decide` over a real git repository, a
provider answering with prior calls at recorded commits; the receipt counts how each was placed,
and no revision or path reaches a public output."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.contracts.snippets import tool_snippet
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.providers.failure_causes import failure_cause
from obelisk_session_evidence.stages.pipeline import PipelineRun
from tests.git_repos import GitRepo
from tests.stages.helpers import enabled_policy, item, result_for, situation_model

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
COMMAND = "pytest tests/test_auth.py -x"
OUTPUT = "FAILED tests/test_auth.py::test_refresh - assert 1 == 2\n1 failed"
CANARY_PATH = f"src/canary_{uuid.uuid4().hex}.py"


@pytest.fixture
def repo(tmp_path):
    """main: A (T0) -> B (T0+2h, changes only the canary path); side, from A: S (T0+1h)."""
    repo = GitRepo(tmp_path / "repo")
    repo.a = repo.commit({"tests/test_auth.py": "def test_refresh(): ...\n"}, at=T0)
    repo.switch("side", create=True)
    repo.s = repo.commit({"side.txt": "s\n"}, at=T0 + timedelta(hours=1))
    repo.switch("main")
    repo.b = repo.commit({CANARY_PATH: "x = 1\n"}, at=T0 + timedelta(hours=2))
    return repo


def _decide(repo: GitRepo, encoder, *calls: PriorToolCall, merge_base: str | None = None) -> PipelineRun:
    def answer(request):
        items = [item(tool_snippet(COMMAND, "exit 1", "1 failed"))]
        return ProviderAnswer(result=result_for(request, items), prior_calls=list(calls))

    revision = {"current": repo.b, **({"merge_base": merge_base} if merge_base else {})}
    return decide(
        situation_model(commands=[COMMAND], revision=revision),
        policy=enabled_policy(repo_roots=[str(repo.root)]),
        provider_factory=lambda enablement, kind: HandlerProvider(answer),
        encoder=encoder,
        digest_salt="salt",
    )


def _failure(repo: GitRepo, revision: str | None, *, minutes: int = 30) -> PriorToolCall:
    return PriorToolCall(
        session_ref="session:" + "a" * 16,
        tool_name="exec_command",
        command=COMMAND,
        exit_code=1,
        is_error=True,
        cwd=str(repo.root),
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=minutes),
        revision_ref=revision,
        output_excerpt=OUTPUT,
        outcome="failed",
        cause=failure_cause(COMMAND, exit_code=1, output=OUTPUT),
    )


def _counts(run: PipelineRun) -> tuple[int, int, int, int]:
    counted = run.decision.receipt.prior_call_revisions
    return counted.ancestor, counted.not_ancestor, counted.unchecked, counted.unrecorded


def test_a_failure_on_another_branch_is_changed_since_with_its_own_reason(repo, encoder):
    run = _decide(repo, encoder, _failure(repo, repo.s, minutes=70), merge_base=repo.a)
    decision = run.decision
    assert decision.comparison.verdict == "repeats_prior_failure_changed_since"
    assert decision.semantic_delta.reason_code == "route_repeats_failure_at_other_revision"
    assert decision.semantic_delta.outcomes == []  # new_probe_family: the same probe, on other code
    assert _counts(run) == (0, 1, 0, 0)


def test_a_failure_on_the_line_stands_when_what_landed_since_is_elsewhere(repo, encoder):
    run = _decide(repo, encoder, _failure(repo, repo.a))
    assert run.decision.comparison.verdict == "repeats_prior_failure"
    assert _counts(run) == (1, 0, 0, 0)


def test_a_commit_landed_after_the_failure_on_its_test_file_is_a_change_since(repo, encoder):
    repo.b = repo.commit({"tests/test_auth.py": "def test_refresh(): assert True\n"}, at=T0 + timedelta(hours=3))
    run = _decide(repo, encoder, _failure(repo, repo.a))
    assert run.decision.comparison.verdict == "repeats_prior_failure_changed_since"
    assert run.decision.semantic_delta.reason_code == "route_repeats_failure_after_change"
    assert _counts(run) == (1, 0, 0, 0)


def test_unplaced_revisions_count_as_before_and_the_receipt_says_how_many(repo, encoder):
    unknown_commit = "0123456789abcdef0123456789abcdef01234567"
    calls = [_failure(repo, unknown_commit), _failure(repo, None, minutes=31), _failure(repo, None, minutes=32)]
    run = _decide(repo, encoder, *calls)
    assert run.decision.comparison.verdict == "repeats_prior_failure"
    assert _counts(run) == (0, 0, 1, 2)


def test_no_revision_or_path_from_git_reaches_a_public_output(repo, encoder):
    """Canary: the changed path's name and every revision stay private."""
    runs = [
        _decide(repo, encoder, _failure(repo, repo.s, minutes=70), merge_base=repo.a),
        _decide(repo, encoder, _failure(repo, repo.a)),
    ]
    assert any(run.values.capped.revision_checks for run in runs)  # the data path was taken
    landed = [commit.paths for run in runs for check in run.values.capped.revision_checks for commit in check.commits]
    assert [CANARY_PATH] in landed
    secrets = [CANARY_PATH, "canary_", repo.a, repo.s, repo.b, repo.a[:7], repo.s[:7], repo.b[:7]]
    for run in runs:
        public = run.decision.model_dump_json()
        assert [secret for secret in secrets if secret in public] == []
