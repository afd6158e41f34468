"""What worked after a failure the verdict rests on: its grounded successor (RFC §10).

A failure's successor is the later tool call, in the same checkout, in which the failing program
ran and succeeded: after `pytest: command not found`, the `uv run pytest` that passed; after a
refused `bun run lint`, the `bun run lint` that passed once `lint:fix` had run (not `lint:fix`,
another program). Among several, the one most like the failing command, then the earliest. A
call without a time is never placed after another, so it is never a successor; a failure with
no later success has none.
"""

from collections.abc import Iterable, Sequence

from obelisk_session_evidence.comparators.command_similarity import command_similarity
from obelisk_session_evidence.comparators.commands import CommandShape
from obelisk_session_evidence.comparators.history import PriorStep


def grounded_successors(
    units: Sequence[CommandShape], steps: Sequence[PriorStep], matched: Iterable[int], *, failed: bool
) -> frozenset[int]:
    """Ranks of the successors of the failures among the `matched` ranks that run a program of the
    route's `units`; none unless the verdict rests on a failure (`failed`)."""
    if not failed:
        return frozenset()
    programs = {unit.program for unit in units}
    by_rank = {step.index: step for step in steps}
    worked = [(step, shapes) for step in steps if step.observed_at is not None and (shapes := _succeeded(step))]
    found = set()
    for rank in matched:
        failure = by_rank.get(rank)
        if failure is None or failure.result != "failed" or failure.failing is None:
            continue
        if failure.shapes[failure.failing].program not in programs:
            continue  # a failure of a command the route does not run (it matched an earlier segment)
        successor = _successor(failure, failure.shapes[failure.failing], worked)
        if successor is not None:
            found.add(successor)
    return frozenset(found)


def _successor(
    failure: PriorStep, failing: CommandShape, worked: Sequence[tuple[PriorStep, list[CommandShape]]]
) -> int | None:
    """Rank of the later call in `failure`'s checkout where `failing`'s program succeeded, most
    like `failing`, then earliest; None when there is none."""
    best: tuple[int, float, int] | None = None  # (-similarity, when, rank): the smallest wins
    for step, shapes in worked:
        if not _later_in_same_checkout(step, failure):
            continue
        similarity = max(
            (command_similarity(failing, shape) for shape in shapes if shape.program == failing.program),
            default=None,
        )
        if similarity is None:
            continue
        assert step.observed_at is not None
        candidate = (-similarity, step.observed_at.timestamp(), step.index)
        if best is None or candidate < best:
            best = candidate
    return None if best is None else best[2]


def _later_in_same_checkout(step: PriorStep, failure: PriorStep) -> bool:
    """After the failure in time, in its checkout (an unknown checkout on either side is not another)."""
    if step.index == failure.index or step.observed_at is None or failure.observed_at is None:
        return False
    if step.checkout is not None and failure.checkout is not None and step.checkout != failure.checkout:
        return False
    return step.observed_at > failure.observed_at


def _succeeded(step: PriorStep) -> list[CommandShape]:
    """The simple commands of `step` that ran and did not fail: all of a call that succeeded, those
    before the failing one of a call that failed, none of one whose outcome is unknown."""
    if step.result == "succeeded":
        ran = range(len(step.shapes))
    elif step.result == "failed" and step.failing is not None:
        ran = range(step.failing)
    else:
        return []
    return [step.shapes[position] for position in ran if position not in step.skipped]
