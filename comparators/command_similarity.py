"""Comparing command shapes: how close two simple commands are, and whether they ran in the
same place. Canonical forms (`comparators.commands`) already absorb spelling; what is left
to compare is meaning."""

from typing import Final

from obelisk_session_evidence.comparators.commands import CommandShape
from obelisk_session_evidence.comparators.inline_scripts import same_commit_subject

_CUT_MIN_CHARACTERS: Final = 16
"""Two targets are the same when equal, or when one of at least this many characters is the other
with its last character cut (a cut snippet); a character changed anywhere else names another thing
(`c3f1dae^:a.yml` against `c3f1dae:a.yml`, `v0.15.0` against `v0.16.0`)."""


def same_place(proposed: CommandShape, historical: CommandShape) -> bool:
    """True when both ran in the same place: the same cwd, or anywhere in the repository for a
    command whose path targets are already repository-relative; unknown matches anything."""
    if proposed.cwd is None or historical.cwd is None or proposed.cwd == historical.cwd:
        return True
    inside = not proposed.cwd.startswith(("/", "<")) and not historical.cwd.startswith(("/", "<"))
    return inside and bool(proposed.paths or historical.paths)


def command_similarity(proposed: CommandShape, historical: CommandShape) -> int:
    """0–100: 0 for another program, else the lower of flag and target agreement.

    A changed flag or target must pull the score far down rather than shave a few points off a
    string ratio.
    """
    if proposed.program != historical.program:
        return 0
    flag_score = _jaccard(set(proposed.flags), set(historical.flags))
    target_score = _target_agreement(
        proposed.targets, historical.targets, commit_message=proposed.program == "git commit"
    )
    return min(flag_score, target_score)


def _target_agreement(proposed: tuple[str, ...], historical: tuple[str, ...], *, commit_message: bool) -> int:
    """100 × targets matched one to one / all distinct targets (`_same_target`; a commit's subject
    also by `same_commit_subject`)."""
    if not proposed and not historical:
        return 100
    remaining = list(historical)
    matched = 0
    for target in proposed:
        for index, candidate in enumerate(remaining):
            if _same_target(target, candidate) or (commit_message and same_commit_subject(target, candidate)):
                matched += 1
                del remaining[index]
                break
    union = len(proposed) + len(historical) - matched
    return round(100 * matched / union)


def _same_target(a: str, b: str) -> bool:
    shorter, longer = sorted((a, b), key=len)
    cut = len(longer) == len(shorter) + 1 and len(shorter) >= _CUT_MIN_CHARACTERS and longer.startswith(shorter)
    return a == b or cut


def _jaccard(a: set[str], b: set[str]) -> int:
    if not a and not b:
        return 100
    return round(100 * len(a & b) / len(a | b))
