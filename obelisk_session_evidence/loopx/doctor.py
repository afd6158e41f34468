"""Readiness for LoopX's `extension doctor`: the checks of `status`, over every enabled project.

Ready means a lookup can be answered: the configuration loads, at least one scope is enabled,
and no scope's provider or index is unusable. An index that is stale, incomplete, not yet
refreshed or checked per lookup still answers (the answer says how fresh it is), so it does not
make the extension unready.
"""

from typing import Final

from obelisk_session_evidence.contracts.errors import ConfigInvalid
from obelisk_session_evidence.lifecycle.enablement import status
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.state.paths import StatePaths

ANSWERING_CODES: Final = frozenset(
    {"healthy", "index_stale", "index_incomplete", "index_not_refreshed", "index_freshness_per_lookup"}
)
"""Scope health codes under which a lookup still answers."""


def doctor_report(paths: StatePaths) -> tuple[bool, str]:
    """`(ready, reason code)`: `healthy`, or the first reason a lookup could not be answered."""
    try:
        config = load_config(paths)
    except ConfigInvalid:
        return False, "config_invalid"
    if config is None or not config.enablements:
        return False, "not_enabled"
    for project_id in dict.fromkeys(e.project_id for e in config.enablements):
        report = status(project_id, paths=paths)
        for scope in report.scopes:
            if scope.reason_code not in ANSWERING_CODES:
                return False, scope.reason_code
    return True, "healthy"
