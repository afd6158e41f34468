"""Options, input and exit handling every command shares."""

import errno
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console

from obelisk_session_evidence.contracts.error_envelope import ErrorEnvelope
from obelisk_session_evidence.contracts.errors import EvidenceError, InvalidInput, StageFailed, StorageFailed
from obelisk_session_evidence.contracts.json_input import MAX_DOCUMENT_BYTES, read_at_most

EXIT_INTERNAL: Final = 1
EXIT_NOT_OK: Final = 2
"""LoopX's habit: 0 when the result is ok, 2 otherwise (invalid input, not enabled, unhealthy)."""
EXIT_CLOSED_PIPE: Final = 141
"""The reader of stdout went away (`status | head -1`): the shell's code for SIGPIPE, not a fault."""

STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO})
"""OS errors of local storage (full, read-only, not permitted): the user's to fix, so exit 2."""

Command = TypeVar("Command", bound=Callable[..., Any])
UNWRAPPED_WIDTH = 4096
"""Text printed to a file or a pipe: wide enough that rich never cuts a path or a digest."""


def text_console(**options: Any) -> "Console":
    """The console for a command's text on stdout: the terminal's width on a terminal (or
    COLUMNS when set), else `UNWRAPPED_WIDTH`, so output piped to a file is never cut at 80.
    rich is imported here: a command's JSON output never loads it."""
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            leave_on_closed_pipe()  # rich's own exits 1, the internal-fault code

    console = StdoutConsole(**options)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console = StdoutConsole(width=UNWRAPPED_WIDTH, **options)
    return console


def format_option(command: Command) -> Command:
    """`--format json|text`: JSON for machines, readable text for people."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(["json", "text"]),
        default="text",
        show_default=True,
        help="json for machines, text for people.",
    )(command)


def read_document(source: str) -> bytes:
    """The bytes of FILE, or of standard input for `-`, up to one byte past the documents' size cap
    (`load_contract` refuses what is longer, without this holding all of it)."""
    if source == "-":
        return read_at_most(sys.stdin.buffer, MAX_DOCUMENT_BYTES)
    try:
        with open(source, "rb") as handle:
            return read_at_most(handle, MAX_DOCUMENT_BYTES)
    except OSError as error:
        raise InvalidInput.unreadable(source, error) from None


def fail(error: EvidenceError) -> NoReturn:
    """One line on stderr with the reason code, exit 2; never a traceback."""
    _exit_with(error, EXIT_NOT_OK)


def fail_internal(error: Exception) -> NoReturn:
    """An unexpected fault: its type only (its message may carry content), exit 1."""
    _exit_with(error, EXIT_INTERNAL)


def _exit_with(error: Exception, exit_code: Literal[1, 2]) -> NoReturn:
    """The stderr line for people and, under `--format json`, the typed envelope on stdout,
    unless the command already printed its document there (stdout holds one document)."""
    envelope = error_envelope(error, exit_code)
    line = f"{envelope.reason_code}: {envelope.detail}" if envelope.detail else envelope.reason_code
    click.echo(f"error: {line}", err=True)
    context = click.get_current_context(silent=True)
    if context is not None and context.params.get("output_format") == "json" and not stdout_written():
        click.echo(envelope.model_dump_json())
    sys.exit(exit_code)


class _WriteTracking:
    """stdout as it is, noting whether anything was written to it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.written = False

    def write(self, text: str) -> int:
        self.written = self.written or bool(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def stdout_written() -> bool:
    """Whether this command has written to stdout (always False outside `tracked_stdout`)."""
    return isinstance(sys.stdout, _WriteTracking) and sys.stdout.written


@contextmanager
def tracked_stdout() -> Iterator[None]:
    """Around a command: stdout wrapped so that an error after its document adds none."""
    original = sys.stdout
    sys.stdout = _WriteTracking(original)
    try:
        yield
    finally:
        sys.stdout = original


def leave_on_closed_pipe() -> NoReturn:
    """The reader of stdout is gone: write nothing more there (nor at exit) and exit 141."""
    stdout = sys.__stdout__  # None when the process started without one
    try:
        if stdout is not None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_CLOSED_PIPE)


def error_envelope(error: Exception, exit_code: Literal[1, 2]) -> ErrorEnvelope:
    """`obelisk_session_evidence_error_v0` for an error this package raised, or for any other
    fault (`internal_error`, named by its type only)."""
    if not isinstance(error, EvidenceError):
        return ErrorEnvelope(reason_code="internal_error", detail=type(error).__name__, exit_code=1)
    stage_failed = error if isinstance(error, StageFailed) else None
    return ErrorEnvelope(
        reason_code=error.reason_code,
        detail=error.detail[:2000],
        stage=stage_failed.stage if stage_failed else None,
        cause=stage_failed.cause if stage_failed else None,
        exit_code=exit_code,
    )


@contextmanager
def reported_errors() -> Iterator[None]:
    """Around a command's library call: our errors and local storage faults (a full disk, a
    read-only folder) exit 2 with one line; a failing stage or any other fault exits 1 (an
    internal fault, named by its stage and code or its type only)."""
    try:
        yield
    except StageFailed as error:
        _exit_with(error, EXIT_INTERNAL)
    except EvidenceError as error:
        fail(error)
    except OSError as error:
        if error.errno == errno.EPIPE:
            leave_on_closed_pipe()
        if error.errno not in STORAGE_ERRNOS:
            fail_internal(error)
        fail(StorageFailed.of(error, "local storage"))
    except Exception as error:
        fail_internal(error)
