"""`ui`: a local Prefect server and UI for operators, bound to loopback, state under the state dir."""

import signal
from types import FrameType

import click

from obelisk_session_evidence.cli.common import format_option, reported_errors, text_console
from obelisk_session_evidence.contracts.operators import UiFacts
from obelisk_session_evidence.flows.server import (
    DEFAULT_PORT,
    READY_TIMEOUT_SECONDS,
    RunningServer,
    start_prefect_server,
    stop_prefect_server,
    ui_api_url,
)
from obelisk_session_evidence.state.paths import state_paths


@click.command()
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port for the UI and the API, on 127.0.0.1.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1),
    default=READY_TIMEOUT_SECONDS,
    show_default=True,
    help="Seconds to wait for the server to answer.",
)
@format_option
def ui(port: int, timeout: float, output_format: str) -> None:
    """Start the Prefect server and UI on 127.0.0.1, print the URL, and run until stopped.

    The UI is told its own port (a bare --port leaves it calling :4200), analytics are off, and
    Prefect's database and files live under the state directory's prefect/ folder (or your own
    PREFECT_HOME when set: the one `batch` and `run --prefect` use too). For a shared
    operator server set PREFECT_API_DATABASE_CONNECTION_URL to a PostgreSQL database first.

    Example: obelisk-session-evidence ui --port 4250
    """
    with reported_errors():
        server = start_prefect_server(state_paths(), port=port, timeout=timeout)
    try:
        _announce(server, output_format)
        signal.signal(signal.SIGTERM, _stop_on_signal)
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop_prefect_server(server.process)


def _announce(server: RunningServer, output_format: str) -> None:
    address = server.address
    facts = UiFacts(
        url=address.url,
        api_url=address.api_url,
        ui_api_url=ui_api_url(address),
        database=server.database,
        prefect_home=str(server.prefect_home),
        ready_seconds=server.ready_seconds,
    )
    if output_format == "json":
        click.echo(facts.model_dump_json(), nl=True)
        return
    console = text_console(highlight=False)
    console.print(
        f"Prefect UI: [bold]{address.url}[/bold]  (ready in {server.ready_seconds} s, {server.database} database)"
    )
    console.print(f"Point clients at it: export PREFECT_API_URL={address.api_url}")
    console.print("Stop with Ctrl-C.")


def _stop_on_signal(signal_number: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
