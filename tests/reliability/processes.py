"""Child processes for fault tests: forked from the test process (no import cost), killable at will.

`process_alive` tells whether a process (ours or a grandchild) still runs. `start_forked` runs a function in a forked child that reports progress and its result through
shared memory and a pipe; the parent may SIGKILL it at any moment. `run_forked` waits for the
result with a deadline (a child that blocks forever is killed and reported as timed out).
"""

import contextlib
import json
import multiprocessing
import os
import pwd
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

_FORK = multiprocessing.get_context("fork")


def process_alive(pid: int) -> bool:
    """Whether `pid` still runs: one that exited is not, reaped or a zombie (nobody here reaps an orphan)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as status:
            return status.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@dataclass
class Child:
    """A running forked child."""

    process: Any
    progress: Any
    """Shared int the child sets (`report_progress`); -1 until it reports."""
    results: Connection

    def wait_for_progress(self, at_least: int, *, timeout_s: float) -> int:
        """Poll until the child has reported `at_least` (or ended, or the timeout passed)."""
        deadline = time.monotonic() + timeout_s
        while self.progress.value < at_least and self.process.is_alive() and time.monotonic() < deadline:
            time.sleep(0.0005)
        return self.progress.value

    def kill(self) -> bool:
        """SIGKILL the child; True when it was still running."""
        alive = self.process.is_alive()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.join()
        return alive

    def result(self, *, timeout_s: float) -> tuple[str, Any]:
        """`("ok", value)`, `("error", class name)`, `("timeout", None)` or `("died", exit code)`."""
        if not self.results.poll(timeout_s):
            self.kill()
            return "timeout", None
        try:
            outcome = json.loads(self.results.recv())
        except EOFError:
            self.process.join()
            return "died", self.process.exitcode
        self.process.join()
        return outcome[0], outcome[1]


def start_forked(function: Callable[..., Any], *args: Any, as_nobody: bool = False) -> Child:
    """Fork a child running `function(report_progress, *args)`; its return value must be JSON."""
    progress = _FORK.Value("i", -1, lock=False)
    receiver, sender = _FORK.Pipe(duplex=False)
    process = _FORK.Process(target=_child_main, args=(function, args, progress, sender, as_nobody), daemon=True)
    process.start()
    sender.close()
    return Child(process=process, progress=progress, results=receiver)


def run_forked(function: Callable[..., Any], *args: Any, timeout_s: float, as_nobody: bool = False) -> tuple[str, Any]:
    """Run `function` in a forked child and wait for its outcome (see `Child.result`)."""
    return start_forked(function, *args, as_nobody=as_nobody).result(timeout_s=timeout_s)


def nobody_ids() -> tuple[int, int]:
    """The uid and gid of the unprivileged `nobody` account."""
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def _child_main(
    function: Callable[..., Any], args: tuple[Any, ...], progress: Any, sender: Connection, as_nobody: bool
) -> None:
    def report_progress(done: int, total: int = 0) -> None:
        progress.value = done

    try:
        if as_nobody:
            uid, gid = nobody_ids()
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        value = function(report_progress, *args)
        sender.send(json.dumps(["ok", value]))
    except BaseException as error:
        sender.send(json.dumps(["error", type(error).__name__]))
    finally:
        sender.close()
        os._exit(0)
