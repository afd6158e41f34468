"""Verifying every returned row against the plan: one row out of scope rejects the whole answer.

The template already filters (SQL predicates for tool calls, the script's own check for search
hits), but Obelisk's helpers silently ignore options they do not know (recordings 3.16, Obelisk
issue #94) and the checks run inside someone else's process, so nothing is trusted:

    source            one of the enablement's sources (session source equal, when given)
    session           known: an orphan row (no `sessions` row, `session` all null) has no
                      identity and is out of scope
    paths             cwd, and project_path when given, under a repository root; a row with
                      no path at all cannot be placed and is out of scope
"""

import contextlib
import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Final

from obelisk_session_evidence.contracts.errors import ScopeViolation
from obelisk_session_evidence.providers.obelisk.answer import CallRow, HitRow
from obelisk_session_evidence.providers.obelisk.plan import QueryPlan, normalised_path

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def verify_scope(calls: Iterable[CallRow], hits: Iterable[HitRow], plan: QueryPlan) -> None:
    """Raise `ScopeViolation` (with a count, never a value) if any row is outside `plan`."""
    outside = sum(1 for call in calls if not call_in_scope(call, plan))
    outside += sum(1 for hit in hits if not hit_in_scope(hit, plan))
    if outside:
        raise ScopeViolation(f"{outside} returned row(s) outside the requested scope")


def call_in_scope(call: CallRow, plan: QueryPlan) -> bool:
    """A tool call of a known session of a bound source, run inside the repository."""
    return (
        call.source in plan.sources
        and call.session_id is not None
        and _paths_in_scope((call.cwd, call.project_path), plan.roots)
    )


def hit_in_scope(hit: HitRow, plan: QueryPlan) -> bool:
    """A message of a known session of a bound source, written inside the repository."""
    return (
        hit.source in plan.sources
        and hit.session_id is not None
        and hit.session_source == hit.source
        and _paths_in_scope((hit.cwd,), plan.roots)
    )


def path_under_roots(path: str, roots: tuple[str, ...]) -> bool:
    """Path-prefix match on normalised absolute paths; a worktree under a root belongs to it."""
    normal = normalised_path(path)
    if normal is None:
        return False
    return any(normal == root or normal.startswith(root + "/") for root in roots)


def row_moment(value: str | float | int | None) -> datetime | None:
    """A row timestamp (ISO-8601, or epoch seconds or milliseconds) as an aware UTC datetime."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        milliseconds = value if value > 100_000_000_000 else value * 1000
        moment = None
        with contextlib.suppress(OverflowError, ValueError):
            moment = _EPOCH + timedelta(milliseconds=math.floor(milliseconds))
        return moment
    parsed = None
    with contextlib.suppress(ValueError):
        parsed = datetime.fromisoformat(value)
    if parsed is None:
        return None
    return (parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def _paths_in_scope(paths: tuple[str | None, ...], roots: tuple[str, ...]) -> bool:
    known = [path for path in paths if path is not None]
    return bool(known) and all(path_under_roots(path, roots) for path in known)
