"""Attack 7: a caller's SIGTERM (or Ctrl-C) during `run --provider obelisk`. The Obelisk process
group must not keep running, its query file (every command, hypothesis and blocker) must not stay
behind, and the run exits 143 (130) with one content-free line."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fixtures.situations import FIXTURE_AGENT, FIXTURE_PROJECT, situation
from obelisk_session_evidence.loopx.decision_context_extension import REQUEST_SCHEMA
from obelisk_session_evidence.state.paths import StatePaths
from obelisk_session_evidence.state.spool import spool_document
from tests.reliability.attack_stands import CANARY
from tests.reliability.processes import process_alive
from tests.reliability.worlds import build_world, write_config


def _wait_for(predicate, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _entry_point(entry: str, state, situation_document) -> tuple[list[str], bytes]:
    """The command line and standard input of `run`, or of LoopX's Decision Context extension."""
    if entry == "run":
        return [
            "-m",
            "obelisk_session_evidence",
            "run",
            "--situation",
            "-",
            "--format",
            "json",
            "--provider",
            "obelisk",
        ], json.dumps(situation_document).encode()
    reference = spool_document(StatePaths(state), "situations", json.dumps(situation_document).encode())
    request = {
        "schema_version": REQUEST_SCHEMA,
        "operation": "retrieve",
        "namespace": "replan",
        "scope_ref": "host-session:codex:0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "query": f"replan-situation:{reference}",
        "query_summary": "prior failures",
        "max_results": 4,
        "timeout_seconds": 30,
        "observed_at": "2026-11-29T10:00:00Z",
    }
    # The extension answers only an asker LoopX established: it runs as the child of a `loopx`
    # process (here a stand-in that passes stop signals on), as under LoopX itself.
    loopx = state.parent / "bin" / "loopx"
    loopx.parent.mkdir(exist_ok=True)
    loopx.write_text(LOOPX_STAND_IN)
    invocation = ["decision-context", "recall-context", "--goal-id", FIXTURE_PROJECT, "--agent-id", FIXTURE_AGENT]
    options = ["--profile", "p.json", "--context-scope-ref", "goal", "--query", "q", "--query-summary", "s"]
    return [str(loopx), *invocation, *options], json.dumps(request).encode()


LOOPX_STAND_IN = """import signal, subprocess, sys
child = subprocess.Popen([sys.executable, "-m", "obelisk_session_evidence.loopx.decision_context_extension"])
for stop in (signal.SIGTERM, signal.SIGINT):
    signal.signal(stop, lambda number, frame: child.send_signal(number))
sys.exit(child.wait())
"""


@pytest.mark.parametrize("entry", ["run", "decision-context"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_during_an_obelisk_query_kills_its_group_and_removes_the_query_file(tmp_path, stop, entry):
    command = "pytest tests/test_payment.py -k refund"
    world = build_world(tmp_path / "world", [command], canary=CANARY)
    world.stand_in.control(mode="hang_with_child")
    state = tmp_path / "state"
    write_config(state, world.obelisk_enablement())
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    arguments, stdin = _entry_point(entry, state, situation(commands=[command], hypothesis=CANARY))
    # The CLI finds Obelisk's index under HOME, as a user's would be.
    environment = {
        **os.environ,
        "OBELISK_SESSION_EVIDENCE_HOME": str(state),
        "TMPDIR": str(system_temp),
        "HOME": str(world.home),
    }
    cli = subprocess.Popen(
        [sys.executable, *arguments],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    cli.stdin.write(stdin)
    cli.stdin.close()
    started: list[int] = []
    try:

        def children() -> list[dict]:
            return [entry for entry in world.stand_in.reports() if "child_pid" in entry]

        assert _wait_for(lambda: bool(children()), within_s=60), "no query started its child"
        query = world.stand_in.queries()[0]
        started = [query["pid"], children()[0]["child_pid"]]
        assert all(process_alive(pid) for pid in started)
        cli.send_signal(stop)
        stdout, stderr = cli.stdout.read(), cli.stderr.read()
        cli.wait(timeout=30)
        assert cli.returncode == 128 + stop
        assert stderr.decode() == f"error: interrupted: {stop.name}\n"
        assert CANARY.encode() not in stdout + stderr
        assert _wait_for(lambda: not any(process_alive(pid) for pid in started), within_s=5)
        assert list(system_temp.iterdir()) == []
    finally:
        for pid in [cli.pid, *started]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        cli.wait(timeout=10)
