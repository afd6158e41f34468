"""`index`: manage the native session index kept under the state directory."""

import click
from rich.console import Console

from contracts.errors import EvidenceError, InvalidInput
from obelisk_session_evidence.cli.common import fail, fail_internal, format_option
from obelisk_session_evidence.cli.render_lifecycle import render_index_drop
from obelisk_session_evidence.lifecycle import drop_index
from obelisk_session_evidence.state import state_paths


@click.group()
def index() -> None:
    """Manage the native session index under the state directory.

    Example: obelisk-session-evidence index drop --yes
    """


@index.command()
@click.option("--yes", is_flag=True, help="Confirm: delete the native index (required).")
@format_option
def drop(yes: bool, output_format: str) -> None:
    """Delete the native index; session files and Obelisk's data are never touched.

    Example: obelisk-session-evidence index drop --yes --format json
    """
    if not yes:
        fail(InvalidInput("index drop deletes the native index; pass --yes to confirm"))
    try:
        outcome = drop_index(paths=state_paths())
    except EvidenceError as error:
        fail(error)
    except Exception as error:  # noqa: BLE001 - a fault is one content-free line, never a traceback
        fail_internal(error)
    if output_format == "json":
        click.echo(outcome.model_dump_json())
    else:
        render_index_drop(outcome, Console(markup=False, highlight=False))
