"""A local Prefect server for operators: loopback only, the UI pointed at its own port, no analytics.

`prefect server start --port N` alone leaves the UI's API address at :4200 (and a `PREFECT_API_URL`
in the environment overrides it too), so the server is started with
`PREFECT_SERVER_API_HOST`/`PREFECT_SERVER_API_PORT` and without `PREFECT_API_URL`. Its state
(database, UI bundle, log) lives under the state directory's `prefect/` folder. The database is
SQLite there unless `PREFECT_API_DATABASE_CONNECTION_URL` names another: use PostgreSQL for a shared
operator server, as SQLite answers 503 "database is locked" under load (upstream issue #18934).
No Prefect import here: the server is a subprocess.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.errors import PrefectServerFailed
from obelisk_session_evidence.contracts.operators import DatabaseKind
from obelisk_session_evidence.flows.hardening import prefect_home_for
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.private_files import private_dir

LOOPBACK: Final = "127.0.0.1"
DEFAULT_PORT: Final = 4200
READY_TIMEOUT_SECONDS: Final = 180.0
"""A fresh SQLite database takes about 23 s to migrate on 2 cores; leave room for slower CI."""
DATABASE_URL_VARIABLES: Final = (
    "PREFECT_API_DATABASE_CONNECTION_URL",
    "PREFECT_SERVER_DATABASE_CONNECTION_URL",
)
SERVER_SETTINGS: Final = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_UI_ENABLED": "true",
    # With it on, DB errors are logged with their SQL parameters, flow parameters included.
    "PREFECT_API_LOG_RETRYABLE_ERRORS": "false",
}


@dataclass(frozen=True, slots=True)
class ServerAddress:
    """Where the server listens; the UI and the API share the port."""

    port: int
    host: str = LOOPBACK

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A started server: its address, process, home folder and how long it took to answer."""

    address: ServerAddress
    process: subprocess.Popen[bytes]
    prefect_home: Path
    database: DatabaseKind
    ready_seconds: float


def database_kind(environ: Mapping[str, str] = os.environ) -> DatabaseKind:
    """`postgresql` or `sqlite`: the backend the server will use (never the URL, which may hold a
    password)."""
    url = next((environ[name] for name in DATABASE_URL_VARIABLES if environ.get(name)), "")
    return "postgresql" if url.startswith("postgresql") else "sqlite"


def server_environment(
    paths: StatePaths, address: ServerAddress, environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The server's environment: host and port for the UI, state under the state directory, or
    under the user's own `PREFECT_HOME` when set (the clients then share the server's database)."""
    prefect_home = private_dir(prefect_home_for(paths, environ))
    env = {name: value for name, value in environ.items() if name != "PREFECT_API_URL"}
    env.update(SERVER_SETTINGS)
    env.update(
        {
            "PREFECT_HOME": str(prefect_home),
            "PREFECT_SERVER_API_HOST": address.host,
            "PREFECT_SERVER_API_PORT": str(address.port),
        }
    )
    # Keep the UI bundle copy out of site-packages (which may be read-only).
    env.setdefault("PREFECT_UI_STATIC_DIRECTORY", str(prefect_home / "ui-build"))
    return env


def port_is_free(address: ServerAddress) -> bool:
    """True when nothing listens on the address yet."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address.host, address.port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nothing listens on now (for tests and ad hoc servers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def start_prefect_server(
    paths: StatePaths,
    *,
    port: int = DEFAULT_PORT,
    timeout: float = READY_TIMEOUT_SECONDS,
    environ: Mapping[str, str] = os.environ,
) -> RunningServer:
    """Start `prefect server start` on loopback and wait until its API answers."""
    address = ServerAddress(port)
    if not port_is_free(address):
        raise PrefectServerFailed(f"port {port} on {LOOPBACK} is already in use; pick another --port")
    env = server_environment(paths, address, environ)
    prefect_home = Path(env["PREFECT_HOME"])
    log = os.open(prefect_home / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a terminal's Ctrl-C reaches `ui`, which stops the server
        )
    finally:
        os.close(log)
    try:
        wait_until_ready(address, process, timeout=timeout)
    except BaseException:
        stop_prefect_server(process)
        raise
    return RunningServer(
        address=address,
        process=process,
        prefect_home=prefect_home,
        database=database_kind(env),
        ready_seconds=round(time.monotonic() - started, 2),
    )


def wait_until_ready(address: ServerAddress, process: subprocess.Popen[bytes], *, timeout: float) -> None:
    """Poll `/api/health` until it answers true; fail when the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PrefectServerFailed(f"the server exited with status {process.returncode}; see prefect/server.log")
        try:
            with urllib.request.urlopen(f"{address.api_url}/health", timeout=2) as answer:
                if json.loads(answer.read()) is True:
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise PrefectServerFailed(f"the server did not answer within {timeout:.0f} s")


def ui_api_url(address: ServerAddress) -> str | None:
    """The API address the UI will call, as the server reports it in `/ui-settings`."""
    try:
        with urllib.request.urlopen(f"{address.url}/ui-settings", timeout=5) as answer:
            value = json.loads(answer.read()).get("api_url")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def stop_prefect_server(process: subprocess.Popen[bytes], *, timeout: float = 30.0) -> None:
    """Stop the server and anything it spawned (its own session): SIGTERM, then SIGKILL."""
    for signal_number in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal_number)  # the group `start_prefect_server` created
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            continue
