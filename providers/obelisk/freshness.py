"""Index freshness and revision from Obelisk's `index_state` marker rows.

No Obelisk output carries an index revision; the marker rows are the only evidence of when the
index was last built and how new the sources it saw were (mtimes in epoch milliseconds). Without
them freshness is `unknown`, never `fresh`:

    no markers                                          unknown
    markers, but no __last_build__ row                  incomplete (no build has completed)
    __last_build__ or __last_source_mtime__ has no mtime,
      or __last_source_mtime__ is missing, or the build
      lies in the future                                unknown
    newest source newer than the last build             stale
    last build older than max_index_age_s               stale
    otherwise                                           fresh

A lookup the template could not finish (a `search()` or `sessions` lookup failed) downgrades
`fresh` to `incomplete`: absence from a partial lookup is not evidence either.
"""

from collections.abc import Iterable
from typing import Final

from contracts.base import Freshness
from contracts.digests import canonical_digest
from providers.obelisk.answer import Counts, Marker

LAST_BUILD: Final = "__last_build__"
LAST_SOURCE_MTIME: Final = "__last_source_mtime__"
HEARTBEAT: Final = "__app_heartbeat__"
CLOCK_SKEW_MS: Final = 5 * 60 * 1000
UNKNOWN_REVISION: Final = "unknown"


def index_freshness(
    markers: Iterable[Marker], counts: Counts, *, now_ms: float, max_age_s: float
) -> Freshness:
    """The index's freshness from its markers, downgraded when the lookup was partial."""
    freshness = _marker_freshness(
        {marker.key: marker.mtime for marker in markers}, now_ms=now_ms, max_age_s=max_age_s
    )
    partial = counts.search_errors > 0 or counts.session_lookup_failed
    return "incomplete" if freshness == "fresh" and partial else freshness


def index_revision(markers: Iterable[Marker]) -> str:
    """`obelisk-index:sha256:<hex>` over the marker values (heartbeats excluded), or `unknown`."""
    values = sorted((marker.key, marker.mtime) for marker in markers if marker.key != HEARTBEAT)
    if not values:
        return UNKNOWN_REVISION
    return "obelisk-index:" + canonical_digest([[key, mtime] for key, mtime in values])


def _marker_freshness(
    mtimes: dict[str, float | int | None], *, now_ms: float, max_age_s: float
) -> Freshness:
    if not mtimes:
        return "unknown"
    if LAST_BUILD not in mtimes:
        return "incomplete"
    built, newest_source = mtimes[LAST_BUILD], mtimes.get(LAST_SOURCE_MTIME)
    if built is None or newest_source is None or built > now_ms + CLOCK_SKEW_MS:
        return "unknown"
    if newest_source > built or now_ms - built > max_age_s * 1000:
        return "stale"
    return "fresh"
