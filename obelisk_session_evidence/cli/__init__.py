"""The `obelisk-session-evidence` command line: thin commands over the library.

Commands are imported only when invoked, so the cold path (`run`) never pays for the imports of
the others (Prefect alone costs about 2 s).
"""

import errno
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from obelisk_session_evidence import __version__
from obelisk_session_evidence.cli.collection import collection_paused

COMMANDS: dict[str, str] = {
    "run": "obelisk_session_evidence.cli.run:run",
    "schema": "obelisk_session_evidence.cli.schema:schema",
    "enable": "obelisk_session_evidence.cli.lifecycle:enable",
    "status": "obelisk_session_evidence.cli.lifecycle:status",
    "disable": "obelisk_session_evidence.cli.lifecycle:disable",
    "index": "obelisk_session_evidence.cli.index:index",
    "batch": "obelisk_session_evidence.cli.batch:batch",
    "ui": "obelisk_session_evidence.cli.ui:ui",
    "serve": "obelisk_session_evidence.cli.serve:serve",
    "qualify": "obelisk_session_evidence.cli.qualify:qualify",
    "replay": "obelisk_session_evidence.cli.replay:replay",
    "situation": "obelisk_session_evidence.cli.situation:situation",
}
"""Command name -> `module:attribute` of its click command."""


class LazyGroup(click.Group):
    """A group that imports a command's module on first use, and keeps the machine contract
    whatever happens: a usage error under `--format json` is also one error document on stdout,
    an error after a command's document adds no second one, a closed stdout exits 141."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        from obelisk_session_evidence.cli.common import tracked_stdout

        argv = list(sys.argv[1:] if args is None else args)
        try:
            with tracked_stdout():
                returned = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            _usage_error(error, argv)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        if not standalone_mode:
            return returned
        sys.exit(returned if isinstance(returned, int) else 0)  # as click's standalone mode ends

    def invoke(self, ctx: click.Context) -> Any:
        from obelisk_session_evidence.cli.common import leave_on_closed_pipe

        try:
            return super().invoke(ctx)
        except OSError as error:  # click's own handler would exit 1, the internal-fault code
            if error.errno != errno.EPIPE:
                raise
            leave_on_closed_pipe()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        with collection_paused():
            module = importlib.import_module(module_name)
        return getattr(module, attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="obelisk-session-evidence")
def main() -> None:
    """Bounded evidence from an agent's own earlier sessions, for LoopX Replan."""


def _usage_error(error: click.ClickException, argv: list[str]) -> NoReturn:
    """click's message on stderr, exit 2; under `--format json` also the error document on
    stdout, naming the option but never echoing the value given."""
    error.show()
    if _wants_json(argv):
        from obelisk_session_evidence.contracts.error_envelope import ErrorEnvelope

        param = getattr(error, "param", None)
        hint = getattr(error, "param_hint", None) or getattr(error, "option_name", None)
        ctx = error.ctx if isinstance(error, click.UsageError) else None
        if hint is None and param is not None:
            hint = param.get_error_hint(ctx) if ctx is not None else param.name
        what = type(error).__name__
        detail = f"usage: {what}" + (f" ({hint})" if isinstance(hint, str) else "") + "; see --help"
        click.echo(ErrorEnvelope(reason_code="invalid_input", detail=detail, exit_code=2).model_dump_json())
    sys.exit(error.exit_code)


def _wants_json(argv: list[str]) -> bool:
    return "--format=json" in argv or any(a == "--format" and b == "json" for a, b in zip(argv, argv[1:], strict=False))
