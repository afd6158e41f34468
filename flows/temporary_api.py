"""A temporary local Prefect API for a command run with no `PREFECT_API_URL`.

Prefect's own API app (uvicorn on loopback, no UI; Prefect's "ephemeral" mode, which still runs
the services that record task runs and events) started on the Prefect home `flows.hardening`
chose: the state directory's `prefect/`, or the user's `PREFECT_HOME`. That is the database `ui`
serves, so the runs are there when the user opens it. Start-up costs about 10 s on a fresh
database and 5-7 s on a migrated one (2 cores); callers say so once, with the time it took.

Stopping it is where records were lost. A flow's task-run states and events travel from this
process's queues (logs, events) over a websocket into the server's in-memory bus, and the server's
services write them to the database later; stopping the server drops whatever is still on that
bus (4 of 19 task runs left "Running", no `summarize-batch`, on a loaded machine). So `settle`
first drains this process's queues, then waits until the server has written what was sent: a
marker event sent after everything else is in its events table (the bus is first in, first out),
and every flow run the caller announced (`expect_records`) has all its task runs in a final state.

The server is started through `flows.parent_watch`, so it stops when this process dies, even by
SIGKILL (Linux's parent-death signal): a killed batch leaves no server behind.
"""

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from obelisk_session_evidence.contracts.errors import PrefectServerFailed
from obelisk_session_evidence.flows.server import LOOPBACK, ServerAddress, free_port, wait_until_ready

STARTUP_TIMEOUT_SECONDS: Final = 180
"""A fresh SQLite database migrates in about 11 s here; Prefect's default 20 s is too short."""
SETTLE_TIMEOUT_SECONDS: Final = 600.0
"""How long `settle` waits for the server to record what was sent before it gives up and says so.
It returns as soon as the records are there (0.1-2 s idle, up to tens of seconds on a loaded
machine); a server that answers nothing for this long is not going to."""
STOP_TIMEOUT_SECONDS: Final = 30.0
POLL_SECONDS: Final = 0.2
FLUSH_EVENT: Final = "obelisk.records-flushed"
"""The content-free marker event `settle` waits for."""
FINAL_STATE_TYPES: Final = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")
SERVER_SETTINGS: Final = {
    "PREFECT_UI_ENABLED": "0",
    "PREFECT__SERVER_EPHEMERAL": "1",
    "PREFECT__SERVER_FINAL": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # With it on, DB errors are logged with their SQL parameters, flow parameters included.
    "PREFECT_API_LOG_RETRYABLE_ERRORS": "false",
}


@dataclass(frozen=True, slots=True)
class ExpectedRecords:
    """A flow run whose records must reach the database before the API stops."""

    flow_run_id: str
    task_runs: int | None
    """How many task runs it started (None: unknown; then every one it has must be final)."""


@dataclass(slots=True)
class TemporaryApi:
    """The running temporary API: its address, how long it took to start, what to wait for."""

    address: ServerAddress
    process: subprocess.Popen[bytes]
    started_seconds: float
    expected: list[ExpectedRecords] = field(default_factory=list)
    unsettled: str | None = None
    """After exit: what the server had not recorded when `settle` gave up (None: everything)."""

    @property
    def api_url(self) -> str:
        return self.address.api_url


_ACTIVE: list[TemporaryApi] = []


def api_configured() -> bool:
    """True when the user points clients at a standing API."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url is not None


def expect_records(flow_run_id: Any, *, task_runs: int | None) -> None:
    """Announce a flow run whose task runs the temporary API must record before it stops (a
    no-op against a standing API, which keeps running)."""
    if _ACTIVE and flow_run_id is not None:
        _ACTIVE[-1].expected.append(ExpectedRecords(str(flow_run_id), task_runs))


@contextmanager
def temporary_api() -> Iterator[TemporaryApi]:
    """Start the temporary API, point this process (and the processes it starts) at it, and stop
    it on exit once it has recorded what was sent; yields it (start-up time in `started_seconds`,
    after exit `unsettled`)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    api = _start()
    os.environ["PREFECT_API_URL"] = api.api_url  # Dask workers started later inherit it
    _ACTIVE.append(api)
    try:
        with temporary_settings(updates={PREFECT_API_URL: api.api_url}):
            yield api
            api.unsettled = settle(api)
    finally:
        _ACTIVE.remove(api)
        os.environ.pop("PREFECT_API_URL", None)
        stop(api.process)


