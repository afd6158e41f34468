"""Running the Obelisk CLI: its own deadline, a byte cap on stdout, everything it started killed.

The CLI runs in its own session (`setsid`). On a timeout, an error, an oversize answer, or when
the caller calls `terminate_running_queries()` (from its SIGTERM/SIGINT handler), the adapter
SIGKILLs the session's process group, every descendant found through `/proc` (a grandchild that
called `setsid` itself has left the group but is still a descendant), and every process that
still carries this run's marker in its environment (a descendant orphaned before the kill).
The query script lives in a fresh 0700 folder under the private folder the caller passes (never
the system temp folder) and is removed on every exit path.

Nothing read from the process leaves this module except the exit status, the capped stdout bytes
(returned to the caller, never logged) and a count of stderr bytes. Foreign exceptions are mapped
where they happen and the mapped error is raised outside the handler, so no foreign exception
(whose text or attributes could hold a path or output) is chained to it.
"""

import os
import secrets
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from obelisk_session_evidence.contracts.errors import (
    ProviderError,
    ProviderOutputTooLarge,
    ProviderTimeout,
    ProviderUnavailable,
)
from obelisk_session_evidence.providers.obelisk.environment import minimal_environment

READ_CHUNK: Final = 64 * 1024
SCRIPT_NAME: Final = "query.js"
RUN_MARKER: Final = "OBELISK_SESSION_EVIDENCE_RUN"
"""Environment variable carrying a per-run token, inherited by everything the CLI starts."""
_RUNNING: dict[int, str] = {}
"""Leader pid -> run token of every CLI process now running."""
_SCRIPT_DIRS: set[Path] = set()
_REGISTRY_LOCK = threading.Lock()


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
    env: Mapping[str, str] | None = None,
) -> CliAnswer:
    """Run `argv` in its own process group; stop it at the deadline or past the stdout cap.

    The process gets `env` (default: `environment.minimal_environment()`) and this run's marker,
    never the caller's whole environment.
    """
    token = secrets.token_hex(16)
    process = _spawn(argv, cwd=cwd, token=token, env=minimal_environment() if env is None else env)
    with _REGISTRY_LOCK:
        _RUNNING[process.pid] = token
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
        _kill_run(process.pid, token)
        _reap(process)
        with _REGISTRY_LOCK:
            _RUNNING.pop(process.pid, None)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    if failure is not None:
        raise failure
    assert exit_code is not None, "_wait gives None only with a failure"
    return CliAnswer(exit_code=exit_code, stdout=stdout, stderr_bytes=stderr_bytes, stderr_head=stderr_head)


@contextmanager
def private_script(script: str, work_dir: Path) -> Iterator[Path]:
    """Write `script` to a new 0600 file in a new 0700 folder under `work_dir`; remove both."""
    work_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="query-", dir=work_dir))
    with _REGISTRY_LOCK:
        _SCRIPT_DIRS.add(directory)
    try:
        path = directory / SCRIPT_NAME
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(script)
        yield path
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        with _REGISTRY_LOCK:
            _SCRIPT_DIRS.discard(directory)


def terminate_running_queries() -> int:
    """Kill every running Obelisk CLI (and all it started) and remove their query files.

    For the caller's SIGTERM/SIGINT handler: no lock is taken (a handler may interrupt a thread
    holding it) and nothing is logged. Returns how many runs were killed.
    """
    running = list(_RUNNING.items())
    for pid, token in running:
        _kill_run(pid, token)
    for directory in list(_SCRIPT_DIRS):
        shutil.rmtree(directory, ignore_errors=True)
    return len(running)


def _spawn(argv: Sequence[str], *, cwd: str | None, token: str, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    error_code = None
    try:
        return subprocess.Popen(
            list(argv),
            env={**env, RUN_MARKER: token},
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


def _kill_run(leader: int, token: str) -> None:
    """SIGKILL the leader's process group, its descendants, and processes carrying `token`."""
    targets = _descendants(leader) | _marked(token)
    for pid in targets:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)


def _reap(process: subprocess.Popen[bytes]) -> None:
    with suppress(subprocess.TimeoutExpired):  # SIGKILL is not ignorable: this is a bound, not a wait
        process.wait(timeout=5)


def _processes() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _descendants(leader: int) -> set[int]:
    """Every process below `leader` in the parent tree, read from `/proc/<pid>/stat`."""
    children: dict[int, list[int]] = {}
    for pid in _processes():
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(pid)
    found: set[int] = set()
    pending = [leader]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _marked(token: str) -> set[int]:
    """Processes of this user whose environment still carries this run's marker."""
    needle = f"{RUN_MARKER}={token}".encode()
    found = set()
    for pid in _processes():
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    found.add(pid)
        except OSError:
            continue
    return found
