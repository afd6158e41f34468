"""`run`: one Replan situation in, one public decision out."""

from pathlib import Path

import click

from contracts.config import ProviderKind
from contracts.json_input import load_contract
from contracts.situation import ReplanSituation
from obelisk_session_evidence.cli.common import format_option, read_document, reported_errors
from obelisk_session_evidence.compose import decide
from stages.pipeline import PipelineRun
from obelisk_session_evidence.state.paths import state_paths
from obelisk_session_evidence.state.private_files import write_private


@click.command()
@click.option("--situation", "situation_source", required=True, metavar="FILE|-",
              help="A replan_situation_v0 JSON document, or - for standard input.")
@format_option
@click.option("--private-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the private capped result here (mode 0600), only when admitted.")
@click.option("--provider", "provider_kind", type=click.Choice(["native", "obelisk"]),
              help="Override the enabled provider for this run.")
@click.option("--prefect", "use_prefect", is_flag=True,
              help="Run as the Prefect flow `replan-evidence` against the configured API.")
def run(
    situation_source: str,
    output_format: str,
    private_out: Path | None,
    provider_kind: ProviderKind | None,
    use_prefect: bool,
) -> None:
    """Decide one Replan situation and print the public decision.

    Example: obelisk-session-evidence run --situation situation.json --format json
    """
    with reported_errors():
        raw = read_document(situation_source)
        paths = state_paths()
        if use_prefect:
            from flows.hardening import apply_prefect_environment

            apply_prefect_environment(paths)  # before Prefect is first imported
            from flows.replan_evidence import decide_with_prefect

            output = decide_with_prefect(raw, paths=paths, provider_kind=provider_kind)
        else:
            situation = load_contract(ReplanSituation, raw)
            output = decide(situation, paths=paths, provider_kind=provider_kind)
    _write_private_result(output, private_out)
    if output_format == "json":
        click.echo(output.decision.model_dump_json())
    else:  # rich costs a cold process about 25 ms: only text output loads it
        from rich.console import Console

        from obelisk_session_evidence.cli.render_run import render_decision

        render_decision(output.decision, Console())


def _write_private_result(output: PipelineRun, private_out: Path | None) -> None:
    """The capped private result goes only to the admitted Turn's file, never to stdout."""
    if private_out is not None and output.private_result is not None:
        write_private(private_out, output.private_result.model_dump_json().encode("utf-8"))
