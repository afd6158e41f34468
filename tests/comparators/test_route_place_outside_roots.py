"""A route's place outside every root reads as a prior call's place there does: the absolute folder
(a call's own folder, such as a linked worktree whose checkout is gone from this machine)."""

from obelisk_session_evidence.comparators.history import prior_steps_from_calls
from obelisk_session_evidence.comparators.route_match import RouteMatch, route_match
from obelisk_session_evidence.contracts.situation import RouteProposal
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from tests.comparators.test_cause_aware import REPO, shell

WORKTREE = "/home/u/projects/app.worktrees/feature"
"""Outside the root `REPO`, in no checkout on this machine: its prior calls have no `repository_cwd`."""


def _verdict(cwd: str) -> RouteMatch:
    failed = shell("bun run lint", 'error: script "lint" exited with code 1', exit_code=1, minute=0, cwd=WORKTREE)
    assert failed.repository_cwd is None
    steps = prior_steps_from_calls([failed], [], roots=(REPO,))
    route = RouteProposal(action_kind="shell", commands=["bun run lint"], cwd=cwd)
    return route_match(route, steps, thresholds=RouteThresholds(), revision=None, roots=(REPO,))


def test_the_same_command_in_the_same_folder_outside_the_roots_is_comparable():
    assert _verdict(WORKTREE).repeats_failure


def test_another_folder_outside_the_roots_with_the_same_last_two_components_is_not():
    assert not _verdict("/home/v/elsewhere/app.worktrees/feature").repeats_failure
