"""Attack 6: a FIFO at config.json must not block `run` or `status`; the work lane gets its
decision and `status` says config_invalid."""

import json
import os
import subprocess
import sys

from tests.reliability.attack_stands import situation_file


def _cli(tmp_path, *args):
    state = tmp_path / "state"
    environment = {**os.environ, "OBELISK_SESSION_EVIDENCE_HOME": str(state)}
    # A reader that blocked on the FIFO would never return: the timeout is the attack's verdict.
    return subprocess.run(
        [sys.executable, "-m", "obelisk_session_evidence", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


def _fifo_config(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    os.mkfifo(state / "config.json", 0o600)


def test_fifo_config_does_not_block_run_and_admission_stays_off(tmp_path):
    _fifo_config(tmp_path)
    completed = _cli(tmp_path, "run", "--situation", situation_file(tmp_path), "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["admission"] == {"admitted": False, "reason_code": "config_invalid"}


def test_fifo_config_does_not_block_status(tmp_path):
    _fifo_config(tmp_path)
    completed = _cli(tmp_path, "status", "--project-id", "p", "--format", "json")
    assert completed.returncode == 2
    report = json.loads(completed.stdout)
    assert report["reason_code"] == "config_invalid"
    assert report["config_detail"].startswith("config.json is not a regular file")
