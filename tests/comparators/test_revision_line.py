"""Prior runs against the situation's revision line (issue 26 item 4): a failure at a commit off the
line is never a current failure; commits that landed on the line after a failure are later changes
for its cause; a revision git could not place changes nothing."""

from datetime import timedelta

from obelisk_session_evidence.comparators.history import prior_steps_from_calls
from obelisk_session_evidence.comparators.route_match import RouteMatch, route_match
from obelisk_session_evidence.contracts.prior_calls import PriorToolCall
from obelisk_session_evidence.contracts.revision_checks import RevisionCheck, RevisionCommit
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from tests.comparators.test_cause_aware import REPO, T0
from tests.comparators.test_cause_aware import shell as typed_shell

ON_LINE, OFF_LINE, UNPLACED = "a" * 40, "b" * 40, "c" * 40
PYTEST_FAILURE = "FAILED tests/test_auth.py::test_refresh - assert 1 == 2\n1 failed"


def shell(command: str, output: str, *, exit_code: int, minute: int, revision: str | None) -> PriorToolCall:
    return typed_shell(command, output, exit_code=exit_code, minute=minute, tool="exec_command", revision=revision)


def failed_pytest(*, minute: int = 0, revision: str | None = ON_LINE) -> PriorToolCall:
    return shell("pytest tests/test_auth.py", PYTEST_FAILURE, exit_code=1, minute=minute, revision=revision)


def ancestor(*commits: tuple[int, list[str]], truncated: bool = False) -> RevisionCheck:
    """`ON_LINE` as an ancestor, with commits (minute after T0, paths), newest first."""
    listed = [RevisionCommit(committed_at=T0 + timedelta(minutes=m), paths=paths) for m, paths in commits]
    return RevisionCheck(revision=ON_LINE, relation="ancestor", commits=listed, commits_truncated=truncated)


OFF = RevisionCheck(revision=OFF_LINE, relation="not_ancestor")
NOT_PLACED = RevisionCheck(revision=UNPLACED, relation="unknown", unchecked_reason="unknown_commit")


def match(calls: list[PriorToolCall], checks: list[RevisionCheck], command: str = "pytest tests/test_auth.py"):
    steps = prior_steps_from_calls(calls, [], roots=(REPO,))
    route = RouteProposal(action_kind="shell", commands=[command])
    return route_match(
        route,
        steps,
        thresholds=RouteThresholds(),
        revision=Revision(current="d" * 40),
        roots=(REPO,),
        revision_checks=checks,
    )


def _verdict(result: RouteMatch) -> str:
    if result.repeats_failure:
        return "failure"
    if result.repeats_failure_changed_since:
        return "changed_since_off_line" if result.repeats_failure_off_line else "changed_since"
    return "attempt" if result.repeats_attempt else "none"


def test_a_failure_off_the_line_is_never_a_current_failure():
    assert _verdict(match([failed_pytest(revision=OFF_LINE)], [OFF])) == "changed_since_off_line"
    assert match([failed_pytest(revision=OFF_LINE)], [OFF]).superseded == 1


def test_a_failure_at_a_revision_git_could_not_place_counts_as_before():
    assert _verdict(match([failed_pytest(revision=UNPLACED)], [NOT_PLACED])) == "failure"
    assert _verdict(match([failed_pytest(revision=None)], [])) == "failure"


def test_runs_on_the_line_decide_before_runs_off_it():
    on_line_failure = failed_pytest(minute=0, revision=ON_LINE)
    later_success_elsewhere = shell("pytest tests/test_auth.py", "3 passed", exit_code=0, minute=5, revision=OFF_LINE)
    assert _verdict(match([on_line_failure, later_success_elsewhere], [ancestor(), OFF])) == "failure"
    later_failure_elsewhere = failed_pytest(minute=5, revision=OFF_LINE)
    assert _verdict(match([on_line_failure, later_failure_elsewhere], [ancestor(), OFF])) == "failure"


def test_a_commit_landed_after_the_failure_on_its_file_is_a_change_since():
    failure = failed_pytest(minute=10)
    assert _verdict(match([failure], [ancestor((20, ["tests/test_auth.py"]))])) == "changed_since"


def test_commits_before_the_failure_or_on_other_files_change_nothing():
    failure = failed_pytest(minute=10)
    before = ancestor((5, ["tests/test_auth.py"]))
    assert _verdict(match([failure], [before])) == "failure"
    elsewhere = ancestor((20, ["docs/guide.md"]))
    assert _verdict(match([failure], [elsewhere])) == "failure"


def test_commits_git_did_not_list_count_as_unnamed_when_they_may_be_after_the_failure():
    failure = failed_pytest(minute=10)
    assert _verdict(match([failure], [ancestor((20, ["docs/guide.md"]), truncated=True)])) == "changed_since"
    # The oldest listed commit is before the failure: the unlisted ones are older still.
    assert _verdict(match([failure], [ancestor((20, ["docs/guide.md"]), (5, ["x"]), truncated=True)])) == "failure"


def test_a_mixed_route_is_off_line_only_when_every_changed_failure_is():
    build_failure = shell("make build", "error: x", exit_code=2, minute=0, revision=ON_LINE)
    off = failed_pytest(minute=1, revision=OFF_LINE)
    route = "make build && pytest tests/test_auth.py"
    changed_build = ancestor((3, ["Makefile"]))
    both = match([build_failure, off], [changed_build, OFF], route)
    assert _verdict(both) == "changed_since"
    only_off = match([off], [OFF], "pytest tests/test_auth.py")
    assert _verdict(only_off) == "changed_since_off_line"


def test_what_a_step_off_the_line_changed_is_no_change_to_the_line_save_an_install():
    edit_elsewhere = PriorToolCall(
        session_ref="session:" + "b" * 16,
        tool_name="Edit",
        command=f"{REPO}/tests/test_auth.py",
        cwd=REPO,
        repository_cwd="",
        observed_at=T0 + timedelta(minutes=2),
        revision_ref=OFF_LINE,
        files=[f"{REPO}/tests/test_auth.py"],
        outcome="succeeded",
    )
    assert _verdict(match([failed_pytest(), edit_elsewhere], [ancestor(), OFF])) == "failure"
    assert _verdict(match([failed_pytest(), edit_elsewhere], [ancestor()])) == "changed_since"  # not placed
    missing = shell("pytest", "ModuleNotFoundError: No module named 'yaml'", exit_code=1, minute=0, revision=ON_LINE)
    install = shell("pip install pyyaml", "Successfully installed pyyaml", exit_code=0, minute=2, revision=OFF_LINE)
    assert _verdict(match([missing, install], [ancestor(), OFF], "pytest")) == "changed_since"
