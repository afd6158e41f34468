"""Readiness for LoopX's `extension doctor`: the LoopX it runs with, and the checks of `status`
over every enabled project.

Ready means a lookup can be answered as documented: the LoopX installed beside this package
(whose modules `docs/loopx.md` lists the extension importing) is in `SUPPORTED_LOOPX`; the
configuration loads, at least one scope is enabled, and no scope's provider or index is
unusable. An index that is stale, incomplete, not yet refreshed or checked per lookup still
answers (the answer says how fresh it is), so it does not make the extension unready.
"""

import re
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Final

from obelisk_session_evidence.contracts.errors import ConfigInvalid
from obelisk_session_evidence.lifecycle.enablement import status
from obelisk_session_evidence.lifecycle.policy import load_config
from obelisk_session_evidence.state.paths import StatePaths

ANSWERING_CODES: Final = frozenset(
    {"healthy", "index_stale", "index_incomplete", "index_not_refreshed", "index_freshness_per_lookup"}
)
"""Scope health codes under which a lookup still answers."""
SUPPORTED_LOOPX: Final = ((2, 1, 1), (2, 2))
"""LoopX releases the extension supports: from 2.1.1 (the pinned one the conformance suite runs)
up to, not including, 2.2 (`>=2.1.1,<2.2`): the private modules it imports may change in any
minor release."""


def installed_loopx() -> str | None:
    """The version of the LoopX distribution beside this package, or None."""
    try:
        return version("loopx")
    except PackageNotFoundError:
        return None


def loopx_supported(text: str) -> bool:
    """Whether a LoopX version string lies in `SUPPORTED_LOOPX` (its release numbers compared)."""
    match = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return False
    release = tuple(int(part or 0) for part in match.groups())
    low, high = SUPPORTED_LOOPX
    return low <= release < high


def doctor_report(paths: StatePaths, *, loopx_version: Callable[[], str | None] = installed_loopx) -> tuple[bool, str]:
    """`(ready, reason code)`: `healthy`, or the first reason a lookup could not be answered."""
    found = loopx_version()
    if found is None:
        return False, "loopx_not_installed"
    if not loopx_supported(found):
        return False, "loopx_version_unsupported"
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
