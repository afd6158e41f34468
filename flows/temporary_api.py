"""A temporary local Prefect API for a command run with no `PREFECT_API_URL`.

Prefect's own ephemeral server (a uvicorn subprocess on loopback, no UI, no services) started on
the Prefect home `flows.hardening` chose: the state directory's `prefect/`, or the user's
`PREFECT_HOME`. That is the database `ui` serves, so the runs are there when the user opens it.
Start-up costs about 10 s on a fresh database and 5-7 s on a migrated one (2 cores); callers say
so once, with the time it took.
"""

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from obelisk_session_evidence.contracts.errors import PrefectServerFailed

STARTUP_TIMEOUT_SECONDS: Final = 180
"""A fresh SQLite database migrates in about 11 s here; Prefect's default 20 s is too short."""
DRAIN_TIMEOUT_SECONDS: Final = 10.0


def api_configured() -> bool:
    """True when the user points clients at a standing API."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url is not None


@contextmanager
def temporary_api() -> Iterator[float]:
    """Start the temporary API, point this process (and the processes it starts) at it, and stop
    it on exit; yields the seconds start-up took."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    started = time.monotonic()
    server = SubprocessASGIServer()
    try:
        server.start(timeout=STARTUP_TIMEOUT_SECONDS)
    except Exception as error:
        server.stop()
        raise PrefectServerFailed(f"the temporary Prefect API did not start ({type(error).__name__})") from None
    seconds = round(time.monotonic() - started, 2)
    os.environ["PREFECT_API_URL"] = server.api_url  # Dask workers started later inherit it
    try:
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            yield seconds
        _drain_workers()  # logs and events still queued would otherwise go to a stopped API
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()


def _drain_workers(timeout: float = DRAIN_TIMEOUT_SECONDS) -> None:
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=timeout)
    EventsWorker.drain_all(timeout=timeout)
