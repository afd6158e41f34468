"""Where the owner-local state lives, and the fixed places inside it."""

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from obelisk_session_evidence.contracts.errors import InvalidInput

HOME_VARIABLE = "OBELISK_SESSION_EVIDENCE_HOME"


@dataclass(frozen=True, slots=True)
class StatePaths:
    """The state directory and the fixed places inside it."""

    root: Path

    @property
    def config_file(self) -> Path:
        return self.root / "config.json"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def spool_dir(self) -> Path:
        return self.root / "spool"

    @property
    def prefect_home(self) -> Path:
        return self.root / "prefect"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def salt_file(self) -> Path:
        return self.root / "digest-salt"

    @property
    def obelisk_work_dir(self) -> Path:
        return self.root / "obelisk-queries"


_REFERENCES: dict[Path, str] = {}
_NAMED: dict[str, StatePaths] = {}


def state_reference(paths: StatePaths) -> str | None:
    """How a flow run started in this process names its state folder without the folder's path
    reaching Prefect's database (flow parameters are stored): None for this process's own state
    folder, else a random token that only this process resolves (`state_at`)."""
    if paths.root == state_paths().root:
        return None
    reference = _REFERENCES.setdefault(paths.root, f"state-{secrets.token_hex(8)}")
    _NAMED[reference] = paths
    return reference


def state_at(reference: str | None) -> StatePaths:
    """The state folder a flow parameter names: this process's own (`state_paths`) for None."""
    if reference is None:
        return state_paths()
    try:
        return _NAMED[reference]
    except KeyError:
        raise InvalidInput("the run names a state folder this process does not hold") from None


def state_paths(environ: Mapping[str, str] = os.environ) -> StatePaths:
    """`$OBELISK_SESSION_EVIDENCE_HOME`, else the XDG state directory."""
    if environ.get(HOME_VARIABLE):
        return StatePaths(Path(environ[HOME_VARIABLE]).expanduser())
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return StatePaths(Path(base) / "obelisk-session-evidence")
