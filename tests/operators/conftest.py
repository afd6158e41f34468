"""One operator server per test session: `obelisk-session-evidence ui` in a subprocess."""

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from obelisk_session_evidence.flows.server import free_port
from tests.batch.conftest import enabled, paths, standin_backend

__all__ = ["enabled", "paths", "standin_backend"]  # re-exported fixtures

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 240


@dataclass(frozen=True)
class OperatorServer:
    """The running `ui` command: what it printed, its state folder, and a subprocess env for clients."""

    facts: dict
    state: Path
    started_in_s: float

    @property
    def api_url(self) -> str:
        return self.facts["api_url"]

    def client_env(self) -> dict[str, str]:
        """A CLI client's environment: this server's API and state, nothing from the test process."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "OBELISK_"))}
        env.update(
            PREFECT_API_URL=self.api_url,
            OBELISK_SESSION_EVIDENCE_HOME=str(self.state),
            PYTHONPATH=str(ROOT),
            DO_NOT_TRACK="1",
        )
        return env


@pytest.fixture(scope="session")
def operator_server() -> Iterator[OperatorServer]:
    """Start `ui` on a free loopback port with a fresh state dir; stop it at the end of the session."""
    state = Path(tempfile.mkdtemp(prefix="ose-operator-state-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "OBELISK_"))}
    env.update(OBELISK_SESSION_EVIDENCE_HOME=str(state), PYTHONPATH=str(ROOT))
    started = time.monotonic()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from obelisk_session_evidence.cli import main; main()",
            "ui",
            "--port",
            str(free_port()),
            "--format",
            "json",
            "--timeout",
            str(READY_TIMEOUT_S),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        ready, _, _ = select.select([process.stdout], [], [], READY_TIMEOUT_S + 30)
        line = process.stdout.readline() if ready else b""
        if not line:
            process.kill()
            pytest.fail(f"ui did not start: {process.stderr.read().decode(errors='replace')[-2000:]}")
        yield OperatorServer(json.loads(line), state, round(time.monotonic() - started, 1))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
