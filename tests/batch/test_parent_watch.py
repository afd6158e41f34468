"""The temporary Prefect API runs behind `flows.parent_watch`: it goes when the process that
started it dies, even by SIGKILL, so a killed batch leaves no server behind."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.reliability.processes import process_alive

pytestmark = pytest.mark.reliability  # issue 27 item 5: make test-reliability runs them
DEADLINE_S = 60.0
# A stand-in for `batch`: starts a long command behind the watch, prints its pid, then waits.
STARTER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "obelisk_session_evidence.flows.parent_watch", str(__import__("os").getpid()),
                          sys.executable, "-c", "import time; time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""


def _wait_until_gone(pid: int) -> bool:
    deadline = time.monotonic() + DEADLINE_S
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_alive(pid)


def test_the_watched_command_stops_when_its_parent_is_killed():
    starter = subprocess.Popen([sys.executable, "-c", STARTER], stdout=subprocess.PIPE, text=True)
    watched = int(starter.stdout.readline())
    try:
        assert process_alive(watched)
        os.kill(starter.pid, signal.SIGKILL)
        starter.wait()
        assert _wait_until_gone(watched), "the watched command outlived its SIGKILLed parent"
    finally:
        if process_alive(watched):
            os.kill(watched, signal.SIGKILL)


def test_a_parent_gone_before_the_watch_is_armed_runs_nothing():
    # The parent pid given is not this process's: the watch exits at once without running the command.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "obelisk_session_evidence.flows.parent_watch",
            "1",
            sys.executable,
            "-c",
            "print('ran')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "")
