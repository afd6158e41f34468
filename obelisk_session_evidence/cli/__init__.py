"""The `obelisk-session-evidence` command line: thin commands over the library.

Commands are imported only when invoked, so the cold path (`run`) never pays for the imports of
the others (Prefect alone costs about 2 s).
"""

import importlib

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
    """A group that imports a command's module on first use."""

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
