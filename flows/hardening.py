"""Prefect settings that keep private data out of its database, storage and logs.

Code discipline in the flow is the first layer (digest-only parameters, no persisted results,
static names, content-free errors); these settings are the second. They are applied before
`import prefect`, and never override what the operator set explicitly.
"""

import os
from collections.abc import Mapping
from pathlib import Path

from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import private_dir

HARDENED_DEFAULTS = {
    "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "false",
    "PREFECT_TASKS_DEFAULT_PERSIST_RESULT": "false",
    "PREFECT_TASKS_DEFAULT_NO_CACHE": "true",
    "PREFECT_LOGGING_LOG_PRINTS": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}


def prefect_home_for(paths: StatePaths, environ: Mapping[str, str] = os.environ) -> Path:
    """The user's `PREFECT_HOME` when set, else the state directory's `prefect/` folder: the one
    home `ui`, `batch` and `run --prefect` share, so they share one database."""
    chosen = environ.get("PREFECT_HOME")
    return Path(chosen).expanduser() if chosen else paths.prefect_home


def apply_prefect_environment(paths: StatePaths) -> None:
    """Point Prefect's home and result storage at private folders and set the hardened defaults."""
    prefect_home = private_dir(prefect_home_for(paths))
    os.environ["PREFECT_HOME"] = str(prefect_home)
    storage = private_dir(prefect_home / "storage")
    os.environ.setdefault("PREFECT_RESULTS_LOCAL_STORAGE_PATH", str(storage))
    for name, value in HARDENED_DEFAULTS.items():
        os.environ.setdefault(name, value)


QUIET_CONSOLE = {
    # People get a progress bar or the decision; the run logs are in the Prefect UI.
    "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "CRITICAL",
}


def apply_console_verbosity(*, verbose: bool) -> None:
    """Silence Prefect's console lines unless `verbose` (or the user set the level); before
    `import prefect`, which reads the logging settings once."""
    if not verbose:
        for name, value in QUIET_CONSOLE.items():
            os.environ.setdefault(name, value)
