"""The `obelisk-session-evidence` command line: thin commands over the library."""

import click

from obelisk_session_evidence import __version__
from obelisk_session_evidence.cli.run import run
from obelisk_session_evidence.cli.schema import schema

COMMANDS: tuple[click.Command, ...] = (
    run,
    schema,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="obelisk-session-evidence")
def main() -> None:
    """Bounded evidence from an agent's own earlier sessions, for LoopX Replan."""


for command in COMMANDS:
    main.add_command(command)
