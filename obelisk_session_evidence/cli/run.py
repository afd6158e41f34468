"""`run`: one Replan situation in, one public decision out."""

import os
from pathlib import Path

import click

from obelisk_session_evidence.cli.collection import collection_paused
from obelisk_session_evidence.cli.common import fail, format_option, read_document, reported_errors
from obelisk_session_evidence.compose import decide
from obelisk_session_evidence.contracts.config import ProviderKind
from obelisk_session_evidence.contracts.errors import EvidenceError, ScopeRefused, StorageFailed
from obelisk_session_evidence.contracts.json_input import load_contract
from obelisk_session_evidence.contracts.situation import ReplanSituation
from obelisk_session_evidence.loopx.asking import AGENT_VARIABLE, GOAL_VARIABLE, caller_is_loopx
from obelisk_session_evidence.stages.pipeline import PipelineRun
from obelisk_session_evidence.state.paths import StatePaths, state_paths
from obelisk_session_evidence.state.private_files import remove_private, write_private
from obelisk_session_evidence.stop_signals import stops_on_signals


@click.command()
@click.option(
    "--situation",
    "situation_source",
    required=True,
    metavar="FILE|-",
    help="A replan_situation_v0 JSON document, or - for standard input.",
)
@format_option
@click.option(
    "--private-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the private capped result here (mode 0600) when admitted; a run that is"
    " not admitted removes the file. It must be a regular file or absent.",
)
@click.option(
    "--provider",
    "provider_kind",
    type=click.Choice(["native", "obelisk"]),
    help="Override the enabled provider for this run.",
)
@click.option(
    "--prefect",
    "use_prefect",
    is_flag=True,
    help="Run as the Prefect flow `replan-evidence` against the configured API.",
)
@click.option("--verbose", is_flag=True, help="With --prefect: also show Prefect's own log lines on stderr.")
@stops_on_signals
def run(
    situation_source: str,
    output_format: str,
    private_out: Path | None,
    provider_kind: ProviderKind | None,
    use_prefect: bool,
    verbose: bool,
) -> None:
    """Decide one Replan situation and print the public decision.

    Example: obelisk-session-evidence run --situation situation.json --format json
    """
    with reported_errors():
        raw = read_document(situation_source)
        paths = state_paths()
        _check_caller(paths, raw)
        if use_prefect:
            from obelisk_session_evidence.flows.hardening import apply_console_verbosity, apply_prefect_environment

            apply_prefect_environment(paths)  # before Prefect is first imported
            apply_console_verbosity(verbose=verbose)
            from obelisk_session_evidence.flows.replan_evidence import decide_with_prefect

            output = decide_with_prefect(raw, paths=paths, provider_kind=provider_kind)
        else:
            with collection_paused():  # a direct run is short and its values acyclic (`cli.collection`)
                situation = load_contract(ReplanSituation, raw)
                output = decide(situation, paths=paths, provider_kind=provider_kind)
    failure = _write_private_result(output, private_out)
    if output_format == "json":
        click.echo(output.decision.model_dump_json())
    else:  # rich costs a cold process about 25 ms: only text output loads it
        from obelisk_session_evidence.cli.common import text_console
        from obelisk_session_evidence.cli.render_run import render_decision

        render_decision(output.decision, text_console())
    if failure is not None:
        fail(failure)  # after the decision: the work lane still gets it


def _check_caller(paths: StatePaths, raw: bytes) -> None:
    """`ScopeRefused` when LoopX (or a LoopX host turn) started this run for a scope that is not its
    asker's (`loopx.recall.caller_denial`); the owner's own runs pay one `/proc` read for this."""
    if not (caller_is_loopx() or os.environ.get(AGENT_VARIABLE) or os.environ.get(GOAL_VARIABLE)):
        return
    from obelisk_session_evidence.loopx.recall import caller_denial

    denial = caller_denial(paths, load_contract(ReplanSituation, raw))
    if denial is not None:
        raise ScopeRefused(denial)


def _write_private_result(output: PipelineRun, private_out: Path | None) -> EvidenceError | None:
    """The capped private result goes only to the admitted Turn's file, never to stdout. A run
    that is not admitted removes the file, so an earlier run's private content is never read as
    this one's. Returns why the file could not be written, if it could not."""
    if private_out is None:
        return None
    try:
        if output.private_result is None:
            remove_private(private_out)
        else:
            write_private(private_out, output.private_result.model_dump_json().encode("utf-8"))
    except EvidenceError as error:
        return type(error)(f"--private-out: {error.detail}")
    except OSError as error:
        return StorageFailed.of(error, "--private-out")
    return None
