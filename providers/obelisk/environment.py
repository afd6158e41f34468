"""Where the operator's Obelisk keeps its index, and the environment its process gets.

Obelisk keeps its index in `obelisk.sqlite` inside its home folder: `$OBELISK_HOME` when set,
else `~/.obelisk` (obelisk-cli.md: builds that ignore `OBELISK_HOME` follow `HOME`). `enable
--provider obelisk --obelisk-home PATH` records that folder; without it, Obelisk's own default for
the user running `enable`.

The child process gets a minimal, documented environment and nothing else of the caller's (RFC
§11: credentials are neither requested nor transferred):

    PATH              to find `node` from the CLI's `#!/usr/bin/env node`
    HOME              the folder Obelisk reads the agents' sessions under (`~/.claude`, ...): the
                      Obelisk home's parent when it is a `.obelisk` folder (so a build that
                      follows HOME finds the same index), else the caller's home
    LANG, LC_*, TZ    locale and time zone, when the caller has them
    OBELISK_HOME      the Obelisk home (newer builds read it; older ones ignore it)
    OBELISK_SESSION_EVIDENCE_RUN  this project's per-run marker (process.py: kills what a run left)
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

INDEX_NAME: Final = "obelisk.sqlite"
DEFAULT_FOLDER: Final = ".obelisk"
HOME_VARIABLE: Final = "OBELISK_HOME"
LOCALE_VARIABLES: Final = ("LANG", "LANGUAGE", "TZ")
"""Passed through when set, with every `LC_*` variable."""
BUILD_COMMAND: Final = "obelisk --build"
"""The Obelisk command that builds its index (this project never runs it on its own)."""


def default_obelisk_home(environ: Mapping[str, str] = os.environ) -> Path:
    """Obelisk's own default for the user running this: `$OBELISK_HOME`, else `~/.obelisk`."""
    configured = environ.get(HOME_VARIABLE)
    if configured and os.path.isabs(os.path.expanduser(configured)):
        return Path(os.path.abspath(os.path.expanduser(configured)))
    return Path(os.path.abspath(_user_home(environ))) / DEFAULT_FOLDER


def index_path(obelisk_home: Path) -> Path:
    """Obelisk's index file inside its home folder."""
    return obelisk_home / INDEX_NAME


def sources_home(obelisk_home: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """The HOME Obelisk runs with: the parent of a `.obelisk` home, else the caller's home."""
    if obelisk_home.name == DEFAULT_FOLDER:
        return obelisk_home.parent
    return Path(os.path.abspath(_user_home(environ)))


def minimal_environment(environ: Mapping[str, str] = os.environ, *, home: Path | None = None) -> dict[str, str]:
    """PATH, HOME and the locale variables of `environ`; nothing else of it."""
    kept = {"PATH": environ.get("PATH") or os.defpath, "HOME": str(home or _user_home(environ))}
    for name, value in environ.items():
        if name in LOCALE_VARIABLES or name.startswith("LC_"):
            kept[name] = value
    return kept


def child_environment(obelisk_home: Path, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The whole environment of an Obelisk process working on `obelisk_home`."""
    return {
        **minimal_environment(environ, home=sources_home(obelisk_home, environ)),
        HOME_VARIABLE: str(obelisk_home),
    }


def _user_home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or str(Path.home())
