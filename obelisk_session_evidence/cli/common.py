"""Options, input and exit handling every command shares."""

import errno
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from contracts.errors import EvidenceError, InvalidInput, StageFailed, StorageFailed

EXIT_INTERNAL = 1
EXIT_NOT_OK = 2
"""LoopX's habit: 0 when the result is ok, 2 otherwise (invalid input, not enabled, unhealthy)."""

STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}
)
"""OS errors of local storage (full, read-only, not permitted): the user's to fix, so exit 2."""

Command = TypeVar("Command", bound=Callable[..., Any])


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
    """The bytes of FILE, or of standard input for `-`."""
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError:
        raise InvalidInput("the input file cannot be read") from None


def fail(error: EvidenceError) -> NoReturn:
    """One line on stderr with the reason code, exit 2; never a traceback."""
    click.echo(f"error: {error}", err=True)
    sys.exit(EXIT_NOT_OK)


def fail_internal(error: Exception) -> NoReturn:
    """An unexpected fault: its type only (its message may carry content), exit 1."""
    click.echo(f"error: internal_error: {type(error).__name__}", err=True)
    sys.exit(EXIT_INTERNAL)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Around a command's library call: our errors and local storage faults (a full disk, a
    read-only folder) exit 2 with one line; a failing stage or any other fault exits 1 (an
    internal fault, named by its stage and code or its type only)."""
    try:
        yield
    except StageFailed as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_INTERNAL)
    except EvidenceError as error:
        fail(error)
    except OSError as error:
        if error.errno not in STORAGE_ERRNOS:
            fail_internal(error)
        fail(StorageFailed.of(error, "local storage"))
    except Exception as error:  # noqa: BLE001 - a fault is one content-free line, never a traceback
        fail_internal(error)