def _start() -> TemporaryApi:
    """uvicorn with Prefect's API app, as Prefect's own temporary server runs it, behind the
    parent-death watch."""
    from prefect.settings import get_current_settings

    address = ServerAddress(free_port())
    env = {
        **os.environ,
        **get_current_settings().to_environment_variables(exclude_unset=True),
        **SERVER_SETTINGS,
    }
    env.pop("PREFECT_API_URL", None)
    command = [
        sys.executable,
        "-m",
        "obelisk_session_evidence.flows.parent_watch",
        str(os.getpid()),
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "prefect.server.api.server:create_app",
        "--host",
        LOOPBACK,
        "--port",
        str(address.port),
        "--log-level",
        "error",
        "--lifespan",
        "on",
    ]
    log = os.open(
        Path(get_current_settings().home) / "temporary-api.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
    )
    started = time.monotonic()
    try:  # stdout is the command's (one JSON document); the server's own lines go to its log
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    finally:
        os.close(log)
    try:
        wait_until_ready(address, process, timeout=STARTUP_TIMEOUT_SECONDS)
    except BaseException as error:
        stop(process)
        if isinstance(error, PrefectServerFailed):
            raise PrefectServerFailed(f"the temporary Prefect API did not start ({error})") from None
        raise
    return TemporaryApi(address, process, round(time.monotonic() - started, 2))


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (uvicorn shuts down cleanly), then SIGKILL if it does not exit."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def settle(api: TemporaryApi, *, timeout: float = SETTLE_TIMEOUT_SECONDS) -> str | None:
    """Drain this process's log and event queues (a marker event last), then wait until the
    server has written the marker and every expected task run in a final state; None when it
    has, else what is missing (counts only)."""
    import httpx
    from prefect.events import emit_event
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    deadline = time.monotonic() + timeout
    since = datetime.now(UTC).isoformat()
    marker = f"obelisk.flush.{uuid.uuid4()}"
    emit_event(event=FLUSH_EVENT, resource={"prefect.resource.id": marker})
    for worker in (APILogWorker, EventsWorker):
        drained = worker.drain_all(timeout=max(0.0, deadline - time.monotonic()))
        # drain_all returns a coroutine only inside an event loop, which settle never runs in
        assert isinstance(drained, tuple), "settle runs outside an event loop"
        _, undrained = drained
        if undrained:
            return f"this process could not send its {worker.__name__} queue"
    with httpx.Client(base_url=api.api_url, timeout=30) as client:
        missing: str | None = "the server answered no query"
        while time.monotonic() < deadline:
            missing = _missing_records(client, api.expected, marker, since)
            if missing is None or api.process.poll() is not None:
                return missing
            time.sleep(POLL_SECONDS)
    return missing


def _missing_records(client: Any, expected: list[ExpectedRecords], marker: str, since: str) -> str | None:
    """What the server has not written yet (None: nothing): one query for the marker, two counts
    per expected flow run."""
    import httpx

    try:
        events = client.post(
            "/events/filter",
            json={
                "filter": {
                    "occurred": {"since": since},
                    "event": {"name": [FLUSH_EVENT]},
                    "resource": {"id": [marker]},
                },
                "limit": 1,
            },
        )
        events.raise_for_status()
        if not events.json().get("events"):
            return "the events sent last are not in the database"
        for run in expected:
            runs = {"flow_runs": {"id": {"any_": [run.flow_run_id]}}}
            final = {**runs, "task_runs": {"state": {"type": {"any_": list(FINAL_STATE_TYPES)}}}}
            total, done = (_count(client, body) for body in (runs, final))
            wanted = total if run.task_runs is None else run.task_runs
            if done < wanted or total < wanted:
                return f"{done} of {wanted} task runs recorded in a final state"
    except (httpx.HTTPError, ValueError, KeyError) as error:
        return f"the server did not answer ({type(error).__name__})"
    return None


def _count(client: Any, body: dict[str, Any]) -> int:
    answer = client.post("/task_runs/count", json=body)
    answer.raise_for_status()
    return int(answer.json())
