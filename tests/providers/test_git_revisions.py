"""Where git places the revisions prior calls recorded (issue 26 item 4, issue 25 item 2): asked of
real repositories built here; a check that cannot run says `unknown`, never `ancestor`."""

import stat
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from obelisk_session_evidence.contracts.prior_calls import PriorToolCall, ProviderAnswer
from obelisk_session_evidence.contracts.revision_checks import MAX_COMMIT_PATHS, MAX_REVISION_COMMITS
from obelisk_session_evidence.contracts.situation import Revision
from obelisk_session_evidence.providers.base import HandlerProvider
from obelisk_session_evidence.providers.git_revisions import RevisionChecking, check_revisions
from obelisk_session_evidence.stages.admit import admit
from obelisk_session_evidence.stages.classify_gap import classify_gap
from tests.git_repos import GIT_ENVIRONMENT, GitRepo
from tests.stages.helpers import enabled_policy, result_for, situation_model

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def line(tmp_path):
    """main: A -> B (B changes src/app.py); side, from A: S."""
    repo = GitRepo(tmp_path / "repo")
    a = repo.commit({"src/app.py": "one\n", "README": "r\n"}, at=T0)
    repo.switch("side", create=True)
    s = repo.commit({"side.txt": "s\n"}, at=T0 + timedelta(hours=1))
    repo.switch("main")
    b = repo.commit({"src/app.py": "two\n"}, at=T0 + timedelta(hours=2))
    return repo, a, s, b


def test_an_ancestor_lists_the_commits_after_it_with_their_times_and_paths(line):
    repo, a, _, b = line
    (check,) = check_revisions([a], Revision(current=b), [str(repo.root)])
    assert (check.revision, check.relation, check.unchecked_reason) == (a, "ancestor", None)
    assert [(commit.committed_at, commit.paths) for commit in check.commits] == [
        (T0 + timedelta(hours=2), ["src/app.py"])
    ]
    assert not check.commits_truncated


def test_the_current_revision_itself_is_an_ancestor_with_nothing_after_it(line):
    repo, _, _, b = line
    (check,) = check_revisions([b], Revision(current=b), [str(repo.root)])
    assert (check.relation, check.commits, check.commits_truncated) == ("ancestor", [], False)


def test_a_commit_on_another_branch_is_not_an_ancestor(line):
    repo, _, s, b = line
    (check,) = check_revisions([s], Revision(current=b, merge_base=b), [str(repo.root)])
    assert (check.relation, check.commits) == ("not_ancestor", [])


def test_an_ancestor_of_the_merge_base_counts_when_the_current_commit_is_not_here(line):
    repo, a, s, b = line
    elsewhere = "f" * 40  # the situation's commit exists only in another clone
    (on_line,) = check_revisions([a], Revision(current=elsewhere, merge_base=b), [str(repo.root)])
    assert on_line.relation == "ancestor"
    assert [commit.paths for commit in on_line.commits] == [["src/app.py"]]  # up to the merge base
    # Not an ancestor of the merge base, and the current commit cannot be asked: not known.
    (off_line,) = check_revisions([s], Revision(current=elsewhere, merge_base=b), [str(repo.root)])
    assert (off_line.relation, off_line.unchecked_reason) == ("unknown", "unknown_commit")


def test_a_merged_branch_is_on_the_line_and_its_merge_is_one_change(line):
    repo, _, s, _ = line
    merged = repo.git("merge", "--no-ff", "--quiet", "--message", "merge", "side", at=T0 + timedelta(hours=3))
    assert merged == ""
    current = repo.git("rev-parse", "HEAD")
    (check,) = check_revisions([s], Revision(current=current), [str(repo.root)])
    assert check.relation == "ancestor"
    # The merge against main (its first parent), then main's own commit.
    assert [commit.paths for commit in check.commits] == [["side.txt"], ["src/app.py"]]


def test_an_unknown_commit_is_unknown(line):
    repo, _, _, b = line
    (check,) = check_revisions(["1234567" * 5 + "12345"], Revision(current=b), [str(repo.root)])
    assert (check.relation, check.unchecked_reason) == ("unknown", "unknown_commit")


def test_no_repository_here_is_unknown_and_runs_no_git(tmp_path, line):
    _, a, _, b = line
    plain = tmp_path / "plain"
    plain.mkdir()
    checks = check_revisions([a], Revision(current=b), [str(plain), str(tmp_path / "absent")], git="/absent/git")
    assert [(c.relation, c.unchecked_reason) for c in checks] == [("unknown", "no_live_repository")]


def test_another_clone_without_the_commit_gives_way_to_the_next_root(tmp_path, line):
    repo, a, _, b = line
    empty = GitRepo(tmp_path / "empty")
    (check,) = check_revisions([a], Revision(current=b), [str(empty.root), str(repo.root)])
    assert check.relation == "ancestor"


