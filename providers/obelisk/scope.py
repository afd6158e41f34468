"""Verifying every returned row against the plan: one row out of scope rejects the whole answer.

The template already filters, but Obelisk's helpers may ignore options they do not know (issue
#94) and the template's own checks run inside someone else's process, so nothing is trusted: each
row's source, session source, paths and timestamp are checked again here. A row whose scope cannot
be established (no path at all, a relative path, no parsable timestamp while a window is set) counts
as out of scope.
"""

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Final

from contracts.errors import ScopeViolation
from providers.obelisk.answer import Row
from providers.obelisk.plan import QueryPlan, normalised_path

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def verify_scope(rows: Iterable[Row], plan: QueryPlan) -> None:
    """Raise `ScopeViolation` (with a count, never a value) if any row is outside `plan`."""
    outside = sum(1 for row in rows if not row_in_scope(row, plan))
    if outside:
        raise ScopeViolation(f"{outside} returned row(s) outside the requested scope")


def row_in_scope(row: Row, plan: QueryPlan) -> bool:
    """True when the row's source, paths and time all lie inside the plan."""
    if row.source not in plan.sources:
        return False
    if row.session_source is not None and row.session_source != row.source:
        return False
    paths = [path for path in (row.cwd, row.project_path) if path is not None]
    if not paths or not all(path_under_roots(path, plan.roots) for path in paths):
        return False
    if plan.after is None and plan.before is None:
        return True
    moment = row_moment(row.timestamp)
    if moment is None:
        return False
    return (plan.after is None or moment >= plan.after) and (
        plan.before is None or moment <= plan.before
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
    moment = None
    if isinstance(value, int | float):
        milliseconds = value if value > 100_000_000_000 else value * 1000
        try:
            moment = _EPOCH + timedelta(milliseconds=math.floor(milliseconds))
        except (OverflowError, ValueError):
            pass
        return moment
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        pass
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment is None:
        return None
    # The template compares with `Date.parse` (milliseconds); so does this check.
    return moment.astimezone(UTC).replace(microsecond=moment.microsecond // 1000 * 1000)
