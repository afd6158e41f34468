"""Prior runs against the situation's revision line, as git placed them (`contracts.revision_checks`).

A run at a commit that is not an ancestor of the situation's revision (nor of its merge base) ran
on other code (another branch, rewritten history): a failure there is never a current failure
(compare-route says `route_repeats_failure_at_other_revision`, verdict
`repeats_prior_failure_changed_since`); while runs on the line exist, only they decide, and what a
step off the line changed (save an install) is no change to the line. For a failure at an
ancestor, the commits that landed on the line after it are one more later change for the cause
rules. An `unknown` relation changes nothing: the run counts as it always did, and
the receipt counts it (docs/revisions.md).
"""

from collections.abc import Mapping, Sequence
from typing import TypeVar

from obelisk_session_evidence.comparators.cause_changes import Change
from obelisk_session_evidence.comparators.history import PriorStep
from obelisk_session_evidence.contracts.revision_checks import RevisionCheck

RevisionLine = Mapping[str, RevisionCheck]
"""Each checked revision (as the calls recorded it) and where git placed it."""
Run = TypeVar("Run", bound=tuple[PriorStep, int, int, bool])


def revision_line(checks: Sequence[RevisionCheck]) -> RevisionLine:
    """The checks by recorded revision."""
    return {check.revision: check for check in checks}


def off_line(step: PriorStep, line: RevisionLine) -> bool:
    """The step ran at a commit git placed off the situation's line."""
    check = line.get(step.revision_ref) if step.revision_ref else None
    return check is not None and check.relation == "not_ancestor"


def on_line_first(runs: list[Run], line: RevisionLine) -> list[Run]:
    """The runs on the line (or not placed), when there are any; else every run."""
    on_line = [run for run in runs if not off_line(run[0], line)]
    return on_line or runs


def changes_on_line(steps: Sequence[PriorStep], line: RevisionLine) -> list[PriorStep]:
    """The steps whose changes reach the line: not those made on other code, save installs (an
    environment outlives a branch switch)."""
    return [step for step in steps if step.installs or not off_line(step, line)]


def landed_since(failure: PriorStep, line: RevisionLine) -> list[Change]:
    """The commits that landed on the line after `failure`, as one change (none when nothing did).

    A failure with no time is placed at its revision: every commit after it counts. Commits git
    did not list (older than those it did) count as unnamed files when they may be after it."""
    check = line.get(failure.revision_ref) if failure.revision_ref else None
    if check is None or check.relation != "ancestor":
        return []
    after = [
        commit for commit in check.commits if failure.observed_at is None or commit.committed_at > failure.observed_at
    ]
    unlisted_after = check.commits_truncated and len(after) == len(check.commits)
    unnamed = unlisted_after or any(commit.paths_truncated for commit in after)
    paths = tuple(dict.fromkeys(path for commit in after for path in commit.paths))
    if not paths and not unnamed:
        return []
    return [Change(paths=paths, unnamed=unnamed, installs=False, programs=())]