def test_a_worktree_is_a_live_repository(tmp_path, line):
    repo, _, s, b = line
    worktree = tmp_path / "worktree"
    repo.git("worktree", "add", "--quiet", "--detach", str(worktree), b)
    (check,) = check_revisions([s], Revision(current=b), [str(worktree)])
    assert check.relation == "not_ancestor"


def test_what_git_is_never_asked_is_unknown_with_its_reason(line):
    repo, a, _, b = line
    roots = [str(repo.root)]
    assert check_revisions([a], None, roots)[0].unchecked_reason == "no_situation_revision"
    for not_a_commit in ("HEAD~1", "--output=x", "main"):
        (check,) = check_revisions([not_a_commit], Revision(current=b), roots, git="/absent/git")
        assert (check.relation, check.unchecked_reason) == ("unknown", "invalid_revision")
    (check,) = check_revisions([a], Revision(current=b), roots, git="/absent/git")
    assert (check.relation, check.unchecked_reason) == ("unknown", "git_unavailable")


def test_each_distinct_revision_is_checked_once_and_past_the_bound_none_is(line):
    repo, a, s, b = line
    many = [a, s, a, *(f"{n:07x}" for n in range(16))]
    checks = check_revisions(many, Revision(current=b), [str(repo.root)])
    assert [check.revision for check in checks] == list(dict.fromkeys(many))
    assert [check.relation for check in checks[:2]] == ["ancestor", "not_ancestor"]
    assert {check.unchecked_reason for check in checks[16:]} == {"too_many_revisions"}


def test_a_git_that_outlives_the_deadline_is_stopped_with_all_it_started(tmp_path, line):
    repo, a, _, b = line
    pid_file = tmp_path / "sleeper.pid"
    slow_git = tmp_path / "slow-git"
    slow_git.write_text(f'#!/bin/sh\nsleep 60 &\necho $! > "{pid_file}"\nwait\n', encoding="utf-8")
    slow_git.chmod(slow_git.stat().st_mode | stat.S_IXUSR)
    (check,) = check_revisions([a], Revision(current=b), [str(repo.root)], timeout=0.5, git=str(slow_git))
    assert (check.relation, check.unchecked_reason) == ("unknown", "timeout")
    sleeper = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 10
    while _alive(sleeper):  # killed with its group; reaped by init soon after
        assert time.monotonic() < deadline, "the git run's child outlived it"
        time.sleep(0.02)


def test_a_long_history_is_bounded_and_says_so(line):
    repo, a, _, _ = line
    stream = []
    for number in range(MAX_REVISION_COMMITS + 2):
        stream += [
            "commit refs/heads/main",
            f"committer test <test@example.invalid> {int(T0.timestamp()) + 10_000 + number} +0000",
            "data 1",
            "c",
            *(["from refs/heads/main^0"] if number == 0 else []),
            f"M 100644 inline many/{number}.txt",
            "data 1",
            "x",
            "",
        ]
    _fast_import(repo, "\n".join(stream) + "\n")
    wide = {f"wide/{n}.txt": "w\n" for n in range(MAX_COMMIT_PATHS + 5)}
    current = repo.commit(wide, at=T0 + timedelta(days=1))
    (check,) = check_revisions([a], Revision(current=current), [str(repo.root)])
    assert check.relation == "ancestor" and check.commits_truncated
    assert len(check.commits) == MAX_REVISION_COMMITS
    newest = check.commits[0]
    assert newest.paths_truncated and len(newest.paths) == MAX_COMMIT_PATHS
    assert not check.commits[1].paths_truncated


def test_the_wrapper_checks_each_recorded_revision_of_an_answer_and_nothing_without_one(line):
    repo, a, s, b = line

    def answer(request, revisions):
        calls = [_call(revision) for revision in revisions]
        return ProviderAnswer(result=result_for(request, []), prior_calls=calls)

    situation = situation_model(revision={"current": b})
    request = admit(situation, classify_gap(situation), policy=enabled_policy()).request
    checked = RevisionChecking(HandlerProvider(lambda r: answer(r, [a, s, None, a])), [str(repo.root)])
    assert [(c.revision, c.relation) for c in checked.search(request).revision_checks] == [
        (a, "ancestor"),
        (s, "not_ancestor"),
    ]
    unrecorded = RevisionChecking(HandlerProvider(lambda r: answer(r, [None])), [str(repo.root)], git="/absent/git")
    assert unrecorded.search(request).revision_checks == []


def _call(revision: str | None) -> PriorToolCall:
    return PriorToolCall(
        session_ref="session:" + "a" * 16, tool_name="Bash", command="make", exit_code=0, revision_ref=revision
    )


def _fast_import(repo: GitRepo, stream: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo.root), "fast-import", "--quiet"],
        input=stream.encode(),
        env=GIT_ENVIRONMENT,
        check=True,
        timeout=60,
    )
    repo.git("reset", "--quiet", "--hard", "main")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie is dead, waiting for init to reap it
