"""SIGTERM and SIGINT during a command: stop the provider's processes, remove their temp files,
and exit with the conventional code (143, 130) and one content-free line.

The handler stops the Obelisk process groups this process started (from any thread) and removes
their query files at once, then unwinds the main thread so its own `finally` blocks run (a
half-written private file is removed, a database transaction rolled back). The process then
exits without waiting for worker threads, which would otherwise go on deciding queued items.
"""

import atexit
import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Final, NoReturn, ParamSpec, TypeVar

STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)
_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived; raised in the main thread by the handler."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number


def stops_on_signals(command: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """Run `command` with the stop handlers installed (restored afterwards)."""

    @functools.wraps(command)
    def guarded(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        if threading.current_thread() is not threading.main_thread():
            return command(*args, **kwargs)  # only the main thread may install handlers
        previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
        for number in STOP_SIGNALS:
            signal.signal(number, _stop)
        try:
            return command(*args, **kwargs)
        except Interrupted as interrupted:
            _exit_stopped(interrupted.signal_number)
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    return guarded


def _stop(signal_number: int, frame: object) -> None:
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)  # a second signal must not interrupt the cleanup
    _terminate_running_queries()
    raise Interrupted(signal_number)


def _terminate_running_queries() -> None:
    """Stop the Obelisk queries this process started. Only a process that loaded the adapter can
    have started one, so a command that never did (most `run`s) does not import it here."""
    process = sys.modules.get("obelisk_session_evidence.providers.obelisk.process")
    if process is not None:
        process.terminate_running_queries()


def _exit_stopped(signal_number: int) -> NoReturn:
    _terminate_running_queries()  # again: a worker thread may have started one meanwhile
    print(f"error: interrupted: {signal.Signals(signal_number).name}", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()  # what the libraries registered (a local server, a cluster)
    os._exit(128 + signal_number)
