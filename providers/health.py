"""Each backend's health, for `enable` and `status`: probed now, reported honestly.

A backend that cannot be probed (its module is missing, or the probe itself fails) is `unknown`
or `unavailable` with a reason code, never `available`; an index without evidence of freshness
is never `fresh`. Probes run no lookup: Obelisk is asked only for its version (a query would
refresh its index), and the native index is read, never refreshed.
"""

from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.base import Freshness
from obelisk_session_evidence.contracts.config import Enablement
from obelisk_session_evidence.contracts.errors import EvidenceError
from obelisk_session_evidence.contracts.lifecycle import IndexHealth, ProviderHealth
from obelisk_session_evidence.contracts.reason_codes import IndexHealthCode, ProviderHealthCode

PROBE_TIMEOUT_S: Final = 10.0
"""Budget for probing a backend (Obelisk: Node and `--version`, then the usage text)."""
UNKNOWN_INDEX: Final = IndexHealth(
    freshness="unknown", index_revision=None, counts={}, usable=False, reason_code="index_status_unknown"
)
_NATIVE_INDEX_REASONS: Final[dict[Freshness, IndexHealthCode]] = {
    "fresh": "index_fresh",
    "stale": "index_stale",
    "incomplete": "index_incomplete",
    "unknown": "index_not_refreshed",
}
_NATIVE_COUNTS: Final = ("files", "sessions", "messages", "tool_calls", "summaries", "failures")


def provider_health(index_dir: Path, enablement: Enablement) -> ProviderHealth:
    """Probe the backend the enablement names; a probe fault is a reason code, not an exception."""
    try:
        if enablement.provider == "obelisk":
            return _obelisk_health(enablement)
        return _native_health()
    except EvidenceError as error:
        return _unavailable(enablement, error.reason_code)
    except Exception:
        return _unavailable(enablement, "provider_probe_failed")


def index_health(index_dir: Path, enablement: Enablement) -> IndexHealth:
    """The index's freshness over this scope's roots, its revision and counts, or why unknown."""
    try:
        if enablement.provider == "obelisk":
            return _obelisk_index_health(enablement)
        return _native_index_health(index_dir, enablement)
    except EvidenceError as error:
        return UNKNOWN_INDEX.model_copy(update={"reason_code": error.reason_code})
    except Exception:
        return UNKNOWN_INDEX.model_copy(update={"reason_code": "index_probe_failed"})


def _unavailable(enablement: Enablement, reason_code: ProviderHealthCode) -> ProviderHealth:
    return ProviderHealth(kind=enablement.provider, state="unavailable", provider_version=None, reason_code=reason_code)


def _native_health() -> ProviderHealth:
    """The embedded index: available when SQLite here can hold it (FTS5, the migrations)."""
    from obelisk_session_evidence.providers.native.index.store import MEMORY, connect
    from obelisk_session_evidence.providers.native.provider import PROVIDER_VERSION

    connect(MEMORY).close()
    return ProviderHealth(
        kind="native", state="available", provider_version=PROVIDER_VERSION, reason_code="provider_available"
    )


def _native_index_health(index_dir: Path, enablement: Enablement) -> IndexHealth:
    """Read (never refresh) the native index; freshness is judged over this scope's roots only."""
    from obelisk_session_evidence.providers.native.index import index_file, index_status
    from obelisk_session_evidence.providers.native.index.revision import UNKNOWN_REVISION
    from obelisk_session_evidence.providers.native.index.scope import enablement_roots
    from obelisk_session_evidence.providers.native.index.status import root_keys

    roots = enablement_roots(enablement)
    report = index_status(index_file(index_dir), roots=roots)
    if not report.exists:
        return UNKNOWN_INDEX.model_copy(update={"reason_code": "index_absent"})
    counts = report.model_dump(include=set(_NATIVE_COUNTS))
    scope_roots = set(root_keys(roots))
    incomplete = [
        root
        for root in report.roots
        if (root.source, root.path) in scope_roots and (root.state != "indexed" or root.failed_files)
    ]
    return IndexHealth(
        freshness=report.freshness,
        index_revision=None if report.index_revision == UNKNOWN_REVISION else report.index_revision,
        counts={name: counts[name] for name in _NATIVE_COUNTS},
        # A stale index is brought up to date by the next lookup (an incremental refresh).
        usable=report.freshness in ("fresh", "stale"),
        reason_code=_NATIVE_INDEX_REASONS[report.freshness],
        incomplete_roots=incomplete if report.freshness == "incomplete" else [],
    )


def _obelisk_health(enablement: Enablement) -> ProviderHealth:
    """Find and probe the CLI (`--version`, variant); runs no query, so no index refresh."""
    from obelisk_session_evidence.providers.obelisk.discovery import find_binary, probe_cli
    from obelisk_session_evidence.providers.obelisk.process import Deadline
    from obelisk_session_evidence.providers.obelisk.provider import provider_version_for

    probe = probe_cli(find_binary(None, enablement.obelisk_bin), deadline=Deadline(PROBE_TIMEOUT_S))
    return ProviderHealth(
        kind="obelisk",
        state="available",
        provider_version=provider_version_for(probe.version),
        reason_code="provider_available",
    )


def _obelisk_index_health(enablement: Enablement) -> IndexHealth:
    """Where the operator's Obelisk index is and whether it exists (checked, never created).
    Its freshness markers come only with a query, and every query refreshes the index first."""
    from obelisk_session_evidence.providers.obelisk.environment import (
        BUILD_COMMAND,
        HOME_VARIABLE,
        default_obelisk_home,
        index_path,
        sources_home,
    )

    home = Path(enablement.obelisk_home) if enablement.obelisk_home else default_obelisk_home()
    location = index_path(home)
    if not location.is_file():
        command = f"HOME={sources_home(home)} {HOME_VARIABLE}={home} {BUILD_COMMAND}"
        return UNKNOWN_INDEX.model_copy(
            update={
                "freshness": "incomplete",
                "reason_code": "index_absent",
                "location": str(location),
                "detail": f"no Obelisk index here; Obelisk builds it with `{command}`"[:400],
            }
        )
    return UNKNOWN_INDEX.model_copy(
        update={"reason_code": "index_freshness_per_lookup", "usable": True, "location": str(location)}
    )
