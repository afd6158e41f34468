"""Run a command that stops when the process that started it dies, even by SIGKILL.

    python -m obelisk_session_evidence.flows.parent_watch PARENT_PID COMMAND [ARG ...]

Linux's parent-death signal (`prctl(PR_SET_PDEATHSIG, SIGTERM)`) survives `exec`, so the command
itself (the temporary Prefect API's uvicorn) gets SIGTERM when its parent goes, and shuts down as
it would on `stop`. A parent already gone before the signal was armed is caught by comparing the
parent pid. Elsewhere than Linux the command runs without the watch.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def arm_parent_death_signal(parent_pid: int) -> bool:
    """Ask the kernel for SIGTERM when the parent dies; False when the parent is already gone."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    return os.getppid() == parent_pid


def main(argv: list[str]) -> None:
    if len(argv) < 2 or not argv[0].isdigit():
        sys.exit("usage: python -m obelisk_session_evidence.flows.parent_watch PARENT_PID COMMAND [ARG ...]")
    if not arm_parent_death_signal(int(argv[0])):
        sys.exit(0)  # nobody is left to use what the command would start
    os.execvp(argv[1], argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
