"""The Prefect API a command's flow runs against: the configured one, else a temporary local one
(`batch`, `replay --prefect`), stopped only once it has recorded what the flow sent
(`flows.temporary_api.settle`; the flow announces its runs with `expect_records`)."""

import os
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console


@contextmanager
def api_for_this_run() -> Iterator[None]:
    """The configured API as it is; else a temporary one, with a spinner for people while it
    starts and one line on stderr saying it started and how long that took."""
    from obelisk_session_evidence.flows.temporary_api import api_configured, temporary_api

    if api_configured():
        yield
        return
    console = Console(stderr=True, highlight=False)
    status = console.status("no PREFECT_API_URL: starting a temporary Prefect API …")
    status.start()
    try:
        with temporary_api() as api:
            status.stop()
            console.print(
                f"temporary Prefect API started in {api.started_seconds:.1f} s (no PREFECT_API_URL); these "
                f"runs stay in {os.environ['PREFECT_HOME']}, shown by `obelisk-session-evidence ui`",
                soft_wrap=True,
            )
            yield
    finally:
        status.stop()
    if api.unsettled:
        console.print(f"the temporary Prefect API stopped before it recorded this run: {api.unsettled}", soft_wrap=True)
