"""Attack 7: a caller's SIGTERM (or Ctrl-C) during `run --provider obelisk`. The Obelisk process
group must not keep running, its query file (every command, hypothesis and blocker) must not stay
behind, and the run exits 143 (130) with one content-free line."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fixtures.situations import situation
from tests.reliability.attack_stands import CANARY
from tests.reliability.worlds import build_world, write_config


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            return "\nState:\tZ" not in status.read()
    except FileNotFoundError:
        return False


def _wait_for(predicate, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_during_an_obelisk_query_kills_its_group_and_removes_the_query_file(tmp_path, stop):
    command = "pytest tests/test_payment.py -k refund"
    world = build_world(tmp_path / "world", [command], canary=CANARY)
    world.stand_in.control(mode="hang_with_child")
    state = tmp_path / "state"
    write_config(state, world.obelisk_enablement())
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    situation_path = tmp_path / "situation.json"
    situation_path.write_text(json.dumps(situation(commands=[command], hypothesis=CANARY)))
    environment = {**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(state), "TMPDIR": str(system_temp)}
    cli = subprocess.Popen(
        [sys.executable, "-m", "obelisk_session_evidence", "run", "--situation", str(situation_path),
         "--format", "json", "--provider", "obelisk"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    started: list[int] = []
    try:
        assert _wait_for(lambda: bool(world.stand_in.queries()), within_s=60), "no query started"
        query = world.stand_in.queries()[0]
        started = [query["pid"], query["child_pid"]]
        assert all(_alive(pid) for pid in started)
        cli.send_signal(stop)
        stdout, stderr = cli.communicate(timeout=30)
        assert cli.returncode == 128 + stop
        assert stderr.decode() == f"error: interrupted: {stop.name}\n"
        assert CANARY.encode() not in stdout + stderr
        assert _wait_for(lambda: not any(_alive(pid) for pid in started), within_s=5)
        assert list(system_temp.iterdir()) == []
    finally:
        for pid in [cli.pid, *started]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        cli.wait(timeout=10)
