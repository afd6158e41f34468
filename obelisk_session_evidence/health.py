"""Provider and index health for `enable` and `status`: probed now, reported honestly.

A backend that cannot be probed (its module is missing, or the probe itself fails) is `unknown`
with a reason code, never `available`; an index without evidence of freshness is never `fresh`.
"""

import os
from collections.abc import Iterable
from pathlib import Path

from contracts.config import Enablement
from contracts.errors import EvidenceError
from contracts.lifecycle import IndexHealth, ProviderHealth
from obelisk_session_evidence.state import StatePaths

UNKNOWN_INDEX = IndexHealth(
    freshness="unknown", index_revision=None, counts={}, reason_code="index_status_unknown"
)


def provider_health(paths: StatePaths, enablement: Enablement) -> ProviderHealth:
    """Probe the backend the enablement names; a probe fault is a reason code, not an exception."""
    try:
        if enablement.provider == "obelisk":
            return _obelisk_health(enablement)
        return _native_health(paths, enablement)
    except EvidenceError as error:
        return _unavailable(enablement, error.reason_code)
    except Exception:  # noqa: BLE001 - status is a report: a probe bug must not become a traceback
        return _unavailable(enablement, "provider_probe_failed")


def index_health(paths: StatePaths, enablement: Enablement) -> IndexHealth:
    """The index's freshness, revision and counts for this scope, or `unknown` with a reason."""
    try:
        if enablement.provider == "obelisk":
            return _obelisk_index_health(enablement)
        return _native_index_health(paths, enablement)
    except EvidenceError as error:
        return UNKNOWN_INDEX.model_copy(update={"reason_code": error.reason_code})
    except Exception:  # noqa: BLE001 - see provider_health
        return UNKNOWN_INDEX.model_copy(update={"reason_code": "index_probe_failed"})


def protected_roots(enablements: Iterable[Enablement]) -> list[Path]:
    """Folders `index drop` must never reach into: agents' session homes and Obelisk's data."""
    home = Path.home()
    roots = [
        home / ".claude",
        home / ".codex",
        Path(os.environ.get("KIMI_CODE_HOME") or home / ".kimi-code"),
        Path(os.environ.get("PI_CODING_AGENT_SESSION_DIR") or home / ".pi"),
        home / ".dsh",
        Path(os.environ.get("OBELISK_HOME") or home / ".obelisk"),
    ]
    for enablement in enablements:
        roots.extend(Path(root) for root in enablement.source_roots.values())
    return [Path(os.path.abspath(root)) for root in roots]


def _unavailable(enablement: Enablement, reason_code: str) -> ProviderHealth:
    return ProviderHealth(
        kind=enablement.provider, state="unavailable", provider_version=None, reason_code=reason_code
    )


def _not_probed(enablement: Enablement) -> ProviderHealth:
    return ProviderHealth(
        kind=enablement.provider,
        state="unknown",
        provider_version=None,
        reason_code="provider_status_unknown",
    )


def _native_health(paths: StatePaths, enablement: Enablement) -> ProviderHealth:
    return _not_probed(enablement)


def _obelisk_health(enablement: Enablement) -> ProviderHealth:
    return _not_probed(enablement)


def _native_index_health(paths: StatePaths, enablement: Enablement) -> IndexHealth:
    return UNKNOWN_INDEX


def _obelisk_index_health(enablement: Enablement) -> IndexHealth:
    return UNKNOWN_INDEX
