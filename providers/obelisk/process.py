"""Running the Obelisk CLI: its own deadline, a byte cap on stdout, the process group killed.

Nothing read from the process leaves this module except the exit status, the capped stdout bytes
(returned to the caller, never logged) and a count of stderr bytes. Foreign exceptions are mapped
where they happen and the mapped error is raised outside the handler, so no foreign exception
(whose text or attributes could hold a path or output) is chained to it.
"""

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contracts.errors import (
    ProviderError,
    ProviderOutputTooLarge,
    ProviderTimeout,
    ProviderUnavailable,
)

READ_CHUNK: Final = 64 * 1024
SCRIPT_NAME: Final = "query.js"
_RUNNING: Final[dict[int, subprocess.Popen[bytes]]] = {}
"""Process groups started and not yet reaped, by leader pid (for `terminate_running_queries`)."""
_SCRIPT_DIRS: Final[set[Path]] = set()
"""Query-file folders not yet removed."""


def terminate_running_queries() -> None:
    """Kill every process group a lookup started and remove every query file (a stop signal's
    handler calls this; the process is about to exit)."""
    for process in list(_RUNNING.values()):
        _kill_group(process)
    for directory in list(_SCRIPT_DIRS):
        shutil.rmtree(directory, ignore_errors=True)


class Deadline:
    """One monotonic deadline shared by every process a lookup starts."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends_at = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self._ends_at - time.monotonic())

    def expired(self) -> bool:
        """True once no time is left."""
        return self.remaining() <= 0.0


@dataclass(frozen=True, slots=True)
class CliAnswer:
    """What one run produced. `stdout` is private: callers parse it and never log it."""

    exit_code: int
    """The exit status; negative when a signal ended the process."""
    stdout: bytes
    """Everything written to stdout, at most the run's byte cap."""
    stderr_bytes: int
    """How many bytes went to stderr (their content is discarded)."""
    stderr_head: bytes = b""
    """The first bytes of stderr, kept only when the caller asked (the usage probe)."""


def run_cli(
    argv: Sequence[str],
    *,
    deadline: Deadline,
    max_output_bytes: int,
    keep_stderr_bytes: int = 0,
    cwd: str | None = None,
) -> CliAnswer:
    """Run `argv` in its own process group; stop it at the deadline or past the stdout cap."""
    process = _spawn(argv, cwd=cwd)
    _RUNNING[process.pid] = process
    failure: ProviderError | None = None
    try:
        failure, stdout, stderr_bytes, stderr_head = _read_capped(
            process, deadline, max_output_bytes, keep_stderr_bytes
        )
        if failure is None:
            exit_code = _wait(process, deadline)
            if exit_code is None:
                failure = ProviderTimeout("no exit before the deadline")
    finally:
        if failure is not None or process.poll() is None:
            _kill_group(process)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        _RUNNING.pop(process.pid, None)
    if failure is not None:
        raise failure
    return CliAnswer(
        exit_code=exit_code, stdout=stdout, stderr_bytes=stderr_bytes, stderr_head=stderr_head
    )


@contextmanager
def private_script(script: str) -> Iterator[Path]:
    """Write `script` to a new 0600 file in a new 0700 directory; remove both afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="ose-obelisk-"))
    _SCRIPT_DIRS.add(directory)
    try:
        path = directory / SCRIPT_NAME
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(script)
        yield path
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        _SCRIPT_DIRS.discard(directory)


def _spawn(argv: Sequence[str], *, cwd: str | None) -> subprocess.Popen[bytes]:
    error_code = None
    try:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            cwd=cwd,
        )
    except FileNotFoundError:
        error_code = "binary_absent"
    except OSError:
        error_code = "binary_not_runnable"
    raise ProviderUnavailable(error_code)


def _read_capped(
    process: subprocess.Popen[bytes],
    deadline: Deadline,
    max_output_bytes: int,
    keep_stderr_bytes: int,
) -> tuple[ProviderError | None, bytes, int, bytes]:
    """Drain both pipes until EOF; a failure is returned, not raised, so the caller kills first."""
    assert process.stdout is not None and process.stderr is not None
    stdout = bytearray()
    stderr_head = bytearray()
    stderr_bytes = 0
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    with selectors.DefaultSelector() as selector:
        for fd in (out_fd, err_fd):
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline.remaining()
            if remaining <= 0.0:
                return ProviderTimeout("no answer before the deadline"), b"", stderr_bytes, b""
            for key, _ in selector.select(timeout=remaining):
                try:
                    chunk = os.read(key.fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(key.fd)
                elif key.fd == out_fd:
                    if len(stdout) + len(chunk) > max_output_bytes:
                        return (
                            ProviderOutputTooLarge(f"stdout passed {max_output_bytes} bytes"),
                            b"",
                            stderr_bytes,
                            b"",
                        )
                    stdout += chunk
                else:
                    stderr_bytes += len(chunk)
                    room = keep_stderr_bytes - len(stderr_head)
                    if room > 0:
                        stderr_head += chunk[:room]
    return None, bytes(stdout), stderr_bytes, bytes(stderr_head)


def _wait(process: subprocess.Popen[bytes], deadline: Deadline) -> int | None:
    """The exit status, or None when the process outlived the deadline after closing its pipes."""
    try:
        return process.wait(timeout=deadline.remaining())
    except subprocess.TimeoutExpired:
        pass
    return None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the whole group (the CLI and anything it started), then reap the leader."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        pass
