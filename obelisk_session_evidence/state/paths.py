"""Where the owner-local state lives, and the fixed places inside it."""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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


def state_at(root: str | None) -> StatePaths:
    """The state folder at `root` (a flow parameter), else this process's (`state_paths`)."""
    return StatePaths(Path(root)) if root else state_paths()


def state_paths(environ: Mapping[str, str] = os.environ) -> StatePaths:
    """`$OBELISK_SESSION_EVIDENCE_HOME`, else the XDG state directory."""
    if environ.get(HOME_VARIABLE):
        return StatePaths(Path(environ[HOME_VARIABLE]).expanduser())
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return StatePaths(Path(base) / "obelisk-session-evidence")
