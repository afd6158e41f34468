"""index_freshness and index_revision from the `index_state` markers."""

import pytest

from providers.obelisk.answer import Counts, Marker
from providers.obelisk.freshness import index_freshness, index_revision

NOW = 1_800_000_000_000
OK = Counts(
    hits=0,
    not_literal=0,
    out_of_scope=0,
    eligible=0,
    returned=0,
    search_errors=0,
    saturated_terms=0,
    marker_lookup_failed=False,
    session_lookup_failed=False,
)


def _markers(**mtimes: float | None) -> list[Marker]:
    return [Marker(key=f"__{key}__", mtime=value) for key, value in mtimes.items()]


@pytest.mark.parametrize(
    ("markers", "freshness"),
    [
        ({}, "unknown"),
        ({"app_heartbeat": NOW}, "incomplete"),
        ({"last_build": NOW - 1000}, "unknown"),
        ({"last_build": None, "last_source_mtime": NOW}, "unknown"),
        ({"last_build": NOW - 1000, "last_source_mtime": NOW - 5000}, "fresh"),
        ({"last_build": NOW - 1000, "last_source_mtime": NOW - 500}, "stale"),
        ({"last_build": NOW - 700_000, "last_source_mtime": NOW - 800_000}, "stale"),
        ({"last_build": NOW + 3_600_000, "last_source_mtime": NOW}, "unknown"),
    ],
)
def test_index_freshness(markers: dict, freshness: str) -> None:
    assert index_freshness(_markers(**markers), OK, now_ms=NOW, max_age_s=600) == freshness


@pytest.mark.parametrize(
    "counts",
    [
        OK.model_copy(update={"search_errors": 1}),
        OK.model_copy(update={"session_lookup_failed": True}),
    ],
)
def test_index_freshness_partial_lookup_is_incomplete(counts: Counts) -> None:
    markers = _markers(last_build=NOW - 1000, last_source_mtime=NOW - 5000)
    assert index_freshness(markers, counts, now_ms=NOW, max_age_s=600) == "incomplete"


def test_index_revision_unknown_without_markers() -> None:
    assert index_revision([]) == "unknown"


def test_index_revision_follows_build_markers_not_heartbeats() -> None:
    base = index_revision(_markers(last_build=1, last_source_mtime=2, app_heartbeat=3))
    assert base.startswith("obelisk-index:sha256:")
    assert base == index_revision(_markers(app_heartbeat=99, last_source_mtime=2, last_build=1))
    assert base != index_revision(_markers(last_build=4, last_source_mtime=2, app_heartbeat=3))
