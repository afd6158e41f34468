"""One standing Prefect server for the bench's `run --prefect` and batch rows, and its clients' environment.

The server is what `obelisk-session-evidence ui` starts (`flows.server`):
loopback, `PREFECT_SERVER_API_HOST`/`PORT`, analytics off, its own `PREFECT_HOME` in a temporary
folder (a fresh SQLite database, migrated at start). `BENCH_PG_URL` points it at PostgreSQL instead.
"""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from obelisk_session_evidence.flows.server import RunningServer, free_port, start_prefect_server, stop_prefect_server
from obelisk_session_evidence.state.paths import StatePaths

QUIET_CLIENT: Final = {
    "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "CRITICAL",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "DO_NOT_TRACK": "1",
}


def without_prefect(environ: dict[str, str] | os._Environ[str] = os.environ) -> dict[str, str]:
    """The environment minus every `PREFECT_*` variable (a caller's settings must not leak in)."""
    return {name: value for name, value in environ.items() if not name.startswith("PREFECT_")}


@contextlib.contextmanager
def standing_server() -> Iterator[RunningServer]:
    """Start a server in a temporary home, yield it, and stop it (and everything it spawned)."""
    environ = without_prefect()
    if os.environ.get("BENCH_PG_URL"):
        environ["PREFECT_API_DATABASE_CONNECTION_URL"] = os.environ["BENCH_PG_URL"]
    with tempfile.TemporaryDirectory(prefix="ose-bench-prefect-") as home:
        server = start_prefect_server(StatePaths(Path(home)), port=free_port(), environ=environ)
        try:
            yield server
        finally:
            stop_prefect_server(server.process)


def client_environment(server: RunningServer, state_root: Path) -> dict[str, str]:
    """A client process's environment: the server's API, the corpus's state folder, quiet logs."""
    environ = without_prefect()
    environ.update(QUIET_CLIENT)
    environ.update(PREFECT_API_URL=server.address.api_url, OBELISK_SESSION_EVIDENCE_HOME=str(state_root))
    return environ
