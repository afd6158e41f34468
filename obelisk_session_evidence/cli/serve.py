"""`serve`: register the `replan-evidence` and `reprocess-stalled` deployments."""

import click

from obelisk_session_evidence.cli.common import fail, fail_internal, format_option
from obelisk_session_evidence.contracts.errors import EvidenceError
from obelisk_session_evidence.contracts.operators import ServeOutcome
from obelisk_session_evidence.state.paths import state_paths


@click.command()
@click.option(
    "--limit",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Flow runs this process runs at once (without --work-pool).",
)
@click.option("--work-pool", metavar="POOL", help="Register on this existing work pool for Prefect workers, then exit.")
@format_option
def serve(limit: int, work_pool: str | None, output_format: str) -> None:
    """Register both deployments with the configured Prefect API (PREFECT_API_URL).

    Without --work-pool this process serves them until stopped (Ctrl-C): their runs are its
    child processes, with its environment and state directory. With it, the
    deployments go to the pool and `prefect worker start --pool POOL` runs them. Either way a run
    takes a digest: spool items first with `batch --spool-only`.

    Example: obelisk-session-evidence serve --limit 2
    """
    paths = state_paths()
    from obelisk_session_evidence.flows.hardening import apply_prefect_environment

    apply_prefect_environment(paths)
    try:
        from obelisk_session_evidence.flows.deployments import (
            deployment_names,
            register_on_work_pool,
            serve_deployments,
        )

        names = deployment_names()
        if work_pool is None:
            serve_deployments(paths, limit=limit, on_registered=lambda: _announce(names, None, output_format))
            return
        ids = register_on_work_pool(paths, work_pool)
    except EvidenceError as error:
        fail(error)
    except KeyboardInterrupt:
        return
    except Exception as error:
        fail_internal(error)
    _announce(names, ids, output_format, work_pool)


def _announce(names: list[str], ids: list[str] | None, output_format: str, pool: str | None = None) -> None:
    if output_format == "json":
        click.echo(ServeOutcome(deployments=names, ids=ids, work_pool=pool).model_dump_json())
        return
    where = f"on work pool {pool}" if pool else "served by this process (Ctrl-C stops)"
    click.echo(f"Deployments {where}: {', '.join(names)}")
    click.echo(
        "Run one: prefect deployment run reprocess-stalled/obelisk-session-evidence"
        " -p manifest_ref=<digest from batch --spool-only>"
    )
